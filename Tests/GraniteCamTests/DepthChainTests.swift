import Foundation
import GraniteCapture
import GraniteCodecs
import GraniteGPU
import GraniteMedia
import GraniteTesting
import Marble
import XCTest

@testable import GraniteCam

/// `--depth` with `depthmask` / `depth` in `--filter`: the app's GPU chain (Vulkan; lavapipe on
/// CI) reads the real depth network's map — a non-live run each frame's own (issue 14).
final class DepthChainTests: CamTestCase {
    func requireGPU() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the app's GPU chain: \(error)") }
    }

    /// A folder of three different pattern frames as PNG files.
    func patternFolder(size: FrameSize) throws -> (URL, [Image]) {
        let input = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let pattern = TestPattern(size: size)
        var images: [Image] = []
        for (i, index) in [0, 17, 41].enumerated() {
            let image = pattern.render(index: UInt64(index))
            try Data(try Codecs.encodePNG(image)).write(to: input.appendingPathComponent("\(i).png"))
            images.append(image)
        }
        return (input, images)
    }

    func testDepthmaskOnTheGPUUsesEachFramesOwnDepthMap() async throws {
        try requireGPU()
        let (input, images) = try patternFolder(size: FrameSize(width: 96, height: 64))
        let output = folder.appendingPathComponent("out")
        var s = CamSettings()
        s.source = .folder(input.path)
        s.paced = false
        s.outputDirectory = output.path
        s.save = .every
        s.depthEvery = 1
        let model = try DepthEstimatorStage()
        // Keep the nearer half of the first frame (FastDepth answers in metres).
        let median = try model.estimate(images[0]).floats().sorted()[images[0].pixelCount / 2]
        let spec = "depthmask:near=0,far=\(median)"
        let stage = try MarbleStage(specs: [spec], gpu: true)
        XCTAssertTrue(stage.usesDepth)
        let pipeline = try CamPipeline(settings: s, stages: [stage], encoder: CodecsEncoder(.png), depth: model,
                                       decoder: DecoderSet.all)
        let summary = try await CamApp(pipeline: pipeline).run()
        XCTAssertEqual(summary.frames, 3)
        XCTAssertEqual(summary.depthSaved, 3)
        let reference = try FilterChain(FilterSpec.parseChain(spec))
        for (i, image) in images.enumerated() {
            let written = try Codecs.decodeFile(output.appendingPathComponent(String(format: "frame_%08d.png", i)).path)
            let map = try model.estimate(image)
            let expected = try reference.applyCPU(image, depth: map)
            XCTAssertEqual(written.format, .rgba8)
            XCTAssertTrue(written.bytes == expected.bytes, "frame \(i): the GPU chain with the frame's depth equals the CPU reference")
            let lumaOnly = try reference.applyCPU(image, depth: nil)
            XCTAssertFalse(written.bytes == lumaOnly.bytes, "frame \(i): the depth map, not the luma fallback, drove the mask")
            let alphas = stride(from: 3, to: written.bytes.count, by: 4).map { written.bytes[$0] }
            XCTAssertTrue(alphas.contains(0) && alphas.contains(255), "frame \(i): some pixels masked, some kept")
        }
    }

    /// A live run feeds the chain the newest map the depth relay made; the status shows its age.
    func testLiveChainUsesTheLatestDepthMapAndShowsItsAge() async throws {
        try requireGPU()
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 96, height: 64), fps: 60)
        s.frameLimit = 60
        s.depthEvery = 1
        let pipeline = try CamPipeline(settings: s, stages: [try MarbleStage(specs: ["depth:pointSize=1"], gpu: true)],
                                       depth: try DepthEstimatorStage())
        let app = CamApp(pipeline: pipeline)
        let summary = try await app.run()
        XCTAssertTrue(summary.live)
        XCTAssertGreaterThan(summary.depthFrames, 0)
        let age = try XCTUnwrap(app.root.status.state.depthAge, "frames after the first map carry its age")
        XCTAssertLessThan(age, 60)
        XCTAssertTrue(summary.statusLine.contains("fps age \(age)"), summary.statusLine)
        XCTAssertNotNil(app.root.center.capture.resources.latestDepth.withLock { $0 }, "the capture relay kept the newest map")
    }

    /// Frames stay on the device (issue 14): a non-live run with depth on every frame sends each
    /// frame up once (the model's input is resized on the GPU and read back, small), the map up
    /// once, and reads the result back once; without depth, one upload and one download a frame.
    func testEachFrameCrossesToTheDeviceOnceEachWay() async throws {
        try requireGPU()
        let size = FrameSize(width: 96, height: 64)
        for depth in [true, false] {
            var s = CamSettings()
            s.request = CaptureRequest(format: .auto, size: size, fps: 30)
            s.paced = false
            s.frameLimit = 5
            s.depthEvery = depth ? 1 : nil
            let stage = try MarbleStage(specs: ["blur:sigma=2 | depthmask:near=0,far=2"], gpu: true)
            let model = depth ? try DepthEstimatorStage() : nil
            let pipeline = try CamPipeline(settings: s, stages: [stage], depth: model)
            let summary = try await CamApp(pipeline: pipeline).run()
            XCTAssertEqual(summary.frames, 5)
            let t = stage.chain.transfers
            let frameBytes = size.width * size.height * 4
            if let input = model?.modelInputSize {
                XCTAssertEqual(summary.depthFrames, 5)
                XCTAssertEqual(t.uploads, 10, "per frame: the frame and its depth map")
                XCTAssertEqual(t.downloads, 10, "per frame: the model's input and the result")
                XCTAssertEqual(t.uploadBytes, 5 * (frameBytes + size.width * size.height * 4))
                XCTAssertEqual(t.downloadBytes, 5 * (input.width * input.height * 4 + frameBytes))
            } else {
                XCTAssertEqual(t.uploads, 5)
                XCTAssertEqual(t.downloads, 5)
            }
        }
    }
}
