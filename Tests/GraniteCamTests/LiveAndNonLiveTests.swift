import Foundation
import GraniteCapture
import GraniteMedia
import Synchronization
import XCTest

@testable import GraniteCam

/// A stage that takes `delay` per frame: a fake standing in for a slow filter (fault injection).
struct SlowStageFake: FrameStage {
    let delayMicros: UInt32
    var name: String { "slow-fake" }
    func process(_ job: FrameJob) throws -> FrameResult {
        usleep(delayMicros)
        return try job.onCPU { image, _ in try ColorConversion.rgba(image) }
    }
}

/// Live sources drop at the source when behind; non-live ones (a folder, the unpaced pattern)
/// make the source wait and lose nothing (issue 14).
final class LiveAndNonLiveTests: CamTestCase {
    /// `count` distinct PPM files `00.ppm`… in a new folder.
    func makeFolder(_ name: String, count: Int) throws -> URL {
        let input = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for i in 0..<count {
            try (Data("P6 8 6 255\n".utf8) + Data([UInt8](repeating: UInt8(i * 7 % 256), count: 8 * 6 * 3)))
                .write(to: input.appendingPathComponent(String(format: "%02d.ppm", i)))
        }
        return input
    }

    func testModeFollowsTheSourceUnlessOverridden() {
        XCTAssertTrue(settings { $0.source = .device("/dev/video0") }.isLive)
        XCTAssertTrue(settings { $0.source = .testPattern }.isLive, "the paced pattern behaves like a camera")
        XCTAssertFalse(settings { $0.source = .testPattern; $0.paced = false }.isLive)
        XCTAssertFalse(settings { $0.source = .folder("/x") }.isLive)
        XCTAssertTrue(settings { $0.source = .folder("/x"); $0.live = true }.isLive)
        XCTAssertFalse(settings { $0.source = .device("/dev/video0"); $0.live = false }.isLive)
        XCTAssertEqual(settings { $0.source = .folder("/x"); $0.buffering = 3 }.delivery, .lossless(buffering: 3))
    }

    /// A folder of N images behind a slow model and a slow disk: exactly N frames written and
    /// N depth maps, one per frame, named by its sequence.
    func testFolderOfNImagesGivesNFramesAndNDepthMaps() async throws {
        let input = try makeFolder("in", count: 24), output = folder.appendingPathComponent("out")
        let depth = SlowDepthFake(delayMicros: 3000)
        let s = settings { $0.source = .folder(input.path); $0.paced = false; $0.outputDirectory = output.path
            $0.save = .every; $0.depthEvery = 1 }
        let pipeline = try CamPipeline(settings: s, encoder: SlowEncoderFake(delayMicros: 2000), depth: depth)
        let app = CamApp(pipeline: pipeline)
        let summary = try await app.run()
        XCTAssertFalse(summary.live)
        XCTAssertEqual(summary.frames, 24)
        XCTAssertEqual(summary.dropped, 0)
        XCTAssertEqual(summary.saved, 24)
        XCTAssertEqual(summary.depthFrames, 24)
        XCTAssertEqual(summary.depthSaved, 24)
        XCTAssertEqual(depth.calls.load(ordering: .relaxed), 24, "one estimate per frame, shared by the chain and the file")
        let names = try FileManager.default.contentsOfDirectory(atPath: output.path)
        XCTAssertEqual(names.filter { $0.hasPrefix("frame_") && $0.hasSuffix(".ppm") }.count, 24)
        XCTAssertEqual(Set(names.filter { $0.hasPrefix("depth-") }), Set((0..<24).map { String(format: "depth-%08d.png", $0) }))
        XCTAssertLessThanOrEqual(app.flow.peak, app.flow.limit, "a frame keeps its place until its image and its depth map are written")
        XCTAssertEqual(app.flow.pending, 0)
        XCTAssertEqual(summary.modeLine, "non-live run: 0 dropped")
    }

    func testDepthEveryNthIsExactlyEveryNthFrame() async throws {
        let input = try makeFolder("nth", count: 10), output = folder.appendingPathComponent("out")
        let s = settings { $0.source = .folder(input.path); $0.paced = false; $0.outputDirectory = output.path
            $0.save = .none; $0.depthEvery = 3 }
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, depth: SlowDepthFake(delayMicros: 4000))).run()
        XCTAssertEqual(summary.frames, 10)
        XCTAssertEqual(summary.depthSaved, 4)
        let depthFiles = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasPrefix("depth-") }.sorted()
        XCTAssertEqual(depthFiles, ["depth-00000000.png", "depth-00000003.png", "depth-00000006.png", "depth-00000009.png"])
    }

    /// The unpaced test pattern with a slow disk: 300 frames in, 300 processed and written, none dropped.
    func testNonLivePatternLosesNothing() async throws {
        let output = folder.appendingPathComponent("pattern")
        let s = settings { $0.frameLimit = 300; $0.paced = false; $0.outputDirectory = output.path; $0.save = .every }
        let pipeline = try CamPipeline(settings: s, encoder: SlowEncoderFake(delayMicros: 1500))
        let app = CamApp(pipeline: pipeline)
        let summary = try await app.run()
        XCTAssertFalse(summary.live)
        XCTAssertEqual(summary.frames, 300)
        XCTAssertEqual(summary.dropped, 0)
        XCTAssertEqual(summary.saved, 300)
        XCTAssertLessThanOrEqual(app.flow.peak, app.flow.limit)
    }

    /// A live source at 200 fps into a 10 ms stage: frames are dropped at the source and counted,
    /// the gate and the source's buffer stay bounded, and the summary says why.
    func testLiveSourceWithASlowStageDropsAndCounts() async throws {
        let s = settings { $0.frameLimit = 120; $0.buffering = 2 }
        let pipeline = try CamPipeline(settings: s, stages: [SlowStageFake(delayMicros: 10_000)])
        let app = CamApp(pipeline: pipeline)
        let summary = try await app.run()
        XCTAssertTrue(summary.live)
        XCTAssertGreaterThan(summary.dropped, 10, "half the frames cannot be processed in time")
        XCTAssertEqual(summary.droppedBehind, summary.dropped)
        XCTAssertEqual(summary.frames + summary.dropped, 120, "every frame is processed or counted")
        XCTAssertLessThanOrEqual(app.flow.peak, app.flow.limit)
        XCTAssertEqual(summary.modeLine, "live run: \(summary.dropped) dropped (\(summary.dropped): pipeline behind, latest frame won)")
    }

    /// The same source forced non-live: slower, but nothing is lost.
    func testNoLiveOverrideMakesAPacedSourceWait() async throws {
        let s = settings { $0.frameLimit = 40; $0.live = false }
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, stages: [SlowStageFake(delayMicros: 10_000)])).run()
        XCTAssertFalse(summary.live)
        XCTAssertEqual(summary.frames, 40)
        XCTAssertEqual(summary.dropped, 0)
    }
}
