#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import GraniteMedia

/// The text of an errno value.
func systemErrorText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
}

/// Whole-file reads with typed errors.
public enum FileBytes {
    /// Reads the whole file; files over `maxBytes` are refused before reading.
    public static func read(_ path: String, maxBytes: Int = 1 << 31) throws(CodecError) -> [UInt8] {
        let fd = try retryingEINTR(path, "open") { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .io(path: path, operation: "stat", errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw .io(path: path, operation: "read (not a regular file)", errno: EISDIR)
        }
        let size = Int(st.st_size)
        guard size <= maxBytes else { throw .io(path: path, operation: "read (file over \(maxBytes) bytes)", errno: EFBIG) }
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let n = try retryingEINTR(path, "read") {
                bytes.withUnsafeMutableBytes { buf in Glibc.read(fd, buf.baseAddress! + done, size - done) }
            }
            if n == 0 { break }  // the file shrank while we read it
            done += n
        }
        if done < size { bytes.removeSubrange(done...) }
        return bytes
    }
}

/// Runs a call returning -1 on failure through GraniteMedia's one EINTR-retrying
/// ``SystemCall/retryingEINTR(_:failure:)``, and turns failure into `CodecError.io`.
@discardableResult
func retryingEINTR<T: BinaryInteger>(_ path: String, _ operation: String, _ call: () -> T) throws(CodecError) -> T {
    try SystemCall.retryingEINTR(call) { CodecError.io(path: path, operation: operation, errno: $0) }
}
