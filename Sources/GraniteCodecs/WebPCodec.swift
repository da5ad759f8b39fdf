import CWebP
import GraniteMedia

/// WebP through libwebp's simple API: still images, lossy (quality 1-100) or lossless.
enum WebPCodec {
    static func features(_ bytes: [UInt8], path: String) throws(CodecError) -> (width: Int, height: Int, alpha: Bool) {
        var w: Int32 = 0, h: Int32 = 0, alpha: Int32 = 0, animation: Int32 = 0
        let ok = bytes.withUnsafeBufferPointer { granite_webp_features($0.baseAddress, $0.count, &w, &h, &alpha, &animation) }
        guard ok != 0 else { throw .header(path: path, reason: "WebP header could not be read") }
        guard animation == 0 else { throw .header(path: path, reason: "animated WebP is not supported") }
        guard w > 0, h > 0 else { throw .header(path: path, reason: "WebP header gives size \(w)x\(h)") }
        return (Int(w), Int(h), alpha != 0)
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        let (w, h, _) = try features(bytes, path: path)
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
}
