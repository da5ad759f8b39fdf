import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// GPU against CPU reference for every filter, on odd sizes with a fixed seed.
/// Integer filters must match exactly; float ones within 1 LSB.
/// 40 and 44 wide take the shaders' quad paths (width % 8 == 0, and % 4 == 0 only; neither a
/// multiple of 16, so the last invocation of a row is partly outside it).
@Suite(.serialized) struct GPUReferenceTests {
    static let sizes = [(13, 7), (127, 63), (317, 129), (40, 9), (44, 10)]

    /// Filter spec and the largest difference allowed (0 = exact).
    static let cases: [(String, Int)] = [
        ("brightness:amount=0.1,contrast=1.2,saturation=1.5", 1),
        ("exposure:ev=0.7", 1),
        ("gamma:gamma=2.2", 1),
        ("colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131", 1),
        ("grayscale", 0),
        ("invert", 0),
        ("threshold:level=0.4", 0),
        ("blur:sigma=2", 0),
        ("blur:sigma=0.6", 0),
        ("blur:sigma=7.5", 0),
        ("blur:sigma=20", 0),
        ("sharpen:amount=1.5,sigma=1", 1),
        ("sharpen:amount=1,sigma=9", 1),  // the blur's reduced path, then the unsharp pass
        ("sobel", 1),
        ("resize:width=50,height=31", 0),
        ("resize:width=400,height=90,mode=bilinear", 0),
        ("resize:width=20,height=9,mode=area", 0),
        ("resize:width=33,height=20,mode=lanczos3", 0),
        ("resize:width=300,height=150,mode=lanczos3", 0),
        ("resize:width=100,height=61,mode=area", 0),
        ("crop:x=3,y=2,width=9,height=4", 0),
        ("flip:axis=horizontal", 0),
        ("flip:axis=vertical", 0),
        ("rotate:turns=1", 0),
        ("rotate:turns=2", 0),
        ("rotate:turns=3", 0),
        ("ink:threshold=0.2,levels=4", 0),
        ("pixellate:size=5", 0),
        ("bokeh:radius=3,boost=6", 1),
        ("godRay:x=0.3,y=0.2,time=0.5", 1),
        ("analog:blend=normal", 1),
        ("analog:blend=screen,time=3", 1),
        ("analog:blend=multiply,intensity=1", 1),
        ("analog:blend=overlay,shift=5", 1),
        ("disco:tile=5,time=2", 1),
        ("drive:amplitude=4,period=10,smear=3", 0),
        ("vibes:warmth=-0.4", 1),
        ("polka:size=6", 0),
        ("polka:size=5,background=black", 0),
        ("stars:cell=6,density=0.6", 1),
        ("depthmask:near=0.2,far=0.6", 0),
        ("depth:yaw=30,pitch=10,pointSize=1", 0),
        ("depth:yaw=-60,pitch=40,distance=2,pointSize=3,spin=20", 0),
    ]

    @Test(arguments: cases)
    func filterMatchesReference(_ text: String, _ tolerance: Int) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        for (w, h) in Self.sizes {
            let input = Fixtures.image(w, h)
            let gpu = try chain.apply(input, time: 1.25)
            let cpu = try chain.applyCPU(input, time: 1.25)
            let difference = Difference(gpu, cpu)
            #expect(difference.maxDelta <= tolerance, "\(text) at \(w)x\(h): \(difference)")
            #expect(gpu.bytes != input.bytes, "\(text) at \(w)x\(h) left the image unchanged")
        }
    }

    /// Area reductions whose windows are whole blocks of 2^a × 2^b pixels take resize.comp's one
    /// pass (MODE 2) — alone and as the large blur's reduction (σ 20: ÷ 8, σ 12 with `background`:
    /// ÷ 4) — and must give the two passes' integers exactly (the CPU's `Resampler`).
    @Test(arguments: [("resize:width=32,height=8,mode=area", 64, 32), ("resize:width=16,height=16,mode=area", 64, 64),
                      ("resize:width=40,height=9,mode=area", 80, 36), ("blur:sigma=20", 128, 64),
                      ("background:mode=blur,sigma=12", 96, 40)])
    func blockReductionMatchesReference(_ text: String, _ w: Int, _ h: Int) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        let input = Fixtures.image(w, h)
        let gpu = try chain.apply(input, time: 1.25)
        let cpu = try chain.applyCPU(input, time: 1.25)
        let difference = Difference(gpu, cpu)
        #expect(difference.maxDelta == 0, "\(text) at \(w)x\(h): \(difference)")
    }

    @Test func blockShiftFindsWholePowerOfTwoBlocksOnly() {
        #expect(Resize.blockShift(ResampleAxis(source: 1280, target: 320, filter: .box)) == 2)
        #expect(Resize.blockShift(ResampleAxis(source: 720, target: 180, filter: .box)) == 2)
        #expect(Resize.blockShift(ResampleAxis(source: 64, target: 64, filter: .box)) == 0)
        #expect(Resize.blockShift(ResampleAxis(source: 64, target: 32, filter: .box)) == 1)
        #expect(Resize.blockShift(ResampleAxis(source: 63, target: 16, filter: .box)) == nil)  // not whole blocks
        #expect(Resize.blockShift(ResampleAxis(source: 60, target: 20, filter: .box)) == nil)  // 3: no power of two
        #expect(Resize.blockShift(ResampleAxis(source: 64, target: 32, filter: .bilinear)) == nil)
    }

    /// A color-matrix filter after another is fused into that filter's last pass on the GPU;
    /// the CPU runs them one after the other. The pixels must not change.
    @Test(arguments: ["sobel", "blur:sigma=2", "blur:sigma=12", "sharpen", "godRay", "analog", "resize:width=50,height=20",
                      "rotate", "ink", "depthmask", "brightness:amount=0.2", "invert | exposure:ev=1", "depth:pointSize=1"])
    func fusedColorEpilogueMatchesReference(_ first: String) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("\(first) | colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131 | brightness:amount=0.05"), context: context)
        for (w, h) in Self.sizes {
            let input = Fixtures.image(w, h)
            let difference = Difference(try chain.apply(input, time: 0.75), try chain.applyCPU(input, time: 0.75))
            #expect(difference.maxDelta <= 1, "\(first) + color at \(w)x\(h): \(difference)")
        }
        // Greedy pairing: every case here records two steps (the point cloud takes no epilogue,
        // so there the matrix fuses with the brightness after it instead).
        #expect(chain.lastRecordedSteps == 2, "\(chain.specs.count) filters recorded as \(String(describing: chain.lastRecordedSteps)) steps")
    }

    @Test(arguments: ["depthmask:near=0.3,far=0.5", "depth:yaw=40,pointSize=2", "depth:yaw=10,pitch=-30,pointSize=1"])
    func depthMapFiltersMatchReference(_ text: String) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        for (w, h) in Self.sizes {
            var input = Fixtures.image(w, h)
            for i in stride(from: 3, to: input.bytes.count, by: 4) { input.bytes[i] = 255 }
            let depth = Fixtures.depth(w / 2 + 1, h / 2 + 1)
            let gpu = try chain.apply(input, depth: depth)
            let cpu = try chain.applyCPU(input, depth: depth)
            #expect(gpu == cpu, "\(text) at \(w)x\(h): \(Difference(gpu, cpu))")
            let transparent = stride(from: 3, to: gpu.bytes.count, by: 4).filter { gpu.bytes[$0] == 0 }
            #expect(transparent.allSatisfy { gpu.bytes[$0 - 3] == 0 && gpu.bytes[$0 - 2] == 0 && gpu.bytes[$0 - 1] == 0 },
                    "alpha-0 pixels must be written as transparent black")
            #expect(!transparent.isEmpty && transparent.count < gpu.pixelCount, "\(text): some pixels masked, not all")
        }
    }

    @Test(arguments: [PixelFormat.yuyv, .nv12, .rgb24], ColorRange.allCases)
    func conversionMatchesReference(_ format: PixelFormat, _ range: ColorRange) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([], context: context, range: range)
        for (w, h) in Self.sizes + [(1920, 1080)] {
            let input = Fixtures.image(w, h, format: format)
            let gpu = try chain.apply(input)
            let cpu = try chain.applyCPU(input)
            #expect(gpu.format == .rgba8 && gpu.width == w && gpu.height == h)
            #expect(gpu == cpu, "\(format) \(range) at \(w)x\(h): \(Difference(gpu, cpu))")
            #expect(cpu == (try ColorConversion.rgba(input, range: range)), "one conversion: Marble's reference is GraniteMedia's")
        }
    }

    /// YUYV straight into a first blur (converted while it loads its rows, no conversion pass)
    /// and the benchmark's two chains (320×180: a 16:9 frame whose rows are whole blocks, like 1280×720).
    @Test(arguments: ColorRange.allCases)
    func yuyvIntoFirstFilterMatchesReference(_ range: ColorRange) throws {
        let context = try Fixtures.gpu()
        let chains = ["blur:sigma=2 | sobel | colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131",
                      "blur:sigma=9", "blur:sigma=0.5 | ink", "ink | godRay | analog"]
        for text in chains {
            let chain = try FilterChain(FilterSpec.parseChain(text), context: context, range: range)
            for (w, h) in [(40, 9), (48, 7), (44, 10), (13, 7), (320, 180)] {
                let input = Fixtures.image(w, h, format: .yuyv)
                let difference = Difference(try chain.apply(input, time: 0.5), try chain.applyCPU(input, time: 0.5))
                #expect(difference.maxDelta <= 1, "\(text) \(range) at \(w)x\(h): \(difference)")
            }
        }
    }

    @Test func fullHDChainMatchesReference() throws {
        let context = try Fixtures.gpu()
        let specs = try FilterSpec.parseChain("sobel | resize:width=640,height=360,mode=area | pixellate:size=4")
        let chain = try FilterChain(specs, context: context)
        let input = Fixtures.image(1920, 1080, format: .yuyv)
        let difference = Difference(try chain.apply(input), try chain.applyCPU(input))
        #expect(difference.maxDelta <= 1, "\(difference)")
    }
}

/// The blur's shader styles (kept for `granite-bench filters --styles`) compute the same pixels;
/// on lavapipe `blocked` is the one-dispatch strip shader and `twoPass` what GPUs run.
struct BlurStyleTests {
    @Test(arguments: [GaussianBlur.Style.blocked, .twoPass, .unrolled, .looped])
    func separableStylesMatchTheReference(_ style: GaussianBlur.Style) throws {
        let context = try Fixtures.gpu()
        let probe = try FilterChain.blurStyleProbe(sigma: 2.5, style: style, context: context)
        let reference = try FilterChain([FilterSpec.parse("blur:sigma=2.5")])
        for (w, h) in GPUReferenceTests.sizes {
            let input = Fixtures.image(w, h)
            #expect(try probe.apply(input) == reference.applyCPU(input), "\(style) at \(w)x\(h)")
        }
    }

    /// Where the large-σ path starts and the reduction it picks: the coarsest f = 2^k leaving
    /// σ' = √(σ² − (f² − 1)/4) / f ≥ 2 in reduced pixels.
    @Test func reductionFollowsSigma() throws {
        #expect(GaussianBlur(sigma: 4).reduction == nil)
        #expect(GaussianBlur(sigma: 4).radius == 11)
        let cases: [(Float, Int, Float)] = [(4.2, 2, 2.05), (7.5, 2, 3.72), (8, 2, 3.98), (8.3, 4, 2.02), (12, 4, 2.96), (20, 8, 2.45), (32, 8, 3.97)]
        for (sigma, factor, reduced) in cases {
            let reduction = try #require(GaussianBlur(sigma: sigma).reduction, "σ \(sigma)")
            #expect(reduction.factor == factor && abs(reduction.sigma - reduced) < 0.01, "σ \(sigma): \(reduction)")
        }
        #expect(GaussianBlur.Reduction(sigma: 12)!.size(13, 7) == (4, 2))
        // σ 12 at 1280×720: 320×180 blurred with 17 taps a pass (Q8 weights, zeros trimmed), not 1280×720 with 73.
        #expect(GaussianBlur(sigma: 12).radius == 8)
    }

    @Test func direct2DIsCloseToTheReference() throws {
        let context = try Fixtures.gpu()
        let probe = try FilterChain.blurStyleProbe(sigma: 2, style: .direct2D, context: context)
        let input = Fixtures.image(127, 63)
        let difference = Difference(try probe.apply(input), try FilterChain([FilterSpec.parse("blur:sigma=2")]).applyCPU(input))
        #expect(difference.maxDelta <= 2, "one 2-D pass skips the intermediate rounding: \(difference)")
    }
}
