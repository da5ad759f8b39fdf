import ArgumentParser
import GraniteProcess
import Foundation
import GraniteIPFS
import GraniteIPFSTesting

/// `granite-bench cid`: local CID throughput beside aleph-cid, and add+pin throughput against
/// the project's Kubo test node beside a plain Python client doing the same requests, all in one run.
struct CIDBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cid",
        abstract: "Local CID MB/s on a big file vs aleph-cid; add+pin of many files vs a Python client.")

    @Option(help: "Size of the file hashed locally, MiB.")
    var mib = 256

    @Option(help: "Timed runs per measurement (the median is printed).")
    var runs = 5

    @Option(help: "Batches pinned: COUNTxKIB,... (files of KIB KiB each, in one folder).")
    var sets = "1000x4,200x100,10000x1"

    @Option(help: "Only this many files per batch (with --file-kib: one batch instead of --sets).")
    var files: Int?

    @Option(help: "Size of each pinned file, KiB (with --files).")
    var fileKib = 100

    @Option(help: "Python with aleph-cid (default .venv/bin/python).")
    var python = ".venv/bin/python"


    @Flag(help: "Skip the add+pin part.")
    var localOnly = false

    func run() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("granite-bench-cid-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ValidationError("no python at \(python): run scripts/tiers/pre-ipfs.sh (the anchor needs aleph-cid)")
        }
        try localCIDs(work: work)
        if !localOnly { try await addAndPin(work: work) }
    }

    // MARK: Local CIDs

    private func localCIDs(work: URL) throws {
        let big = work.appendingPathComponent("big.bin").path
        try BenchData.writeRandomFile(big, bytes: mib << 20)
        let megabytes = Double(mib << 20) / 1e6
        print("local CID of a \(mib) MiB file (median of \(runs), file in page cache), MB/s:")
        print("  variant                    granite   aleph-cid   ratio")
        for (label, version) in [("CIDv0 (dag-pb leaves)", 0), ("CIDv1 (raw leaves)", 1)] {
            var ours: [Double] = []
            var cid = ""
            let importer = try UnixFSImporter(options: .init(cidVersion: version))
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                cid = try importer.importPaths([big]).roots[0].cid.description
                ours.append(megabytes / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9))
            }
            let (theirCID, theirs) = try alephRun(file: big, version: version, megabytes: megabytes)
            guard theirCID == cid else { throw ValidationError("CID differs from aleph-cid: \(cid) vs \(theirCID)") }
            let a = BenchData.median(ours), b = BenchData.median(theirs)
            print("  " + label.padding(toLength: 24, withPad: " ", startingAt: 0) + String(format: " %9.1f %11.1f %7.2fx", a, b, a / b))
        }
    }

    /// aleph-cid on the same file, streamed in 1 MiB reads, `runs` times inside one Python process.
    private func alephRun(file: String, version: Int, megabytes: Double) throws -> (String, [Double]) {
        let script = """
            import aleph_cid, sys, time
            path, v, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
            for _ in range(runs):
                t = time.perf_counter()
                h = aleph_cid.CidHasher.for_ipfs() if v == 0 else aleph_cid.CidHasher.for_ipfs_v1_raw_leaves()
                with open(path, "rb", buffering=0) as f:
                    while True:
                        b = f.read(1 << 20)
                        if not b: break
                        h.update(b)
                cid = h.finalize()
                print(cid, time.perf_counter() - t)
            """
        let lines = try ChildProgram.output(python, ["-c", script, file, "\(version)", "\(runs)"]).split(separator: "\n")
        let parsed = lines.map { $0.split(separator: " ") }
        guard let cid = parsed.first?.first else { throw ValidationError("aleph-cid printed nothing") }
        return (String(cid), parsed.compactMap { Double($0.last ?? "") }.map { megabytes / $0 })
    }

    // MARK: Pinning a batch

    /// One client's figures for one batch.
    private struct Figures {
        var seconds: [Double] = []
        var peakKiB: [Int] = []
        var root = ""
    }

    /// Each batch (a folder of files) pinned under one root by three programs, each against a fresh
    /// Kubo test node, taking turns going first: `granite pin FOLDER` (one CAR, built while sent), the
    /// Python per-file client and the Python client sending one CAR (scripts/bench/ipfs_clients.py).
    private func addAndPin(work: URL) async throws {
        var batches: [(count: Int, kib: Int)] = []
        if let files {
            batches = [(count: files, kib: fileKib)]
        } else {
            for item in sets.split(separator: ",") {
                let parts = item.split(separator: "x").compactMap { Int($0) }
                guard parts.count == 2, parts[0] > 0, parts[1] > 0 else { throw ValidationError("--sets: expected COUNTxKIB,..., got \(item)") }
                batches.append((count: parts[0], kib: parts[1]))
            }
        }
        let granite = BenchData.siblingExecutable("granite")
        let clients = "scripts/bench/ipfs_clients.py"
        guard FileManager.default.isExecutableFile(atPath: granite), FileManager.default.fileExists(atPath: clients) else {
            throw ValidationError("needs \(granite) (swift build -c release --product granite) and \(clients) (run from the package root)")
        }
        let rounds = max(1, runs / 2 + 1)
        print("pinning a folder of files under one root, CIDv1, against the Kubo test node (a fresh node per client, median of \(rounds)):")
        print("  batch            client                           files/s   root pinned (s)   peak RSS (MiB)   vs per-file")
        for (count, kib) in batches {
            let dir = work.appendingPathComponent("batch-\(count)x\(kib)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for i in 0..<count {
                try BenchData.writeRandomFile(dir.appendingPathComponent(String(format: "frame-%05d.png", i)).path, bytes: kib << 10, seed: UInt64(i + 1))
            }
            var ours = Figures(), perFile = Figures(), car = Figures()
            func node(_ name: String) throws -> KuboStandinProcess {
                try KuboStandinProcess(python: python, folder: "scripts/ipfs/kubo-testnode", guardScript: "scripts/ipfs/standin-guard.py",
                                       repo: work.appendingPathComponent(name).path, maxSeconds: 3600)
            }
            func agree(_ root: String, _ who: String) throws {
                for other in [ours.root, perFile.root, car.root] where !other.isEmpty && other != root {
                    throw ValidationError("\(who) pinned root \(root), another client \(other)")
                }
            }
            for round in 0..<rounds {
                func runGranite() throws {
                    let server = try node("repo-\(count)x\(kib)-\(round)-granite")
                    defer { server.stop() }
                    let journal = work.appendingPathComponent("journal-\(count)x\(kib)-\(round).jsonl").path
                    // The folder as one job: its root is the directory of its files, what the clients' wrapped adds make.
                    let result = try ChildProgram.run(granite, ["pin", "--json", "--api", server.url, "--pin-journal", journal, dir.path],
                                                      environment: ["IPFS_API_AUTH": nil])
                    guard result.status == 0, let data = result.stdout.isEmpty ? nil : Data(result.stdout),
                          let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                          let pinned = summary["pinned"] as? [[String: Any]], let root = pinned.first?["cid"] as? String else {
                        throw ValidationError("granite pin failed (\(result.status)): \(result.err.suffix(400))")
                    }
                    ours.seconds.append(result.seconds)
                    ours.peakKiB.append(result.peakKiB)
                    try agree(root, "granite")
                    ours.root = root
                }
                func runPython(_ mode: String) throws -> (seconds: Double, peakKiB: Int, root: String) {
                    let server = try node("repo-\(count)x\(kib)-\(round)-\(mode)")
                    defer { server.stop() }
                    let result = try ChildProgram.run(python, [clients, mode, server.url, dir.path])
                    let words = result.out.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                    guard result.status == 0, words.count == 3, Double(words[0]) != nil else {
                        throw ValidationError("python \(mode) client failed (\(result.status)): \(result.err.suffix(400))")
                    }
                    try agree(words[2], "python \(mode)")
                    return (result.seconds, result.peakKiB, words[2])
                }
                func record(_ run: (seconds: Double, peakKiB: Int, root: String), into figures: inout Figures) {
                    figures.seconds.append(run.seconds)
                    figures.peakKiB.append(run.peakKiB)
                    figures.root = run.root
                }
                var order: [() throws -> Void] = [
                    runGranite,
                    { let run = try runPython("per-file"); record(run, into: &perFile) },
                    { let run = try runPython("car"); record(run, into: &car) },
                ]
                order.rotate(by: round % 3)
                for step in order { try step() }
            }
            let base = BenchData.median(perFile.seconds)
            for (label, figures) in [("granite pin (one CAR)", ours), ("python per-file (add each)", perFile), ("python one CAR", car)] {
                let seconds = BenchData.median(figures.seconds)
                let peak = BenchData.median(figures.peakKiB.map(Double.init)) / 1024
                print("  " + "\(count) x \(kib) KiB".padding(toLength: 16, withPad: " ", startingAt: 0) + " "
                      + label.padding(toLength: 30, withPad: " ", startingAt: 0)
                      + String(format: " %9.1f %15.2f %16.1f %11.2fx", Double(count) / seconds, seconds, peak, base / seconds))
            }
        }
        print("  (seconds and peak RSS of each client process, start to root pinned; each client builds its own root, all equal)")
    }
}

private extension Array {
    mutating func rotate(by n: Int) {
        guard !isEmpty else { return }
        let k = n % count
        self = Array(self[k...] + self[..<k])
    }
}
