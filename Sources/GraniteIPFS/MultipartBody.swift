import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// One part of an `add` upload: a file (read from disk or memory), a directory or a symlink.
struct UploadPart: Sendable {
    enum Content: Sendable {
        case file(path: String)
        case bytes([UInt8])
        case directory
        case symlink(target: String)
        /// A CARv1 stream built while it is read (`dag/import`).
        case car(CARStream)
    }

    /// Path inside the add, `/`-separated (`dir/a.png`).
    var name: String
    var content: Content

    /// The parts for `paths`, as `ipfs add -r` sends them: each directory before its
    /// contents, entries in byte order of their names, symlinks not followed.
    static func collect(paths: [String]) throws(IPFSError) -> [UploadPart] {
        var parts: [UploadPart] = []
        func walk(_ path: String, _ name: String) throws(IPFSError) {
            switch try FileKind(path: path) {
            case .regular: parts.append(UploadPart(name: name, content: .file(path: path)))
            case let .symlink(target): parts.append(UploadPart(name: name, content: .symlink(target: target)))
            case .directory:
                parts.append(UploadPart(name: name, content: .directory))
                for child in try FileKind.sortedChildren(of: path) { try walk(path + "/" + child, name + "/" + child) }
            }
        }
        for path in paths { try walk(path, URL(fileURLWithPath: path).standardizedFileURL.lastPathComponent) }
        return parts
    }
}

/// A `multipart/form-data` body streamed from disk on demand, 1 MiB at a time.
///
/// ```
/// parts ─► [--boundary, headers] ─► file bytes (read(2) as the client pulls) ─► … ─► --boundary--
/// ```
/// The HTTP client pulls the next buffer only when the socket can take it, so a large file is
/// never held in memory. Each attempt of a retried add makes a fresh body.
struct MultipartBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let boundary: String
    let parts: [UploadPart]

    init(parts: [UploadPart]) {
        self.parts = parts
        boundary = "granite-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
    }

    /// The request's `Content-Type`.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    /// Walks the parts, yielding headers and file contents in turn.
    struct Iterator: AsyncIteratorProtocol {
        private let body: MultipartBody
        private var index = 0
        private var file: OpenFile?
        private var car: CARStream.Iterator?
        private var finished = false

        init(body: MultipartBody) { self.body = body }

        mutating func next() async throws -> ByteBuffer? {
            if let file {
                if let chunk = try file.read(max: 1 << 20) { return chunk }
                self.file = nil
            }
            if car != nil {
                if let chunk = try await car?.next() { return chunk }
                car = nil
            }
            guard index < body.parts.count else {
                if finished { return nil }
                finished = true
                return ByteBuffer(string: (body.parts.isEmpty ? "" : "\r\n") + "--\(body.boundary)--\r\n")
            }
            let part = body.parts[index]
            index += 1
            var head = ByteBuffer(string: (index == 1 ? "" : "\r\n") + "--\(body.boundary)\r\n")
            head.writeString("Content-Disposition: form-data; name=\"file\"; filename=\"\(Self.queryEscape(part.name))\"\r\n")
            switch part.content {
            case let .file(path):
                head.writeString("Content-Type: application/octet-stream\r\n\r\n")
                file = try OpenFile(path: path)
            case let .bytes(bytes):
                head.writeString("Content-Type: application/octet-stream\r\n\r\n")
                head.writeBytes(bytes)
            case .directory:
                head.writeString("Content-Type: application/x-directory\r\n\r\n")
            case let .symlink(target):
                head.writeString("Content-Type: application/symlink\r\n\r\n")
                head.writeString(target)
            case let .car(stream):
                head.writeString("Content-Type: application/octet-stream\r\n\r\n")
                car = stream.makeAsyncIterator()
            }
            return head
        }

        /// Go's `url.QueryEscape`, which Kubo reverses with `url.QueryUnescape`.
        static func queryEscape(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                     UInt8(ascii: "."), UInt8(ascii: "~"):
                    out.unicodeScalars.append(Unicode.Scalar(byte))
                case UInt8(ascii: " "): out += "+"
                default: out += String(format: "%%%02X", byte)
                }
            }
            return out
        }
    }
}

/// A file open for reading while its part is streamed; closed when released.
private final class OpenFile {
    private let fd: Int32
    private let path: String

    init(path: String) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        self.path = path
        guard fd >= 0 else { throw IPFSError.unreadable(path: path, reason: String(cString: strerror(errno))) }
    }

    deinit { close(fd) }

    /// Up to `max` bytes, or nil at end of file.
    func read(max: Int) throws -> ByteBuffer? {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(max)
        while true {
            var n = 0
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: max) { ptr in
                n = Glibc.read(fd, ptr.baseAddress!, max)
                return Swift.max(n, 0)
            }
            if n >= 0 { return n == 0 ? nil : buffer }
            if errno != EINTR { throw IPFSError.unreadable(path: path, reason: String(cString: strerror(errno))) }
        }
    }
}
