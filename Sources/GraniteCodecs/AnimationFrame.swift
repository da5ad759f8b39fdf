import GraniteMedia

/// One frame of an animation, composited onto the whole canvas (`rgba8`), and how long it shows.
public struct AnimationFrame: Sendable, Equatable {
    /// The canvas as it looks while this frame shows.
    public var image: Image
    /// How long it shows, in milliseconds.
    public var durationMs: Int

    /// A frame of `image` shown for `durationMs` milliseconds.
    public init(image: Image, durationMs: Int) {
        self.image = image
        self.durationMs = durationMs
    }
}

extension Codecs {
    /// The frames of an animated GIF or WebP, each composited onto the canvas; nil when the bytes
    /// are not an animation of at least two frames (decode those with ``decode(_:path:options:)``).
    /// All frames together may hold at most `options.maxPixels` pixels.
    public static func decodeAnimation(_ bytes: [UInt8], path: String = "(memory)",
                                       options: DecodeOptions = DecodeOptions()) throws(CodecError) -> [AnimationFrame]? {
        let frames: [AnimationFrame]
        switch sniff(bytes) {
        case .gif: frames = try GIFCodec.frames(bytes, path: path, options: options)
        case .webp:
            guard try WebPCodec.features(bytes, path: path, allowAnimation: true).animated else { return nil }
            frames = try WebPCodec.frames(bytes, path: path, options: options)
        default: return nil
        }
        return frames.count > 1 ? frames : nil
    }

    /// Encodes frames of one size as an animated WebP that loops forever: lossy at `quality`, or lossless.
    public static func encodeAnimatedWebP(_ frames: [AnimationFrame], quality: Int = 85, lossless: Bool = false,
                                          path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try WebPCodec.encodeAnimation(frames, quality: quality, lossless: lossless, path: path)
    }
}
