/// Errors talking to a Kubo node's RPC API.
public enum KuboError: Error, Equatable, CustomStringConvertible {
    /// An API address that is neither a supported multiaddr nor an http(s) URL.
    case badAddress(String, reason: String)
    /// Credentials that do not parse (the secret itself is never included).
    case badAuth(String)
    /// The node could not be reached or the connection broke (node, command, cause).
    case unreachable(node: String, command: String, reason: String)
    /// No (complete) answer within `after`: the connect, read or request timeout that ran out.
    case timeout(node: String, command: String, after: Duration)
    /// Credentials would travel in clear text (`http://` to a host other than loopback) and
    /// `--allow-insecure-http` (``KuboClient/Configuration/allowInsecureHTTP``) was not given.
    case insecureCredentials(node: String)
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
    /// The node's answer passed the size bound for the command (a hostile or broken node).
    case tooLarge(node: String, command: String, limit: Int)
    /// The node's answer did not end within the command's deadline (e.g. an endless stream).
    case tooSlow(node: String, command: String, deadline: Duration)
    /// The node's CID for an added entry differs from the locally computed one.
    case cidMismatch(name: String, local: String, node: String)
    /// The node's add output lacks an entry the upload contained.
    case missingEntry(name: String, node: String)
    /// A local file of the command failed (an upload's input unreadable, options Kubo would
    /// refuse): the ``IPFSError`` names the file.
    case local(IPFSError)
    /// The task was cancelled while the command ran or waited to be retried.
    case cancelled(node: String, command: String)

    /// True for failures worth retrying with back-off: the network, timeouts, 5xx that are
    /// not known permanent command errors, truncated or broken streams.
    public var isTransient: Bool {
        switch self {
        case .unreachable, .timeout, .truncated, .streamError: return true
        case .tooLarge, .tooSlow: return false
        case let .command(_, _, status, message, _):
            guard [500, 502, 503, 504, 429, 408].contains(status) else { return false }
            return !Self.permanentMessages.contains { message.contains($0) }
        default: return false
        }
    }

    /// True when the node does not know the command (404, as a Kubo without it answers): the
    /// caller falls back to another command (`dag/import` → `add`).
    public var isUnknownCommand: Bool {
        guard case let .command(_, _, status, message, _) = self else { return false }
        return status == 404 || message.contains("unknown command")
    }

    /// `5 s`, `0.5 s`: a duration in the words of the messages.
    static func seconds(_ duration: Duration) -> String {
        let (whole, atto) = duration.components
        let value = Double(whole) + Double(atto) / 1e18
        return value == value.rounded() ? "\(Int64(value)) s" : String(format: "%.1f s", value)
    }

    /// Kubo 500 messages that no retry will fix.
    private static let permanentMessages = [
        "is a directory", "not pinned", "invalid", "is not implemented", "expected a file argument",
        "could not convert", "needs HAMT", "no link named", "is required", "block was not found locally",
    ]

    /// A one-line message naming what failed and why; text from the node has its control
    /// characters escaped (``NodeText/escaped(_:limit:)``).
    public var description: String {
        let e = { (text: String) in NodeText.escaped(text) }
        return switch self {
        case let .badAddress(text, reason): "bad IPFS API address '\(e(text))': \(reason)"
        case let .badAuth(why): "bad IPFS API credentials: \(why)"
        case let .unreachable(node, command, reason): "IPFS node \(node) unreachable during \(command): \(e(reason))"
        case let .timeout(node, command, after): "IPFS node \(node) did not answer \(command) in \(Self.seconds(after))"
        case let .insecureCredentials(node):
            "refusing to send IPFS API credentials to \(node) over cleartext http:// (not a loopback address): "
                + "use an https:// address, or --allow-insecure-http to send them anyway"
        case let .command(node, command, status, message, _): "IPFS node \(node) refused \(command) (HTTP \(status)): \(e(message))"
        case let .forbidden(node, command, message): "IPFS node \(node) denied \(command) (403): \(e(message))"
        case let .streamError(node, command, message): "IPFS node \(node) failed during \(command) output: \(e(message))"
        case let .truncated(node, command, reason): "IPFS node \(node) cut \(command) short: \(e(reason))"
        case let .badResponse(node, command, reason): "IPFS node \(node) sent an unreadable \(command) answer: \(e(reason))"
        case let .tooLarge(node, command, limit): "IPFS node \(node) sent more than \(limit) bytes in answer to \(command); job left for a later run"
        case let .tooSlow(node, command, deadline): "IPFS node \(node) did not finish its answer to \(command) within \(deadline)"
        case let .cidMismatch(name, local, node): "CID mismatch for '\(e(name))': local \(local), node \(e(node))"
        case let .missingEntry(name, node): "IPFS node \(node) did not report '\(e(name))' in its add output"
        case let .local(error): error.description
        case let .cancelled(node, command): "\(command) on IPFS node \(node) cancelled"
        }
    }
}
