import GraniteGPU
import GraniteMedia
import Testing
@testable import Marble

/// The `background` filter (issue 38): GPU against its CPU reference (`MaskRefinement`'s guided
/// upsampling and feathering, then the mix) on odd sizes with a fixed seed, every mode;
/// the mask is the chain's auxiliary plane, smaller or larger than the frame.
@Suite(.serialized) struct BackgroundTests {
    /// A soft person-shaped blob (an ellipse, probability falling off over a few samples) with
    /// seeded noise, `width`×`height`, 0…1.
    static func mask(_ width: Int, _ height: Int, seed: UInt64 = 7) -> Image {
        var random = SeededRandom(seed: seed &+ UInt64(width * 31 + height))
        let values = (0..<(width * height)).map { i -> Float in
            let x = (Float(i % width) + 0.5) / Float(width) - 0.45, y = (Float(i / width) + 0.5) / Float(height) - 0.6
            let r = (x * x) / 0.06 + (y * y) / 0.2
            let noise = Float(random.next() % 1000) / 1000 * 0.2 - 0.1
            return min(max(1.5 - r + noise, 0), 1)
        }
        return try! Image(width: width, height: height, floats: values)
    }

    /// Pixels whose colour channels come out as they went in.
    static func keptPixels(_ out: Image, _ input: Image) -> Int {
        var kept = 0
        for p in 0..<input.pixelCount {
            let i = p * 4
            if out.bytes[i] == input.bytes[i] && out.bytes[i + 1] == input.bytes[i + 1] && out.bytes[i + 2] == input.bytes[i + 2] { kept += 1 }
        }
        return kept
    }

    /// The mask sizes for a `w`×`h` frame: a third (the model's mask is smaller) and larger.
    static func maskSizes(_ w: Int, _ h: Int) -> [(Int, Int)] { [(w / 3 + 2, h / 3 + 2), (w * 2 + 1, h + 3)] }

    /// Spec and the largest channel difference allowed (1 LSB: the device's division need not
    /// round as the CPU's, so an alpha may round the other way).
    static let cases: [(String, Int)] = [
        ("background:mode=blur,sigma=3", 1),
        ("background:mode=blur,sigma=0.8,feather=0.1", 1),
        // The blur's large-σ path (area reduction by 4, σ' 2.96, bilinear enlargement).
        ("background:mode=blur,sigma=12", 1),
        ("background:mode=color,color=0x3366cc", 1),
        ("background:mode=color,color=0xff0080,feather=0.4", 1),
        ("background:mode=mask", 1),
        ("background:mode=mask,feather=0.05", 1),
    ]

    @Test(arguments: cases)
    func matchesReference(_ text: String, _ tolerance: Int) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse(text)], context: context)
        var worst = Difference(Fixtures.image(1, 1), Fixtures.image(1, 1))
        for (w, h) in GPUReferenceTests.sizes {
            let input = Fixtures.image(w, h)
            for (mw, mh) in Self.maskSizes(w, h) {
                let mask = Self.mask(mw, mh)
                let gpu = try chain.apply(input, depth: mask)
                let cpu = try chain.applyCPU(input, depth: mask)
                let difference = Difference(gpu, cpu)
                if difference.maxDelta > worst.maxDelta { worst = difference }
                #expect(difference.maxDelta <= tolerance, "\(text) at \(w)x\(h), mask \(mw)x\(mh): \(difference)")
                // The mix did something: some pixels kept (person), some replaced (background).
                let kept = Self.keptPixels(gpu, input)
                #expect(kept < input.pixelCount, "\(text) at \(w)x\(h): nothing replaced")
                if !text.contains("mask") { #expect(kept > 0, "\(text) at \(w)x\(h): nothing kept") }
            }
        }
        print("background parity \(text): worst \(worst)")
    }

    /// The pixel runs `background.comp` takes (32 a invocation on lavapipe, 1 on a GPU, 4, and one
    /// longer than some rows) give the reference's output, on rows of whole quads and not.
    @Test(arguments: [1, 4, 48])
    func everyRunMatchesReference(_ run: Int) throws {
        let context = try Fixtures.gpu()
        Background.runOverride.withLock { $0 = run }
        defer { Background.runOverride.withLock { $0 = nil } }
        for text in ["background:mode=blur,sigma=12", "background:mode=mask"] {
            let chain = try FilterChain([FilterSpec.parse(text)], context: context)
            for (w, h) in GPUReferenceTests.sizes {
                let input = Fixtures.image(w, h), mask = Self.mask(w / 3 + 2, h / 3 + 2)
                let difference = Difference(try chain.apply(input, depth: mask), try chain.applyCPU(input, depth: mask))
                #expect(difference.maxDelta <= 1, "\(text), run \(run), at \(w)x\(h): \(difference)")
            }
        }
    }

    /// The mask mode shows the alpha the CPU reference computes, within 1/255.
    @Test func maskModeIsTheRefinedAlpha() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse("background:mode=mask")], context: context)
        let (w, h) = (317, 129)
        let input = Fixtures.image(w, h), mask = Self.mask(97, 55)
        let gpu = try chain.apply(input, depth: mask)
        let plane = try InputConversion.plane(input, range: chain.range)
        let alpha = MaskRefinement().upsample(mask.floats(), maskWidth: 97, maskHeight: 55, luma: MaskRefinement.luma(plane),
                                              width: w, height: h).map(MaskRefinement().feathered)
        var worst: Float = 0
        for p in 0..<(w * h) {
            worst = max(worst, abs(Float(gpu.bytes[p * 4]) / 255 - alpha[p]))
            #expect(gpu.bytes[p * 4] == gpu.bytes[p * 4 + 1] && gpu.bytes[p * 4 + 3] == 255, "gray, opaque")
        }
        #expect(worst <= 1 / 255 + 1e-6, "alpha within 1/255 plus rounding: \(worst)")
        print("background mask mode: alpha within \(worst) of MaskRefinement's (317x129, mask 97x55)")
        #expect(alpha.contains { $0 == 0 } && alpha.contains { $0 == 1 }, "the blob has a background and a person")
    }

    /// Without a mask the whole frame is the person: the frame comes back unchanged.
    /// Without a mask (a live stream's frames before the model's first) the whole frame is
    /// background: nothing of the room shows before the person is found.
    @Test func noMaskShowsOnlyTheBackground() throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain([FilterSpec.parse("background:mode=color,color=0xff0000")], context: context)
        let input = Fixtures.image(127, 63)
        for out in [try chain.apply(input), try chain.applyCPU(input)] {
            #expect((0..<out.pixelCount).allSatisfy { i in
                out.bytes[i * 4] == 255 && out.bytes[i * 4 + 1] == 0 && out.bytes[i * 4 + 2] == 0 && out.bytes[i * 4 + 3] == input.bytes[i * 4 + 3]
            })
        }
    }

    /// A colour filter after it rides along as the epilogue of its pass.
    @Test(arguments: ["background:mode=blur,sigma=2", "background:mode=mask"])
    func fusedColorEpilogueMatchesReference(_ first: String) throws {
        let context = try Fixtures.gpu()
        let chain = try FilterChain(FilterSpec.parseChain("\(first) | brightness:amount=0.1,contrast=1.2"), context: context)
        for (w, h) in GPUReferenceTests.sizes {
            let input = Fixtures.image(w, h), mask = Self.mask(w / 2 + 1, h / 2 + 1)
            let difference = Difference(try chain.apply(input, depth: mask), try chain.applyCPU(input, depth: mask))
            #expect(difference.maxDelta <= 2, "\(first) + brightness at \(w)x\(h): \(difference)")
        }
        #expect(chain.lastRecordedSteps == 1)
    }

    @Test func specs() throws {
        let spec = try FilterSpec.parse("background:mode=color,color=0x00FF80")
        #expect(spec.values["color"] == .int(0x00FF80))
        #expect(try FilterSpec.parse(spec.description) == spec, "the description parses back")
        #expect(throws: MarbleError.self) { try FilterSpec.parse("background:color=0x1000000") }
        #expect(throws: MarbleError.self) { try FilterChain([FilterSpec.parse("background:mode=image")]) }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("background:color=green") }
        #expect(throws: MarbleError.conflictingFilters(first: "background", second: "depthmask",
                                                       reason: "both read the chain's one auxiliary plane (the person mask, the depth map)")) {
            try FilterChain(FilterSpec.parseChain("depthmask | background"))
        }
        #expect(try FilterChain(FilterSpec.parseChain("blur | background:mode=mask | sobel")).readsDepth)
    }
}
