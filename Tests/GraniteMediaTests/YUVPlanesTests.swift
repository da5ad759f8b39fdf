import XCTest
@testable import GraniteMedia

/// The vectorised RGBA → planar YUV against the scalar formulas, bit for bit, on odd sizes
/// (row ends shorter than a vector, odd last columns and rows) and padded strides.
final class YUVPlanesTests: XCTestCase {
    func image(_ w: Int, _ h: Int, seed: UInt64) throws -> Image {
        var state = seed
        var bytes = [UInt8](repeating: 0, count: w * h * 4)
        for i in bytes.indices {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return try Image(width: w, height: h, format: .rgba8, bytes: bytes)
    }

    func planes(_ image: Image, subsampled: Bool, pad: Int, reference: Bool) -> [UInt8] {
        let w = image.width, h = image.height
        let cw = subsampled ? (w + 1) / 2 : w, ch = subsampled ? (h + 1) / 2 : h
        let ls = w + pad, cs = cw + pad / 2
        var out = [UInt8](repeating: 0xAA, count: ls * h + 2 * cs * ch)
        out.withUnsafeMutableBufferPointer { p in
            if reference {
                ColorConversion.planarYUVReference(image, subsampled: subsampled, into: p.baseAddress!, lumaStride: ls, chromaStride: cs)
            } else {
                ColorConversion.planarYUV(image, subsampled: subsampled, into: p.baseAddress!, lumaStride: ls, chromaStride: cs)
            }
        }
        return out
    }

    func testVectorisedEqualsTheScalarFormulas() throws {
        for (w, h) in [(13, 7), (127, 3), (317, 129), (16, 2), (32, 1), (33, 5), (1, 1), (64, 48)] {
            let image = try image(w, h, seed: UInt64(w * 1000 + h))
            for subsampled in [true, false] {
                for pad in [0, 24] {
                    XCTAssertEqual(planes(image, subsampled: subsampled, pad: pad, reference: false),
                                   planes(image, subsampled: subsampled, pad: pad, reference: true),
                                   "\(w)x\(h) \(subsampled ? "4:2:0" : "4:4:4") pad \(pad)")
                }
            }
        }
    }

    func testPackedYUYVEqualsTheScalarFormulas() throws {
        for (w, h) in [(13, 7), (127, 3), (317, 129), (16, 2), (33, 5), (1, 1), (64, 48)] {
            let image = try image(w, h, seed: UInt64(w * 7 + h))
            for pad in [0, 12] {
                let stride = (w + 1) / 2 * 4 + pad
                var fast = [UInt8](repeating: 0xAA, count: stride * h), slow = fast
                fast.withUnsafeMutableBufferPointer { ColorConversion.packedYUYV(image, into: $0.baseAddress!, stride: stride) }
                slow.withUnsafeMutableBufferPointer { ColorConversion.packedYUYVReference(image, into: $0.baseAddress!, stride: stride) }
                XCTAssertEqual(fast, slow, "\(w)x\(h) YUYV pad \(pad)")
            }
        }
    }

    /// The vector rows leave out the chroma clamp (it never acts on sums of real samples): the
    /// most saturated colours, every 0/255 mix in every 2×2 and pair arrangement, still equal
    /// the clamped scalar formulas.
    func testSaturatedColoursNeedNoClamp() throws {
        let corners: [[UInt8]] = (0..<8).map { [$0 & 1 == 0 ? 0 : 255, $0 & 2 == 0 ? 0 : 255, $0 & 4 == 0 ? 0 : 255, 255] }
        var bytes: [UInt8] = []
        for i in 0..<(64 * 16) { bytes += corners[(i * 5 + i / 64) % 8] }
        let image = try Image(width: 64, height: 16, format: .rgba8, bytes: bytes)
        for subsampled in [true, false] {
            XCTAssertEqual(planes(image, subsampled: subsampled, pad: 0, reference: false),
                           planes(image, subsampled: subsampled, pad: 0, reference: true), subsampled ? "4:2:0" : "4:4:4")
        }
        var fast = [UInt8](repeating: 0, count: 64 * 2 * 16), slow = fast
        fast.withUnsafeMutableBufferPointer { ColorConversion.packedYUYV(image, into: $0.baseAddress!, stride: 128) }
        slow.withUnsafeMutableBufferPointer { ColorConversion.packedYUYVReference(image, into: $0.baseAddress!, stride: 128) }
        XCTAssertEqual(fast, slow, "YUYV")
    }

    func testKnownValues() throws {
        // White, black, pure red, pure blue in a 2x2 block: the BT.601 limited-range corners.
        let quad = try Image(width: 2, height: 2, format: .rgba8,
                             bytes: [255, 255, 255, 255, 0, 0, 0, 255, 255, 0, 0, 255, 0, 0, 255, 255])
        let out = planes(quad, subsampled: false, pad: 0, reference: false)
        XCTAssertEqual(Array(out[0..<4]), [235, 16, 82, 41], "luma")
        XCTAssertEqual(Array(out[4..<8]), [128, 128, 90, 240], "Cb")
        XCTAssertEqual(Array(out[8..<12]), [128, 128, 240, 110], "Cr")
    }
}
