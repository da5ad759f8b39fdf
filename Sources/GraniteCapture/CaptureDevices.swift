#if canImport(Glibc)
import Glibc
#endif

/// Finding and describing the V4L2 devices of this machine (`granite devices`).
public enum CaptureDevices {
    /// The `/dev/videoN` nodes in `directory`, in numeric order.
    public static func nodes(in directory: String = "/dev") -> [String] {
        listDirectory(directory)
            .filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
            .map { "\(directory)/\($0)" }
    }

    /// Opens `path` briefly and reports its card, driver, formats, sizes and rates.
    public static func describe(_ path: String) throws(CaptureError) -> DeviceInfo {
        let device = try V4L2Device(path: path)
        defer { device.close() }
        return try device.describe()
    }

    /// Every node with its description or the error that prevented one.
    public static func list(in directory: String = "/dev") -> [(path: String, result: Result<DeviceInfo, CaptureError>)] {
        nodes(in: directory).map { path in
            do throws(CaptureError) {
                return (path, .success(try describe(path)))
            } catch {
                return (path, .failure(error))
            }
        }
    }

    /// The first node that can stream video, if any: the default camera.
    public static func firstCamera(in directory: String = "/dev") -> String? {
        list(in: directory).first { entry in
            if case let .success(info) = entry.result { return info.canCapture }
            return false
        }?.path
    }
}

/// Names in a directory (no `.`/`..`), unsorted; empty when it cannot be read.
func listDirectory(_ path: String) -> [String] {
    (try? readDirectory(path)) ?? []
}

/// Names in a directory (no `.`/`..`), unsorted.
func readDirectory(_ path: String) throws(CaptureError) -> [String] {
    guard let dir = opendir(path) else { throw CaptureError.systemCall(device: path, call: "opendir", errno: errno) }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// A whole file's bytes.
func readFile(_ path: String) throws(CaptureError) -> [UInt8] {
    let fd = try systemCall("open", device: path) { open(path, O_RDONLY | O_CLOEXEC) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = try systemCall("read", device: path) {
            Int32(chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) })
        }
        if n == 0 { return bytes }
        bytes.append(contentsOf: chunk[0..<Int(n)])
    }
}
