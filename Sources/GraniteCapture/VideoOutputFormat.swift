/// The pixel layouts `granite-cam` writes to a V4L2 output device (a virtual camera), in the
/// order it prefers them: what v4l2loopback readers (browsers, Zoom, OBS) take most widely first.
public enum VideoOutputFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Packed 4:2:2, Y0 U Y1 V (`YUYV`).
    case yuyv
    /// Planar 4:2:0, Y then U then V (`YU12`, also called I420).
    case yu12
    /// Packed R, G, B (`RGB3`).
    case rgb24
    /// Packed B, G, R (`BGR3`).
    case bgr24

    /// The V4L2 fourcc.
    public var fourcc: UInt32 {
        switch self {
        case .yuyv: return FourCC.make("YUYV")
        case .yu12: return FourCC.make("YU12")
        case .rgb24: return FourCC.make("RGB3")
        case .bgr24: return FourCC.make("BGR3")
        }
    }

    /// The layout with this fourcc, if we write it.
    public init?(fourcc: UInt32) {
        guard let match = Self.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = match
    }

    /// Bytes in one packed row (the luma row for planar YU12).
    public func minimumBytesPerLine(width: Int) -> Int {
        switch self {
        case .yuyv: return ((width + 1) / 2) * 4
        case .yu12: return width
        case .rgb24, .bgr24: return width * 3
        }
    }

    /// Bytes in one frame with rows `bytesPerLine` apart (YU12's chroma rows are half as long).
    public func frameBytes(width: Int, height: Int, bytesPerLine: Int) -> Int {
        switch self {
        case .yu12: return bytesPerLine * height + 2 * (bytesPerLine / 2) * ((height + 1) / 2)
        default: return bytesPerLine * height
        }
    }

    public var description: String { FourCC.string(fourcc) }
}
