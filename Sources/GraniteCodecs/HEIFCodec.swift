import CHEIF
import GraniteMedia

/// HEIC/HEIF reading through libheif (HEVC through libde265): the primary image, 8-bit RGBA, with
/// the container's rotation and mirroring (`irot`/`imir`) applied unless orientation is off; its
/// Exif, XMP and ICC profile for ``ImageMetadata``.
///
/// ```
/// bytes ─► heif_context (read without copy) ─► primary handle ─► size check ─► heif_decode_image(RGB, RGBA) ─► Image
/// ```
enum HEIFCodec {
    /// A context holding `bytes` and its primary image's handle, released when `body` returns.
    static func withPrimary<R>(_ bytes: [UInt8], path: String,
                               _ body: (OpaquePointer) throws(CodecError) -> R) throws(CodecError) -> R {
        guard let context = heif_context_alloc() else { throw .header(path: path, reason: "HEIF: libheif could not allocate a context") }
        defer { heif_context_free(context) }
        return try bytes.withUnsafeBufferPointer { (raw) throws(CodecError) -> R in
            var error = heif_context_read_from_memory_without_copy(context, raw.baseAddress, raw.count, nil)
            guard error.code == heif_error_Ok else { throw .header(path: path, reason: "HEIF: \(message(error))") }
            var handle: OpaquePointer?
            error = heif_context_get_primary_image_handle(context, &handle)
            guard error.code == heif_error_Ok, let handle else { throw .header(path: path, reason: "HEIF primary image: \(message(error))") }
            defer { heif_image_handle_release(handle) }
            return try body(handle)
        }
    }

    static func message(_ error: heif_error) -> String {
        error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)"
    }

    /// The size decoding gives: with the container's rotation applied when `upright` (libheif's
    /// width and height), as stored (`ispe`) otherwise.
    static func size(_ bytes: [UInt8], path: String, upright: Bool) throws(CodecError) -> (width: Int, height: Int) {
        try withPrimary(bytes, path: path) { handle in
            upright ? (Int(heif_image_handle_get_width(handle)), Int(heif_image_handle_get_height(handle)))
                : (Int(heif_image_handle_get_ispe_width(handle)), Int(heif_image_handle_get_ispe_height(handle)))
        }
    }

    static func decode(_ bytes: [UInt8], path: String, options: DecodeOptions) throws(CodecError) -> Image {
        try withPrimary(bytes, path: path) { (handle) throws(CodecError) -> Image in
            let w = Int(heif_image_handle_get_width(handle)), h = Int(heif_image_handle_get_height(handle))
            let pixels = w.multipliedReportingOverflow(by: h)
            guard w > 0, h > 0, !pixels.overflow, pixels.partialValue <= options.maxPixels else {
                throw .header(path: path, reason: "HEIF is \(w)x\(h), over the limit of \(options.maxPixels) pixels")
            }
            guard let decoding = heif_decoding_options_alloc() else { throw .decode(path: path, reason: "HEIF: no decoding options") }
            defer { heif_decoding_options_free(decoding) }
            decoding.pointee.ignore_transformations = options.applyEXIFOrientation ? 0 : 1
            decoding.pointee.convert_hdr_to_8bit = 1
            var image: OpaquePointer?
            let error = heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, decoding)
            guard error.code == heif_error_Ok, let image else { throw .decode(path: path, reason: "HEIF data: \(message(error))") }
            defer { heif_image_release(image) }
            let dw = Int(heif_image_get_width(image, heif_channel_interleaved))
            let dh = Int(heif_image_get_height(image, heif_channel_interleaved))
            var stride: Int32 = 0
            guard dw > 0, dh > 0, dw * dh <= options.maxPixels,
                  let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride), Int(stride) >= dw * 4 else {
                throw .decode(path: path, reason: "HEIF: no interleaved RGBA plane")
            }
            var out = [UInt8](repeating: 0, count: dw * dh * 4)
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<dh { (dst.baseAddress! + y * dw * 4).update(from: plane + y * Int(stride), count: dw * 4) }
            }
            return try! Image(width: dw, height: dh, format: .rgba8, bytes: out)
        }
    }

    /// The primary image's Exif (without the 4-byte offset HEIF puts before the TIFF header),
    /// XMP and ICC profile, as stored.
    static func metadata(_ bytes: [UInt8]) -> ImageMetadata {
        (try? withPrimary(bytes, path: "") { handle in
            var m = ImageMetadata()
            for (filter, kind) in [("Exif", MetadataKind.exif), ("mime", .xmp)] {
                var ids = [heif_item_id](repeating: 0, count: 8)
                let n = Int(heif_image_handle_get_list_of_metadata_block_IDs(handle, filter, &ids, Int32(ids.count)))
                for id in ids.prefix(n) {
                    if kind == .xmp, let type = heif_image_handle_get_metadata_content_type(handle, id),
                       String(cString: type) != "application/rdf+xml" { continue }
                    let size = heif_image_handle_get_metadata_size(handle, id)
                    guard size > 0, size <= XMPPacket.maxBytes else { continue }
                    var data = [UInt8](repeating: 0, count: size)
                    guard heif_image_handle_get_metadata(handle, id, &data).code == heif_error_Ok else { continue }
                    if kind == .exif {
                        guard let tiff = exifTIFF(data) else { continue }
                        m.exif = tiff
                    } else {
                        m.xmp = data
                    }
                    break
                }
            }
            let iccSize = heif_image_handle_get_raw_color_profile_size(handle)
            if iccSize > 0, iccSize <= ICCProfile.maxBytes {
                var icc = [UInt8](repeating: 0, count: iccSize)
                if heif_image_handle_get_raw_color_profile(handle, &icc).code == heif_error_Ok { m.icc = icc }
            }
            return m
        }) ?? ImageMetadata()
    }

    /// The TIFF structure inside an ISO BMFF Exif item: a big-endian offset to the TIFF header
    /// (usually past `Exif\0\0`), or, as some writers store it, the TIFF header or `Exif\0\0` at once.
    static func exifTIFF(_ data: [UInt8]) -> [UInt8]? {
        let signature = ImageMetadata.exifSignature
        var d = data[...]
        if !(d.starts(with: [0x49, 0x49]) || d.starts(with: [0x4D, 0x4D]) || d.starts(with: signature)) {
            guard d.count >= 4 else { return nil }
            let skip = 4 + (Int(d[d.startIndex]) << 24 | Int(d[d.startIndex + 1]) << 16 | Int(d[d.startIndex + 2]) << 8 | Int(d[d.startIndex + 3]))
            guard skip < d.count else { return nil }
            d = d.dropFirst(skip)
        }
        if d.starts(with: signature) { d = d.dropFirst(signature.count) }
        return d.count >= 8 ? Array(d) : nil
    }
}
