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
        let lines = try ChildProgram.output(python, ["-c", script, file, "\(version)", "\(runs)"]).split(separator: "\n")
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
        var ours: [Double] = [], oursRoot: [Double] = []
        var anchor: [Double] = [], anchorRoot: [Double] = []
        // Each client gets its own fresh node (a node that already holds the files answers the
        // second client's adds faster), and the two take turns going first.
        func node(_ name: String) throws -> KuboStandinProcess {
            try KuboStandinProcess(python: python, folder: "scripts/ipfs/kubo-testnode", guardScript: "scripts/ipfs/standin-guard.py",
                                   repo: work.appendingPathComponent(name).path)
        }
        for run in 0..<max(1, runs / 2 + 1) {
            var folderRoot = ""
            func granite() async throws {
                let server = try node("repo\(run)-granite")
                defer { server.stop() }
                let client = KuboClient(endpoint: try KuboEndpoint(parsing: server.url))
                // What `granite convert --pin` does: a job per file, then the folder as one directory.
                let session = try PinSession(client: client, journalPath: work.appendingPathComponent("journal\(run).jsonl").path,
                                             options: .init(cidVersion: 1), concurrency: 4)
                let start = DispatchTime.now().uptimeNanoseconds
                try session.submit(paths)
                let folder = try session.submitFolder(dir.path)
                let root = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                let outcome = await session.finish()
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                guard outcome.pinned == files, outcome.foldersPinned == true else {
                    throw ValidationError("pinned \(outcome.pinned)/\(files), folder \(folder.root): \(outcome.problem ?? "")")
                }
                ours.append(seconds)
                oursRoot.append(root)
                guard folderRoot.isEmpty || folderRoot == folder.root.description else {
                    throw ValidationError("folder CID: python client got \(folderRoot), granite \(folder.root)")
                }
                folderRoot = folder.root.description
            }
            func python() throws {
                let server = try node("repo\(run)-python")
                defer { server.stop() }
                let (total, rootPinned, pythonRoot) = try pythonClient(server.url, dir: dir.path)
                anchor.append(total)
                anchorRoot.append(rootPinned)
                guard folderRoot.isEmpty || pythonRoot == folderRoot else {
                    throw ValidationError("folder CID: python client got \(pythonRoot), granite \(folderRoot)")
                }
                folderRoot = pythonRoot
            }
            if run % 2 == 0 { try await granite(); try python() } else { try python(); try await granite() }
        }
        let a = BenchData.median(ours), b = BenchData.median(anchor)
        print("add+pin of \(files) files x \(fileKib) KiB, then their folder, against the Kubo test node (CIDv1, 4 at a time, median of \(ours.count)):")
        print("  client                                files/s     MB/s   seconds   root CID at (s)")
        print(String(format: "  granite PinSession (local CIDs)      %8.1f %8.1f %9.2f %9.3f (local, before upload)",
                     Double(files) / a, megabytes / a, a, BenchData.median(oursRoot)))
        print(String(format: "  python urllib (adds, wrapped add)     %8.1f %8.1f %9.2f %9.3f (node's answer)",
                     Double(files) / b, megabytes / b, b, BenchData.median(anchorRoot)))
        print(String(format: "  ratio granite/python: %.2fx", b / a))
    }

    /// The anchor: the same adds (cid-version 1) and pin/adds from Python threads, no checks, then
    /// the folder as one wrapped add and its pin/add. Returns (seconds, seconds until the root
    /// CID was known, the root CID).
    private func pythonClient(_ url: String, dir: String) throws -> (Double, Double, String) {
        let script = """
            import os, sys, time, json, urllib.request, concurrent.futures as cf
            url, d = sys.argv[1], sys.argv[2]
            files = sorted(os.path.join(d, f) for f in os.listdir(d))
            B = "b0undary"
            def part(p):
                return (b"--" + B.encode() + b'\\r\\nContent-Disposition: form-data; name="file"; filename="'
                        + os.path.basename(p).encode() + b'"\\r\\nContent-Type: application/octet-stream\\r\\n\\r\\n'
                        + open(p, "rb").read() + b"\\r\\n")
            def add(body, query):
                r = urllib.request.Request(url + "/api/v0/add?cid-version=1&" + query, data=body + b"--" + B.encode() + b"--\\r\\n",
                                           method="POST", headers={"Content-Type": "multipart/form-data; boundary=" + B})
                return json.loads(urllib.request.urlopen(r).read().splitlines()[-1])["Hash"]
            def pin(cid):
                urllib.request.urlopen(urllib.request.Request(url + "/api/v0/pin/add?arg=" + cid, method="POST")).read()
            def one(p):
                pin(add(part(p), "pin=true"))
            t = time.perf_counter()
            with cf.ThreadPoolExecutor(4) as ex: list(ex.map(one, files))
            root = add(b"".join(part(p) for p in files), "wrap-with-directory=true&pin=false")
            t_root = time.perf_counter() - t
            pin(root)
            print(time.perf_counter() - t, t_root, root)
            """
        let words = try ChildProgram.output(python, ["-c", script, url, dir]).split(separator: " ")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        guard words.count == 3, let seconds = Double(words[0]), let root = Double(words[1]) else {
            throw ValidationError("python anchor printed no time")
        }
        return (seconds, root, words[2])
    }
}
