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
    /// A directory too large for a basic (non-HAMT) UnixFS directory.
    case directoryNeedsSharding(path: String, links: Int)
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
            "directory '\(path)' (\(links) entries) is over Kubo's single-block limit (256 KiB of names and CIDs) "
                + "and needs HAMT sharding, which granite does not build: split it into subfolders of at most "
                + "\(max(1, links / 2)) entries, or pin its files one by one (granite pin FILE...)"
        case let .carWrite(path, reason): "cannot write CAR file '\(path)': \(reason)"
        case let .duplicateName(name): "two inputs share the name '\(name)'"
        }
    }
}
