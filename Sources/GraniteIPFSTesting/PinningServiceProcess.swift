import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The project's IPFS Pinning Service for tests (`scripts/ipfs/pinning-service`): the Pinning
/// Service API on 127.0.0.1, every request and response checked against the project's openapi.yaml
/// (openapi-core), with fault switches; started and stopped like ``KuboStandinProcess``.
///
/// ```
/// python standin-guard.py MAX_S pinning-service.py --port N --token T [options]
///          └─ watchdog: stops the service when its parent goes away or after MAX_S
/// ```
/// Its stderr goes to `LOG` (spec violations are also counted in ``stats()``).
public final class PinningServiceProcess: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`.
    public let url: String
    private let process = Process()
    private let python: String

    /// Starts the service of the package at `packageRoot` (its `.venv/bin/python`, made by
    /// `scripts/tiers/pre-ipfs.sh`), accepting `tokens`.
    ///
    /// - Parameters:
    ///   - options: `--rate-429 0.05`, `--retry-after 1`, `--rate-500 0.05`,
    ///     `--rate-500-after 0.3` (a POST processed, then answered 500), `--latency-ms 500`,
    ///     `--refuse-token`, `--fail-cid CID`, `--pin-delay S`, `--origin-api URL`, `--seed N`.
    ///   - log: where its stderr goes.
    public init(packageRoot: URL, tokens: [String], options: [String] = [], log: String, maxSeconds: Int = 240) throws {
        python = packageRoot.appendingPathComponent(".venv/bin/python").path
        let script = packageRoot.appendingPathComponent("scripts/ipfs/pinning-service/pinning-service.py").path
        let guardScript = packageRoot.appendingPathComponent("scripts/ipfs/standin-guard.py").path
        for path in [python, script, guardScript] where !FileManager.default.fileExists(atPath: path) {
            throw StandinError.missing(path: path)
        }
        FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [guardScript, "\(maxSeconds)", script, "--port", "0"] + tokens.flatMap { ["--token", $0] } + options
        let out = Pipe()
        process.standardOutput = out
        let logHandle = FileHandle(forWritingAtPath: log)
        process.standardError = logHandle ?? FileHandle.nullDevice
        defer { try? logHandle?.close() }
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("READY http://127.0.0.1:") else {
            kill(process.processIdentifier, SIGKILL)
            while process.isRunning { usleep(10_000) }
            let why = (text + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")).split(separator: "\n").suffix(3)
            throw StandinError.notStarted(output: why.isEmpty ? "no output" : why.joined(separator: " | "))
        }
        url = String(line.dropFirst("READY ".count))
    }

    deinit { stop() }

    /// What it has served: request counts per operation (`"POST /pins"`, `"GET /pins"`,
    /// `"GET /pins/{requestid}"`, `"DELETE /pins/{requestid}"`), faults injected, spec violations.
    public struct Stats: Decodable, Sendable {
        /// Requests per operation.
        public var requests: [String: Int]
        /// Faults injected, by kind ("429", "500", "500-after": a POST processed, then answered 500).
        public var faults: [String: Int]
        /// Pin requests created (`POST /pins` processed), by CID.
        public var created: [String: Int]
        /// Requests or responses that did not match openapi.yaml.
        public var violations: [String]
    }

    /// Asks it for ``Stats`` (`GET /_test/stats`, outside the API).
    public func stats() throws -> Stats {
        let text = try ChildProcess.run(python, ["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1] + '/_test/stats', timeout=10).read().decode())", url])
        return try JSONDecoder().decode(Stats.self, from: Data(text.utf8))
    }

    /// Stops it and returns once it has exited (SIGTERM, SIGKILL after 2 s).
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let end = Date().addingTimeInterval(2)
        while process.isRunning, Date() < end { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        while process.isRunning, Date() < end.addingTimeInterval(3) { usleep(10_000) }
    }
}
