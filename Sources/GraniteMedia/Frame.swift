/// One frame of a stream: an image plus where and when it came from.
///
/// Frames travel through the pipeline as `.quiet` Granite events; the sequence number comes from
/// the source (the kernel's for V4L2), so gaps are dropped frames.
public struct Frame: Sendable, Equatable {
    /// The pixels.
    public var image: Image
    /// The source's sequence number (gaps mean dropped frames).
    public var sequence: UInt64
    /// Capture time in nanoseconds on the monotonic clock (`CLOCK_MONOTONIC`), as V4L2 reports it.
    public var timestampNanos: UInt64
    /// What produced the frame (a device path, a folder, `testpattern`).
    public var source: String
    /// The image already converted to YUV where it was made (a GPU filter chain's result,
    /// converted on the device), by layout; outputs use these bytes instead of converting
    /// ``image`` again. Empty for most frames.
    public var yuv: [YUVLayout: [UInt8]] = [:]

    public init(image: Image, sequence: UInt64, timestampNanos: UInt64, source: String) {
        self.image = image
        self.sequence = sequence
        self.timestampNanos = timestampNanos
        self.source = source
    }

    public var width: Int { image.width }
    public var height: Int { image.height }
    public var format: PixelFormat { image.format }
}
