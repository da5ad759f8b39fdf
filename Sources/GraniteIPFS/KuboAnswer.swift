import Foundation

/// A node's answer to `version`.
public struct KuboVersion: Sendable, Hashable {
    /// e.g. `0.22.0`.
    public var version: String
    /// Repo version.
    public var repo: String
    /// e.g. `amd64/linux`.
    public var system: String
}

/// Upload progress from an `add` with `progress=true`.
public struct AddProgress: Sendable, Hashable {
    /// The entry being read.
    public var name: String
    /// Bytes of it the node has read.
    public var bytes: UInt64
}

/// Kubo RPC answers, bytes to values: pure functions with no I/O, which ``KuboClient`` calls on
/// what the node sent (and the fuzzer calls on anything). Only Foundation is needed here, so the
/// fuzz package compiles this file (and `KuboError.swift`) without the HTTP stack.
///
/// ```
/// 200 body ─► LineSplitter ─► line(_:) ─► [String: Any] ─► addEvent(_:) | importedRoot(_:)  (NDJSON: add, dag/import)
///         └─► object(_:) ─► version(_:) | pins(_:) | pinTypes(_:)           (one JSON value)
/// other status ─► commandError(status:text:)      trailer ─► streamError(trailer:)
/// ```
enum KuboAnswer {
    /// Cuts a body that arrives in pieces into NDJSON lines (without their `\n`).
    struct LineSplitter {
        private var pending: [UInt8] = []
        /// Bytes of `pending` already searched for a newline (a long line is scanned once).
        private var scanned = 0

        /// Adds a piece of the body; returns the lines it completed.
        mutating func append<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [[UInt8]] {
            pending.append(contentsOf: bytes)
            var lines: [[UInt8]] = []
            var start = pending.startIndex
            var from = scanned
            while let newline = pending[from...].firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(Array(pending[start..<newline]))
                start = newline + 1
                from = start
            }
            pending.removeSubrange(..<start)
            scanned = pending.count
            return lines
        }

        /// The last line when the body did not end with `\n`, or nil.
        mutating func finish() -> [UInt8]? {
            defer { pending = []; scanned = 0 }
            return pending.isEmpty ? nil : pending
        }
    }

    /// One NDJSON line as a JSON object; nil for a blank line. An in-band error object
    /// (`{"Type":"error","Message":...}`, as go-ipfs-cmds may send) throws `.streamError`.
    static func line<Bytes: Collection<UInt8>>(_ line: Bytes, node: String, command: String) throws(KuboError) -> [String: Any]? {
        guard line.contains(where: { $0 > 32 }) else { return nil }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw .badResponse(node: node, command: command, reason: "not a JSON object: \(String(decoding: line.prefix(120), as: UTF8.self))")
        }
        if object["Type"] as? String == "error", let message = object["Message"] as? String {
            throw .streamError(node: node, command: command, message: message)
        }
        return object
    }

    /// A whole body (single-value commands) as a JSON object.
    static func object(_ body: [UInt8], node: String, command: String) throws(KuboError) -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw .badResponse(node: node, command: command,
                               reason: "not a JSON object: \(String(decoding: body.prefix(120), as: UTF8.self))")
        }
        return object
    }

    /// A non-200 answer as a typed error: Kubo's JSON `{Message, Code, Type}` or plain text.
    static func commandError(status: Int, text: String, node: String, command: String) -> KuboError {
        var message = text.trimmingCharacters(in: .whitespacesAndNewlines)
        var code: Int?
        if let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
           let m = object["Message"] as? String {
            message = m
            code = object["Code"] as? Int
        }
        if status == 403 { return .forbidden(node: node, command: command, message: message) }
        return .command(node: node, command: command, status: status, message: message, code: code)
    }

    /// The error an `X-Stream-Error` trailer reports, or nil when it is absent or empty.
    static func streamError(trailer: String?, node: String, command: String) -> KuboError? {
        guard let trailer, !trailer.isEmpty else { return nil }
        return .streamError(node: node, command: command, message: trailer)
    }

    /// What one line of `add` output says.
    enum AddEvent: Equatable {
        /// An entry was added: its name, the node's CID text and cumulative size.
        case added(name: String, hash: String, size: UInt64)
        /// Progress reading an entry.
        case progress(AddProgress)
    }

    /// One `add` line: an added entry (it has `Hash`), progress (only `Name` and `Bytes`), or nil.
    static func addEvent(_ line: [String: Any]) -> AddEvent? {
        if let hash = line["Hash"] as? String {
            return .added(name: line["Name"] as? String ?? "", hash: hash, size: UInt64(line["Size"] as? String ?? "") ?? 0)
        }
        if let name = line["Name"] as? String {
            return .progress(AddProgress(name: name, bytes: (line["Bytes"] as? NSNumber)?.uint64Value ?? 0))
        }
        return nil
    }

    /// One `dag/import` line naming a root: its CID text and the pin error ("" when pinned); nil
    /// for other lines (`Stats`).
    static func importedRoot(_ line: [String: Any]) -> (cid: String, pinError: String)? {
        guard let root = line["Root"] as? [String: Any], let cid = (root["Cid"] as? [String: Any])?["/"] as? String else { return nil }
        return (cid, root["PinErrorMsg"] as? String ?? "")
    }

    /// The answer to `version`.
    static func version(_ object: [String: Any], node: String) throws(KuboError) -> KuboVersion {
        guard let version = object["Version"] as? String else {
            throw .badResponse(node: node, command: "version", reason: "no Version")
        }
        return KuboVersion(version: version, repo: object["Repo"] as? String ?? "", system: object["System"] as? String ?? "")
    }

    /// The CID texts of a `pin/add` answer (`{"Pins": [...]}`).
    static func pins(_ object: [String: Any]) -> [String] {
        object["Pins"] as? [String] ?? []
    }

    /// A `pin/ls` answer as CID text → pin type; `Keys` is absent when nothing is pinned.
    static func pinTypes(_ object: [String: Any]) -> [String: String] {
        let keys = object["Keys"] as? [String: Any] ?? [:]
        return keys.mapValues { ($0 as? [String: Any])?["Type"] as? String ?? "" }
    }
}
