/// One pixel format a device offers, with its sizes and their frame rates.
public struct FormatInfo: Sendable, Hashable {
    /// The V4L2 fourcc.
    public var fourcc: UInt32
    /// The driver's name for it (`YUYV 4:2:2`).
    public var name: String
    /// Our name for it, if we can capture it.
    public var format: CaptureFormat?
    /// Whether it is compressed (MJPEG, H.264).
    public var compressed: Bool
    /// Whether libv4l2 emulates it by converting from another format.
    public var emulated: Bool
    /// Sizes with their rates; a stepwise/continuous range is listed by its bounds.
    public var sizes: [SizeInfo]

    /// A format entry.
    public init(fourcc: UInt32, name: String, compressed: Bool, emulated: Bool, sizes: [SizeInfo]) {
        self.fourcc = fourcc
        self.name = name
        self.format = CaptureFormat(fourcc: fourcc)
        self.compressed = compressed
        self.emulated = emulated
        self.sizes = sizes
    }

    /// The fourcc as text (`YUYV`).
    public var code: String { FourCC.string(fourcc) }
}

/// One frame size of a format and the rates offered at it.
public struct SizeInfo: Sendable, Hashable {
    /// The size.
    public var size: FrameSize
    /// Frames per second offered at this size (discrete intervals), highest first.
    public var rates: [Double]

    /// A size entry.
    public init(size: FrameSize, rates: [Double]) {
        self.size = size
        self.rates = rates
    }
}

/// What `granite devices` shows for one node: path, card, driver, formats, sizes and rates.
public struct DeviceInfo: Sendable, Hashable {
    /// The device node (`/dev/video0`).
    public var path: String
    /// The card name (`vivid`, `HD Webcam C615`).
    public var card: String
    /// The driver (`vivid`, `uvcvideo`).
    public var driver: String
    /// The bus (`platform:vivid-000`, `usb-0000:00:14.0-1`).
    public var bus: String
    /// The node's own capability bits (device_caps).
    public var capabilities: UInt32
    /// Whether it captures video by streaming (metadata nodes of UVC cameras do not).
    public var canCapture: Bool
    /// Formats offered, native and emulated.
    public var formats: [FormatInfo]

    /// A device entry.
    public init(path: String, card: String, driver: String, bus: String, capabilities: UInt32,
                canCapture: Bool, formats: [FormatInfo]) {
        self.path = path
        self.card = card
        self.driver = driver
        self.bus = bus
        self.capabilities = capabilities
        self.canCapture = canCapture
        self.formats = formats
    }

    /// The format names, as errors list them (`YUYV`, `MJPG`, ...).
    public var offeredCodes: [String] {
        formats.map { $0.emulated ? "\($0.code) (emulated)" : $0.code }
    }

    /// Picks the format for `request`: the requested one if offered, else (for `auto`) the
    /// first of ``CaptureFormat/preference`` offered natively at the requested size and rate,
    /// falling back to the first native one we can capture, then an emulated one.
    /// `allowMJPEG: false` (no JPEG decoder at hand) keeps `auto` off MJPEG.
    public func choose(_ request: CaptureRequest, allowMJPEG: Bool = true) throws(CaptureError) -> CaptureFormat {
        let ours = formats.filter { $0.format != nil && (allowMJPEG || request.format == .mjpeg || $0.format != .mjpeg) }
        if request.format != .auto {
            guard ours.contains(where: { $0.format == request.format }) else {
                throw .unsupportedFormat(device: path, requested: request.format.rawValue, offered: offeredCodes)
            }
            return request.format
        }
        let native = ours.filter { !$0.emulated }
        func fits(_ info: FormatInfo) -> Bool {
            guard let size = request.size else { return true }
            guard let entry = info.sizes.first(where: { $0.size == size }) else { return info.sizes.isEmpty }
            guard let fps = request.fps, !entry.rates.isEmpty else { return true }
            return entry.rates.contains { $0 >= fps * 0.95 }
        }
        for candidate in CaptureFormat.preference {
            if let info = native.first(where: { $0.format == candidate }), fits(info) { return candidate }
        }
        for candidate in CaptureFormat.preference where native.contains(where: { $0.format == candidate }) {
            return candidate
        }
        for candidate in CaptureFormat.preference where ours.contains(where: { $0.format == candidate }) {
            return candidate
        }
        throw .unsupportedFormat(device: path, requested: "auto (one of yuyv, nv12, rgb24, mjpeg)", offered: offeredCodes)
    }
}
