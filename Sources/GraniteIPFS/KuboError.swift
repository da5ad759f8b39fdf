/// Errors talking to a Kubo node's RPC API.
public enum KuboError: Error, Equatable, CustomStringConvertible {
    /// An API address that is neither a supported multiaddr nor an http(s) URL.
    case badAddress(String, reason: String)
    /// Credentials that do not parse (the secret itself is never included).
    case badAuth(String)
    /// The node could not be reached or the connection broke (node, command, cause).
    case unreachable(node: String, command: String, reason: String)
    /// No answer within the deadline.
    case timeout(node: String, command: String)
    /// The node answered an error: HTTP status and Kubo's `{Message, Code, Type}` (or plain text).
    case command(node: String, command: String, status: Int, message: String, code: Int?)
    /// Auth refused (403): missing or wrong credentials, or a path not allowed for them.
    case forbidden(node: String, command: String, message: String)
    /// An error reported after output had started, in the `X-Stream-Error` trailer.
    case streamError(node: String, command: String, message: String)
    /// The body ended without the expected output (truncated stream, missing final line).
    case truncated(node: String, command: String, reason: String)
    /// A response that does not parse as Kubo's JSON.
    case badResponse(node: String, command: String, reason: String)
    /// The node's CID for an added entry differs from the locally computed one.
    case cidMismatch(name: String, local: String, node: String)
    /// The node's add output lacks an entry the upload contained.
    case missingEntry(name: String, node: String)

    /// True for failures worth retrying with back-off: the network, timeouts, 5xx that are
    /// not known permanent command errors, truncated or broken streams.
    public var isTransient: Bool {
        switch self {
        case .unreachable, .timeout, .truncated, .streamError: return true
        case let .command(_, _, status, message, _):
            guard [500, 502, 503, 504, 429, 408].contains(status) else { return false }
            return !Self.permanentMessages.contains { message.contains($0) }
        default: return false
        }
    }

    /// Kubo 500 messages that no retry will fix.
    private static let permanentMessages = [
        "is a directory", "not pinned", "invalid", "is not implemented", "expected a file argument",
        "could not convert", "needs HAMT", "no link named", "is required", "block was not found locally",
    ]

    /// A one-line message naming what failed and why.
    public var description: String {
        switch self {
        case let .badAddress(text, reason): "bad IPFS API address '\(text)': \(reason)"
        case let .badAuth(why): "bad IPFS API credentials: \(why)"
        case let .unreachable(node, command, reason): "IPFS node \(node) unreachable during \(command): \(reason)"
        case let .timeout(node, command): "IPFS node \(node) did not answer \(command) in time"
        case let .command(node, command, status, message, _): "IPFS node \(node) refused \(command) (HTTP \(status)): \(message)"
        case let .forbidden(node, command, message): "IPFS node \(node) denied \(command) (403): \(message)"
        case let .streamError(node, command, message): "IPFS node \(node) failed during \(command) output: \(message)"
        case let .truncated(node, command, reason): "IPFS node \(node) cut \(command) short: \(reason)"
        case let .badResponse(node, command, reason): "IPFS node \(node) sent an unreadable \(command) answer: \(reason)"
        case let .cidMismatch(name, local, node): "CID mismatch for '\(name)': local \(local), node \(node)"
        case let .missingEntry(name, node): "IPFS node \(node) did not report '\(name)' in its add output"
        }
    }
}
