import GraniteCapture
import GraniteGPU
import GraniteMedia
import GraniteML
import GraniteMLVulkan
import GraniteTesting
import Marble
import XCTest

@testable import GraniteCam

/// A frame's own depth with the model on the chain's device (`--depth-device gpu`, or `auto` on
/// a GPU): the model's picture made by the chain, the map written where the filters read it,
/// neither crossing to the host — and the same pixels and map as the host route, where the
/// picture comes back, the model runs from it and the map goes up again.
final class DepthOnDeviceTests: XCTestCase {
    func gpuDepth() throws -> (GPUContext, DepthEstimatorStage) {
        let gpu: GPUContext
        do { gpu = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        let stage = try DepthEstimatorStage(backend: try InferenceDevice.gpu.backend { gpu })
        XCTAssertTrue(stage.estimator.runner is VulkanModel)
        return (gpu, stage)
    }

    /// The map on the device equals the map the host route makes from the same picture (the same
    /// input tensor, scale and resampler tables; shaders kept from fusing multiply-adds), at a
    /// size the model's output does not divide, and both chains' pixels agree byte for byte.
    func testTheMapMadeOnTheDeviceIsTheHostRoutesMap() throws {
        let (gpu, depth) = try gpuDepth()
        let size = try XCTUnwrap(depth.modelInputSize)
        let image = TestPattern(size: FrameSize(width: 150, height: 94)).render(index: 23)
        let chain = try FilterChain(FilterSpec.parseChain("depth:yaw=25,pointSize=1"), context: gpu)

        let host = try chain.frame(image, depth: .estimated, modelInput: size)
        let picture = try host.modelInput()
        let maps = try depth.estimateMaps(modelInput: picture, width: image.width, height: image.height)
        try host.run(depth: maps.map)
        let hostPixels = try host.rgba()
        host.end()

        let before = chain.transfers
        let device = try chain.frame(image, depth: .estimated, modelInput: size)
        XCTAssertTrue(try depth.estimate(onDevice: device))
        let target = try XCTUnwrap(device.depthOnDevice)
        XCTAssertEqual(target.width, image.width)
        XCTAssertEqual(target.height, image.height)
        try device.runWithDepthOnDevice()
        let devicePixels = try device.rgba()
        let onDevice = try target.buffer.read(Float.self, count: image.pixelCount)
        device.end()
        let moved = chain.transfers
        XCTAssertEqual(moved.uploads - before.uploads, 1, "only the frame goes up: no map")
        XCTAssertEqual(moved.downloads - before.downloads, 1, "only the result comes back: no model input")
        XCTAssertEqual(moved.downloadBytes - before.downloadBytes, image.pixelCount * 4)

        let expected = maps.map.floats()
        let worst = zip(onDevice, expected).map { abs($0 - $1) }.max() ?? .infinity
        let range = (expected.max() ?? 0) - (expected.min() ?? 0)
        print("depth on \(gpu.deviceName): map max |device − host| \(worst) of range \(range) m")
        XCTAssertGreaterThan(range, 0.1, "the reference map should not be flat")
        XCTAssertLessThanOrEqual(worst, range * 1e-5)
        XCTAssertTrue(hostPixels.bytes == devicePixels.bytes, "the point cloud drawn from either map is the same")
        XCTAssertFalse(hostPixels.bytes == (try chain.apply(image)).bytes, "the map, not the luma fallback, drew the cloud")
    }

    /// Through the stage: a job that does not want its map on the host gets it made and read on
    /// the device (counted, not handed back); one that does (depth PNGs, the preview) gets it as
    /// before; the pixels agree. A CPU model never takes the device route.
    func testTheStageKeepsTheMapOnTheDeviceUnlessTheHostWantsIt() throws {
        let (gpu, depth) = try gpuDepth()
        let stage = try MarbleStage(specs: ["depthmask:near=0,far=2.5 | depth:pointSize=1"], gpu: true)
        let image = TestPattern(size: FrameSize(width: 128, height: 72)).render(index: 5)
        let onHost = try stage.process(FrameJob(image: image, depth: .own(depth), depthOnHost: true))
        XCTAssertNotNil(onHost.depth)
        XCTAssertFalse(onHost.depthOnDevice)
        let onDevice = try stage.process(FrameJob(image: image, depth: .own(depth), depthOnHost: false))
        XCTAssertNil(onDevice.depth)
        XCTAssertNil(onDevice.depthFailure)
        XCTAssertTrue(onDevice.depthOnDevice)
        XCTAssertTrue(onHost.image.bytes == onDevice.image.bytes)
        _ = gpu

        let cpuModel = try DepthEstimatorStage()
        let viaCPU = try stage.process(FrameJob(image: image, depth: .own(cpuModel), depthOnHost: false))
        XCTAssertFalse(viaCPU.depthOnDevice, "a CPU model cannot write the device's map")
        XCTAssertNotNil(viaCPU.depth)
    }

    /// A live stream with the model on the device: a due frame makes the kept map inside its own
    /// frame; the frames after it read that map (the same pixels as the host route drawing them
    /// with it) with one upload and one download each; before any map, luma.
    func testALiveStreamKeepsTheMapOnTheDeviceForTheFramesAfter() throws {
        let (_, depth) = try gpuDepth()
        XCTAssertTrue(depth.runsOnDevice)
        let spec = "depth:yaw=30,pointSize=1"
        let stage = try MarbleStage(specs: [spec], gpu: true)
        let pattern = TestPattern(size: FrameSize(width: 112, height: 80))
        let (a, b) = (pattern.render(index: 3), pattern.render(index: 40))
        let reference = try FilterChain(FilterSpec.parseChain(spec))

        let before = try stage.process(FrameJob(image: b, depth: .liveOnDevice(nil), depthOnHost: false))
        XCTAssertTrue(before.image.bytes == (try reference.apply(b)).bytes, "no map kept yet: luma")

        let due = try stage.process(FrameJob(image: a, depth: .liveOnDevice(depth), depthOnHost: false))
        XCTAssertTrue(due.depthOnDevice)
        XCTAssertNil(due.depth)
        let mapA = try depth.estimateMaps(modelInput: try reference.frame(a, depth: .estimated, modelInput: XCTUnwrap(depth.modelInputSize)).modelInput(),
                                          width: a.width, height: a.height).map
        XCTAssertTrue(due.image.bytes == (try reference.apply(a, depth: mapA)).bytes, "the due frame reads the map made from it")

        let moved = stage.chain.transfers
        let next = try stage.process(FrameJob(image: b, depth: .liveOnDevice(nil), depthOnHost: false))
        XCTAssertFalse(next.depthOnDevice)
        XCTAssertTrue(next.image.bytes == (try reference.apply(b, depth: mapA)).bytes, "the next frame reads the kept map")
        XCTAssertFalse(next.image.bytes == before.image.bytes)
        let after = stage.chain.transfers
        XCTAssertEqual(after.uploads - moved.uploads, 1, "the frame only")
        XCTAssertEqual(after.downloads - moved.downloads, 1, "the result only")
    }

    /// The whole program's live run (camera rate, no depth PNGs, no preview) with the model on
    /// the device: maps are made in the stream (counted, aged), the depth relay gets nothing.
    func testALiveRunMakesItsMapsInTheStream() async throws {
        let (_, depth) = try gpuDepth()
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 96, height: 64), fps: 60)
        s.frameLimit = 12
        s.depthEvery = 3
        let pipeline = try CamPipeline(settings: s, stages: [try MarbleStage(specs: ["depthmask:near=0,far=1.5"], gpu: true)], depth: depth)
        let app = CamApp(pipeline: pipeline)
        let summary = try await app.run()
        XCTAssertTrue(summary.live)
        // A live source drops what arrives while a frame is busy (on lavapipe the model takes
        // seconds), so how many frames and maps is the machine's; the route is not.
        XCTAssertGreaterThan(summary.frames, 0)
        XCTAssertGreaterThan(summary.depthFrames, 0, "the first frame is due and makes a map")
        XCTAssertLessThanOrEqual(summary.depthFrames, summary.frames)
        let newest = try XCTUnwrap(app.root.center.capture.resources.depth.newest, "the newest map is known, in one place")
        XCTAssertNil(newest.map, "no map went through the host")
        XCTAssertNotNil(app.root.status.state.depthAge, "frames carry the kept map's age")
        XCTAssertNil(app.root.status.state.lastFault)
    }
}
