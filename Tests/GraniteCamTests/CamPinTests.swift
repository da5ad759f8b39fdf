import Foundation
import GraniteCapture
import GraniteCodecs
import GraniteIPFS
import GraniteIPFSTesting
import GraniteMedia
import GraniteTesting
import XCTest

@testable import GraniteCam

/// `--pin` and depth files: the Kubo test node (real Kubo core), real PNG encoder and journal.
final class CamPinTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cam-pin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// Starts the Kubo test node; skips with the reason locally, fails under CI=true.
    func standin() throws -> KuboStandinProcess {
        do {
            let server = try KuboStandinProcess(packageRoot: Self.root, repo: try tempDir().path)
            addTeardownBlock { server.stop() }
            return server
        } catch {
            try Prerequisite.unmet("\(error) (run scripts/tiers/pre-ipfs.sh)")
        }
    }

    func client(_ url: String, attempts: Int = 4) throws -> KuboClient {
        var config = KuboClient.Configuration()
        config.connectTimeout = .milliseconds(500)
        config.readTimeout = .seconds(20)
        config.requestTimeout = .seconds(20)
        config.maxAttempts = attempts
        config.initialBackoff = .milliseconds(20)
        config.maxBackoff = .milliseconds(200)
        return KuboClient(endpoint: try KuboEndpoint(parsing: url), configuration: config)
    }

    func settings(out: URL, frames: UInt64, depthEvery: Int?) -> CamSettings {
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 64, height: 48), fps: 100)
        s.outputDirectory = out.path
        s.save = .every
        s.frameLimit = frames
        s.depthEvery = depthEvery
        return s
    }

    func files(_ dir: URL, prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".png") }.sorted()
    }

    func testPinPinsEveryWrittenFileOnceWithItsLocalCID() async throws {
        let node = try standin()
        let dir = try tempDir(), out = dir.appendingPathComponent("out")
        let client = try client(node.url)
        let journalPath = dir.appendingPathComponent("pins.jsonl").path
        let pins = try CamPinning(client: client, journalPath: journalPath, wait: .seconds(30), retryInterval: .milliseconds(500))
        let probe = await pins.probe()
        XCTAssertNil(probe)
        let pipeline = try CamPipeline(settings: settings(out: out, frames: 8, depthEvery: 2), encoder: CodecsEncoder(.png),
                                       depth: SlowDepthFake(delayMicros: 0), pins: pins)
        let summary = try await CamApp(pipeline: pipeline).run()
        XCTAssertEqual(summary.saved, 8)
        let written = try files(out, prefix: "frame_") + files(out, prefix: "depth-")
        XCTAssertEqual(written.count, 8 + Int(summary.depthSaved))
        XCTAssertGreaterThan(summary.depthSaved, 0)
        let outcome = try XCTUnwrap(summary.pinning)
        XCTAssertEqual(outcome.queued, written.count)
        XCTAssertEqual(outcome.pinned, written.count, "\(outcome)")
        XCTAssertEqual(outcome.remaining, 0)

        let state = try PinJournal(path: journalPath).state()
        XCTAssertEqual(state.pending.count, 0)
        XCTAssertEqual(state.done.count, written.count, "each file journaled and pinned exactly once")
        let pinned = try await client.pinLs(type: "recursive")
        let importer = try UnixFSImporter(options: ImportOptions())
        for name in written {
            let path = out.appendingPathComponent(name).path
            let cid = try importer.cid(of: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            let jobs = state.done.filter { $0.paths == [path] }
            XCTAssertEqual(jobs.count, 1, name)
            XCTAssertEqual(jobs.first?.cid, cid, name)
            XCTAssertEqual(pinned[cid.description], "recursive", "\(name) pinned on the node as \(cid)")
        }
    }

    /// `granite-cam --pin --service URL` as a user runs it: the `--out` folder's root CID is pinned
    /// on the Kubo test node and then on the project's test pinning service (which fetches it
    /// from the node the run names as origin); the token is never printed or journaled.
    func testCLIPinsTheFolderRootOnAPinningService() async throws {
        let node = try standin()
        let dir = try tempDir(), out = dir.appendingPathComponent("out")
        let secret = "cam-s3cr3t-TOKEN-4242"
        let service: PinningServiceProcess
        do {
            service = try PinningServiceProcess(packageRoot: Self.root, tokens: [secret], options: ["--pin-delay", "0.3"],
                                                log: dir.appendingPathComponent("service.log").path)
        } catch {
            try Prerequisite.unmet("\(error) (run scripts/tiers/pre-ipfs.sh)")
        }
        addTeardownBlock { service.stop() }
        let tokenFile = dir.appendingPathComponent("token")
        try Data((secret + "\n").utf8).write(to: tokenFile)
        let journal = dir.appendingPathComponent("pins.jsonl").path

        let result = try ChildProgram.run(try ChildProgram.built("granite-cam"), [
            "--source", "testpattern", "--size", "64x48", "--fps", "100", "--frames", "3", "--out", out.path,
            "--pin", "--api", node.url, "--pin-journal", journal, "--service", service.url, "--service-token-file", tokenFile.path])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("granite-cam: pinned 3 of 3 files on "), result.out)
        XCTAssertFalse(result.err.contains("warning"), result.err)
        for text in [result.out, result.err, try String(contentsOfFile: journal, encoding: .utf8)] {
            XCTAssertFalse(text.contains(secret), "the token is never printed or journaled")
        }
        let line = try XCTUnwrap(result.out.split(separator: "\n").first { $0.contains("granite-cam: folder ") && $0.contains(" pinned: ipfs://") },
                                 result.out)
        let root = try XCTUnwrap(line.split(separator: " ").dropFirst(2).first.map(String.init))
        XCTAssertTrue(result.out.contains("granite-cam: pinned 1 of 1 on \(service.url): ipfs://\(root)/\n"), result.out)

        let onNode = try await client(node.url).pinLs(type: "recursive")
        XCTAssertEqual(onNode[root], "recursive", "the folder is pinned on the local node, the service's origin")

        let remote = try PinningServiceClient(service: service.url, token: PinningServiceToken(secret))
        let pinned = try await remote.list(statuses: [.pinned])
        XCTAssertEqual(pinned.pins.map(\.cid), [root], "the folder's root CID reached the service as pinned")
        let stats = try service.stats()
        XCTAssertEqual(stats.violations, [])
        XCTAssertEqual(stats.created, [root: 1], "one pin request, for the root only")
    }

    func testNodeDownCaptureContinuesAndTheJournalKeepsTheJobs() async throws {
        let dir = try tempDir(), out = dir.appendingPathComponent("out")
        let journalPath = dir.appendingPathComponent("pins.jsonl").path
        let pins = try CamPinning(client: try client("http://127.0.0.1:1", attempts: 1), journalPath: journalPath,
                                  wait: .seconds(3), retryInterval: .milliseconds(200))
        let probed = await pins.probe()
        let warning = try XCTUnwrap(probed)
        XCTAssertTrue(warning.contains("not reachable") && warning.contains("127.0.0.1:1"), warning)
        let started = Date()
        let summary = try await CamApp(pipeline: try CamPipeline(settings: settings(out: out, frames: 6, depthEvery: nil),
                                                                 encoder: CodecsEncoder(.png), pins: pins)).run()
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "a node down at exit gets no drain: the jobs stay journaled at once")
        XCTAssertEqual(summary.frames, 6)
        XCTAssertEqual(summary.saved, 6)
        let outcome = try XCTUnwrap(summary.pinning)
        XCTAssertEqual(outcome.queued, 6)
        XCTAssertEqual(outcome.pinned, 0)
        XCTAssertEqual(outcome.remaining, 6)
        XCTAssertEqual(outcome.problem, "IPFS node at http://127.0.0.1:1 not reachable")
        let state = try PinJournal(path: journalPath).state()
        XCTAssertEqual(Set(state.pending.flatMap(\.paths)), Set(try files(out, prefix: "frame_").map { out.appendingPathComponent($0).path }),
                       "every frame stays journaled for granite pin --retry")
    }

    func testDepthMapsAreWrittenAs16BitPNGsOnePerDepthFrame() async throws {
        let dir = try tempDir(), out = dir.appendingPathComponent("out")
        let depth = SlowDepthFake(delayMicros: 4000)
        var s = settings(out: out, frames: 40, depthEvery: 1)
        s.paced = false
        s.save = .none
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, depth: depth)).run()
        let names = try files(out, prefix: "depth-")
        XCTAssertGreaterThan(summary.depthFrames, 0)
        XCTAssertEqual(UInt64(names.count), summary.depthFrames, "one file per depth map")
        XCTAssertEqual(summary.depthSaved, summary.depthFrames)
        XCTAssertLessThanOrEqual(summary.depthFrames, summary.frames, "latest frame wins: never a queue")
        for name in names {
            let png = Array(try Data(contentsOf: out.appendingPathComponent(name)))
            XCTAssertEqual(Array(png[12..<16]), Array("IHDR".utf8), name)
            let be32 = { (at: Int) in png[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
            XCTAssertEqual(be32(16), 64, name)
            XCTAssertEqual(be32(20), 48, name)
            XCTAssertEqual(png[24], 16, "\(name): 16-bit samples")
            XCTAssertEqual(png[25], 0, "\(name): grayscale")
        }
        let lines = try String(contentsOf: out.appendingPathComponent("depth.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, names.count)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: out.path).contains { $0.hasPrefix(".") },
                       "no temporary files left")
    }

    /// A stage's maps become 16-bit samples and preview colours in one place (GraniteML's
    /// `DepthMap`): a plain stage's relative maps min–max with larger = farther, in every format.
    func testDepthStageMapsHaveOneMeaning() throws {
        let stage = FixedDepthFake(map: try Image(width: 3, height: 1, floats: [1, 2, 3]))
        let samples = { (image: Image) in image.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) } }
        let floats = try stage.depthMap(try Image(width: 3, height: 1, floats: [1, 2, 3])).to16BitPNGImage()
        XCTAssertEqual(floats.format, .gray16)
        XCTAssertEqual(samples(floats), [0, 32768, 65535])
        let gray8 = try stage.depthMap(try Image(width: 2, height: 1, format: .gray8, bytes: [0, 255])).to16BitPNGImage()
        XCTAssertEqual(samples(gray8), [0, 65535])
        XCTAssertEqual(try stage.estimateMaps(try Image(width: 3, height: 1, format: .rgba8)).png(), floats)
        XCTAssertThrowsError(try stage.depthMap(try Image(width: 1, height: 1, format: .rgba8)))
    }
}
