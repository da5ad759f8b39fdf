import CPipeWire
import GraniteMedia

/// A raw video format a PipeWire camera node negotiates, and how its bytes lie in a buffer.
///
/// Strides follow GStreamer's default video layout (rows rounded up to 4 bytes, planes one after
/// another), which is what `pipewiresrc` and browsers assume when a buffer has one data block.
public enum PipeWireVideoFormat: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Packed 4:2:2 Y0 U Y1 V (V4L2 `YUYV`).
    case yuy2 = "YUY2"
    /// Semi-planar 4:2:0: Y, then interleaved U, V.
    case nv12 = "NV12"
    /// Planar 4:2:0: Y, U, V.
    case i420 = "I420"
    /// 8-bit R, G, B and an unused byte.
    case rgbx = "RGBx"
    /// 8-bit B, G, R and an unused byte.
    case bgrx = "BGRx"
    /// 8-bit R, G, B, A (an input takes it; outputs offer RGBx).
    case rgba = "RGBA"
    /// 8-bit B, G, R, A (an input takes it; outputs offer BGRx).
    case bgra = "BGRA"

    /// What an output offers, in order of preference (cameras' formats first).
    public static let outputFormats: [PipeWireVideoFormat] = [.yuy2, .nv12, .i420, .bgrx, .rgbx]

    public var description: String { rawValue }

    /// Parses a name as `--pipewire-out-format` takes it (`yuy2`, `NV12`, …; case ignored).
    public init?(name: String) {
        guard let found = PipeWireVideoFormat.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else { return nil }
        self = found
    }

    /// The `SPA_VIDEO_FORMAT_*` id.
    package var spaID: UInt32 {
        switch self {
        case .yuy2: return SPA_VIDEO_FORMAT_YUY2.rawValue
        case .nv12: return SPA_VIDEO_FORMAT_NV12.rawValue
        case .i420: return SPA_VIDEO_FORMAT_I420.rawValue
        case .rgbx: return SPA_VIDEO_FORMAT_RGBx.rawValue
        case .bgrx: return SPA_VIDEO_FORMAT_BGRx.rawValue
        case .rgba: return SPA_VIDEO_FORMAT_RGBA.rawValue
        case .bgra: return SPA_VIDEO_FORMAT_BGRA.rawValue
        }
    }

    /// The format with SPA id `id`, if it is one of these.
    package init?(spaID id: UInt32) {
        guard let found = PipeWireVideoFormat.allCases.first(where: { $0.spaID == id }) else { return nil }
        self = found
    }

    /// The YUV layout of a `width`-wide frame (nil for the RGB formats).
    public func yuvLayout(width: Int) -> YUVLayout? {
        let luma = PipeWireVideoFormat.roundUp4(width)
        switch self {
        case .yuy2: return .yuyv(stride: PipeWireVideoFormat.roundUp4(((width + 1) / 2) * 4))
        case .nv12: return .semiPlanar420(lumaStride: luma, chromaStride: luma)
        case .i420: return .planar420(lumaStride: luma, chromaStride: PipeWireVideoFormat.roundUp4((width + 1) / 2))
        case .rgbx, .bgrx, .rgba, .bgra: return nil
        }
    }

    /// Bytes between rows of plane 0.
    public func stride(width: Int) -> Int {
        yuvLayout(width: width)?.strides(width: width).luma ?? width * 4
    }

    /// Bytes of a `width`×`height` frame.
    public func byteCount(width: Int, height: Int) -> Int {
        yuvLayout(width: width)?.byteCount(width: width, height: height) ?? width * 4 * height
    }

    /// Whether bytes 0 and 2 of a pixel are blue and red (the BGR formats).
    public var isBGR: Bool { self == .bgrx || self == .bgra }

    private static func roundUp4(_ n: Int) -> Int { (n + 3) & ~3 }
}
