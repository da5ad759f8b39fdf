import Foundation
import GraniteProcess
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
    public init(packageRoot: URL, tokens: [String], options: [String] = [], log: String, maxSeconds: Int = 240) throws(StandinError) {
        python = packageRoot.appendingPathComponent(".venv/bin/python").path
        let script = packageRoot.appendingPathComponent("scripts/ipfs/pinning-service/pinning-service.py").path
        let guardScript = packageRoot.appendingPathComponent("scripts/ipfs/standin-guard.py").path
        for path in [python, script, guardScript] where !FileManager.default.fileExists(atPath: path) {
            throw .missing(server: StandinError.pinningService, path: path)
        }
        url = try GuardedChild.start(process, server: StandinError.pinningService, python: python, guardScript: guardScript, maxSeconds: maxSeconds,
                                     arguments: [script, "--port", "0"] + tokens.flatMap { ["--token", $0] } + options,
                                     log: log)
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
    public func stats() throws(StandinError) -> Stats {
        let server = StandinError.pinningService
        let text: String
        do {
            text = try ChildProgram.output(python, ["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1] + '/_test/stats', timeout=10).read().decode())", url])
        } catch { throw .noAnswer(server: server, why: error.description) }
        do { return try JSONDecoder().decode(Stats.self, from: Data(text.utf8)) } catch {
            throw .noAnswer(server: server, why: "GET /_test/stats answered something that is not its figures: \(error)")
        }
    }

    /// Stops it and returns once it has exited (SIGTERM, SIGKILL after 2 s).
    public func stop() { GuardedChild.stop(process) }
}
