/// A CPU image: size, pixel format and tightly packed bytes.
///
/// `Image` is a value type (copy-on-write through its array), so it crosses concurrency domains
/// freely. It is what codecs decode into and encode from, what capture produces, and what the
/// GPU layer uploads once per chain.
public struct Image: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let format: PixelFormat
    /// Tightly packed bytes (`format.byteCount(width:height:)` of them).
    public var bytes: [UInt8]

    /// Wraps `bytes`; throws if their count does not match the size and format.
    public init(width: Int, height: Int, format: PixelFormat, bytes: [UInt8]) throws(MediaError) {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height) }
        let expected = format.byteCount(width: width, height: height)
        guard bytes.count == expected else {
            throw .byteCountMismatch(format: format, width: width, height: height, expected: expected, actual: bytes.count)
        }
        self.width = width
        self.height = height
        self.format = format
        self.bytes = bytes
    }

    /// A zero-filled image.
    public init(width: Int, height: Int, format: PixelFormat) throws(MediaError) {
        try self.init(width: width, height: height, format: format,
                      bytes: [UInt8](repeating: 0, count: format.byteCount(width: width, height: height)))
    }

    /// Bytes in one row with no padding.
    public var bytesPerRow: Int { format.minimumBytesPerRow(width: width) }

    /// The number of pixels.
    public var pixelCount: Int { width * height }
}

extension Image {
    /// Reads an `rgba8` pixel (no bounds check beyond the array's own).
    @inlinable
    public func rgba(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        precondition(format == .rgba8, "rgba(x:y:) needs an rgba8 image")
        let i = (y * width + x) * 4
        return (bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3])
    }

    /// Reads the float plane of a `grayF32` image.
    public func floats() -> [Float] {
        precondition(format == .grayF32 || format == .rgbaF32, "floats() needs a float image")
        return bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Makes a `grayF32` (one value a pixel) or `rgbaF32` (four) image from floats.
    public init(width: Int, height: Int, floats: [Float], format: PixelFormat = .grayF32) throws(MediaError) {
        let bytes = floats.withUnsafeBytes { Array($0) }
        try self.init(width: width, height: height, format: format, bytes: bytes)
    }
}
