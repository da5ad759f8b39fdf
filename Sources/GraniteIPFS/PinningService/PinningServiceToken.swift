import Foundation

/// A pinning service's access token. Its `description` (and so every message, log line and
/// `print`) is `<token>`: the secret itself only ever goes into the `Authorization` header.
public struct PinningServiceToken: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    let secret: String

    /// A token with this secret.
    public init(_ secret: String) { self.secret = secret }

    /// `<token>`: never the secret.
    public var description: String { "<token>" }
    /// `<token>`: never the secret.
    public var debugDescription: String { "<token>" }

    /// The `Authorization` header value.
    var headerValue: String { "Bearer " + secret }

    /// The longest token file read (a token is a few hundred bytes; this is not a token).
    static let maxFileBytes = 64 << 10

    /// The token from `file` (its first line, trimmed), else `$GRANITE_PIN_SERVICE_TOKEN`; throws
    /// ``PinningServiceError/noToken(service:)`` when there is neither.
    public static func resolve(file: String?, service: String,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws(PinningServiceError) -> PinningServiceToken {
        if let file {
            let data: Data
            do {
                let attributes = try FileManager.default.attributesOfItem(atPath: file)
                if let size = attributes[.size] as? Int, size > maxFileBytes {
                    throw PinningServiceError.badTokenFile(path: file, reason: "larger than \(maxFileBytes) bytes")
                }
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch let error as PinningServiceError {
                throw error
            } catch {
                throw .badTokenFile(path: file, reason: "cannot read it")
            }
            let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first
                .map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !line.isEmpty else { throw .badTokenFile(path: file, reason: "it is empty") }
            guard line.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
                throw .badTokenFile(path: file, reason: "the token has spaces or characters an HTTP header cannot carry")
            }
            return PinningServiceToken(line)
        }
        if let value = environment["GRANITE_PIN_SERVICE_TOKEN"]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty {
            guard value.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
                throw .badTokenFile(path: "$GRANITE_PIN_SERVICE_TOKEN", reason: "the token has spaces or characters an HTTP header cannot carry")
            }
            return PinningServiceToken(value)
        }
        throw .noToken(service: service)
    }
}
