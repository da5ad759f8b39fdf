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
    /// The result in YUV still on the device, for an output that reads it straight into a buffer
    /// of its own (``DeviceYUV``) instead of taking ``yuv``'s bytes; nil for most frames.
    public var deviceYUV: (any DeviceYUV)?

    public init(image: Image, sequence: UInt64, timestampNanos: UInt64, source: String) {
        self.image = image
        self.sequence = sequence
        self.timestampNanos = timestampNanos
        self.source = source
    }

    /// Equal pixels, numbers and YUV bytes, and the same ``deviceYUV`` object (or none).
    public static func == (a: Frame, b: Frame) -> Bool {
        a.image == b.image && a.sequence == b.sequence && a.timestampNanos == b.timestampNanos && a.source == b.source
            && a.yuv == b.yuv && a.deviceYUV.map(ObjectIdentifier.init) == b.deviceYUV.map(ObjectIdentifier.init)
    }

    public var width: Int { image.width }
    public var height: Int { image.height }
    public var format: PixelFormat { image.format }
}

/// A frame's result converted to YUV on the device and left there until an output reads it into
/// its own buffer (a PipeWire buffer shared with the consumer): one copy from the device's staging
/// into that buffer, none into an array of ours first. It holds the device's result until it
/// goes (the last copy of the frame dropped).
public protocol DeviceYUV: AnyObject, Sendable {
    /// The layouts it can read (each at the frame's size, at the layout's own strides).
    var layouts: [YUVLayout] { get }
    /// Reads `layout` into `destination` (exactly `layout.byteCount` bytes at the frame's size);
    /// false when it cannot (another layout, the wrong size, the device failed): the caller
    /// converts ``Frame/image`` instead.
    func read(_ layout: YUVLayout, into destination: UnsafeMutableRawBufferPointer) -> Bool
}
