import CAVIF
import GraniteMedia

/// AVIF reading through libavif (AV1 through libaom or dav1d): the primary image, 8-bit RGBA,
/// with the container's `irot` rotation and `imir` mirroring applied unless orientation is off,
/// and its ICC profile, Exif and XMP for ``ImageMetadata``.
///
/// ```
/// bytes ─► avifDecoder (IO over the bytes) ─► parse (size check) ─► next image ─► YUV→RGBA 8-bit ─► irot, imir ─► Image
/// ```
extension AVIFCodec {
    /// A parsed decoder over `bytes` (valid inside `body` only).
    static func withDecoder<R>(_ bytes: [UInt8], path: String, maxPixels: Int,
                               _ body: (UnsafeMutablePointer<avifDecoder>) throws(CodecError) -> R) throws(CodecError) -> R {
        guard let decoder = avifDecoderCreate() else { throw .header(path: path, reason: "AVIF: libavif could not create a decoder") }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        // libavif's own bomb limit, on top of the check below; it refuses any above its default (16384²).
        decoder.pointee.imageSizeLimit = UInt32(min(maxPixels, 16384 * 16384))
        return try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> R in
            var result = avifDecoderSetIOMemory(decoder, raw.baseAddress, raw.count)
            if result == AVIF_RESULT_OK { result = avifDecoderParse(decoder) }
            guard result == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                throw .header(path: path, reason: "AVIF header: \(message(result))")
            }
            let w = Int(image.pointee.width), h = Int(image.pointee.height)
            guard w > 0, h > 0, w * h <= maxPixels else {
                throw .header(path: path, reason: "AVIF is \(w)x\(h), over the limit of \(maxPixels) pixels")
            }
            return try body(decoder)
        }
    }

    /// The container's rotation then mirroring, as the orientations that perform them in turn.
    static func transforms(_ image: UnsafeMutablePointer<avifImage>) -> [EXIFOrientation] {
        var steps = [EXIFOrientation]()
        let flags = image.pointee.transformFlags
        if flags & avifTransformFlags(AVIF_TRANSFORM_IROT.rawValue) != 0 {
            // irot turns anti-clockwise by angle × 90°: Exif 8 turns a quarter anti-clockwise, 6 clockwise.
            switch image.pointee.irot.angle {
            case 1: steps.append(.left)
            case 2: steps.append(.down)
            case 3: steps.append(.right)
            default: break
            }
        }
        if flags & avifTransformFlags(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
            // mode 0 exchanges top and bottom (Exif 4), 1 left and right (Exif 2).
            steps.append(image.pointee.imir.mode == 0 ? .downMirrored : .upMirrored)
        }
        return steps
    }

    /// The size decoding gives (turned as the container says when `upright`).
    static func size(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> (width: Int, height: Int) {
        try withDecoder(bytes, path: path, maxPixels: options.maxPixels) { decoder in
            let image = decoder.pointee.image!
            let w = Int(image.pointee.width), h = Int(image.pointee.height)
            let swaps = options.applyEXIFOrientation && transforms(image).contains { $0.swapsAxes }
            return swaps ? (h, w) : (w, h)
        }
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        try withDecoder(bytes, path: path, maxPixels: options.maxPixels) { (decoder) throws(CodecError) -> Image in
            let next = avifDecoderNextImage(decoder)
            guard next == AVIF_RESULT_OK, let image = decoder.pointee.image else {
                throw .decode(path: path, reason: "AVIF data: \(message(next))")
            }
            let w = Int(image.pointee.width), h = Int(image.pointee.height)
            var out = [UInt8](repeating: 0, count: w * h * 4)
            var converted = AVIF_RESULT_OK
            out.withUnsafeMutableBufferPointer { dst in
                var rgb = avifRGBImage()
                avifRGBImageSetDefaults(&rgb, image)
                rgb.format = AVIF_RGB_FORMAT_RGBA
                rgb.depth = 8
                rgb.pixels = dst.baseAddress
                rgb.rowBytes = UInt32(w * 4)
                converted = avifImageYUVToRGB(image, &rgb)
            }
            guard converted == AVIF_RESULT_OK else { throw .decode(path: path, reason: "AVIF: \(message(converted))") }
            var result = try! Image(width: w, height: h, format: .rgba8, bytes: out)
            if options.applyEXIFOrientation {
                for step in transforms(image) { result = result.applying(step) }
            }
            return result
        }
    }

    /// The ICC profile, Exif and XMP the file carries, as stored.
    static func metadata(_ bytes: [UInt8]) -> ImageMetadata {
        (try? withDecoder(bytes, path: "", maxPixels: Int(UInt32.max)) { decoder in
            let image = decoder.pointee.image!.pointee
            func data(_ d: avifRWData) -> [UInt8]? {
                guard d.size > 0, let p = d.data else { return nil }
                return Array(UnsafeBufferPointer(start: p, count: d.size))
            }
            return ImageMetadata(icc: data(image.icc), exif: data(image.exif).flatMap(HEIFCodec.exifTIFF), xmp: data(image.xmp))
        }) ?? ImageMetadata()
    }
}
