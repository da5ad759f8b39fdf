import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// GPU against CPU reference for every filter, on odd sizes with a fixed seed.
/// Integer filters must match exactly; float ones within 1 LSB.
@Suite(.serialized) struct GPUReferenceTests {
    static let sizes = [(13, 7), (127, 63), (317, 129)]

    /// Filter spec and the largest difference allowed (0 = exact).
    static let cases: [(String, Int)] = [
        ("brightness:amount=0.1,contrast=1.2,saturation=1.5", 1),
        ("exposure:ev=0.7", 1),
        ("gamma:gamma=2.2", 1),
        ("colormatrix:rr=0.393,rg=0.769,rb=0.189,gr=0.349,gg=0.686,gb=0.168,br=0.272,bg=0.534,bb=0.131", 1),
        ("grayscale", 0),
        ("invert", 0),
        ("threshold:level=0.4", 0),
        ("blur:sigma=2", 1),
        ("blur:sigma=0.6", 1),
        ("blur:sigma=7.5", 1),
        ("sharpen:amount=1.5,sigma=1", 1),
        ("sobel", 1),
        ("resize:width=50,height=31", 0),
        ("resize:width=400,height=90,mode=bilinear", 0),
        ("resize:width=20,height=9,mode=area", 0),
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
        guard let context = Fixtures.gpu() else { return }
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

    @Test(arguments: ["depthmask:near=0.3,far=0.5", "depth:yaw=40,pointSize=2", "depth:yaw=10,pitch=-30,pointSize=1"])
    func depthMapFiltersMatchReference(_ text: String) throws {
        guard let context = Fixtures.gpu() else { return }
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

    @Test(arguments: [PixelFormat.yuyv, .nv12, .rgb24], ColourRange.allCases)
    func conversionMatchesReference(_ format: PixelFormat, _ range: ColourRange) throws {
        guard let context = Fixtures.gpu() else { return }
        let chain = try FilterChain([], context: context, range: range)
        for (w, h) in Self.sizes + [(1920, 1080)] {
            let input = Fixtures.image(w, h, format: format)
            let gpu = try chain.apply(input)
            let cpu = try chain.applyCPU(input)
            #expect(gpu.format == .rgba8 && gpu.width == w && gpu.height == h)
            #expect(gpu == cpu, "\(format) \(range) at \(w)x\(h): \(Difference(gpu, cpu))")
        }
    }

    @Test func fullHDChainMatchesReference() throws {
        guard let context = Fixtures.gpu() else { return }
        let specs = try FilterSpec.parseChain("sobel | resize:width=640,height=360,mode=area | pixellate:size=4")
        let chain = try FilterChain(specs, context: context)
        let input = Fixtures.image(1920, 1080, format: .yuyv)
        let difference = Difference(try chain.apply(input), try chain.applyCPU(input))
        #expect(difference.maxDelta <= 1, "\(difference)")
    }
}
