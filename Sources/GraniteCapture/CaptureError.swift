#if canImport(Glibc)
import Glibc
#endif

/// Everything capture reports, each naming the device (or folder) and what was wrong.
public enum CaptureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such device node (or it vanished before it could be opened).
    case deviceMissing(device: String)
    /// Another process holds the device (open/REQBUFS/S_FMT answered EBUSY).
    case deviceBusy(device: String)
    /// The node exists but cannot capture video by streaming (a metadata node, an output device).
    case notACaptureDevice(device: String, card: String, capabilities: UInt32)
    /// The requested format is not among the device's; `offered` lists what it has.
    case unsupportedFormat(device: String, requested: String, offered: [String])
    /// The device went away while streaming (unplugged, driver unbound).
    case disconnected(device: String, detail: String)
    /// A C call failed; `call` is the function or ioctl name, `errno` the C error number.
    case systemCall(device: String, call: String, errno: Int32)
    /// A folder source found nothing to play.
    case emptyFolder(path: String)
    /// A file of a folder source could not be decoded.
    case decodeFailed(path: String, reason: String)
    /// A source specification or option could not be understood.
    case invalidRequest(String)
    /// The device delivered no frame within the time allowed.
    case timedOut(device: String, seconds: Double)
    /// `--ctrl` named a control the device does not have; `valid` lists the ones it has.
    case unknownControl(device: String, control: String, valid: [String])
    /// A control value the device would not take (out of range, not a menu item, read-only).
    case controlValue(device: String, control: String, value: String, reason: String, valid: String)
    /// The node is not a video output device (for `--v4l2-out`).
    case notAnOutputDevice(device: String, card: String, capabilities: UInt32)
    /// A source that was linked (a PipeWire node) or streaming (a camera) sent no frame within
    /// `seconds` of starting or of a reconnect; `detail` says what was negotiated.
    case noFirstFrame(device: String, seconds: Double, detail: String)
    /// PipeWire refused or failed (no daemon, no such node, a stream error); `node` names the
    /// node (or the daemon's socket, for the connection itself).
    case pipeWire(node: String, detail: String)
    /// ALSA refused or failed (no such PCM, busy, no format it can give, a read that failed);
    /// `pcm` names the PCM as given (`default`, `hw:1,0`, `pipewire`…).
    case alsa(pcm: String, detail: String)

    public var description: String {
        switch self {
        case let .deviceMissing(device):
            return "\(device): no such video device"
        case let .deviceBusy(device):
            return "\(device): device is busy (another program is using it)"
        case let .notACaptureDevice(device, card, caps):
            return "\(device) (\(card)): not a streaming video capture device (capabilities 0x\(String(caps, radix: 16)))"
        case let .unsupportedFormat(device, requested, offered):
            return "\(device): format \(requested) is not offered; the device offers: \(offered.joined(separator: ", "))"
        case let .disconnected(device, detail):
            return "\(device): device disconnected (\(detail))"
        case let .systemCall(device, call, code):
            return "\(device): \(call) failed: \(CaptureError.message(for: code)) (errno \(code))"
        case let .emptyFolder(path):
            return "\(path): folder has no images to play (.ppm, .pgm, .jpg, .jpeg, .png)"
        case let .decodeFailed(path, reason):
            return "\(path): cannot decode: \(reason)"
        case let .invalidRequest(message):
            return message
        case let .timedOut(device, seconds):
            return "\(device): no frame within \(seconds) s"
        case let .unknownControl(device, control, valid):
            return "\(device): no control named \(control); the device has: \(valid.joined(separator: ", "))"
        case let .controlValue(device, control, value, reason, valid):
            return "\(device): control \(control) cannot be set to \(value): \(reason) (valid: \(valid))"
        case let .notAnOutputDevice(device, card, caps):
            return "\(device) (\(card)): not a video output device (capabilities 0x\(String(caps, radix: 16))); "
                + "a virtual camera is made by v4l2loopback"
        case let .noFirstFrame(device, seconds, detail):
            return "\(device): no first frame within \(ReconnectPolicy.seconds(seconds)) s (\(detail)); "
                + "the producer may be paused or stalled (--first-frame-timeout sets the bound)"
        case let .pipeWire(node, detail):
            return "\(node): PipeWire: \(detail)"
        case let .alsa(pcm, detail):
            return "\(pcm): ALSA: \(detail)"
        }
    }

    /// Whether reopening later may help (the device went away rather than refused us).
    public var isTransient: Bool {
        switch self {
        case .disconnected, .deviceMissing, .timedOut: return true
        case let .systemCall(_, _, code): return code == ENODEV || code == EIO || code == ENXIO || code == EPIPE
        default: return false
        }
    }

    /// The C library's text for an errno value.
    public static func message(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}
