import ArgumentParser
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

    @Option(help: "Files added and pinned per run.")
    var files = 200

    @Option(help: "Size of each pinned file, KiB.")
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
        let lines = try GraniteIPFSTesting.ChildProcess.run(python, ["-c", script, file, "\(version)", "\(runs)"]).split(separator: "\n")
        let parsed = lines.map { $0.split(separator: " ") }
        guard let cid = parsed.first?.first else { throw ValidationError("aleph-cid printed nothing") }
        return (String(cid), parsed.compactMap { Double($0.last ?? "") }.map { megabytes / $0 })
    }

    // MARK: Add + pin

    private func addAndPin(work: URL) async throws {
        let dir = work.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let paths = try (0..<files).map { i -> String in
            let path = dir.appendingPathComponent(String(format: "frame-%04d.png", i)).path
            try BenchData.writeRandomFile(path, bytes: fileKib << 10, seed: UInt64(i + 1))
            return path
        }
        let megabytes = Double(files * (fileKib << 10)) / 1e6
        var ours: [Double] = []
        var anchor: [Double] = []
        for run in 0..<max(1, runs / 2 + 1) {
            let server = try KuboStandinProcess(python: python, folder: "scripts/ipfs/kubo-testnode", guardScript: "scripts/ipfs/standin-guard.py",
                                                repo: work.appendingPathComponent("repo\(run)").path)
            defer { server.stop() }
            let client = KuboClient(endpoint: try KuboEndpoint(parsing: server.url))
            let journal = try PinJournal(path: work.appendingPathComponent("journal\(run).jsonl").path)
            let pinner = try Pinner(client: client, journal: journal, options: .init(cidVersion: 1), concurrency: 4)
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try await pinner.pin(paths: paths)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard report.pinned.count == files, report.problems.isEmpty else {
                throw ValidationError("pinned \(report.pinned.count)/\(files): \(report.problems.first?.reason ?? "")")
            }
            ours.append(seconds)
            anchor.append(try pythonClient(server.url, dir: dir.path))
        }
        let a = BenchData.median(ours), b = BenchData.median(anchor)
        print("add+pin of \(files) files x \(fileKib) KiB against the Kubo test node (CIDv1, 4 at a time, median of \(ours.count)):")
        print("  client                                files/s     MB/s   seconds")
        print(String(format: "  granite Pinner (local CID, journal)  %8.1f %8.1f %9.2f", Double(files) / a, megabytes / a, a))
        print(String(format: "  python urllib (add+pin/add only)      %8.1f %8.1f %9.2f", Double(files) / b, megabytes / b, b))
        print(String(format: "  ratio granite/python: %.2fx", b / a))
    }

    /// The anchor: the same adds (cid-version 1) and pin/adds from Python threads, no checks.
    private func pythonClient(_ url: String, dir: String) throws -> Double {
        let script = """
            import os, sys, time, json, urllib.request, concurrent.futures as cf
            url, d = sys.argv[1], sys.argv[2]
            files = sorted(os.path.join(d, f) for f in os.listdir(d))
            def one(p):
                b = "b0undary"
                body = (b"--" + b.encode() + b'\\r\\nContent-Disposition: form-data; name="file"; filename="'
                        + os.path.basename(p).encode() + b'"\\r\\nContent-Type: application/octet-stream\\r\\n\\r\\n'
                        + open(p, "rb").read() + b"\\r\\n--" + b.encode() + b"--\\r\\n")
                r = urllib.request.Request(url + "/api/v0/add?cid-version=1&pin=true", data=body, method="POST",
                                           headers={"Content-Type": "multipart/form-data; boundary=" + b})
                cid = json.loads(urllib.request.urlopen(r).read().splitlines()[-1])["Hash"]
                urllib.request.urlopen(urllib.request.Request(url + "/api/v0/pin/add?arg=" + cid, method="POST")).read()
            t = time.perf_counter()
            with cf.ThreadPoolExecutor(4) as ex: list(ex.map(one, files))
            print(time.perf_counter() - t)
            """
        guard let seconds = Double(try GraniteIPFSTesting.ChildProcess.run(python, ["-c", script, url, dir]).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ValidationError("python anchor printed no time")
        }
        return seconds
    }
}
