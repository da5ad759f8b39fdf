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
        XCTAssertNotNil(app.root.center.capture.resources.depth.newest?.map, "the capture relay kept the newest map")
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

    /// Live frames stay on the device too (issue 14 item 2): each captured frame goes up once; a
    /// frame sent to the depth relay is resized to the model's input on the GPU from that upload
    /// and only the small picture comes back; the result comes back once, however many outputs
    /// write it; a map goes up once, however many frames' `depthmask` read it.
    func testLiveFramesGoUpOnceAndOnlyTheModelInputComesBack() async throws {
        // The model's input from the device, as on a GPU (lavapipe would have the relay resize the frame).
        GraniteDebug.override([.deviceInput])
        defer { GraniteDebug.override(nil) }
        try requireGPU()
        let size = FrameSize(width: 96, height: 64)
        for spec in ["blur:sigma=1", "depthmask:near=0,far=2"] {
            var s = CamSettings()
            s.request = CaptureRequest(format: .auto, size: size, fps: 60)
            s.frameLimit = 40
            s.depthEvery = 1
            s.outputDirectory = folder.appendingPathComponent("live-\(spec.prefix(4))").path
            s.save = .every
            let stage = try MarbleStage(specs: [spec], gpu: true)
            let model = try DepthEstimatorStage()
            let input = try XCTUnwrap(model.modelInputSize)
            let app = CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], depth: model))
            let summary = try await app.run()
            XCTAssertTrue(summary.live)
            let frames = Int(summary.frames)
            XCTAssertEqual(summary.frames + summary.dropped, 40, "the live source drops what the pipeline cannot take")
            XCTAssertEqual(summary.saved, summary.frames, "every frame processed is written")
            let relay = app.root.center.depth.state
            XCTAssertEqual(relay.failed, 0)
            let estimates = relay.estimated
            XCTAssertGreaterThan(estimates, 0)
            XCTAssertEqual(summary.depthSaved, estimates, "every map written")
            let t = stage.chain.transfers
            let context = "\(spec): \(t), \(estimates) estimates, \(summary)"
            let maps = t.uploads - frames
            if stage.usesDepth {
                // A frame reads the newest map before it takes the depth relay's place, so only the
                // frames after the second request are sure to see the first map: with fewer than three
                // estimates (a loaded machine: the map came back after the last frame) none may be used.
                let least = estimates >= 3 ? 1 : 0
                XCTAssertTrue((least...Int(estimates)).contains(maps), "one upload a frame plus one a new map: \(context)")
            } else {
                XCTAssertEqual(maps, 0, "exactly one upload a captured frame: \(context)")
            }
            XCTAssertEqual(t.downloads, frames + Int(estimates), "one download a frame written plus one small one an estimate: \(context)")
            XCTAssertEqual(t.downloadBytes, frames * size.width * size.height * 4 + Int(estimates) * input.width * input.height * 4, context)
        }
    }

    /// The live depth map made from the model input resized on the GPU equals the CPU reference's
    /// (the model run on the whole frame, GraniteML resizing on the CPU) — within 1 LSB of the
    /// 16-bit map written, in practice equal: the resizes give the same bytes.
    func testLiveDepthMapFromTheGPUModelInputEqualsTheCPUReference() async throws {
        // The model's input from the device, as on a GPU (lavapipe would have the relay resize the frame).
        GraniteDebug.override([.deviceInput])
        defer { GraniteDebug.override(nil) }
        try requireGPU()
        let (input, images) = try patternFolder(size: FrameSize(width: 96, height: 64))
        let output = folder.appendingPathComponent("out")
        var s = CamSettings()
        s.source = .folder(input.path)
        s.live = true
        s.loopFolder = true
        s.request.fps = 30
        s.frameLimit = 12
        s.depthEvery = 1
        s.outputDirectory = output.path
        let model = try DepthEstimatorStage()
        let stage = try MarbleStage(specs: ["depth:pointSize=1"], gpu: true)
        let summary = try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], encoder: CodecsEncoder(.png),
                                                                 depth: model, decoder: DecoderSet.all)).run()
        XCTAssertTrue(summary.live)
        let written = try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasPrefix("depth-") && $0.hasSuffix(".png") }
        XCTAssertGreaterThan(written.count, 0)
        XCTAssertEqual(UInt64(written.count), summary.depthSaved)
        XCTAssertGreaterThan(stage.chain.transfers.downloadBytes - Int(summary.frames) * 96 * 64 * 4, 0, "model inputs came from the GPU")
        for name in written {
            let sequence = try XCTUnwrap(Int(name.dropFirst("depth-".count).dropLast(".png".count)))
            let map = try Codecs.decodeFile(output.appendingPathComponent(name).path, options: DecodeOptions(keepGray: true))
            let reference = try model.estimateMaps(images[sequence % images.count]).png()
            XCTAssertEqual(map.format, .gray16)
            XCTAssertEqual(map.width, reference.width)
            let a = map.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
            let b = reference.bytes.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
            let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "\(name): the live map equals the CPU reference's for frame \(sequence % images.count)")
        }
    }
}
