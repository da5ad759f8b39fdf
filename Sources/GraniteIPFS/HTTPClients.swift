import AsyncHTTPClient
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Process-wide HTTP clients, one per timeout setting, never shut down.
///
/// `HTTPClient` must be shut down before it is released; keeping one per configuration for the
/// life of the process (as `HTTPClient.shared` does) removes that hazard from every caller.
enum HTTPClients {
    private struct Key: Hashable {
        var connect: Duration
        var read: Duration
    }

    private static let clients = NIOLockedValueBox<[Key: HTTPClient]>([:])

    /// The client for `configuration`'s connect and read timeouts.
    static func client(for configuration: KuboClient.Configuration) -> HTTPClient {
        client(connect: configuration.connectTimeout, read: configuration.readTimeout)
    }

    /// The client with these connect and read timeouts (Kubo nodes and pinning services alike).
    static func client(connect: Duration, read: Duration) -> HTTPClient {
        let key = Key(connect: connect, read: read)
        return clients.withLockedValue { clients in
            if let client = clients[key] { return client }
            var config = HTTPClient.Configuration()
            config.timeout = .init(connect: .init(key.connect), read: .init(key.read))
            config.redirectConfiguration = .disallow
            config.decompression = .disabled
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: config)
            clients[key] = client
            return client
        }
    }
}
