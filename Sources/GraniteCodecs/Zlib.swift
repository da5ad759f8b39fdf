import CZlib

/// zlib streams for PNG chunks (iCCP, compressed iTXt) and their CRC-32s.
enum Zlib {
    /// Inflates a zlib stream, refusing more than `limit` bytes of output (decompression bombs).
    static func inflate(_ input: [UInt8], limit: Int, what: String) throws(MetadataError) -> [UInt8] {
        var stream = z_stream()
        guard granite_inflateInit(&stream) == Z_OK else { throw .compression(what: what, reason: "zlib inflateInit failed") }
        defer { inflateEnd(&stream) }
        var out = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { src in
            stream.next_in = src.baseAddress
            stream.avail_in = uInt(src.count)
            while true {
                let (rc, produced) = chunk.withUnsafeMutableBufferPointer { dst -> (Int32, Int) in
                    stream.next_out = dst.baseAddress
                    stream.avail_out = uInt(dst.count)
                    let rc = CZlib.inflate(&stream, Z_NO_FLUSH)
                    return (rc, dst.count - Int(stream.avail_out))
                }
                if out.count + produced > limit { return Z_MEM_ERROR }
                out += chunk[0..<produced]
                if rc == Z_STREAM_END { return Z_STREAM_END }
                if rc != Z_OK { return rc }
                if stream.avail_in == 0 && produced == 0 { return Z_BUF_ERROR }
            }
        }
        switch status {
        case Z_STREAM_END: return out
        case Z_MEM_ERROR: throw .tooLarge(what: "\(what) inflated bytes", count: out.count, limit: limit)
        case Z_BUF_ERROR: throw .compression(what: what, reason: "zlib stream is truncated")
        default: throw .compression(what: what, reason: "zlib data is corrupt (inflate returned \(status))")
        }
    }

    /// Deflates `input` into a zlib stream (level 9: profiles and metadata are small).
    static func deflate(_ input: [UInt8]) -> [UInt8] {
        var size = compressBound(uLong(input.count))
        var out = [UInt8](repeating: 0, count: Int(size))
        let rc = out.withUnsafeMutableBufferPointer { dst in
            input.withUnsafeBufferPointer { src in compress2(dst.baseAddress, &size, src.baseAddress, uLong(src.count), 9) }
        }
        // compress2 fails only without memory or with a too-small buffer, and compressBound rules that out.
        precondition(rc == Z_OK, "zlib compress2 failed: \(rc)")
        out.removeSubrange(Int(size)...)
        return out
    }

    /// The CRC-32 of `parts` taken as one run of bytes (PNG: chunk type then data).
    static func crc32(_ parts: ArraySlice<UInt8>...) -> UInt32 {
        var crc = CZlib.crc32(0, nil, 0)
        for part in parts {
            crc = part.withUnsafeBufferPointer { CZlib.crc32(crc, $0.baseAddress, uInt($0.count)) }
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
