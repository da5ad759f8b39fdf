import GraniteConvert
import GraniteMedia
import XCTest

final class CPUFilterTests: XCTestCase {
    func image(_ w: Int, _ h: Int, _ f: (Int, Int) -> UInt8) throws -> Image {
        var bytes = [UInt8]()
        for y in 0..<h { for x in 0..<w { bytes.append(f(x, y)) } }
        return try Image(width: w, height: h, format: .gray8, bytes: bytes)
    }

    /// The resize filter is the shared resampler (its own tests are GraniteMediaTests.ResamplerTests).
    func testResizeFilterIsTheSharedResampler() throws {
        let src = try image(13, 9) { x, y in UInt8((x * 37 + y * 11) % 256) }
        let out = try CPUFilter.resize(.fit(width: 6, height: 6)).apply(src)
        XCTAssertEqual(out, try Resampler.resize(src, width: 6, height: 4, filter: ConvertSettings.defaultResizeFilter))
    }

    func testSharpenKeepsFlatAndSteepensEdges() throws {
        let flat = try image(8, 8) { _, _ in 90 }
        XCTAssertEqual(try CPUSharpen.sharpen(flat).bytes, flat.bytes)
        let edge = try image(8, 3) { x, _ in x < 4 ? 50 : 150 }
        let out = try CPUSharpen.sharpen(edge, amount: 1)
        XCTAssertLessThan(out.bytes[8 + 3], 50)  // undershoot on the dark side
        XCTAssertGreaterThan(out.bytes[8 + 4], 150)  // overshoot on the bright side
        XCTAssertEqual(out.bytes[8 + 0], 50)
        XCTAssertEqual(try CPUSharpen.sharpen(edge, amount: 0), edge)
        XCTAssertThrowsError(try CPUSharpen.sharpen(try Image(width: 2, height: 2, format: .gray16)))
    }

    func testSpecsParseAndRejectClearly() throws {
        XCTAssertEqual(try CPUFilter.parse("sharpen"), .sharpen(amount: 1))
        XCTAssertEqual(try CPUFilter.parse("sharpen=2.5"), .sharpen(amount: 2.5))
        XCTAssertEqual(try CPUFilter.parse("resize=50%"), .resize(.scale(0.5)))
        XCTAssertEqual(try CPUFilter.parse("resize=fit:100x80"), .resize(.fit(width: 100, height: 80)))
        XCTAssertEqual(try ResizeSpec.parse("640x480"), .exact(width: 640, height: 480))
        for bad in ["blur", "sharpen=x", "resize", "resize=0%", "resize=12"] {
            XCTAssertThrowsError(try CPUFilter.parse(bad), bad) { error in
                guard case .badOption(let option, let value, _) = error as? ConvertError else { return XCTFail("\(error)") }
                XCTAssertEqual(option, bad.hasPrefix("resize=") ? "--resize" : "--filter")
                XCTAssertFalse(value.isEmpty)
            }
        }
        XCTAssertEqual(ResizeSpec.fit(width: 100, height: 100).targetSize(width: 400, height: 200).width, 100)
        XCTAssertEqual(ResizeSpec.fit(width: 100, height: 100).targetSize(width: 400, height: 200).height, 50)
        XCTAssertEqual(ResizeSpec.scale(0.5).targetSize(width: 1920, height: 1080).width, 960)
    }

    func testChainRunsInOrder() throws {
        let chain = try CPUFilterChain(specs: ["resize=50%", "sharpen=0.5"])
        let out = try chain.process(try image(20, 10) { x, _ in UInt8(x * 10) })
        XCTAssertEqual([out.width, out.height], [10, 5])
        XCTAssertEqual(chain.fingerprint, "resize=50%,sharpen=0.5")
    }
}
