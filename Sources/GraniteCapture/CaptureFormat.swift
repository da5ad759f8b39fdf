import GraniteMedia

/// A camera pixel format the capture layer negotiates, or `auto` for the best one offered.
public enum CaptureFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Let the device decide among the formats below (see ``CaptureFormat/preference``).
    case auto
    /// YUV 4:2:2 packed (`YUYV`).
    case yuyv
    /// Motion JPEG (`MJPG`); each frame is a JPEG, decoded through the source's decoder.
    case mjpeg
    /// YUV 4:2:0 semi-planar (`NV12`).
    case nv12
    /// 8-bit RGB (`RGB3`).
    case rgb24

    public var description: String { rawValue }

    /// The V4L2 fourcc, `nil` for `auto`.
    public var fourcc: UInt32? {
        switch self {
        case .auto: return nil
        case .yuyv: return FourCC.make("YUYV")
        case .mjpeg: return FourCC.make("MJPG")
        case .nv12: return FourCC.make("NV12")
        case .rgb24: return FourCC.make("RGB3")
        }
    }

    /// The format of `fourcc`, if it is one of ours.
    public init?(fourcc: UInt32) {
        guard let match = CaptureFormat.allCases.first(where: { $0.fourcc == fourcc }) else { return nil }
        self = match
    }

    /// The order `auto` tries formats in: uncompressed first (no decode per frame, exact
    /// pixels), YUYV before NV12 (chroma at full vertical resolution), RGB24 last since drivers
    /// rarely offer it natively; MJPEG only when the size or rate wanted needs it.
    public static let preference: [CaptureFormat] = [.yuyv, .nv12, .rgb24, .mjpeg]

    /// The pixel format of the `Image` a frame carries, before any decode.
    var pixelFormat: PixelFormat? {
        switch self {
        case .yuyv: return .yuyv
        case .nv12: return .nv12
        case .rgb24: return .rgb24
        case .mjpeg, .auto: return nil
        }
    }
}

/// Four-character codes as V4L2 packs them (little-endian, first character lowest).
public enum FourCC {
    /// Packs four ASCII characters.
    public static func make(_ text: String) -> UInt32 {
        var value: UInt32 = 0
        for (i, byte) in text.utf8.prefix(4).enumerated() { value |= UInt32(byte) << (8 * UInt32(i)) }
        return value
    }

    /// Unpacks a code into its four characters (spaces trimmed at the end).
    public static func string(_ code: UInt32) -> String {
        var chars: [Character] = []
        for i in 0..<4 {
            let byte = UInt8((code >> (8 * UInt32(i))) & 0xff)
            chars.append(byte >= 32 && byte < 127 ? Character(Unicode.Scalar(byte)) : "?")
        }
        var text = String(chars)
        while text.hasSuffix(" ") { text.removeLast() }
        return text
    }
}

/// A frame size in pixels.
public struct FrameSize: Sendable, Hashable, CustomStringConvertible, Comparable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size; both sides should be positive.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WxH` (`640x480`); `nil` when malformed or not positive.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }

    public static func < (a: FrameSize, b: FrameSize) -> Bool {
        (a.width * a.height, a.width) < (b.width * b.height, b.width)
    }
}

/// What a caller asks a source for; drivers may adjust every part of it.
public struct CaptureRequest: Sendable, Hashable {
    /// Pixel format, or `.auto`.
    public var format: CaptureFormat
    /// Frame size; `nil` keeps the device's current one.
    public var size: FrameSize?
    /// Frames per second; `nil` keeps the device's current rate.
    public var fps: Double?
    /// Controls set after the format is negotiated, in order (and again after each reconnect).
    public var controls: [ControlSetting]

    /// A request; every part is optional.
    public init(format: CaptureFormat = .auto, size: FrameSize? = nil, fps: Double? = nil, controls: [ControlSetting] = []) {
        self.format = format
        self.size = size
        self.fps = fps
        self.controls = controls
    }
}

/// What the driver actually chose after negotiation (read back, never assumed).
public struct StreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// Negotiated pixel format.
    public var format: CaptureFormat
    /// Negotiated size (drivers round: vivid turns 320x240 into 320x180).
    public var size: FrameSize
    /// Bytes per row the driver uses (may exceed the packed row size).
    public var bytesPerLine: Int
    /// Negotiated rate, from the frame interval the driver reports; `nil` if it reports none.
    public var fps: Double?
    /// Whether libv4l2 converts to this format in user space (the device does not offer it).
    public var emulated: Bool
    /// The controls set by the request (`--ctrl`), as the driver read them back after setting
    /// them (``CameraControl/readBack``), in the order asked; empty when none were asked.
    public var controls: [String] = []
    /// What the source adds about how it got this format (a PipeWire node: the format it sends
    /// and the offers it was chosen among); nil for none.
    public var detail: String?

    /// A negotiated format.
    public init(format: CaptureFormat, size: FrameSize, bytesPerLine: Int, fps: Double?, emulated: Bool = false) {
        self.format = format
        self.size = size
        self.bytesPerLine = bytesPerLine
        self.fps = fps
        self.emulated = emulated
    }

    public var description: String {
        let rate = fps.map { " @ \(Self.formatRate($0)) fps" } ?? ""
        let name = format == .auto ? "" : "\(format) "   // sources that are not cameras
        let set = controls.isEmpty ? "" : " | ctrl " + controls.joined(separator: " ")
        return "\(name)\(size)\(rate)\(emulated ? " (converted by libv4l2)" : "")\(detail.map { " (\($0))" } ?? "")\(set)"
    }

    /// A rate as people write it: `30`, `29.97`.
    public static func describeRate(_ fps: Double) -> String { formatRate(fps) }

    static func formatRate(_ fps: Double) -> String {
        let rounded = (fps * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
