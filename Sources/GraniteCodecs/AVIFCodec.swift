#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CAVIF
import GraniteMedia

/// AVIF writing through libavif (Debian 12: 0.11.1) with libaom: 8-bit 4:2:0 still images, the
/// ICC profile, Exif and XMP set on the image before encoding (AVIF keeps them as items, not
/// chunks that could be inserted afterwards).
enum AVIFCodec {
    /// libaom's speed through libavif (0 slowest … 10 fastest): 8 is ~3× faster than its default 6
    /// on a 960×540 photo, files ~5 % smaller than 9 and 10 (which lose tools).
    static let speed: Int32 = 8

    /// The AV1 quantizer (0 best … 63 worst) for a 1–100 quality, as libavif 1.x maps its `quality`.
    static func quantizer(quality: Int) -> Int32 {
        Int32(((100 - quality) * Int(granite_avif_quantizer_worst) + 50) / 100)
    }

    static func encode(_ image: Image, quality: Int, metadata: ImageMetadata, threads: Int, path: String) throws(CodecError) -> [UInt8] {
        guard (1...100).contains(quality) else { throw .encode(path: path, reason: "AVIF quality \(quality) is not in 1...100") }
        // AV1 frames are at most 65536 × 65536; libaom's own limit for one still frame.
        guard image.width <= 65536, image.height <= 65536 else {
            throw .encode(path: path, reason: "AVIF holds at most 65536x65536 pixels, the image is \(image.width)x\(image.height)")
        }
        let rgba = try Codecs.expandedToRGBA(image, path: path, format: "AVIF")
        let opaque = rgba.bytes.withUnsafeBufferPointer { p in stride(from: 3, to: p.count, by: 4).allSatisfy { p[$0] == 255 } }
        guard let avif = avifImageCreate(UInt32(rgba.width), UInt32(rgba.height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
            throw .encode(path: path, reason: "AVIF: libavif could not allocate the image")
        }
        defer { avifImageDestroy(avif) }
        var converted = AVIF_RESULT_OK
        rgba.bytes.withUnsafeBytes { raw in
            var rgb = avifRGBImage()
            avifRGBImageSetDefaults(&rgb, avif)
            rgb.format = AVIF_RGB_FORMAT_RGBA
            rgb.depth = 8
            rgb.ignoreAlpha = opaque ? AVIF_TRUE : AVIF_FALSE  // no alpha plane for an opaque image
            rgb.pixels = UnsafeMutablePointer(mutating: raw.baseAddress!.assumingMemoryBound(to: UInt8.self))
            rgb.rowBytes = UInt32(rgba.bytesPerRow)
            converted = avifImageRGBToYUV(avif, &rgb)
        }
        guard converted == AVIF_RESULT_OK else { throw .encode(path: path, reason: "AVIF: \(message(converted))") }
        if let icc = metadata.icc { icc.withUnsafeBufferPointer { avifImageSetProfileICC(avif, $0.baseAddress, $0.count) } }
        if let exif = metadata.exif { exif.withUnsafeBufferPointer { avifImageSetMetadataExif(avif, $0.baseAddress, $0.count) } }
        if let xmp = metadata.xmp { xmp.withUnsafeBufferPointer { avifImageSetMetadataXMP(avif, $0.baseAddress, $0.count) } }

        guard let encoder = avifEncoderCreate() else { throw .encode(path: path, reason: "AVIF: libavif could not create an encoder") }
        defer { avifEncoderDestroy(encoder) }
        encoder.pointee.codecChoice = AVIF_CODEC_CHOICE_AOM
        encoder.pointee.maxThreads = Int32(max(1, threads))
        encoder.pointee.speed = speed
        let q = quantizer(quality: quality)
        encoder.pointee.minQuantizer = q
        encoder.pointee.maxQuantizer = q
        encoder.pointee.minQuantizerAlpha = q
        encoder.pointee.maxQuantizerAlpha = q
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        let result = avifEncoderWrite(encoder, avif, &output)
        guard result == AVIF_RESULT_OK, let data = output.data else {
            throw .encode(path: path, reason: "AVIF: \(message(result))")
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    static func message(_ result: avifResult) -> String {
        guard let text = avifResultToString(result) else { return "libavif error \(result.rawValue)" }
        return String(cString: text)
    }
}
