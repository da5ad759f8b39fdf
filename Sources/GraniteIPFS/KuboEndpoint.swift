import Foundation

/// Where a Kubo node's RPC API listens, found by Kubo's own conventions.
public struct KuboEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The base URL, e.g. `http://127.0.0.1:5001` (no trailing slash, no `/api/v0`).
    public let baseURL: String

    /// An endpoint at `host:port`, over https when `ssl`.
    public init(host: String, port: Int, ssl: Bool = false) {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        baseURL = "\(ssl ? "https" : "http")://\(bracketed):\(port)"
    }

    /// Parses a multiaddr (`/ip4/127.0.0.1/tcp/5001`, `/dns/host/tcp/443/https`) or a URL.
    public init(parsing text: String) throws(KuboError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("http://") || trimmed.hasPrefix("https://") {
            guard let url = URL(string: trimmed), let host = url.host, !host.isEmpty else {
                throw KuboError.badAddress(text, reason: "not a valid URL")
            }
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            self.init(host: host, port: port, ssl: url.scheme == "https")
            return
        }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard trimmed.hasPrefix("/"), parts.count >= 4,
              ["ip4", "ip6", "dns", "dns4", "dns6"].contains(parts[0]), parts[2] == "tcp",
              let port = Int(parts[3]), (1...65535).contains(port) else {
            throw KuboError.badAddress(text, reason: "expected /ip4|ip6|dns/HOST/tcp/PORT[/http|/https] or an http(s) URL")
        }
        let rest = parts.dropFirst(4)
        guard rest.isEmpty || rest == ["http"] || rest == ["https"] || rest == ["tls", "http"] else {
            throw KuboError.badAddress(text, reason: "unsupported protocol suffix /\(rest.joined(separator: "/"))")
        }
        self.init(host: parts[1], port: port, ssl: rest.contains("https") || rest.contains("tls"))
    }

    /// Resolves the API address: `option`, else `$IPFS_API`, else the `api` file in `$IPFS_PATH`
    /// (or `~/.ipfs`), else Kubo's default `/ip4/127.0.0.1/tcp/5001`.
    public static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(KuboError) -> KuboEndpoint {
        if let option, !option.isEmpty { return try KuboEndpoint(parsing: option) }
        if let env = environment["IPFS_API"], !env.isEmpty { return try KuboEndpoint(parsing: env) }
        let repo = environment["IPFS_PATH"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.ipfs"
        let apiFile = repo + "/api"
        if let text = try? String(contentsOfFile: apiFile, encoding: .utf8) {
            do { return try KuboEndpoint(parsing: text) } catch {
                throw KuboError.badAddress(text, reason: "in \(apiFile)")
            }
        }
        return try KuboEndpoint(parsing: "/ip4/127.0.0.1/tcp/5001")
    }

    /// True for `http://` to a host other than loopback (127.0.0.0/8, ::1, localhost): there,
    /// credentials would cross a network in clear text.
    public var isCleartextToRemoteHost: Bool { Self.isCleartextToRemoteHost(URL(string: baseURL)) }

    /// True for an `http://` URL whose host is not loopback (what ``isCleartextToRemoteHost`` and the
    /// pinning-service client both ask before sending a secret).
    static func isCleartextToRemoteHost(_ url: URL?) -> Bool {
        guard let url, url.scheme?.lowercased() == "http" else { return false }
        var host = (url.host ?? "").lowercased()
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        let loopback = host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host == "0:0:0:0:0:0:0:1"
            || (octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil })
        return !loopback
    }

    /// The base URL.
    public var description: String { baseURL }
}

/// Credentials for Kubo's `API.Authorizations`; never printed or logged.
public enum KuboAuth: Sendable, Hashable, CustomStringConvertible {
    /// `Authorization: Bearer TOKEN`.
    case bearer(String)
    /// `Authorization: Basic base64(user:password)`.
    case basic(user: String, password: String)

    /// Parses Kubo's `AuthSecret` syntax: `bearer:TOKEN`, `basic:USER:PASS` or `basic:BASE64`.
    public init(parsing secret: String) throws(KuboError) {
        if secret.hasPrefix("bearer:"), secret.count > 7 {
            self = .bearer(String(secret.dropFirst(7)))
            return
        }
        if secret.hasPrefix("basic:") {
            let rest = String(secret.dropFirst(6))
            if let colon = rest.firstIndex(of: ":") {
                self = .basic(user: String(rest[..<colon]), password: String(rest[rest.index(after: colon)...]))
                return
            }
            if let data = Data(base64Encoded: rest), let pair = String(data: data, encoding: .utf8),
               let colon = pair.firstIndex(of: ":") {
                self = .basic(user: String(pair[..<colon]), password: String(pair[pair.index(after: colon)...]))
                return
            }
        }
        // Never echo the secret itself in the error.
        throw KuboError.badAuth("expected bearer:TOKEN, basic:USER:PASSWORD or basic:BASE64")
    }

    /// `option`, else `$IPFS_API_AUTH`, else none.
    public static func resolve(option: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(KuboError) -> KuboAuth? {
        if let option, !option.isEmpty { return try KuboAuth(parsing: option) }
        if let env = environment["IPFS_API_AUTH"], !env.isEmpty { return try KuboAuth(parsing: env) }
        return nil
    }

    /// The `Authorization` header value.
    var headerValue: String {
        switch self {
        case let .bearer(token): "Bearer \(token)"
        case let .basic(user, password): "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
    }

    /// Redacted: says which scheme, never the secret.
    public var description: String {
        switch self {
        case .bearer: "bearer:<redacted>"
        case .basic: "basic:<redacted>"
        }
    }
}
