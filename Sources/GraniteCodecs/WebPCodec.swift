import CWebP
import GraniteMedia

/// WebP through libwebp's simple API: still images, lossy (quality 1-100) or lossless.
enum WebPCodec {
    /// The canvas size; an animation is refused unless `allowAnimation`.
    static func features(_ bytes: [UInt8], path: String, allowAnimation: Bool = true) throws(CodecError)
        -> (width: Int, height: Int, alpha: Bool, animated: Bool) {
        var w: Int32 = 0, h: Int32 = 0, alpha: Int32 = 0, animation: Int32 = 0
        let ok = bytes.withUnsafeBufferPointer { granite_webp_features($0.baseAddress, $0.count, &w, &h, &alpha, &animation) }
        guard ok != 0 else { throw .header(path: path, reason: "WebP header could not be read") }
        guard allowAnimation || animation == 0 else { throw .header(path: path, reason: "animated WebP is not supported here") }
        guard w > 0, h > 0 else { throw .header(path: path, reason: "WebP header gives size \(w)x\(h)") }
        return (Int(w), Int(h), alpha != 0, animation != 0)
    }

    /// A still image, or an animation's first frame.
    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        let (w, h, _, animated) = try features(bytes, path: path)
        if animated {
            var first = options
            first.maxPixels = min(options.maxPixels, w * h)
            return try frames(bytes, path: path, options: first, limit: 1)[0].image
        }
        let pixels = w.multipliedReportingOverflow(by: h)
        guard !pixels.overflow, pixels.partialValue <= options.maxPixels else {
            throw .header(path: path, reason: "WebP is \(w)x\(h), over the limit of \(options.maxPixels) pixels")
        }
        var out = [UInt8](repeating: 0, count: w * h * 4)
        let done = bytes.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                WebPDecodeRGBAInto(src.baseAddress, src.count, dst.baseAddress, dst.count, Int32(w * 4)) != nil
            }
        }
        guard done else { throw .decode(path: path, reason: "WebP data is corrupt or truncated") }
        do {
            return try Image(width: w, height: h, format: .rgba8, bytes: out)
        } catch {
            throw .decode(path: path, reason: "\(error)")
        }
    }

    static func encode(_ image: Image, quality: Int, lossless: Bool, path: String) throws(CodecError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .encode(path: path, reason: "WebP quality \(quality) is not in 1...100") }
        guard image.width <= 16383, image.height <= 16383 else {
            throw .encode(path: path, reason: "WebP holds at most 16383x16383 pixels, the image is \(image.width)x\(image.height)")
        }
        let rgba = try Codecs.expandedToRGBA(image, path: path, format: "WebP")
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.bytes.withUnsafeBufferPointer { src in
            lossless
                ? WebPEncodeLosslessRGBA(src.baseAddress, Int32(rgba.width), Int32(rgba.height), Int32(rgba.bytesPerRow), &output)
                : WebPEncodeRGBA(src.baseAddress, Int32(rgba.width), Int32(rgba.height), Int32(rgba.bytesPerRow), Float(quality), &output)
        }
        defer { WebPFree(output) }
        guard size > 0, let output else { throw .encode(path: path, reason: "WebP encoder failed") }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    /// The frames of an animated WebP as libwebp's animation decoder composites them (at most `limit`).
    static func frames(_ bytes: [UInt8], path: String, options: DecodeOptions, limit: Int = .max) throws(CodecError) -> [AnimationFrame] {
        try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> [AnimationFrame] in
            var data = WebPData(bytes: raw.baseAddress, size: raw.count)
            var decoderOptions = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&decoderOptions) != 0 else { throw .header(path: path, reason: "WebP: animation decoder options") }
            decoderOptions.color_mode = MODE_RGBA
            guard let decoder = WebPAnimDecoderNew(&data, &decoderOptions) else {
                throw .header(path: path, reason: "WebP animation could not be read")
            }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { throw .header(path: path, reason: "WebP animation has no canvas") }
            let w = Int(info.canvas_width), h = Int(info.canvas_height)
            var frames = [AnimationFrame]()
            var previous: Int32 = 0
            while frames.count < limit, WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                guard (frames.count + 1) * w * h <= options.maxPixels else {
                    throw .header(path: path, reason: "WebP animation is over the limit of \(options.maxPixels) pixels (\(frames.count + 1) frames of \(w)x\(h))")
                }
                var buffer: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else {
                    throw .decode(path: path, reason: "WebP animation frame \(frames.count) is corrupt or truncated")
                }
                let image = try! Image(width: w, height: h, format: .rgba8, bytes: Array(UnsafeBufferPointer(start: buffer, count: w * h * 4)))
                frames.append(AnimationFrame(image: image, durationMs: Int(timestamp - previous)))
                previous = timestamp
            }
            guard !frames.isEmpty else { throw .decode(path: path, reason: "WebP animation has no frame") }
            return frames
        }
    }

    /// An animated WebP of `frames` (one size), looping forever.
    static func encodeAnimation(_ frames: [AnimationFrame], quality: Int, lossless: Bool, path: String) throws(CodecError) -> [UInt8] {
        guard let first = frames.first else { throw .encode(path: path, reason: "an animation needs a frame") }
        guard (1...100).contains(quality) else { throw .encode(path: path, reason: "WebP quality \(quality) is not in 1...100") }
        var encoderOptions = WebPAnimEncoderOptions()
        guard WebPAnimEncoderOptionsInit(&encoderOptions) != 0 else { throw .encode(path: path, reason: "WebP: animation encoder options") }
        encoderOptions.anim_params.loop_count = 0
        guard let encoder = WebPAnimEncoderNew(Int32(first.image.width), Int32(first.image.height), &encoderOptions) else {
            throw .encode(path: path, reason: "WebP: libwebp could not start an animation of \(first.image.width)x\(first.image.height)")
        }
        defer { WebPAnimEncoderDelete(encoder) }
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw .encode(path: path, reason: "WebP: encoder config") }
        config.lossless = lossless ? 1 : 0
        config.quality = Float(quality)
        var timestamp: Int32 = 0
        for (index, frame) in frames.enumerated() {
            let rgba = try Codecs.expandedToRGBA(frame.image, path: path, format: "WebP")
            guard rgba.width == first.image.width, rgba.height == first.image.height else {
                throw .encode(path: path, reason: "animation frame \(index) is \(rgba.width)x\(rgba.height), not the first frame's size")
            }
            var picture = WebPPicture()
            guard WebPPictureInit(&picture) != 0 else { throw .encode(path: path, reason: "WebP: picture") }
            defer { WebPPictureFree(&picture) }
            picture.use_argb = 1
            picture.width = Int32(rgba.width)
            picture.height = Int32(rgba.height)
            let imported = rgba.bytes.withUnsafeBufferPointer { WebPPictureImportRGBA(&picture, $0.baseAddress, Int32(rgba.bytesPerRow)) }
            guard imported != 0, WebPAnimEncoderAdd(encoder, &picture, timestamp, &config) != 0 else {
                throw .encode(path: path, reason: "WebP animation frame \(index): \(String(cString: WebPAnimEncoderGetError(encoder)))")
            }
            timestamp += Int32(max(frame.durationMs, 10))
        }
        var data = WebPData()
        defer { WebPDataClear(&data) }
        guard WebPAnimEncoderAdd(encoder, nil, timestamp, nil) != 0, WebPAnimEncoderAssemble(encoder, &data) != 0, let bytes = data.bytes else {
            throw .encode(path: path, reason: "WebP animation: \(String(cString: WebPAnimEncoderGetError(encoder)))")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: data.size))
    }
}
