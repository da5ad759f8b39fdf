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
