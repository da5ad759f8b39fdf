import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// A Kubo RPC API client: POST-only commands, NDJSON streaming, typed errors, retries.
///
/// ```
/// command ─► POST /api/v0/<cmd>?args (+ multipart body) ─► status? ─┬─ 200: NDJSON lines ─► trailer X-Stream-Error?
///                                                                    └─ else: {Message,Code,Type} ─► KuboError
///         ◄── retried with exponential back-off while the error is transient ──┘
/// ```
public struct KuboClient: Sendable {
    /// Timeouts and the retry policy.
    public struct Configuration: Sendable, Hashable {
        /// Time to open a TCP connection.
        public var connectTimeout: Duration = .seconds(3)
        /// Longest silence while a response is awaited or read (detects a hung node mid-upload).
        public var readTimeout: Duration = .seconds(60)
        /// Deadline for one attempt of a command without an upload.
        public var requestTimeout: Duration = .seconds(120)
        /// Attempts per command, first included.
        public var maxAttempts: Int = 4
        /// Back-off before the second attempt; doubles each time up to `maxBackoff`.
        public var initialBackoff: Duration = .milliseconds(200)
        /// Longest back-off.
        public var maxBackoff: Duration = .seconds(5)
        /// Slowest upload still waited for: an `add` of N bytes must be answered in full within
        /// `requestTimeout + N / minUploadRate` (a node streaming an endless answer is cut off).
        public var minUploadRate: Int = 256 << 10
        /// Send credentials over cleartext `http://` to a host other than loopback (`--allow-insecure-http`);
        /// off by default: such a command throws ``KuboError/insecureCredentials(node:)`` before connecting.
        public var allowInsecureHTTP = false

        /// The defaults: 3 s connect, 60 s read, 120 s per command, 4 attempts, 0.2–5 s back-off.
        ///
        /// A refused connection costs a whole connect timeout per attempt (the HTTP client's
        /// pool keeps retrying within it), so a node that is down is reported after ~12 s.
        public init() {}

        /// For asking "is the node there?": one attempt, 1 s to connect, 5 s to answer, so a
        /// node that is down is known in about a second instead of after ~12 s of retries.
        public static var quickProbe: Configuration {
            var configuration = Configuration()
            configuration.maxAttempts = 1
            configuration.connectTimeout = .seconds(1)
            configuration.readTimeout = .seconds(5)
            configuration.requestTimeout = .seconds(5)
            return configuration
        }
    }

    /// The node.
    public let endpoint: KuboEndpoint
    /// Credentials, if the node requires them.
    let auth: KuboAuth?
    /// Timeouts and retries.
    public let configuration: Configuration
    let logger: Logger

    /// A client for `endpoint`, authenticating with `auth`.
    public init(endpoint: KuboEndpoint, auth: KuboAuth? = nil, configuration: Configuration = .init(),
                logger: Logger = Logger(label: "granite.ipfs")) {
        self.endpoint = endpoint
        self.auth = auth
        self.configuration = configuration
        self.logger = logger
    }

    /// The same node and credentials with other timeouts and retries (e.g. ``Configuration/quickProbe``).
    public func with(configuration: Configuration) -> KuboClient {
        KuboClient(endpoint: endpoint, auth: auth, configuration: configuration, logger: logger)
    }

    /// What an NDJSON line of output is handed to; throw to abort.
    typealias LineHandler = @Sendable ([String: Any]) throws(KuboError) -> Void

    /// Runs `command` with retries; returns the whole body (for single-value outputs) after
    /// handing every NDJSON line to `onLine` when given. Every answer is bounded: more than
    /// `limit` bytes throws ``KuboError/tooLarge(node:command:limit:)``, and one not ended within
    /// `deadline` (default `requestTimeout`) throws ``KuboError/tooSlow(node:command:deadline:)``.
    func call(_ command: String, query: [(String, String)] = [], upload: [UploadPart]? = nil,
              limit: Int = 64 << 20, deadline: Duration? = nil, onLine: LineHandler? = nil) async throws(KuboError) -> [UInt8] {
        var attempt = 1
        var backoff = configuration.initialBackoff
        while true {
            do {
                return try await attemptCall(command, query: query, upload: upload, limit: limit,
                                             deadline: deadline ?? configuration.requestTimeout, onLine: onLine)
            } catch where error.isTransient && attempt < configuration.maxAttempts {
                logger.debug("retrying after transient failure", metadata: [
                    "command": "\(command)", "attempt": "\(attempt)", "error": "\(error)"])
                do { try await Task.sleep(for: backoff * Double.random(in: 0.75...1.25)) } catch {
                    throw .cancelled(node: endpoint.baseURL, command: command)
                }
                backoff = min(backoff * 2, configuration.maxBackoff)
                attempt += 1
            }
        }
    }

    private func attemptCall(_ command: String, query: [(String, String)], upload: [UploadPart]?,
                             limit: Int, deadline: Duration, onLine: LineHandler?) async throws(KuboError) -> [UInt8] {
        let node = endpoint.baseURL
        guard !Task.isCancelled else { throw .cancelled(node: node, command: command) }
        try checkCredentialsTravelSafely()
        let started = ContinuousClock.now
        var request = HTTPClientRequest(url: url(command, query))
        request.method = .POST
        if let auth { request.headers.add(name: "Authorization", value: auth.headerValue) }
        if let upload {
            let body = MultipartBody(parts: upload)
            request.headers.add(name: "Content-Type", value: body.contentType)
            request.body = .stream(body, length: .unknown)
        }
        let response: HTTPClientResponse
        do {
            response = try await HTTPClients.client(for: configuration).execute(request, timeout: .init(deadline), logger: logger)
        } catch {
            throw mapTransport(error, command: command, truncated: false, deadline: deadline)
        }
        guard response.status == .ok else {
            let text = await Self.text(of: response.body)
            throw KuboAnswer.commandError(status: Int(response.status.code), text: text, node: node, command: command)
        }
        var whole: [UInt8] = []
        var lines = KuboAnswer.LineSplitter()
        var received = 0
        do {
            for try await buffer in response.body {
                received += buffer.readableBytes
                guard received <= limit else { throw KuboError.tooLarge(node: node, command: command, limit: limit) }
                guard ContinuousClock.now - started <= deadline else {
                    throw KuboError.tooSlow(node: node, command: command, deadline: deadline)
                }
                if onLine == nil {
                    whole.append(contentsOf: buffer.readableBytesView)
                    continue
                }
                for line in lines.append(buffer.readableBytesView) {
                    try handle(line: line, onLine: onLine, node: node, command: command)
                }
            }
        } catch let error as KuboError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded && !Task.isCancelled {
            throw KuboError.tooSlow(node: node, command: command, deadline: deadline)   // not retried
        } catch {
            throw mapTransport(error, command: command, truncated: true, deadline: deadline)
        }
        if let error = KuboAnswer.streamError(trailer: response.body.trailers?.first(name: "X-Stream-Error"), node: node, command: command) {
            throw error
        }
        if let last = lines.finish() { try handle(line: last, onLine: onLine, node: node, command: command) }
        return whole
    }

    private func handle(line: [UInt8], onLine: LineHandler?, node: String, command: String) throws(KuboError) {
        guard let onLine, let object = try KuboAnswer.line(line, node: node, command: command) else { return }
        try onLine(object)
    }

    private func url(_ command: String, _ query: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        let q = query.map { key, value in
            key + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)
        }.joined(separator: "&")
        return "\(endpoint.baseURL)/api/v0/\(command)" + (q.isEmpty ? "" : "?" + q)
    }

    /// An error answer's text (up to 64 KiB; empty when it cannot be read).
    private static func text(of body: HTTPClientResponse.Body) async -> String {
        do { return String(buffer: try await body.collect(upTo: 1 << 16)) } catch { return "" }
    }

    /// Credentials go over cleartext `http://` only to loopback, unless ``Configuration/allowInsecureHTTP``.
    func checkCredentialsTravelSafely() throws(KuboError) {
        if auth != nil, !configuration.allowInsecureHTTP, endpoint.isCleartextToRemoteHost {
            throw .insecureCredentials(node: endpoint.baseURL)
        }
    }

    /// Transport failures: cancellation becomes `.cancelled`, an upload's unreadable file `.local`,
    /// timeouts `.timeout` naming the one that ran out (`deadline`: the request's), a body cut
    /// short `.truncated`, the rest `.unreachable`.
    func mapTransport(_ error: any Error, command: String, truncated: Bool, deadline: Duration) -> KuboError {
        let node = endpoint.baseURL
        if let error = error as? KuboError { return error }
        if error is CancellationError || Task.isCancelled { return .cancelled(node: node, command: command) }
        if let error = error as? IPFSError { return .local(error) }
        if let http = error as? HTTPClientError {
            switch http {
            case .deadlineExceeded: return .timeout(node: node, command: command, after: deadline)
            case .readTimeout: return .timeout(node: node, command: command, after: configuration.readTimeout)
            case .connectTimeout: return .timeout(node: node, command: command, after: configuration.connectTimeout)
            default: break
            }
        }
        if truncated { return KuboError.truncated(node: node, command: command, reason: "\(error)") }
        return KuboError.unreachable(node: node, command: command, reason: "\(error)")
    }
}
