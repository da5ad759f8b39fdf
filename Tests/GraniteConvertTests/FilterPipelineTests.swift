import GraniteCodecs
import GraniteConvert
import GraniteMedia
import Marble
import XCTest

/// `granite convert --filter` runs Marble filters on the GPU layer (lavapipe here).
final class FilterPipelineTests: XCTestCase {
    private func pngFolder() throws -> (String, Image) {
        let input = ConvertFixtures.folder("marble-in")
        let image = ConvertFixtures.photo(width: 37, height: 23, seed: 7)
        TestSupportFiles.write(try Codecs.encodePNG(image), input + "/p.png")
        return (input, image)
    }

    func testConvertRunsMarbleChainOnVulkanAndMatchesItsCPUReference() throws {
        let (input, image) = try pngFolder()
        let out = ConvertFixtures.folder("marble-out")
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--filter", "blur:sigma=1.5 | invert", "--format", "png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let written = try Codecs.decodeFile(out + "/p.png")
        let reference = try FilterChain(FilterSpec.parseChain("blur:sigma=1.5 | invert")).applyCPU(image)
        XCTAssertEqual(written.width, 37)
        XCTAssertEqual(written.height, 23)
        var worst = 0
        for (a, b) in zip(written.bytes, reference.bytes) { worst = max(worst, abs(Int(a) - Int(b))) }
        XCTAssertLessThanOrEqual(worst, 1, "GPU output within 1 LSB of Marble's CPU reference")
        // Invert really ran: the output is not the blurred input.
        XCTAssertNotEqual(written.bytes, try FilterChain([FilterSpec.parse("blur:sigma=1.5")]).applyCPU(image).bytes)
    }

    func testCPUFlagUsesTheReferencePathAndTheManifestTellsThemApart() throws {
        let gpu = try FilterPipeline(specs: ["invert"])
        let cpu = try FilterPipeline(specs: ["invert"], cpu: true)
        XCTAssertTrue(gpu.usesGPU)
        XCTAssertFalse(cpu.usesGPU)
        XCTAssertNotEqual(gpu.fingerprint, cpu.fingerprint)
        let (_, image) = try pngFolder()
        XCTAssertEqual(try gpu.process(image), try cpu.process(image))
    }

    func testResizeStepsMixWithMarbleChains() throws {
        let pipeline = try FilterPipeline(specs: ["resize=50%", "invert", "sharpen:amount=1"])
        XCTAssertEqual(pipeline.fingerprint, "resize=50%," + (try FilterChain(FilterSpec.parseChain("invert | sharpen:amount=1")).fingerprint),
                       "one resize step, then the two Marble filters as one chain")
        let (_, image) = try pngFolder()
        let out = try pipeline.process(image)
        XCTAssertEqual(out.width, 19)
        XCTAssertEqual(out.format, .rgba8)
        XCTAssertEqual(try FilterPipeline(specs: ["resize=fit:100x80"]).fingerprint, "resize=fit 100x80")
        XCTAssertEqual(FilterPipeline().fingerprint, "")
        XCTAssertEqual(try FilterPipeline().process(image), image)
    }

    /// The resize step is the shared resampler (its own tests are GraniteMediaTests.ResamplerTests),
    /// sized per image.
    func testResizeStepIsTheSharedResampler() throws {
        let src = try gray(13, 9) { x, y in UInt8((x * 37 + y * 11) % 256) }
        let out = try FilterPipeline(specs: ["resize=fit:6x6"]).process(src)
        XCTAssertEqual(out, try Resampler.resize(src, width: 6, height: 4, filter: ConvertSettings.defaultResizeFilter))
        for bad in ["resize=0%", "resize=12", "resize=fit:12"] {
            XCTAssertThrowsError(try FilterPipeline(specs: [bad]), bad) { error in
                guard case let .badOption(option, value, _)? = error as? ConvertError else { return XCTFail("\(error)") }
                XCTAssertEqual(option, bad.hasPrefix("resize=fit:") ? "--fit" : "--resize")
                XCTAssertFalse(value.isEmpty)
            }
        }
        XCTAssertEqual(try ResizeSpec.parse("640x480"), .exact(width: 640, height: 480))
        XCTAssertEqual(ResizeSpec.fit(width: 100, height: 100).targetSize(width: 400, height: 200).width, 100)
        XCTAssertEqual(ResizeSpec.fit(width: 100, height: 100).targetSize(width: 400, height: 200).height, 50)
        XCTAssertEqual(ResizeSpec.scale(0.5).targetSize(width: 1920, height: 1080).width, 960)
    }

    /// `sharpen` is spelled one way, Marble's; the earlier `sharpen=AMOUNT` is refused with that spelling.
    func testSharpenIsSpelledOneWay() throws {
        for (text, spelling) in [("sharpen=1", "sharpen:amount=1"), ("sharpen=1.5", "sharpen:amount=1.5"),
                                 ("sharpen=x", "sharpen:key=value with key one of amount, sigma")] {
            XCTAssertThrowsError(try FilterPipeline(specs: [text]), text) { error in
                guard case let .badOption(option, value, reason)? = error as? ConvertError else { return XCTFail("\(error)") }
                XCTAssertEqual(option, "--filter")
                XCTAssertEqual(value, text)
                XCTAssertTrue(reason.hasSuffix("write \(spelling)"), reason)
            }
        }
        XCTAssertEqual(try FilterPipeline(specs: ["sharpen"]).fingerprint, try FilterPipeline(specs: ["sharpen:amount=1,sigma=1"]).fingerprint)
    }

    /// Sharpen on the GPU and on the CPU (`--cpu`, Marble's reference: the shader's Q8 weights) give
    /// the same pixels; flat stays flat, an edge steepens (a gray image goes in as RGBA).
    func testSharpenIsOneAlgorithmOnGPUAndCPU() throws {
        let flat = try gray(8, 8) { _, _ in 90 }
        let edge = try gray(8, 3) { x, _ in x < 4 ? 50 : 150 }
        let gpu = try FilterPipeline(specs: ["sharpen:amount=1"]), cpu = try FilterPipeline(specs: ["sharpen:amount=1"], cpu: true)
        XCTAssertEqual(try gpu.process(flat), try ColorConversion.rgba(flat))
        let out = try gpu.process(edge)
        XCTAssertEqual(out, try cpu.process(edge))
        XCTAssertEqual(out.format, .rgba8)
        XCTAssertLessThan(out.bytes[(8 + 3) * 4], 50)  // undershoot on the dark side
        XCTAssertGreaterThan(out.bytes[(8 + 4) * 4], 150)  // overshoot on the bright side
        XCTAssertEqual(out.bytes[(8 + 0) * 4], 50)
        XCTAssertEqual(try FilterPipeline(specs: ["sharpen:amount=0"]).process(edge), try ColorConversion.rgba(edge))
        let (_, photo) = try pngFolder()
        XCTAssertEqual(try gpu.process(photo), try cpu.process(photo))
    }

    private func gray(_ w: Int, _ h: Int, _ f: (Int, Int) -> UInt8) throws -> Image {
        var bytes = [UInt8]()
        for y in 0..<h { for x in 0..<w { bytes.append(f(x, y)) } }
        return try Image(width: w, height: h, format: .gray8, bytes: bytes)
    }

    func testBadSpecNamesTheFilterAndWhatIsValid() {
        XCTAssertThrowsError(try FilterPipeline(specs: ["blur:sigma=-3"])) { error in
            guard case let .badOption(option, value, reason)? = error as? ConvertError else { return XCTFail("\(error)") }
            XCTAssertEqual(option, "--filter")
            XCTAssertEqual(value, "blur:sigma=-3")
            XCTAssertTrue(reason.contains("sigma"), reason)
        }
    }
}
