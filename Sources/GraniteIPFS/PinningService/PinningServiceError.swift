/// Errors talking to an IPFS Pinning Service (``PinningServiceClient``). No case ever carries the
/// access token; text from the service is escaped (``NodeText``) when printed.
public enum PinningServiceError: Error, Equatable, CustomStringConvertible {
    /// A service address that is not an http(s) URL.
    case badURL(String, reason: String)
    /// The token would travel in clear text (`http://` to a host other than loopback) and
    /// `--allow-insecure-http` was not given.
    case insecureToken(service: String)
    /// No token: neither `--service-token-file` nor `$GRANITE_PIN_SERVICE_TOKEN`.
    case noToken(service: String)
    /// The token file could not be used (the file, and why; never its content).
    case badTokenFile(path: String, reason: String)
    /// The service refused the token (401 or 403): nothing more is tried.
    case tokenRefused(service: String, status: Int, reason: String)
    /// The service answered a 4xx other than 401/403/429 (the operation, status and its reason).
    case refused(service: String, operation: String, status: Int, reason: String)
    /// No request id of that name (404).
    case notFound(service: String, requestID: String)
    /// Still rate limited (429) after the last try.
    case rateLimited(service: String, operation: String, tries: Int)
    /// A 5xx on the last try.
    case unavailable(service: String, operation: String, status: Int, reason: String, tries: Int)
    /// The connection failed or broke (after the last try).
    case unreachable(service: String, operation: String, reason: String)
    /// No complete answer in time (after the last try).
    case timeout(service: String, operation: String)
    /// An answer larger than the bound for the operation.
    case tooLarge(service: String, operation: String, limit: Int)
    /// An answer that is not what the API document says.
    case badResponse(service: String, operation: String, reason: String)

    /// True for failures a later try may not see: 429, 5xx, timeouts, broken connections.
    public var isTransient: Bool {
        switch self {
        case .rateLimited, .unavailable, .unreachable, .timeout: true
        default: false
        }
    }

    /// A one-line message naming the service, what failed and why (service text escaped).
    public var description: String {
        let e = { (text: String) in NodeText.escaped(text, limit: 500) }
        return switch self {
        case let .badURL(text, reason): "bad pinning service address '\(e(text))': \(reason)"
        case let .noToken(service):
            "no access token for pinning service \(service): give --service-token-file FILE or set $GRANITE_PIN_SERVICE_TOKEN"
        case let .badTokenFile(path, reason): "cannot use pinning service token file '\(path)': \(reason)"
        case let .tokenRefused(service, status, reason):
            "pinning service \(service) refused the access token (HTTP \(status)): \(e(reason)); check --service-token-file "
                + "or $GRANITE_PIN_SERVICE_TOKEN"
        case let .refused(service, operation, status, reason): "pinning service \(service) refused \(operation) (HTTP \(status)): \(e(reason))"
        case let .notFound(service, requestID): "pinning service \(service) has no pin request '\(e(requestID))'"
        case let .rateLimited(service, operation, tries): "pinning service \(service) still rate-limited \(operation) (HTTP 429) after \(tries) tries"
        case let .unavailable(service, operation, status, reason, tries):
            "pinning service \(service) failed \(operation) (HTTP \(status)) \(tries) times: \(e(reason))"
        case let .unreachable(service, operation, reason): "pinning service \(service) unreachable during \(operation): \(e(reason))"
        case let .insecureToken(service):
            "refusing to send the pinning service token to \(service) over cleartext http:// (not a loopback address): "
                + "use an https:// URL, or --allow-insecure-http to send it anyway"
        case let .timeout(service, operation): "pinning service \(service) did not answer \(operation) in time"
        case let .tooLarge(service, operation, limit): "pinning service \(service) sent more than \(limit) bytes in answer to \(operation)"
        case let .badResponse(service, operation, reason): "pinning service \(service) sent an unreadable answer to \(operation): \(e(reason))"
        }
    }
}
