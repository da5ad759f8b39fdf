import Foundation

/// The seed's face over a Kubo node: `GraniteIPFS(host:port:ssl:)`, `add(data)`, `pin.add(cid)`.
///
/// Everything is async and throws ``KuboError`` (a bad CID or import option: ``KuboError/local(_:)``);
/// every add is checked against the locally computed CID.
/// For journaled, never-lost pinning of files use ``Pinner`` / ``PinQueue``.
public struct GraniteIPFS: Sendable {
    /// Pin commands, as the seed's `client.pin.add(…)`.
    public struct Pin: Sendable {
        let client: KuboClient

        /// Pins `cid` recursively.
        @discardableResult
        public func add(_ cid: CID) async throws(KuboError) -> [CID] { try await client.pinAdd(cid) }

        /// Pins the CID given as text (`Qm…` or `b…`).
        @discardableResult
        public func add(_ cid: String) async throws(KuboError) -> [CID] {
            let parsed: CID
            do { parsed = try CID(cid) } catch { throw .local(error) }
            return try await client.pinAdd(parsed)
        }

        /// Unpins `cid`.
        public func rm(_ cid: CID) async throws(KuboError) { try await client.pinRm(cid) }

        /// The node's pins, CID → type.
        public func ls() async throws(KuboError) -> [String: String] { try await client.pinLs() }
    }

    /// The RPC client underneath.
    public let client: KuboClient
    /// How data becomes a DAG (CIDv1 raw leaves by default; CIDv0 available).
    public let options: ImportOptions

    /// A client for the node at `host:port` (https when `ssl`).
    public init(host: String, port: Int, ssl: Bool, auth: KuboAuth? = nil,
                options: ImportOptions = .init(cidVersion: 1)) throws(KuboError) {
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw KuboError.badAddress("\(host):\(port)", reason: "empty host or port outside 1…65535")
        }
        do { try options.validate() } catch { throw .local(error) }
        client = KuboClient(endpoint: KuboEndpoint(host: host, port: port, ssl: ssl), auth: auth)
        self.options = options
    }

    /// Adds `data` as one file (pinned) and returns the added nodes, CIDs verified locally.
    public func add(_ data: Data, name: String = "data") async throws(KuboError) -> [AddedNode] {
        try await client.add(data: Array(data), name: name, options: options)
    }

    /// Pin commands.
    public var pin: Pin { Pin(client: client) }

    /// Reads a file back (`cat`).
    public func cat(_ cid: CID) async throws(KuboError) -> Data { Data(try await client.cat(cid.description)) }
}
