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

    func testLegacyCPUSpellingsStillWorkAndMixWithMarble() throws {
        let pipeline = try FilterPipeline(specs: ["resize=50%", "invert", "sharpen=1"])
        XCTAssertEqual(pipeline.fingerprint.split(separator: ",").count, 3)
        let (_, image) = try pngFolder()
        let out = try pipeline.process(image)
        XCTAssertEqual(out.width, 19)
        XCTAssertEqual(out.format, .rgba8)
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
