import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteIPFS
import GraniteIPFSTesting
import GraniteTesting
import XCTest

/// `granite convert --depth` and `--pin`, run as the real binary with the real depth model and
/// the project's Kubo test node (real Kubo core).
final class ConvertDepthPinTests: XCTestCase {
    /// The package root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Skips (locally, saying why) or fails (CI=true) when a prerequisite is missing.
    func require(_ ok: Bool, _ reason: String, filePath: StaticString = #filePath, line: UInt = #line) throws {
        try Prerequisite.require(ok, reason, filePath: filePath, line: line)
    }

    /// Width, height, bit depth and color type from a PNG's IHDR.
    func pngHeader(_ path: String) throws -> (width: Int, height: Int, bitDepth: UInt8, colorType: UInt8) {
        let b = try FileBytes.read(path)
        XCTAssertGreaterThan(b.count, 33, path)
        XCTAssertEqual(Array(b[0..<8]), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], path)
        func u32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        return (u32(16), u32(20), b[24], b[25])
    }

    func testDepthWritesBothFilesAndReRunSkipsThem() throws {
        let models = Self.root.appendingPathComponent("Models").path  // FastDepth ships in the repository
        try require(FileManager.default.fileExists(atPath: models + "/fastdepth-224-int8.onnx"),
                    "the depth model is not in \(models)")
        let input = ConvertFixtures.folder("depth-in"), out = ConvertFixtures.folder("depth-out")
        try ConvertFixtures.writeJPEGs(3, to: input, width: 120, height: 80)
        let env = ["GRANITE_MODEL_PATH": models]
        let args = ["convert", input, "-o", out, "--format", "png", "--resize", "50%", "--depth", "--jobs", "2"]
        let first = try ConvertFixtures.runGranite(args, environment: env)
        XCTAssertEqual(first.status, 0, first.stderr)
        for name in ["img0", "set1/img1", "set2/img2"] {
            let depth = try pngHeader(out + "/\(name).depth.png")
            XCTAssertEqual(depth.width, 60); XCTAssertEqual(depth.height, 40)
            XCTAssertEqual(depth.bitDepth, 16, "depth PNG is 16-bit"); XCTAssertEqual(depth.colorType, 0, "depth PNG is gray")
            let preview = try pngHeader(out + "/\(name).depth-preview.png")
            XCTAssertEqual(preview.width, 60); XCTAssertEqual(preview.height, 40)
            XCTAssertEqual(preview.bitDepth, 8); XCTAssertEqual(preview.colorType, 3, "preview is indexed color (the viridis palette)")
        }
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
        XCTAssertEqual(manifest.entries.map(\.depth), ["img0.depth.png", "set1/img1.depth.png", "set2/img2.depth.png"])
        XCTAssertEqual(manifest.entries.map(\.depthPreview), ["img0.depth-preview.png", "set1/img1.depth-preview.png", "set2/img2.depth-preview.png"])

        let stamp = try FileManager.default.attributesOfItem(atPath: out + "/img0.depth.png")[.modificationDate] as? Date
        let second = try ConvertFixtures.runGranite(args, environment: env)
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains("converted 0, skipped 3"), second.stdout)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: out + "/img0.depth.png")[.modificationDate] as? Date, stamp)

        // A missing depth file makes its image be redone, and only that one.
        try FileManager.default.removeItem(atPath: out + "/set1/img1.depth-preview.png")
        let third = try ConvertFixtures.runGranite(args, environment: env)
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertTrue(third.stdout.contains("converted 1, skipped 2"), third.stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/set1/img1.depth-preview.png"))
    }

    /// Starts the Kubo test node, or skips (fails in CI) when it or the venv is missing.
    func standin(_ repo: String) throws -> KuboStandinProcess {
        do {
            let server = try KuboStandinProcess(packageRoot: Self.root, repo: repo)
            addTeardownBlock { server.stop() }
            return server
        } catch {
            try require(false, "Kubo test node not startable: \(error)")
            throw error
        }
    }

    func testPinPinsEveryOutputWithTheLocalCID() async throws {
        let input = ConvertFixtures.folder("pin-in"), out = ConvertFixtures.folder("pin-out")
        let state = ConvertFixtures.folder("pin-state")
        let server = try standin(ConvertFixtures.folder("pin-repo"))
        try ConvertFixtures.writeJPEGs(4, to: input)
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--resize", "50%", "--pin", "--api", server.url,
                                                "--cid-version", "0"],
                                               environment: ["GRANITE_PIN_JOURNAL": state + "/pins.jsonl"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("pinned 4 of 4 files on "), r.stdout + r.stderr)
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: server.url))
        let pins = try await client.pinLs()
        let importer = try UnixFSImporter(options: ImportOptions(cidVersion: 0))
        let outputs = ConvertFixtures.files(out).filter { $0.hasSuffix(".jpg") }
        XCTAssertEqual(outputs.count, 4)
        for rel in outputs {
            let cid = try importer.cid(of: try FileBytes.read(out + "/" + rel))
            XCTAssertTrue(cid.description.hasPrefix("Qm"), "CIDv0")
            XCTAssertNotNil(pins[cid.description], "\(rel) (\(cid)) is pinned")
        }
        let journal = try PinJournal(path: state + "/pins.jsonl").state()
        XCTAssertEqual(journal.done.count, 5, "4 outputs and the folder")
        XCTAssertEqual(journal.pending.count, 0)
    }

    func testPinWithNoNodeStillConvertsAndJournalsTheJobs() throws {
        let input = ConvertFixtures.folder("nopin-in"), out = ConvertFixtures.folder("nopin-out")
        let state = ConvertFixtures.folder("nopin-state")
        try ConvertFixtures.writeJPEGs(3, to: input)
        // A port nobody listens on: bind one, read its number, close it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        close(fd)
        let started = ContinuousClock.now
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--pin", "--api", "http://127.0.0.1:\(port)",
                                                "--pin-wait", "10"],
                                               environment: ["GRANITE_PIN_JOURNAL": state + "/pins.jsonl"])
        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(r.status, 0, r.stderr)
        // A node that does not answer a quick probe gets no --pin-wait: the run ends at once.
        XCTAssertLessThan(elapsed, .seconds(7), "convert --pin with the node down took \(elapsed)")
        XCTAssertTrue(r.stderr.contains("not reachable"), r.stderr)
        XCTAssertTrue(r.stdout.contains("converted 3,"), r.stdout)
        XCTAssertTrue(r.stdout.contains("pinned 0 of 3 files on "), r.stdout)
        XCTAssertTrue(r.stderr.contains("granite pin --retry"), r.stderr)
        XCTAssertEqual(ConvertFixtures.files(out).filter { $0.hasSuffix(".jpg") }.count, 3)
        XCTAssertTrue(r.stdout.contains("journaled, not pinned yet"), r.stdout)
        let journal = try PinJournal(path: state + "/pins.jsonl").state()
        // One job per output, and one for the folder (wrapped: all its entries), for `granite pin --retry`.
        XCTAssertEqual(journal.pending.count, 4)
        let (files, folders) = (journal.pending.filter { !$0.options.wrapWithDirectory }, journal.pending.filter(\.options.wrapWithDirectory))
        XCTAssertEqual(Set(files.flatMap(\.paths).map { ($0 as NSString).lastPathComponent }), ["img0.jpg", "img1.jpg", "img2.jpg"])
        XCTAssertEqual(folders.count, 1)
    }

    /// The folder CID of `--pin`: manifest.json records the root (the folder without the manifest
    /// files, as `ipfs add -r --cid-version=1 --raw-leaves` gives it: checked against aleph-cid)
    /// and each output's CID; the node pins the root and serves `ROOT/OUTPUT`; a re-run that
    /// changes the outputs changes both.
    func testPinRecordsTheFolderCIDAndEachOutputsCIDInTheManifest() async throws {
        let input = ConvertFixtures.folder("root-in"), out = ConvertFixtures.folder("root-out")
        let state = ConvertFixtures.folder("root-state")
        try FileManager.default.createDirectory(atPath: input + "/set1", withIntermediateDirectories: true)
        try ConvertFixtures.writeJPEGs(2, to: input)
        try ConvertFixtures.writeJPEGs(1, to: input + "/set1")
        let python = Self.root.appendingPathComponent(".venv/bin/python").path
        try require(FileManager.default.isExecutableFile(atPath: python), "no .venv (scripts/tiers/pre-ipfs.sh) for the aleph-cid oracle")
        let server = try standin(ConvertFixtures.folder("root-repo"))
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: server.url))
        let env = ["GRANITE_PIN_JOURNAL": state + "/pins.jsonl"]
        var roots: [String] = []
        for quality in ["90", "60"] {
            let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--quality", quality, "--pin", "--api", server.url], environment: env)
            XCTAssertEqual(r.status, 0, r.stderr)
            let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
            let root = try XCTUnwrap(manifest.rootCID, "rootCID recorded")
            XCTAssertTrue(r.stdout.contains("pinned 3 of 3 files on "), r.stdout + r.stderr)
            XCTAssertTrue(r.stdout.contains("folder \(root) pinned: ipfs://\(root)/"), r.stdout)
            XCTAssertEqual(manifest.entries.count, 3)
            let importer = try UnixFSImporter(options: ImportOptions(cidVersion: 1))
            for entry in manifest.entries {
                let bytes = try FileBytes.read(out + "/" + entry.output)
                XCTAssertEqual(entry.cid, try importer.cid(of: bytes).description, entry.output)
                let served = try await client.cat(root + "/" + entry.output)
                XCTAssertEqual(served, bytes, "ipfs://ROOT/\(entry.output) is the output")
            }
            // The oracle: aleph-cid over a copy of the folder without manifest.json.
            let copy = ConvertFixtures.folder("root-oracle-\(quality)")
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: out, toPath: copy)
            try FileManager.default.removeItem(atPath: copy + "/manifest.json")
            let oracle = try ChildProgram.output(python, ["-c", "import aleph_cid, sys; print(aleph_cid.hash_folder(sys.argv[1], cid_version=1))", copy])
            XCTAssertEqual(oracle.trimmingCharacters(in: .whitespacesAndNewlines), root, "aleph-cid agrees on the folder CID")
            let pins = try await client.pinLs(type: "recursive")
            XCTAssertEqual(pins[root], "recursive", "the folder is pinned")
            roots.append(root)
        }
        XCTAssertNotEqual(roots[0], roots[1], "new outputs, new folder CID")
    }
}
