import Foundation
import HTTPTypes
import OpenAPIRuntime

/// What the generated client's transport passes through for every request: the bearer token in,
/// an answer bounded in size and time out, and the statuses the generated types do not describe
/// (401/403, 429 with `Retry-After`, 5xx) turned into errors the retry loop reads.
struct ServiceMiddleware: ClientMiddleware {
    let token: PinningServiceToken
    let service: String
    let limit: Int
    let deadline: Duration

    /// A status to try again after (429, 5xx), with the service's `Retry-After` when it sent one.
    struct RetryLater: Error {
        var status: Int
        var retryAfter: Duration?
        var reason: String
    }

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = token.headerValue
        let end = ContinuousClock.now + deadline
        let (response, answer) = try await next(request, body, baseURL)
        let bytes = try await collect(answer, until: end, operation: operationID)
        let status = response.status.code
        switch status {
        case 401, 403:
            throw PinningServiceError.tokenRefused(service: service, status: status, reason: Self.reason(bytes))
        case 429:
            throw RetryLater(status: status, retryAfter: Self.retryAfter(response.headerFields[.retryAfter]), reason: Self.reason(bytes))
        case 500...599:
            throw RetryLater(status: status, retryAfter: Self.retryAfter(response.headerFields[.retryAfter]), reason: Self.reason(bytes))
        default:
            return (response, bytes.isEmpty ? nil : HTTPBody(bytes))
        }
    }

    /// Reads the whole answer, at most `limit` bytes and until `end`.
    private func collect(_ body: HTTPBody?, until end: ContinuousClock.Instant, operation: String) async throws -> [UInt8] {
        guard let body else { return [] }
        let (limit, service) = (self.limit, self.service)
        return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                for try await chunk in body {
                    bytes += chunk
                    guard bytes.count <= limit else {
                        throw PinningServiceError.tooLarge(service: service, operation: operation, limit: limit)
                    }
                }
                return bytes
            }
            group.addTask {
                try await Task.sleep(until: end, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else {
                throw PinningServiceError.timeout(service: service, operation: operation)
            }
            return bytes
        }
    }

    /// The `Failure` reason and details of an error answer, or its first bytes.
    static func reason(_ bytes: [UInt8]) -> String {
        if let failure = try? JSONDecoder().decode(Components.Schemas.Failure.self, from: Data(bytes)) {
            return failure.error.reason + (failure.error.details.map { ": " + $0 } ?? "")
        }
        return String(decoding: bytes.prefix(300), as: UTF8.self)
    }

    /// `Retry-After`: seconds, or an HTTP date.
    static func retryAfter(_ value: String?) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSinceNow * 1000)))
    }
}
