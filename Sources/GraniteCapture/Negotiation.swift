/// The arithmetic of V4L2 negotiation, apart from the ioctls: what the driver's read-back
/// format means, and frame rates as the frame intervals V4L2 speaks in. Pure functions of what
/// the driver answered, so they are tested (and fuzzed) without a device.
extension StreamFormat {
    /// The stream a driver's G_FMT answer describes, for a request of `format`.
    ///
    /// Throws `.unsupportedFormat` when the driver chose another pixel format than `format`.
    /// A `bytesPerLine` of 0 (the driver leaves it to us) becomes the packed row size. The rate
    /// is left unset (S_PARM / G_PARM come after).
    public init(readBack format: CaptureFormat, fourcc: UInt32, width: UInt32, height: UInt32, bytesPerLine: UInt32,
                info: DeviceInfo) throws(CaptureError) {
        guard let wanted = format.fourcc else { throw .invalidRequest("\(info.path): negotiate needs a concrete format, not auto") }
        guard fourcc == wanted else {
            throw .unsupportedFormat(device: info.path, requested: "\(format) (driver chose \(FourCC.string(fourcc)))",
                                     offered: info.offeredCodes)
        }
        let w = Int(width), h = Int(height)
        var stride = Int(bytesPerLine)
        if stride == 0 { stride = format.pixelFormat?.minimumBytesPerRow(width: w) ?? 0 }
        let emulated = info.formats.first(where: { $0.fourcc == fourcc })?.emulated ?? false
        self.init(format: format, size: FrameSize(width: w, height: h), bytesPerLine: stride, fps: nil, emulated: emulated)
    }
}

/// A frame interval (seconds per frame as a fraction), V4L2's way of stating a rate.
public struct FrameInterval: Sendable, Hashable {
    /// Seconds per frame, numerator.
    public var numerator: UInt32
    /// Seconds per frame, denominator.
    public var denominator: UInt32

    /// An interval.
    public init(numerator: UInt32, denominator: UInt32) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The interval to ask for `fps` frames per second: `1/fps` for whole rates, `1000/(fps×1000)`
    /// otherwise (29.97 → 1000/29970). Nil for a rate no interval can state (not finite, not
    /// positive, or beyond what 32 bits hold).
    public init?(fps: Double) {
        guard fps.isFinite, fps > 0 else { return nil }
        if fps.rounded() == fps {
            guard fps <= Double(UInt32.max) else { return nil }
            self.init(numerator: 1, denominator: UInt32(fps))
        } else {
            let thousandths = (fps * 1000).rounded()
            guard thousandths >= 1, thousandths <= Double(UInt32.max) else { return nil }
            self.init(numerator: 1000, denominator: UInt32(thousandths))
        }
    }

    /// Frames per second, or nil when either part is 0 (drivers answer 0/0 for "unknown").
    public var fps: Double? {
        numerator > 0 && denominator > 0 ? Double(denominator) / Double(numerator) : nil
    }
}
