import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// "A blur, then a 3×3 tail" (sobel, ink) recorded as one dispatch on a CPU driver
/// (`blur_stencil.comp`: the tail computed on the blurred rows in registers) gives exactly the
/// pixels of the same chain recorded filter by filter, and the CPU reference's (sobel within 1 LSB
/// for its float square root, as in `GPUReferenceTests`).
///
/// The sizes walk the strip shader's edges: one row (16×1), a strip narrower than 16 (4×3), last
/// strips 8, 12 and 4 pixels wide (40, 44, 132), several strips down (130 and 70 rows against 64-row
/// strips) and YUYV read by the fused blur itself (widths % 8 == 0). (Widths that are no whole
/// quads take no strip path, so nothing is fused: `GPUReferenceTests` covers them.)
@Suite(.serialized) struct StencilFusionTests {
    static let sizes = [(40, 9), (44, 10), (48, 7), (16, 1), (4, 3), (64, 130), (132, 70)]

    /// Chain, steps recorded fused and apart on a CPU driver (rows of whole quads), largest
    /// difference from the CPU reference, and whether YUYV frames are fed too. Each fused variant
    /// is a pipeline lavapipe compiles (seconds each), so the list is kept short.
    static let cases: [(String, Int, Int, Int, Bool)] = [
        // The benchmark's chain: sobel and the sepia epilogue in the blur's dispatch; YUYV read by it.
        ("blur:sigma=2 | sobel | colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131", 1, 2, 1, true),
        ("blur:sigma=0.6 | ink:threshold=0.1,levels=5", 1, 2, 0, false),
        // Fused twice, neither blur first.
        ("invert | blur:sigma=1.5 | sobel:scale=3 | blur:sigma=1 | ink", 3, 5, 1, false),
        // σ 6: the blur's reduced path (area ÷2, blur, enlarge), which takes no stencil tail: unfused.
        ("blur:sigma=6 | sobel", 2, 2, 1, false),
    ]

    @Test(arguments: cases)
    func fusedChainMatchesTheUnfusedChain(_ text: String, _ fusedSteps: Int, _ apartSteps: Int, _ tolerance: Int, _ yuyv: Bool) throws {
        let context = try Fixtures.gpu()
        let specs = try FilterSpec.parseChain(text)
        let fused = try FilterChain(specs, context: context)
        let apart = try FilterChain(specs, context: context, fuseStencilTails: false)
        for format in yuyv ? [PixelFormat.rgba8, .yuyv] : [.rgba8] {
            for (w, h) in Self.sizes {
                let input = Fixtures.image(w, h, format: format)
                let one = try fused.apply(input, time: 0.5)
                let two = try apart.apply(input, time: 0.5)
                #expect(one == two, "\(text), \(format) \(w)x\(h): fused against apart: \(Difference(one, two))")
                let reference = Difference(one, try fused.applyCPU(input, time: 0.5))
                #expect(reference.maxDelta <= tolerance, "\(text), \(format) \(w)x\(h) against the CPU: \(reference)")
                #expect(one.bytes != input.bytes)
                #expect(apart.lastRecordedSteps == apartSteps, "\(text) apart at \(w)x\(h)")
                if context.deviceKind == .cpu {
                    #expect(fused.lastRecordedSteps == fusedSteps, "\(text) fused at \(w)x\(h)")
                }
            }
        }
    }

    /// The benchmark's chain at the benchmark's size (one dispatch a frame on lavapipe).
    @Test func benchmarkChainAt720pMatchesTheUnfusedChain() throws {
        let context = try Fixtures.gpu()
        let specs = try FilterSpec.parseChain(StencilFusionTests.cases[0].0)
        let input = Fixtures.image(1280, 720)
        let one = try FilterChain(specs, context: context).apply(input)
        let two = try FilterChain(specs, context: context, fuseStencilTails: false).apply(input)
        #expect(one == two, "\(Difference(one, two))")
    }
}
