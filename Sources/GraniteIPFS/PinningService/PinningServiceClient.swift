import AsyncHTTPClient
import Foundation
import Logging
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import Synchronization

/// A client for an IPFS Pinning Service API (version 1.0.0: Pinata, Filebase, web3.storage-style
/// services, IPFS Cluster, Kubo's `ipfs pin remote`): add, status, list and remove pin requests.
///
/// ```
/// add/status/list/remove ─► generated Client (openapi.yaml, swift-openapi-generator)
///     ─► ServiceMiddleware: Bearer token in; answer ≤ limit bytes, done ≤ requestTimeout;
///        401/403 ─► tokenRefused (never retried)   429 ─► wait Retry-After   5xx, timeouts ─► back off
///     ◄── tried up to maxTries, then a typed PinningServiceError naming the service ──┘
/// ```
/// The token is only ever written into the `Authorization` header: no error, log line or
/// description contains it.
public struct PinningServiceClient: Sendable {
    /// Timeouts, bounds and the retry policy.
    public struct Configuration: Sendable, Hashable {
        /// Time to open a TCP connection.
        public var connectTimeout: Duration = .seconds(5)
        /// Deadline for one try, answer included.
        public var requestTimeout: Duration = .seconds(30)
        /// Tries per operation, first included.
        public var maxTries: Int = 6
        /// Back-off before the second try (5xx, timeouts, a 429 without `Retry-After`); doubles up to `maxBackoff`.
        public var initialBackoff: Duration = .milliseconds(500)
        /// Longest back-off.
        public var maxBackoff: Duration = .seconds(8)
        /// Longest `Retry-After` honoured; a service asking for more fails the operation now.
        public var maxRetryAfter: Duration = .seconds(60)
        /// Largest answer to add, status and remove (one `PinStatus`).
        public var answerLimit: Int = 256 << 10
        /// Largest answer to a list (up to 1000 `PinStatus`).
        public var listLimit: Int = 8 << 20

        /// Send the token over cleartext `http://` to a host other than loopback (`--allow-insecure-http`).
        public var allowInsecureHTTP = false

        /// The defaults: 5 s connect, 30 s per try, 6 tries, 0.5–8 s back-off, Retry-After up to 60 s.
        public init() {}
    }

    /// The service's base URL (`https://api.example.com/psa`), without a trailing slash.
    public let service: String
    /// Timeouts, bounds and retries.
    public let configuration: Configuration
    private let token: PinningServiceToken
    private let baseURL: URL
    private let counter: RequestCounter
    private let logger: Logger

    /// A client for the service at `service` (an http or https URL), authenticating with `token`.
    public init(service: String, token: PinningServiceToken, configuration: Configuration = .init(),
                logger: Logger = Logger(label: "granite.ipfs.pinning-service")) throws(PinningServiceError) {
        var text = service.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else {
            throw .badURL(service, reason: "expected an http(s) URL such as https://api.example.com/psa")
        }
        guard url.user == nil, url.password == nil, url.query == nil else {
            throw .badURL(service, reason: "no credentials or query in the URL: give the token with --service-token-file")
        }
        guard configuration.allowInsecureHTTP || !KuboEndpoint.isCleartextToRemoteHost(url) else {
            throw .insecureToken(service: text)
        }
        self.service = text
        self.baseURL = url
        self.token = token
        self.configuration = configuration
        self.counter = RequestCounter()
        self.logger = logger
    }

    /// HTTP requests sent so far by this client and its copies (tries included).
    public var requestsMade: Int { counter.value }

    // MARK: - Operations

    /// `POST /pins`: asks the service to pin `cid`, fetching it from `origins` (multiaddrs).
    ///
    /// A POST answered 5xx, timed out or cut off may still have been processed, so the try after
    /// one first looks the CID up (`GET /pins?cid=…`, queued, pinning or pinned) and adopts the
    /// request it finds instead of posting a second one. A 429 was not processed: no look-up.
    public func add(_ cid: CID, name: String? = nil, origins: [String] = [], meta: [String: String] = [:]) async throws(PinningServiceError) -> RemotePin {
        let pin = Components.Schemas.Pin(cid: cid.description, name: name.map { String($0.prefix(255)) },
                                         origins: origins.isEmpty ? nil : Array(NSOrderedSet(array: origins).array as? [String] ?? origins).prefix(20).map { $0 },
                                         meta: meta.isEmpty ? nil : .init(additionalProperties: meta))
        let lookup = Self.query(cids: [cid], statuses: [.queued, .pinning, .pinned], limit: 1)
        let mayHavePosted = TryFlag()   // an earlier try's POST may have created a request
        let counter = self.counter
        return try await perform("add", limit: configuration.answerLimit) { client in
            if mayHavePosted.value {
                counter.add()
                switch try await client.getPins(query: lookup) {
                case let .ok(answer):
                    if let found = try answer.body.json.results.first { return RemotePin(found) }
                    mayHavePosted.value = false
                case let other: throw Self.refusal(other.failure, service: service, operation: "add")
                }
            }
            do {
                mayHavePosted.value = true
                switch try await client.addPin(body: .json(pin)) {
                case let .accepted(answer): return RemotePin(try answer.body.json)
                case let other: throw Self.refusal(other.failure, service: service, operation: "add")
                }
            } catch {
                if Self.wasNotProcessed(error) { mayHavePosted.value = false }
                throw error
            }
        }
    }

    /// `GET /pins/{requestid}`: where request `requestID` stands.
    public func status(_ requestID: String) async throws(PinningServiceError) -> RemotePin {
        try await perform("status", limit: configuration.answerLimit) { client in
            switch try await client.getPinByRequestId(path: .init(requestid: requestID)) {
            case let .ok(answer): return RemotePin(try answer.body.json)
            case .notFound: throw PinningServiceError.notFound(service: service, requestID: requestID)
            case let other: throw Self.refusal(other.failure, service: service, operation: "status")
            }
        }
    }

    /// `GET /pins`: pin requests for `cids` (at most 10; all when empty) in `statuses`, newest
    /// first, at most `limit` (1...1000); `count` is how many match in all.
    public func list(cids: [CID] = [], statuses: Set<RemotePin.Status> = [.pinned], limit: Int = 1000,
                     before: Date? = nil) async throws(PinningServiceError) -> (count: Int, pins: [RemotePin]) {
        let query = Self.query(cids: cids, statuses: statuses, limit: limit, before: before)
        return try await perform("list", limit: configuration.listLimit) { client in
            switch try await client.getPins(query: query) {
            case let .ok(answer):
                let results = try answer.body.json
                return (Int(results.count), results.results.map(RemotePin.init))
            case let other: throw Self.refusal(other.failure, service: service, operation: "list")
            }
        }
    }

    /// The `GET /pins` query for `cids` (at most 10) in `statuses`, at most `limit` (1...1000).
    private static func query(cids: [CID], statuses: Set<RemotePin.Status>, limit: Int, before: Date? = nil) -> Operations.GetPins.Input.Query {
        Operations.GetPins.Input.Query(
            cid: cids.isEmpty ? nil : cids.prefix(10).map(\.description),
            status: statuses.isEmpty ? nil : RemotePin.Status.allCases.filter(statuses.contains).compactMap { .init(rawValue: $0.rawValue) },
            before: before, limit: Int32(min(max(limit, 1), 1000)))
    }

    /// True when a try's error shows the service did not act on the request: 429, a refusal
    /// (401/403 and other 4xx). 5xx, timeouts and broken connections may come after it did.
    private static func wasNotProcessed(_ thrown: any Error) -> Bool {
        var error: any Error = thrown
        if let clientError = error as? ClientError { error = clientError.underlyingError }
        switch error {
        case let later as ServiceMiddleware.RetryLater: return later.status == 429
        case is PinningServiceError: return true
        default: return false
        }
    }

    /// `DELETE /pins/{requestid}`: removes request `requestID` (and so its pin).
    public func remove(_ requestID: String) async throws(PinningServiceError) {
        try await perform("remove", limit: configuration.answerLimit) { client in
            switch try await client.deletePinByRequestId(path: .init(requestid: requestID)) {
            case .accepted: return
            case .notFound: throw PinningServiceError.notFound(service: service, requestID: requestID)
            case let other: throw Self.refusal(other.failure, service: service, operation: "remove")
            }
        }
    }

    // MARK: - Tries

    /// Runs `body` on a generated client, trying again after 429 (its `Retry-After`), 5xx,
    /// timeouts and broken connections, up to `maxTries`.
    private func perform<T: Sendable>(_ operation: String, limit: Int,
                                      _ body: @Sendable (Client) async throws -> T) async throws(PinningServiceError) -> T {
        let transport = AsyncHTTPClientTransport(configuration: .init(
            client: HTTPClients.client(connect: configuration.connectTimeout, read: configuration.requestTimeout),
            timeout: .nanoseconds(Int64(configuration.requestTimeout.components.seconds) * 1_000_000_000
                                  + configuration.requestTimeout.components.attoseconds / 1_000_000_000)))
        let middleware = ServiceMiddleware(token: token, service: service, limit: limit, deadline: configuration.requestTimeout)
        let client = Client(serverURL: baseURL, configuration: .init(dateTranscoder: RFC3339Dates(), jsonEncodingOptions: [.sortedKeys]),
                            transport: transport, middlewares: [middleware])
        var backoff = configuration.initialBackoff
        var tries = 0
        while true {
            tries += 1
            counter.add()
            let error: PinningServiceError
            let wait: Duration?
            do {
                return try await body(client)
            } catch let thrown {
                if Task.isCancelled { throw .timeout(service: service, operation: operation) }
                (error, wait) = classify(thrown, operation: operation, tries: tries)
            }
            guard error.isTransient, tries < configuration.maxTries else { throw error }
            if case .rateLimited = error, let asked = wait, asked > configuration.maxRetryAfter { throw error }
            let pause = wait ?? backoff * Double.random(in: 0.75...1.25)
            logger.debug("trying again", metadata: ["operation": "\(operation)", "try": "\(tries)", "error": "\(error)"])
            do { try await Task.sleep(for: pause) } catch { throw .timeout(service: service, operation: operation) }
            backoff = min(backoff * 2, configuration.maxBackoff)
        }
    }

    /// The typed error for what a try threw, and how long the service asked to wait.
    private func classify(_ thrown: any Error, operation: String, tries: Int) -> (error: PinningServiceError, wait: Duration?) {
        var error: any Error = thrown
        if let clientError = error as? ClientError { error = clientError.underlyingError }
        switch error {
        case let error as PinningServiceError:
            return (error, nil)
        case let later as ServiceMiddleware.RetryLater where later.status == 429:
            return (.rateLimited(service: service, operation: operation, tries: tries), later.retryAfter)
        case let later as ServiceMiddleware.RetryLater:
            return (.unavailable(service: service, operation: operation, status: later.status, reason: later.reason, tries: tries), later.retryAfter)
        case let http as HTTPClientError where [.deadlineExceeded, .readTimeout, .connectTimeout].contains(http):
            return (.timeout(service: service, operation: operation), nil)
        case is HTTPClientError, is any Error & CustomNSError:
            return (.unreachable(service: service, operation: operation, reason: "\(error)"), nil)
        case is DecodingError:
            return (.badResponse(service: service, operation: operation, reason: "\(error)"), nil)
        default:
            let text = "\(error)"
            if text.contains("Connection") || text.contains("connect") {
                return (.unreachable(service: service, operation: operation, reason: text), nil)
            }
            return (.badResponse(service: service, operation: operation, reason: text), nil)
        }
    }

    /// A documented refusal (400, 404, 409, other 4xx) as a typed error.
    static func refusal(_ failure: (status: Int, reason: String), service: String, operation: String) -> PinningServiceError {
        .refused(service: service, operation: operation, status: failure.status, reason: failure.reason)
    }
}

/// A flag shared by the tries of one operation.
final class TryFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var value: Bool {
        get { flag.load(ordering: .relaxed) }
        set { flag.store(newValue, ordering: .relaxed) }
    }
}

/// Counts requests across copies of a client.
final class RequestCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// RFC 3339 timestamps with or without fractional seconds (`2020-07-27T17:32:28Z`,
/// `2022-06-14T22:46:30.41+00:00`): services write both, the runtime's default reads only the first.
struct RFC3339Dates: DateTranscoder {
    func encode(_ date: Date) throws -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    func decode(_ text: String) throws -> Date {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        if let date = try? Date.ISO8601FormatStyle().parse(text) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an RFC 3339 timestamp: \(text.prefix(64))"))
    }
}
