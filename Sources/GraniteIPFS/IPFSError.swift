/// Errors of local DAG building: CIDs, files read for import, CAR export.
public enum IPFSError: Error, Equatable, CustomStringConvertible {
    /// A CID string that is not v0/v1 sha2-256 dag-pb/raw.
    case invalidCID(String, reason: String)
    /// Import options Kubo would refuse.
    case invalidOptions(String)
    /// A file or directory could not be read (path, errno text).
    case unreadable(path: String, reason: String)
    /// A path that is neither a regular file, a directory nor a symlink.
    case unsupportedFileType(path: String)
    /// A directory whose entry names collide on all 64 bits of the HAMT's hash (no shard can hold them).
    case directoryNeedsSharding(path: String, links: Int)
    /// A batch's files no longer give the root CID they were queued with (found while sending it).
    case rootChanged(expected: String, now: String)
    /// The CAR file could not be written.
    case carWrite(path: String, reason: String)
    /// Two top-level entries of one add share a name.
    case duplicateName(String)

    /// A one-line message naming what failed and why.
    public var description: String {
        switch self {
        case let .invalidCID(text, reason): "invalid CID '\(text)': \(reason)"
        case let .invalidOptions(why): "invalid import options: \(why)"
        case let .unreadable(path, reason): "cannot read '\(path)': \(reason)"
        case let .unsupportedFileType(path): "'\(path)' is not a regular file, directory or symlink"
        case let .directoryNeedsSharding(path, links):
            "directory '\(path)' (\(links) entries) has names whose 64-bit HAMT hashes collide: "
                + "rename one of them or split the folder"
        case let .rootChanged(expected, now): "files changed since they were queued: root CID was \(expected), is now \(now)"
        case let .carWrite(path, reason): "cannot write CAR file '\(path)': \(reason)"
        case let .duplicateName(name): "two inputs share the name '\(name)'"
        }
    }
}
