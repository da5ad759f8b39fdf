import GraniteMedia

/// Turns an encoded image file (or an MJPEG frame) into an `Image`: the seam to the codecs module.
///
/// GraniteCapture decodes only Netpbm itself (``NetpbmDecoder``); JPEG and PNG come from
/// GraniteCodecs, plugged in by the program (`Codecs.decode(bytes, path:options:)` wrapped in
/// a type conforming to this protocol).
public protocol ImageDecoder: Sendable {
    /// File extensions (lower case, no dot) this decoder reads.
    var fileExtensions: Set<String> { get }
    /// Decodes `bytes`; `path` names the file (or device) in errors.
    func decode(_ bytes: [UInt8], path: String) throws(CaptureError) -> Image
}

/// Binary Netpbm (`P5` gray, `P6` RGB, 8-bit) decoding, so folders of raw frames play without
/// any codec library; images come out `gray8` or `rgb24`.
public struct NetpbmDecoder: ImageDecoder {
    /// A decoder.
    public init() {}

    public var fileExtensions: Set<String> { ["ppm", "pgm", "pnm"] }

    public func decode(_ bytes: [UInt8], path: String) throws(CaptureError) -> Image {
        var index = 0
        func token() throws(CaptureError) -> String {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != 10 { index += 1 }
                } else if [9, 10, 13, 32].contains(bytes[index]) {
                    index += 1
                } else { break }
            }
            let start = index
            while index < bytes.count, ![9, 10, 13, 32].contains(bytes[index]) { index += 1 }
            guard index > start else { throw .decodeFailed(path: path, reason: "truncated Netpbm header") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        let magic = try token()
        guard magic == "P5" || magic == "P6" else {
            throw .decodeFailed(path: path, reason: "not a binary Netpbm file (magic \(magic.prefix(2)))")
        }
        guard let width = Int(try token()), let height = Int(try token()), let maxval = Int(try token()),
              width > 0, height > 0, width <= 1 << 15, height <= 1 << 15 else {
            throw .decodeFailed(path: path, reason: "bad Netpbm size or maximum value")
        }
        guard maxval == 255 else { throw .decodeFailed(path: path, reason: "only 8-bit Netpbm (maxval 255), got \(maxval)") }
        index += 1  // the single whitespace byte before the raster
        let format: PixelFormat = magic == "P5" ? .gray8 : .rgb24
        let count = format.byteCount(width: width, height: height)
        guard bytes.count - index >= count else {
            throw .decodeFailed(path: path, reason: "raster has \(max(0, bytes.count - index)) bytes, needs \(count)")
        }
        do {
            return try Image(width: width, height: height, format: format, bytes: Array(bytes[index..<(index + count)]))
        } catch {
            throw .decodeFailed(path: path, reason: error.description)
        }
    }
}

/// Several decoders as one, chosen by file extension (the first that claims it wins).
public struct DecoderSet: ImageDecoder {
    /// The decoders, in priority order.
    public let decoders: [any ImageDecoder]

    /// Combines decoders.
    public init(_ decoders: [any ImageDecoder]) {
        self.decoders = decoders
    }

    public var fileExtensions: Set<String> { decoders.reduce(into: []) { $0.formUnion($1.fileExtensions) } }

    public func decode(_ bytes: [UInt8], path: String) throws(CaptureError) -> Image {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        guard let decoder = decoders.first(where: { $0.fileExtensions.contains(ext) }) ?? decoders.first else {
            throw .decodeFailed(path: path, reason: "no decoder for .\(ext)")
        }
        return try decoder.decode(bytes, path: path)
    }
}
