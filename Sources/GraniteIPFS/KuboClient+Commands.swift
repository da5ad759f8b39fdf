import Foundation
import NIOConcurrencyHelpers

/// One entry of an `add` answer: the seed's "added node".
public struct AddedNode: Sendable, Hashable, Codable {
    /// Path inside the add; "" for the wrapping directory.
    public var name: String
    /// The node's CID for it.
    public var cid: CID
    /// Cumulative DAG size as the node reports it.
    public var size: UInt64
}

extension KuboClient {
    /// The node's version (also a cheap reachability and auth check).
    public func version() async throws(KuboError) -> KuboVersion {
        try KuboAnswer.version(try json(try await call("version"), command: "version"), node: endpoint.baseURL)
    }

    /// The node's peer id and the multiaddrs it listens on (`id`), each made to end in `/p2p/ID`:
    /// the `origins` a pinning service is told to fetch from. Loopback and private addresses are
    /// kept (a service on the same host or network can use them).
    public func id() async throws(KuboError) -> (peerID: String, addresses: [String]) {
        let object = try json(try await call("id", limit: 1 << 20), command: "id")
        guard let peer = object["ID"] as? String, !peer.isEmpty else {
            throw KuboError.badResponse(node: endpoint.baseURL, command: "id", reason: "no ID")
        }
        let addresses = (object["Addresses"] as? [Any] ?? []).compactMap { $0 as? String }
            .filter { $0.hasPrefix("/") && $0.count < 512 }
            .map { $0.contains("/p2p/") ? $0 : $0 + "/p2p/" + peer }
        return (peer, Array(addresses.prefix(20)))
    }

    /// Adds `paths` (files, directories, symlinks), verifying every CID against the local import.
    ///
    /// `cid-version`, `raw-leaves` and `chunker` are always sent, since node defaults vary by
    /// profile. Each entry of the node's answer must equal `expected` (computed here when nil);
    /// a difference throws ``KuboError/cidMismatch(name:local:node:)``; a file that cannot be read
    /// here throws ``KuboError/local(_:)`` naming it.
    public func add(paths: [String], options: ImportOptions, pin: Bool = true, expected: ImportResult? = nil,
                    progress: (@Sendable (AddProgress) -> Void)? = nil) async throws(KuboError) -> [AddedNode] {
        let local: ImportResult, parts: [UploadPart]
        do {
            if let expected { local = expected } else { local = try UnixFSImporter(options: options).importPaths(paths) }
            parts = try UploadPart.collect(paths: paths)
        } catch {
            throw .local(error)
        }
        return try await add(parts: parts, options: options, pin: pin, expected: local.entries, progress: progress)
    }

    /// Adds `data` as one file named `name`, verified against its local CID.
    public func add(data: [UInt8], name: String = "data", options: ImportOptions, pin: Bool = true) async throws(KuboError) -> [AddedNode] {
        var entries: [ImportedEntry]
        do {
            let importer = try UnixFSImporter(options: options)
            entries = [ImportedEntry(name: name, cid: try importer.cid(of: data), dagSize: 0, contentSize: UInt64(data.count), isDirectory: false)]
            if options.wrapWithDirectory { entries.append(try importer.wrap(name: name, data: data)) }
        } catch {
            throw .local(error)
        }
        return try await add(parts: [UploadPart(name: name, content: .bytes(data))], options: options, pin: pin,
                             expected: entries, progress: nil)
    }

    private func add(parts: [UploadPart], options: ImportOptions, pin: Bool, expected: [ImportedEntry],
                     progress: (@Sendable (AddProgress) -> Void)?) async throws(KuboError) -> [AddedNode] {
        do { try options.validate() } catch { throw .local(error) }
        let query: [(String, String)] = [
            ("cid-version", "\(options.cidVersion)"), ("raw-leaves", "\(options.rawLeaves)"),
            ("chunker", options.chunker), ("wrap-with-directory", "\(options.wrapWithDirectory)"),
            ("pin", "\(pin)"), ("progress", "\(progress != nil)"),
        ]
        let node = endpoint.baseURL
        let collected = NIOLockedValueBox<[AddedNode]>([])
        // The answer is bounded by what was sent: a line per entry, progress lines per 256 KiB.
        let bytes = expected.filter { !$0.name.contains("/") }.reduce(0) { $0 + Int(clamping: $1.contentSize) }
        let limit = (1 << 20) + parts.count * 4096 + bytes / 512
        let deadline = configuration.requestTimeout + .seconds(Double(bytes) / Double(max(configuration.minUploadRate, 1)))
        _ = try await call("add", query: query, upload: parts, limit: limit, deadline: deadline) { line throws(KuboError) in
            switch KuboAnswer.addEvent(line) {
            case let .added(name, hash, size)?:
                let cid: CID
                do throws(IPFSError) { cid = try CID(hash) } catch { throw .badResponse(node: node, command: "add", reason: error.description) }
                let added = AddedNode(name: name, cid: cid, size: size)
                collected.withLockedValue { $0.append(added) }
            case let .progress(step)?:
                progress?(step)
            case nil:
                break
            }
        }
        let added = collected.withLockedValue { $0 }
        let byName = Dictionary(added.map { ($0.name, $0.cid) }, uniquingKeysWith: { _, last in last })
        for entry in expected {
            guard let cid = byName[entry.name] else { throw KuboError.missingEntry(name: entry.name, node: node) }
            guard cid == entry.cid else {
                throw KuboError.cidMismatch(name: entry.name, local: entry.cid.description, node: cid.description)
            }
        }
        return added
    }

    /// Sends the DAG of `paths` (imported with `options`, root `root`) as one CARv1 stream to
    /// `dag/import` with `pin-roots`, built while it is sent (bounded memory), and checks that the
    /// node's answer names `root` pinned. `bytes` (the files' size) sets the deadline as for `add`.
    ///
    /// A node without `dag/import` throws a ``KuboError/command(node:command:status:message:code:)``
    /// whose ``KuboError/isUnknownCommand`` is true; files that no longer give `root` throw
    /// ``KuboError/local(_:)`` with ``IPFSError/rootChanged(expected:now:)``.
    public func dagImport(paths: [String], options: ImportOptions, root: CID, bytes: UInt64,
                          progress: (@Sendable (UInt64) -> Void)? = nil) async throws(KuboError) {
        do { try options.validate() } catch { throw .local(error) }
        let node = endpoint.baseURL
        let car = CARStream(paths: paths, options: options, root: root, progress: progress)
        let roots = NIOLockedValueBox<[(cid: String, pinError: String)]>([])
        let deadline = configuration.requestTimeout + .seconds(Double(bytes) / Double(max(configuration.minUploadRate, 1)))
        _ = try await call("dag/import", query: [("pin-roots", "true"), ("stats", "false")],
                           upload: [UploadPart(name: "batch.car", content: .car(car))], limit: 1 << 20, deadline: deadline) { line throws(KuboError) in
            if let named = KuboAnswer.importedRoot(line) { roots.withLockedValue { $0.append(named) } }
        }
        let answer = roots.withLockedValue { $0 }
        guard let named = answer.first(where: { (try? CID($0.cid)) == root }) else {
            throw .badResponse(node: node, command: "dag/import",
                               reason: "the answer names \(answer.map { $0.cid }) instead of the root \(root)")
        }
        guard named.pinError.isEmpty else {
            throw .command(node: node, command: "dag/import", status: 200, message: named.pinError, code: nil)
        }
    }

    /// Whether the node holds the block `cid` itself (`block/stat`, offline: never a network search).
    /// A node that does not know the command answers false.
    public func hasBlock(_ cid: CID) async throws(KuboError) -> Bool {
        do {
            _ = try await call("block/stat", query: [("arg", cid.description), ("offline", "true")])
            return true
        } catch {
            guard case let .command(_, _, _, message, _) = error else { throw error }
            if error.isUnknownCommand || message.contains("not found") || message.contains("could not find") { return false }
            throw error
        }
    }

    /// Whether `cid` is pinned recursively on the node.
    public func isPinned(_ cid: CID) async throws(KuboError) -> Bool {
        do {
            return try await pinLs(cid, type: "recursive")[cid.description] != nil
        } catch {
            guard case let .command(_, _, _, message, _) = error, message.contains("not pinned") else { throw error }
            return false
        }
    }

    /// Pins `cid` (recursively by default); returns the CIDs the node reports pinned. With
    /// `offline`, the node uses only the blocks it holds (a missing one fails at once).
    @discardableResult
    public func pinAdd(_ cid: CID, recursive: Bool = true, offline: Bool = false) async throws(KuboError) -> [CID] {
        var query = [("arg", cid.description), ("recursive", "\(recursive)")]
        if offline { query.append(("offline", "true")) }
        let object = try json(try await call("pin/add", query: query), command: "pin/add")
        do {
            return try KuboAnswer.pins(object).map { text throws(IPFSError) in try CID(text) }
        } catch {
            throw .badResponse(node: endpoint.baseURL, command: "pin/add", reason: error.description)
        }
    }

    /// Unpins `cid`.
    public func pinRm(_ cid: CID, recursive: Bool = true) async throws(KuboError) {
        _ = try await call("pin/rm", query: [("arg", cid.description), ("recursive", "\(recursive)")])
    }

    /// The node's pins (of `type`: all, recursive, direct, indirect), as CID → pin type.
    /// With `cid`, only that one; a CID that is not pinned throws the node's error.
    public func pinLs(_ cid: CID? = nil, type: String = "all") async throws(KuboError) -> [String: String] {
        var query = [("type", type)]
        if let cid { query.append(("arg", cid.description)) }
        let object = try json(try await call("pin/ls", query: query), command: "pin/ls")
        return KuboAnswer.pinTypes(object)
    }

    /// The bytes of the file at `path` (`CID` or `/ipfs/CID/sub/path`); a file over `limit`
    /// bytes throws ``KuboError/tooLarge(node:command:limit:)`` as soon as the limit is passed.
    public func cat(_ path: String, limit: Int = 1 << 30) async throws(KuboError) -> [UInt8] {
        try await call("cat", query: [("arg", path)], limit: limit)
    }

    private func json(_ body: [UInt8], command: String) throws(KuboError) -> [String: Any] {
        try KuboAnswer.object(body, node: endpoint.baseURL, command: command)
    }
}
