import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a path is, read with `lstat` (symlinks are not followed, as `ipfs add -r` does).
enum FileKind: Equatable {
    case regular
    case directory
    case symlink(target: String)

    /// The kind of `path`; throws ``IPFSError`` if it cannot be read or is a device, socket, fifo.
    init(path: String) throws(IPFSError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            throw IPFSError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG: self = .regular
        case S_IFDIR: self = .directory
        case S_IFLNK:
            do {
                self = .symlink(target: try FileManager.default.destinationOfSymbolicLink(atPath: path))
            } catch {
                throw IPFSError.unreadable(path: path, reason: "unreadable symlink")
            }
        default: throw IPFSError.unsupportedFileType(path: path)
        }
    }

    /// The names in directory `path`, sorted by their UTF-8 bytes.
    static func sortedChildren(of path: String) throws(IPFSError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path)
                .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        } catch {
            throw IPFSError.unreadable(path: path, reason: "cannot list directory")
        }
    }
}

/// Reads a file in fixed-size chunks into one reused buffer (`read(2)`, full chunks but the last).
struct ChunkReader: ~Copyable {
    private let fd: Int32
    private let path: String
    private let buffer: UnsafeMutableRawBufferPointer

    init(path: String, chunkSize: Int) throws(IPFSError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw IPFSError.unreadable(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
        self.path = path
        self.buffer = .allocate(byteCount: chunkSize, alignment: 64)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    /// The next chunk (valid until the next call), or nil at end of file.
    mutating func next() throws(IPFSError) -> UnsafeRawBufferPointer? {
        var filled = 0
        while filled < buffer.count {
            let n = read(fd, buffer.baseAddress! + filled, buffer.count - filled)
            if n < 0 {
                if errno == EINTR { continue }
                throw IPFSError.unreadable(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            filled += n
        }
        return filled == 0 ? nil : UnsafeRawBufferPointer(rebasing: buffer[0..<filled])
    }
}
