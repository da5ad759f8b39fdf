import Foundation
import Granite
import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteSync
import Synchronization
import XCTest

@testable import GraniteCam

/// An encoder that takes `delay` per frame: a fake standing in for a slow disk (fault injection).
struct SlowEncoderFake: FrameEncoder {
    let delayMicros: UInt32
    var fileExtension: String { "ppm" }
    func encode(_ image: Image) throws -> [UInt8] {
        usleep(delayMicros)
        return try NetpbmEncoder().encode(image)
    }
}

/// A depth stage that takes `delay` per frame and returns a gray map: a fake for a slow model.
final class SlowDepthFake: DepthStage {
    let delayMicros: UInt32
    let calls = Atomic<Int>(0)
    init(delayMicros: UInt32) { self.delayMicros = delayMicros }
    func estimate(_ image: Image) throws -> Image {
        calls.add(1, ordering: .relaxed)
        usleep(delayMicros)
        return try Image(width: image.width, height: image.height, format: .gray8)
    }
}

final class CamAppTests: CamTestCase {
    func testThousandsOfQuietFramesOnlyRenderOnTicks() async throws {
        let s = settings { $0.frameLimit = 3000; $0.paced = false; $0.statusHz = 4 }
        let lines = Locked<[String]>([])
        let app = CamApp(pipeline: try CamPipeline(settings: s, statusSink: { line in lines.withLock { $0.append(line) } }))
        let summary = try await app.run()
        XCTAssertEqual(summary.frames + summary.dropped, 3000, "every frame is either processed or counted as dropped")
        XCTAssertGreaterThan(summary.frames, 100)
        // Mount (1) + ticks (4/s) + SourceEnded (1) + the final tick (1): never one per frame.
        let ceiling = Int(summary.seconds * 4) + 4
        XCTAssertLessThanOrEqual(summary.renders, ceiling, "\(summary.renders) renders for \(summary.frames) frames in \(summary.seconds) s")
        XCTAssertEqual(lines.withLock { $0.count }, summary.renders, "each render wrote one status line")
        XCTAssertTrue(summary.statusLine.hasPrefix("frames \(summary.frames) | fps "), summary.statusLine)
    }

    func testPacedRunDeliversExactlyTheFramesAsked() async throws {
        let app = CamApp(pipeline: try CamPipeline(settings: settings { $0.frameLimit = 100 }))
        let summary = try await app.run()
        XCTAssertEqual(summary.frames, 100)
        XCTAssertEqual(summary.dropped, 0)
        XCTAssertEqual(app.root.status.state.lastSequence, 99)
        XCTAssertEqual(app.root.state.routed, 100)
        XCTAssertEqual(app.flow.pending, 0, "no frame left holding its place")
        XCTAssertEqual(app.flow.freed, 100, "each frame freed its place once")
        XCTAssertGreaterThanOrEqual(summary.seconds, 99.0 / 200)
        XCTAssertNotNil(summary.latencyP99)
    }

    func testSavesEveryNthFrameAtomicallyWithSidecar() async throws {
        let input = folder.appendingPathComponent("in"), output = folder.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for i in 0..<10 {
            try (Data("P6 2 2 255\n".utf8) + Data([UInt8](repeating: UInt8(i * 20), count: 12)))
                .write(to: input.appendingPathComponent(String(format: "%02d.ppm", i)))
        }
        let s = settings { $0.source = .folder(input.path); $0.outputDirectory = output.path; $0.save = .everyNth(3); $0.paced = false; $0.buffering = 16 }
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s)).run()
        XCTAssertEqual(summary.frames, 10)
        XCTAssertEqual(summary.saved, 4)
        let files = try FileManager.default.contentsOfDirectory(atPath: output.path).sorted()
        XCTAssertEqual(files, ["frame_00000000.ppm", "frame_00000003.ppm", "frame_00000006.ppm", "frame_00000009.ppm", "frames.jsonl"])
        let written = try Data(contentsOf: output.appendingPathComponent("frame_00000006.ppm"))
        let decoded = try NetpbmDecoder().decode(Array(written), path: "frame_00000006.ppm")
        XCTAssertEqual(decoded.bytes, [UInt8](repeating: 120, count: 12), "frame 6 is the 7th file, through rgba and back")
        let lines = try String(contentsOf: output.appendingPathComponent("frames.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 4)
        let records = try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        XCTAssertEqual(records.map { $0["sequence"] as? Int }, [0, 3, 6, 9])
        for record in records {
            let capture = record["capture_ns"] as! UInt64, processed = record["processed_ns"] as! UInt64, written = record["written_ns"] as! UInt64
            XCTAssertLessThanOrEqual(capture, processed)
            XCTAssertLessThanOrEqual(processed, written)
        }
    }

    func testSlowOutputDropsAtTheSourceNotInMemory() async throws {
        let output = folder.appendingPathComponent("slow")
        let s = settings { $0.frameLimit = 300; $0.paced = false; $0.live = true; $0.outputDirectory = output.path; $0.save = .every }
        let app = CamApp(pipeline: try CamPipeline(settings: s, encoder: SlowEncoderFake(delayMicros: 4000)))
        let summary = try await app.run()
        XCTAssertTrue(summary.live)
        XCTAssertGreaterThan(summary.dropped, 0, "a slow disk must show as dropped frames in a live run")
        XCTAssertEqual(summary.droppedBehind, summary.dropped)
        XCTAssertLessThanOrEqual(app.flow.peak, app.flow.limit, "frames in flight stay bounded")
        XCTAssertEqual(summary.frames + summary.dropped, 300)
        XCTAssertEqual(summary.saved, summary.frames, "every frame that got through was written")
        XCTAssertEqual(app.flow.pending, 0)
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
        XCTAssertFalse(names.contains { $0.contains(AtomicFile.temporaryMarker) })
        XCTAssertEqual(names.filter { $0.hasSuffix(".ppm") }.count, Int(summary.saved))
    }

    func testStopFinishesTheCurrentFrameAndFlushes() async throws {
        let output = folder.appendingPathComponent("stop")
        let s = settings { $0.outputDirectory = output.path; $0.save = .every; $0.request.fps = 100 }
        let app = CamApp(pipeline: try CamPipeline(settings: s))
        Task {
            try await Task.sleep(nanoseconds: 300_000_000)
            app.stop()
        }
        let summary = try await app.run()
        XCTAssertGreaterThan(summary.frames, 5)
        XCTAssertEqual(summary.saved, summary.frames)
        let lines = try String(contentsOf: output.appendingPathComponent("frames.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, Int(summary.saved))
    }

    /// A stop asked for before `run` (Ctrl-C during start-up) still ends the run at once.
    func testStopBeforeRunEndsTheRunAtOnce() async throws {
        let app = CamApp(pipeline: try CamPipeline(settings: settings { $0.request.fps = 50 }))
        app.stop()
        let summary = try await app.run()
        XCTAssertLessThan(summary.seconds, 3, "an unlimited paced source stopped before it started")
        XCTAssertLessThanOrEqual(summary.frames, 3)
    }

    func testSnapshotOnRequestWritesOneFrame() async throws {
        let output = folder.appendingPathComponent("snap")
        let s = settings { $0.outputDirectory = output.path; $0.save = SavePolicy.none; $0.duration = 0.6; $0.request.fps = 50 }
        let app = CamApp(pipeline: try CamPipeline(settings: s))
        Task {
            try await Task.sleep(nanoseconds: 250_000_000)
            app.requestSnapshot()
        }
        let summary = try await app.run()
        XCTAssertGreaterThan(summary.frames, 10)
        XCTAssertEqual(summary.saved, 1)
        let images = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasSuffix(".ppm") }
        XCTAssertEqual(images.count, 1)
        XCTAssertNotEqual(images.first, "frame_00000000.ppm", "the snapshot is a frame from when it was asked")
    }

    func testDurationEndsTheRun() async throws {
        let summary = try await CamApp(pipeline: try CamPipeline(settings: settings { $0.duration = 0.3; $0.request.fps = 50 })).run()
        XCTAssertGreaterThanOrEqual(summary.seconds, 0.29)
        XCTAssertLessThan(summary.seconds, 3)
        XCTAssertGreaterThan(summary.frames, 5)
    }

    func testDepthIsLatestFrameWins() async throws {
        let depth = SlowDepthFake(delayMicros: 15000)
        let s = settings { $0.frameLimit = 200; $0.paced = false; $0.live = true; $0.depthEvery = 1 }
        let app = CamApp(pipeline: try CamPipeline(settings: s, depth: depth))
        let summary = try await app.run()
        XCTAssertGreaterThan(summary.depthFrames, 0)
        XCTAssertLessThan(summary.depthFrames, summary.frames, "a slow model skips frames instead of queueing them")
        XCTAssertEqual(UInt64(depth.calls.load(ordering: .relaxed)), summary.depthFrames)
        XCTAssertGreaterThan(app.root.state.depthSkipped, 0, "frames due while the model worked were skipped")
    }

    func testMissingDeviceFailsWithItsName() async throws {
        let s = settings { $0.source = .device("/dev/video-granite-none") }
        do {
            _ = try await CamApp(pipeline: try CamPipeline(settings: s)).run()
            XCTFail("a missing device must fail")
        } catch {
            XCTAssertEqual("\(error)", "/dev/video-granite-none: no such video device")
        }
    }

    func testUnwritableOutputFolderIsATypedError() {
        XCTAssertThrowsError(try CamPipeline(settings: settings { $0.outputDirectory = "/proc/granite-nope" })) { error in
            guard case let .output(path, call, _)? = error as? CamError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/proc/granite-nope")
            XCTAssertEqual(call, "create folder")
        }
    }

    /// `--out a/b/c` makes every missing folder on the way (mkdir -p), as a fresh clone's
    /// `./scripts/run` needs for `out/granite-cam`.
    func testOutputFolderAndItsParentsAreCreated() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cam-mkdir-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let nested = root.appendingPathComponent("a/b/c").path
        _ = try CamPipeline(settings: settings { $0.outputDirectory = nested })
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: nested, isDirectory: &isDirectory) && isDirectory.boolValue)
        XCTAssertTrue(FileManager.default.fileExists(atPath: nested + "/frames.jsonl"))
    }
}
