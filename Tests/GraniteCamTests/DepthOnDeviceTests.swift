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
}
