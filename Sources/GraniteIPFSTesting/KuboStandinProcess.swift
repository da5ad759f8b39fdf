import Foundation
import GraniteProcess
#if canImport(Glibc)
import Glibc
#endif

/// Errors starting a test server (the Kubo test node, the test pinning service) or a helper program.
public enum StandinError: Error, Equatable, CustomStringConvertible {
    /// A file the launch of `server` needs is missing.
    case missing(server: String, path: String)
    /// `server` could not be launched, or exited or printed something else before
    /// `READY http://127.0.0.1:PORT` (its last lines, or why it could not be launched).
    case notStarted(server: String, output: String)
    /// `server` is running but did not answer a request for its test figures (`why`).
    case noAnswer(server: String, why: String)

    /// The name ``KuboStandinProcess`` gives in its errors.
    public static let kuboTestNode = "kubo test node"
    /// The name ``PinningServiceProcess`` gives in its errors.
    public static let pinningService = "test pinning service"

    /// A one-line message naming the server (or program), what failed and why.
    public var description: String {
        switch self {
        case let .missing(server, path): "\(server): '\(path)' not found (run scripts/tiers/pre-ipfs.sh)"
        case let .notStarted(server, output): "\(server) did not start: \(output) (run scripts/tiers/pre-ipfs.sh)"
        case let .noAnswer(server, why): "\(server) did not answer: \(why)"
        }
    }
}

/// The project's Kubo test node (`scripts/ipfs/kubo-testnode`): the Kubo RPC API on 127.0.0.1
/// over real Kubo core, with fault switches; for the tests and the benchmark.
///
/// ```
/// python standin-guard.py MAX_S kubo-testnode.py --port N --repo DIR [options]
///          └─ watchdog: stops the node when its parent goes away or after MAX_S
/// ```
/// Its libkubo child dies with it (PDEATHSIG), however it ends.
/// The node's stderr goes to `REPO/kubo-testnode.log`.
public final class KuboStandinProcess: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let url: String
    /// The port it listens on (to restart a node on the same address).
    public let port: Int
    private let process = Process()

    /// Starts the node of the package at `packageRoot`: its `.venv/bin/python` (made by
    /// `scripts/tiers/pre-ipfs.sh`), `scripts/ipfs/kubo-testnode` and the guard script.
    ///
    /// - Parameters:
    ///   - options: node options (`--fail-rate 0.3`, `--auth bearer:T`, `--down-after 5`, ...).
    ///   - port: 0 for a free one; a former node's port to restart it on the same address.
    ///   - repo: the node's folder (Kubo repo and pins); reuse it to keep what the node held.
    public convenience init(packageRoot: URL, options: [String] = [], port: Int = 0, repo: String,
                            maxSeconds: Int = 240) throws(StandinError) {
        try self.init(python: packageRoot.appendingPathComponent(".venv/bin/python").path,
                      folder: packageRoot.appendingPathComponent("scripts/ipfs/kubo-testnode").path,
                      guardScript: packageRoot.appendingPathComponent("scripts/ipfs/standin-guard.py").path,
                      options: options, port: port, repo: repo, maxSeconds: maxSeconds)
    }

    /// Starts a node; returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - python: a Python with the node's packages (the project's `.venv/bin/python`).
    ///   - folder: the node's folder (`scripts/ipfs/kubo-testnode`).
    ///   - guardScript: `scripts/ipfs/standin-guard.py`.
    ///   - options: extra node options (`--fail-rate 0.3`, `--auth bearer:T`, ...).
    public init(python: String, folder: String, guardScript: String, options: [String] = [],
                port: Int = 0, repo: String, maxSeconds: Int = 240) throws(StandinError) {
        let server = StandinError.kuboTestNode
        let script = folder + "/kubo-testnode.py"
        for path in [python, script, guardScript] where !FileManager.default.fileExists(atPath: path) {
            throw .missing(server: server, path: path)
        }
        do {
            try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        } catch {
            throw .notStarted(server: server, output: "cannot create its repo '\(repo)': \(error.localizedDescription)")
        }
        let logPath = repo + "/kubo-testnode.log"
        let url = try GuardedChild.start(process, server: server, python: python, guardScript: guardScript, maxSeconds: maxSeconds,
                                         arguments: [script, "--port", "\(port)", "--repo", repo] + options, log: logPath)
        guard let port = Int(url.split(separator: ":").last ?? "") else {
            GuardedChild.stop(process)
            throw .notStarted(server: server, output: "READY line without a port: \(url)")
        }
        self.port = port
        self.url = url
    }

    deinit { stop() }

    /// True until it has exited.
    public var isRunning: Bool { process.isRunning }

    /// Stops it and returns once it has exited: SIGTERM (the node's clean stop, which also ends
    /// its Kubo core), SIGKILL after 2 s. Polls `isRunning` rather than `waitUntilExit()`, which
    /// can block forever when called from an async context.
    public func stop() { GuardedChild.stop(process) }
}

/// A test server run under `scripts/ipfs/standin-guard.py` (the Kubo test node, the pinning
/// service): started until it prints `READY http://127.0.0.1:PORT`, stopped with SIGTERM, then
/// SIGKILL after 2 s. The one copy of both, for every stand-in.
enum GuardedChild {
    /// Runs `python guardScript maxSeconds arguments…` in `process`, its stderr into `log`; returns
    /// the URL of its READY line, or kills it and throws ``StandinError/notStarted(server:output:)``
    /// naming `server` with the last lines it wrote.
    static func start(_ process: Process, server: String, python: String, guardScript: String, maxSeconds: Int,
                      arguments: [String], log logPath: String) throws(StandinError) -> String {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [guardScript, "\(maxSeconds)"] + arguments
        let out = Pipe()
        process.standardOutput = out
        let log = FileHandle(forWritingAtPath: logPath)
        process.standardError = log ?? FileHandle.nullDevice
        defer { try? log?.close() }  // the child has its own copy
        do { try process.run() } catch { throw .notStarted(server: server, output: "cannot run \(python): \(error.localizedDescription)") }
        var text = ""
        while !text.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("READY http://127.0.0.1:") else {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { usleep(10_000) }
            let written = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            let why = (text + written).split(separator: "\n").suffix(3).joined(separator: " | ")
            throw .notStarted(server: server, output: why.isEmpty ? "no output" : why)
        }
        return String(line.dropFirst("READY ".count))
    }

    /// Stops `process` and returns once it has exited: SIGTERM (the server's clean stop), SIGKILL
    /// after 2 s. Polls `isRunning` rather than `waitUntilExit()`, which can block forever when
    /// called from an async context.
    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let end = Date().addingTimeInterval(2)
        while process.isRunning, Date() < end { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning, Date() < end.addingTimeInterval(3) { usleep(10_000) }
    }
}
