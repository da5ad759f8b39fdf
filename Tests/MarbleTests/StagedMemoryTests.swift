import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// The discrete-GPU memory path on the device at hand: a context with staging forced keeps every
/// frame, intermediate and result in device buffers the host cannot map, and moves bytes only
/// through staging buffers and copy commands — what an NVIDIA or AMD card does. Every result must
/// equal the unified-memory path's and the CPU reference's.
@Suite(.serialized) struct StagedMemoryTests {
    static func staged() throws -> GPUContext {
        _ = try Fixtures.gpu()  // skip (or fail under CI=true) without a device
        let context = try GPUContext(forceStaging: true)
        #expect(context.memoryPolicy.needsStaging)
        return context
    }

    @Test(arguments: GPUReferenceTests.cases)
    func everyFilterThroughStagingMatchesReference(_ text: String, _ tolerance: Int) throws {
        let context = try StagedMemoryTests.staged()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        for (w, h) in [(13, 7), (44, 10)] {
            let input = Fixtures.image(w, h)
            let difference = Difference(try chain.apply(input, time: 1.25), try chain.applyCPU(input, time: 1.25))
            #expect(difference.maxDelta <= tolerance, "\(text) at \(w)x\(h) through staging: \(difference)")
        }
    }

    /// The frame handle's whole trip through staging: camera formats up, the model's input back,
    /// an estimated map up, a resident map up once, YUV back; equal to the unified path.
    @Test(arguments: [PixelFormat.yuyv, .rgba8])
    func frameTripThroughStagingEqualsUnified(format: PixelFormat) throws {
        let staged = try StagedMemoryTests.staged()
        let unified = try Fixtures.gpu()
        let text = "blur:sigma=1 | depthmask:near=0,far=0.5"
        let a = try FilterChain(FilterSpec.parseChain(text), context: staged)
        let b = try FilterChain(FilterSpec.parseChain(text), context: unified)
        let image = Fixtures.image(64, 36, format: format)
        let map = Fixtures.depth(32, 18)
        for chain in [a, b] { #expect(try chain.apply(image, depth: map) == (try chain.applyCPU(image, depth: map))) }
        func trip(_ chain: FilterChain) throws -> (Image, Image, [UInt8], Image) {
            let frame = try chain.frame(image, depth: .estimated, modelInput: (width: 20, height: 12))
            defer { frame.end() }
            let small = try frame.modelInput()
            try frame.run(depth: try DepthInputTests.fakeEstimate(small, width: image.width, height: image.height))
            let live = try chain.frame(image, depth: .resident(map, version: 3))
            defer { live.end() }
            return (small, try frame.rgba(), try frame.yuv([.i420])[.i420] ?? [], try live.rgba())
        }
        let (smallA, outA, yuvA, liveA) = try trip(a)
        let (smallB, outB, yuvB, liveB) = try trip(b)
        #expect(smallA == smallB && outA == outB && yuvA == yuvB && liveA == liveB)
        #expect(liveA == (try a.applyCPU(image, depth: map)))
        #expect(a.transfers == b.transfers, "the same bytes cross, whichever way they go")
    }

    /// Ties between splatted points (a flat plane facing the camera: every point at one depth,
    /// 4×4 splats overlapping) resolve the same on every run and equal the CPU reference exactly,
    /// on both memory paths.
    @Test func pointCloudTiesAreDeterministic() throws {
        let flat = try Image(width: 61, height: 37, floats: [Float](repeating: 0.5, count: 61 * 37))
        let chainText = "depth:yaw=0,pitch=0,distance=2.5,pointSize=4"
        let input = Fixtures.image(61, 37)
        for context in [try Fixtures.gpu(), try StagedMemoryTests.staged()] {
            let chain = try FilterChain(FilterSpec.parseChain(chainText), context: context)
            let cpu = try chain.applyCPU(input, depth: flat)
            for run in 0..<3 {
                let gpu = try chain.apply(input, depth: flat)
                #expect(gpu == cpu, "run \(run): \(Difference(gpu, cpu))")
            }
            // The plane fills most of the picture, so (4×4 splats, one depth) nearly every drawn
            // pixel is covered by several points at the same depth: a tie the index decides.
            let drawn = stride(from: 3, to: cpu.bytes.count, by: 4).filter { cpu.bytes[$0] != 0 }.count
            #expect(drawn > cpu.pixelCount / 2, "the plane covers the picture: \(drawn) of \(cpu.pixelCount) drawn")
        }
    }
}
