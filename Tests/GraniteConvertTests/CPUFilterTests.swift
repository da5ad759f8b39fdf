import GraniteConvert
import GraniteMedia
import XCTest

final class CPUFilterTests: XCTestCase {
    func image(_ w: Int, _ h: Int, _ f: (Int, Int) -> UInt8) throws -> Image {
        var bytes = [UInt8]()
        for y in 0..<h { for x in 0..<w { bytes.append(f(x, y)) } }
        return try Image(width: w, height: h, format: .gray8, bytes: bytes)
    }

    func testHalvingAveragesTwoByTwoBlocks() throws {
        let src = try image(13, 9) { x, y in UInt8((x * 37 + y * 11) % 256) }
        // 13x9 → 6x4 is not an exact halving; use 12x8 for the exact known answer.
        let even = try image(12, 8) { x, y in UInt8((x * 37 + y * 11) % 256) }
        let out = try CPUResize.resize(even, width: 6, height: 4)
        for y in 0..<4 {
            for x in 0..<6 {
                let sum = [(0, 0), (1, 0), (0, 1), (1, 1)].reduce(0) { $0 + Int(even.bytes[(2 * y + $1.1) * 12 + 2 * x + $1.0]) }
                XCTAssertEqual(Int(out.bytes[y * 6 + x]), (sum + 2) / 4, accuracy: 1, "(\(x),\(y))")
            }
        }
        let odd = try CPUResize.resize(src, width: 5, height: 4)
        XCTAssertEqual([odd.width, odd.height], [5, 4])
    }

    func testFlatImagesStayFlatAtAnySize() throws {
        let flat = try Image(width: 17, height: 11, format: .rgba8, bytes: [UInt8](repeating: 0, count: 17 * 11 * 4).enumerated().map { [200, 100, 50, 255][$0.offset % 4] })
        for (w, h) in [(5, 3), (17, 11), (40, 23), (1, 1), (9, 30)] {
            let out = try CPUResize.resize(flat, width: w, height: h)
            XCTAssertEqual(out.bytes, [UInt8](repeating: 0, count: w * h * 4).enumerated().map { [200, 100, 50, 255][$0.offset % 4] }, "\(w)x\(h)")
        }
    }

    func testUpscaleIsBilinear() throws {
        let two = try image(2, 1) { x, _ in x == 0 ? 0 : 200 }
        let out = try CPUResize.resize(two, width: 4, height: 1)
        // Pixel centres at 0.25-step positions: -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
        XCTAssertEqual(out.bytes, [0, 50, 150, 200])
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
