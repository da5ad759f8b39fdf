#if canImport(Glibc)
import Glibc
#endif
import CV4L2
import GraniteMedia

/// Runs one C call that returns -1 and sets errno on failure through GraniteMedia's one
/// EINTR-retrying ``SystemCall/retryingEINTR(_:failure:)``, and turns any other failure into a
/// ``CaptureError`` that keeps the call's name, the device and errno. Well-known errnos map to
/// their own cases (missing, busy, disconnected).
@discardableResult
package func systemCall(_ name: @autoclosure () -> String, device: String,
                _ body: () -> Int32) throws(CaptureError) -> Int32 {
    try SystemCall.retryingEINTR(body) { CaptureError.fromErrno($0, call: name(), device: device) }
}

/// One ioctl through libv4l2 with a typed argument, via ``systemCall(_:device:_:)``.
@discardableResult
func v4l2Ioctl<T>(_ fd: Int32, _ request: UInt, _ name: String, device: String,
                  _ argument: inout T) throws(CaptureError) -> Int32 {
    try systemCall(name, device: device) {
        withUnsafeMutablePointer(to: &argument) { cv4l2_ioctl(fd, request, UnsafeMutableRawPointer($0)) }
    }
}

extension CaptureError {
    /// The typed error for a failed C call.
    static func fromErrno(_ code: Int32, call: String, device: String) -> CaptureError {
        switch code {
        case ENOENT: return .deviceMissing(device: device)
        case EBUSY: return .deviceBusy(device: device)
        case ENODEV, ENXIO: return .disconnected(device: device, detail: "\(call): \(message(for: code))")
        default: return .systemCall(device: device, call: call, errno: code)
        }
    }
}
