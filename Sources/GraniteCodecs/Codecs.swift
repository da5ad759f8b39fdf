import GraniteMedia

/// Decoding and encoding images: JPEG (TurboJPEG), PNG (libpng simplified API; ``PNGRowEncoder``
/// for rows made on demand), WebP (libwebp), AVIF (libavif with libaom), TIFF (libtiff), JPEG XL (libjxl) and, read only, HEIC (libheif)
/// and GIF (giflib, first frame).
///
/// ```
/// bytes ─► sniff ─► header (size, bomb limit) ─► decode (warnings vs fail-on) ─► Exif/XMP orientation ─► Image (rgba8 | gray8 | gray16)
/// Image ─► encodeJPEG (quality, subsampling, progressive) | encodePNG ─► bytes ─► AtomicFile.write
/// ```
/// Everything is a pure function of its inputs and safe to call from many threads at once.
public enum Codecs {
    /// The format the bytes announce (by signature, not by file name), or nil.
    public static func sniff(_ bytes: [UInt8]) -> ImageFormat? {
        ImageFormat.sniff(bytes)
    }

    /// Size and format from the header alone (no pixels decoded), with the bomb limit checked.
    public static func info(_ bytes: [UInt8], path: String = "(memory)",
                            options: DecodeOptions = DecodeOptions()) throws(CodecError) -> ImageInfo {
        guard let format = sniff(bytes) else { throw notAnImage(bytes, path) }
        switch format {
        case .jpeg:
            var ignored = [String]()
            let head = try JPEGCodec.withHandle(compress: false, path, phase: CodecError.header) {
                (handle) throws(CodecError) in try JPEGCodec.header(bytes, path: path, handle: handle, warnings: &ignored)
            }
            return upright(.jpeg, head.width, head.height, bytes, options)
        case .png:
            let image = try PNGCodec.decodeHeader(bytes, path: path)
            return upright(.png, image.width, image.height, bytes, options)
        case .webp:
            let f = try WebPCodec.features(bytes, path: path)  // an animation's canvas
            return upright(.webp, f.width, f.height, bytes, options)
        case .avif:
            // The container's irot/imir turn the pixels; Exif orientation is not applied on top.
            let (w, h) = try AVIFCodec.size(bytes, path: path, options: options)
            return ImageInfo(format: .avif, width: w, height: h, orientation: .up)
        case .heic:
            let (w, h) = try HEIFCodec.size(bytes, path: path, upright: options.applyEXIFOrientation)
            return ImageInfo(format: .heic, width: w, height: h, orientation: .up)
        case .gif:
            let (w, h) = try GIFCodec.size(bytes, path: path)
            return ImageInfo(format: .gif, width: w, height: h, orientation: .up)
        case .tiff:
            // The Orientation tag is TIFF's own (the same values as Exif's); the decoder applies it.
            let (w, h) = try TIFFCodec.size(bytes, path: path, options: options)
            return ImageInfo(format: .tiff, width: w, height: h, orientation: .up)
        case .jxl:
            // libjxl applies the codestream's orientation itself.
            let (w, h) = try JXLCodec.size(bytes, path: path, options: options)
            return ImageInfo(format: .jxl, width: w, height: h, orientation: .up)
        }
    }

    /// The orientation decoding applies to `bytes` (``EXIFOrientation/read(_:)``, or `.up` when
    /// `options` turns it off).
    static func orientation(_ bytes: [UInt8], _ options: DecodeOptions) -> EXIFOrientation {
        options.applyEXIFOrientation ? EXIFOrientation.read(bytes) : .up
    }

    static func upright(_ format: ImageFormat, _ width: Int, _ height: Int, _ bytes: [UInt8], _ options: DecodeOptions) -> ImageInfo {
        let o = orientation(bytes, options)
        let (w, h) = o.swapsAxes ? (height, width) : (width, height)
        return ImageInfo(format: format, width: w, height: h, orientation: o)
    }

    /// Decodes JPEG, PNG, WebP, AVIF, JPEG XL, TIFF, HEIC or GIF (first frame) bytes into an `rgba8` image (gray kept as `gray8`/`gray16` when asked).
    ///
    /// - Parameter path: the file the bytes came from, for error messages.
    /// Damage that `options.failOn` lets through is dropped silently; the overload with
    /// `warnings` reports it.
    public static func decode(_ bytes: [UInt8], path: String = "(memory)",
                              options: DecodeOptions = DecodeOptions()) throws(CodecError) -> Image {
        var ignored = [String]()
        return try decode(bytes, path: path, options: options, warnings: &ignored)
    }

    /// Decodes as ``decode(_:path:options:)``, turned upright (every format) and with each warning
    /// the decoder gave that `options.failOn` let through added to `warnings` (without the path).
    public static func decode(_ bytes: [UInt8], path: String = "(memory)", options: DecodeOptions,
                              warnings: inout [String]) throws(CodecError) -> Image {
        guard let format = sniff(bytes) else { throw notAnImage(bytes, path) }
        switch format {
        case .jpeg:
            // JPEG turns the pixels itself: the scaled decode needs the upright minimum size.
            return try JPEGCodec.decode(bytes, path: path, options: options, orientation: orientation(bytes, options), warnings: &warnings)
        case .png:
            return try PNGCodec.decode(bytes, path: path, options: options, warnings: &warnings).applying(orientation(bytes, options))
        case .webp: return try WebPCodec.decode(bytes, path: path, options: options).applying(orientation(bytes, options))
        // The containers' own irot/imir are applied by the decoders; their Exif orientation describes the same turn.
        case .avif: return try AVIFCodec.decode(bytes, path: path, options: options)
        case .heic: return try HEIFCodec.decode(bytes, path: path, options: options)
        case .gif: return try GIFCodec.decode(bytes, path: path, options: options)
        case .tiff: return try TIFFCodec.decode(bytes, path: path, options: options, warnings: &warnings)
        case .jxl: return try JXLCodec.decode(bytes, path: path, options: options)
        }
    }

    /// Reads and decodes a file.
    public static func decodeFile(_ path: String, options: DecodeOptions = DecodeOptions()) throws(CodecError) -> Image {
        try decode(FileBytes.read(path), path: path, options: options)
    }

    /// JPEG `bytes` resized to `size` (Lanczos-type `filter`) and encoded as JPEG at `quality`
    /// without going through RGB: the DCT-scaled decode's Y, Cb and Cr planes are resampled and
    /// encoded as they are (no colour conversion or chroma resampling, a quarter of the memory of RGBA).
    /// Nil when that path does not apply and the caller decodes as usual: the file is not a YCbCr
    /// JPEG with the output's `subsampling`, or an orientation is to be applied to its pixels.
    /// Warnings go to `warnings` as ``decode(_:path:options:warnings:)`` gives them.
    public static func transcodeJPEG(_ bytes: [UInt8], path: String = "(memory)", options: DecodeOptions,
                                     size: (width: Int, height: Int), filter: ResizeFilter, quality: Int = 85,
                                     subsampling: ChromaSubsampling = .s420, progressive: Bool = false,
                                     outputPath: String = "(memory)", warnings: inout [String]) throws(CodecError) -> [UInt8]? {
        guard sniff(bytes) == .jpeg, orientation(bytes, options) == .up else { return nil }
        return try JPEGCodec.transcode(bytes, path: path, options: options, size: size, filter: filter, quality: quality,
                                       subsampling: subsampling, progressive: progressive, outputPath: outputPath, warnings: &warnings)
    }

    /// Encodes an `rgba8`, `rgb24` or `gray8` image as JPEG (alpha is dropped).
    public static func encodeJPEG(_ image: Image, quality: Int = 85, subsampling: ChromaSubsampling = .s420,
                                  progressive: Bool = false, path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try JPEGCodec.encode(image, quality: quality, subsampling: subsampling, progressive: progressive, path: path)
    }

    /// Encodes an `rgba8`, `rgb24` or `gray8` image as WebP: lossy at `quality` (1-100), or lossless.
    public static func encodeWebP(_ image: Image, quality: Int = 85, lossless: Bool = false,
                                  path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try WebPCodec.encode(image, quality: quality, lossless: lossless, path: path)
    }

    /// Encodes an `rgba8`, `rgb24` or `gray8` image as AVIF (libaom, 8-bit 4:2:0, alpha kept when
    /// not opaque) at `quality` (1-100) on `threads` threads, with `metadata`'s ICC profile, Exif
    /// and XMP inside (AVIF cannot take them afterwards as ``ImageMetadata/embedded(in:)`` does).
    public static func encodeAVIF(_ image: Image, quality: Int = 60, metadata: ImageMetadata = ImageMetadata(),
                                  threads: Int = 1, path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try AVIFCodec.encode(image, quality: quality, metadata: metadata, threads: threads, path: path)
    }

    /// Encodes an `rgba8` (alpha kept when not opaque), `rgb24` or `gray8` image as an 8-bit
    /// Deflate-compressed TIFF with `metadata`'s ICC profile, XMP and Exif as tags (Exif's IFD a sub-IFD).
    public static func encodeTIFF(_ image: Image, metadata: ImageMetadata = ImageMetadata(),
                                  path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try TIFFCodec.encode(image, metadata: metadata, path: path)
    }

    /// Encodes an `rgba8` (alpha kept when not opaque), `rgb24` or `gray8` image as JPEG XL: lossy
    /// at `quality` 1-99 (libjxl distance as `cjxl -q` maps it), lossless at 100, with `metadata`'s
    /// ICC profile, Exif and XMP inside.
    public static func encodeJXL(_ image: Image, quality: Int = 85, metadata: ImageMetadata = ImageMetadata(),
                                 path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try JXLCodec.encode(image, quality: quality, metadata: metadata, path: path)
    }

    /// `image` as `rgba8` (opaque alpha added to `rgb24` and `gray8`), for encoders taking RGBA only.
    static func expandedToRGBA(_ image: Image, path: String, format: String) throws(CodecError) -> Image {
        switch image.format {
        case .rgba8: return image
        case .rgb24, .gray8:
            var bytes = [UInt8](repeating: 255, count: image.pixelCount * 4)
            let step = image.format == .rgb24 ? 3 : 1
            for p in 0..<image.pixelCount {
                for c in 0..<3 { bytes[p * 4 + c] = image.bytes[p * step + (step == 3 ? c : 0)] }
            }
            return try! Image(width: image.width, height: image.height, format: .rgba8, bytes: bytes)
        default: throw .encode(path: path, reason: "\(format) cannot hold pixel format \(image.format)")
        }
    }

    /// Encodes an `rgba8`, `rgb24`, `gray8` or `gray16` image as PNG (16-bit gray for depth maps).
    public static func encodePNG(_ image: Image, path: String = "(memory)") throws(CodecError) -> [UInt8] {
        try PNGCodec.encode(image, path: path)
    }

    static func notAnImage(_ bytes: [UInt8], _ path: String) -> CodecError {
        if bytes.isEmpty { return .header(path: path, reason: "empty file") }
        let head = bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: " ")
        return .header(path: path, reason: "not a \(ImageFormat.readableNames) (starts with \(head))")
    }
}

/// What a header says, before any pixel is decoded.
public struct ImageInfo: Sendable, Equatable {
    /// The container format.
    public var format: ImageFormat
    /// Width once turned upright.
    public var width: Int
    /// Height once turned upright.
    public var height: Int
    /// The Exif orientation that decoding will apply (`.up` for PNG).
    public var orientation: EXIFOrientation
}
