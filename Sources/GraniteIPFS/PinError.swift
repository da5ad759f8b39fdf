/// Errors of journaled pinning (``Pinner``, ``PinQueue``, ``PinSession``), which touches the node,
/// local files and the journal at once: each case carries the error of the part that failed,
/// whose message names the node, the file or the journal (node text escaped, credentials never
/// included).
public enum PinError: Error, Equatable, CustomStringConvertible {
    /// The Kubo node (or its address or credentials) failed.
    case node(KuboError)
    /// A local file or folder could not be imported (unreadable, unsupported, too large a folder).
    case files(IPFSError)
    /// The pin journal could not be opened, written or read.
    case journal(PinJournalError)
    /// The files no longer have the CID they were queued with: no later run can pin them.
    case contentChanged(paths: [String], queued: CID, now: String)
    /// The pass was cancelled; its jobs stay in the journal.
    case cancelled

    /// True for failures no later run can fix (the job is journaled as failed): the content is
    /// not what was queued, or a local file cannot be imported.
    public var isPermanent: Bool {
        switch self {
        case .contentChanged, .files: true
        case let .node(error):
            switch error {
            case .cidMismatch, .local: true
            default: false
            }
        case .journal, .cancelled: false
        }
    }

    /// True when the node answered `dag/import` as a command it does not know.
    var nodeLacksDagImport: Bool {
        if case let .node(error) = self { return error.isUnknownCommand }
        return false
    }

    /// A one-line message naming what failed and why.
    public var description: String {
        switch self {
        case let .node(error): error.description
        case let .files(error): error.description
        case let .journal(error): error.description
        case let .contentChanged(paths, queued, now):
            "'\(paths.joined(separator: "', '"))' changed since queued: CID was \(queued), is now \(now)"
        case .cancelled: "pinning cancelled; the jobs stay journaled"
        }
    }
}
