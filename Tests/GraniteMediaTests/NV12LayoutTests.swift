import XCTest
@testable import GraniteMedia

/// NV12 (``YUVLayout/semiPlanar420(lumaStride:chromaStride:)``): the same samples as I420 with
/// the chroma planes interleaved, vectorised rows equal to the scalar formulas, padding zero.
extension YUVPlanesTests {
    func testNV12IsI420WithChromaInterleaved() throws {
        for (w, h) in [(13, 7), (127, 3), (317, 129), (16, 2), (1, 1), (64, 48)] {
            let rgba = try image(w, h, seed: UInt64(w * 31 + h))
            let cw = (w + 1) / 2, ch = (h + 1) / 2
            let i420 = ColorConversion.yuv(rgba, layout: .i420, vectorised: false)
            var expected = Array(i420[..<(w * h)])
            for y in 0..<ch {
                for x in 0..<cw {
                    expected.append(i420[w * h + y * cw + x])
                    expected.append(i420[w * h + cw * ch + y * cw + x])
                }
            }
            XCTAssertEqual(YUVLayout.nv12.byteCount(width: w, height: h), expected.count, "\(w)x\(h) size")
            for vectorised in [false, true] {
                XCTAssertEqual(ColorConversion.yuv(rgba, layout: .nv12, vectorised: vectorised), expected,
                               "\(w)x\(h) NV12 \(vectorised ? "vectorised" : "scalar")")
            }
        }
    }

    /// A layout's unpadded bytes are an image as they are (`i420`, `nv12`, `yuyv`), and the
    /// I420 image reads back to the same pixels as the NV12 one (the same samples, placed apart).
    func testUnpaddedLayoutsAreImagesAndI420ReadsBackLikeNV12() throws {
        for (w, h) in [(13, 7), (64, 48), (1, 1)] {
            let rgba = try image(w, h, seed: UInt64(w + h))
            XCTAssertEqual(YUVLayout.i420.pixelFormat(width: w), .i420)
            XCTAssertEqual(YUVLayout.nv12.pixelFormat(width: w), .nv12)
            XCTAssertEqual(YUVLayout.yuyv(stride: 0).pixelFormat(width: w), .yuyv)
            XCTAssertNil(YUVLayout.planar444.pixelFormat(width: w))
            XCTAssertNil(YUVLayout.planar420(lumaStride: w + 3, chromaStride: 0).pixelFormat(width: w), "padded rows are no image")
            let i420 = try Image(width: w, height: h, format: .i420, bytes: ColorConversion.yuv(rgba, layout: .i420))
            let nv12 = try Image(width: w, height: h, format: .nv12, bytes: ColorConversion.yuv(rgba, layout: .nv12))
            XCTAssertEqual(try ColorConversion.rgba(i420), try ColorConversion.rgba(nv12), "\(w)x\(h)")
            XCTAssertThrowsError(try Image(width: w, height: h, format: .i420, bytes: [UInt8](repeating: 0, count: w * h)))
        }
    }

    func testNV12PaddedStridesAreZeroAndRowsInPlace() throws {
        let (w, h) = (317, 129)
        let rgba = try image(w, h, seed: 7)
        let layout = YUVLayout.semiPlanar420(lumaStride: 320, chromaStride: 324)
        XCTAssertEqual(layout.strides(width: w).luma, 320)
        XCTAssertEqual(layout.byteCount(width: w, height: h), 320 * h + 324 * 65)
        XCTAssertTrue(layout.isPadded(width: w))
        XCTAssertFalse(YUVLayout.nv12.isPadded(width: w))
        let packed = ColorConversion.yuv(rgba, layout: .nv12)
        let padded = ColorConversion.yuv(rgba, layout: layout)
        XCTAssertEqual(padded, ColorConversion.yuv(rgba, layout: layout, vectorised: false))
        for y in 0..<h {
            XCTAssertEqual(Array(padded[(y * 320)..<(y * 320 + w)]), Array(packed[(y * w)..<(y * w + w)]), "luma row \(y)")
            XCTAssertEqual(Array(padded[(y * 320 + w)..<(y * 320 + 320)]), [0, 0, 0], "luma padding \(y)")
        }
        for y in 0..<65 {
            let row = 320 * h + y * 324, from = w * h + y * 318
            XCTAssertEqual(Array(padded[row..<(row + 318)]), Array(packed[from..<(from + 318)]), "chroma row \(y)")
            XCTAssertEqual(Array(padded[(row + 318)..<(row + 324)]), [0, 0, 0, 0, 0, 0], "chroma padding \(y)")
        }
    }
}
