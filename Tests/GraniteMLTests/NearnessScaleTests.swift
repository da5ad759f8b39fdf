import GraniteML
import XCTest

/// The eight-at-a-time conversions of depth values (the depth PNG's 16-bit samples and the
/// preview's palette indices) give exactly what the one-value formulas give, at rounding ties too.
final class NearnessScaleTests: XCTestCase {
    /// Values on and next to every half step of millimetres and of the 65535 and 255 scales, plus
    /// the ends, values outside the range, and a seeded spread.
    static func values(lo: Float, hi: Float) -> [Float] {
        var values: [Float] = [lo, hi, -0.0, 0, -1, 70, 0.0004999, 0.0005, 0.0015, 65.5355, 65.5345]
        for m in 0..<3000 {
            let x = (Float(m) + 0.5) / 1000
            values += [x, x.nextUp, x.nextDown]
        }
        for k in 0..<256 {
            for scale in [Float(255), 65535] {
                let n = (Float(k) + 0.5) / scale  // a nearness at a tie
                let v = hi - n * (hi - lo)
                values += [v, v.nextUp, v.nextDown, lo + n * (hi - lo)]
            }
        }
        var state: UInt64 = 12345
        for _ in 0..<20000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            values.append(lo + Float(state >> 40) / Float(1 << 24) * (hi - lo))
        }
        return values.filter { $0 >= -1 && $0 <= 70 }  // a metric map's samples saturate, never trap
    }

    func testBulkConversionsEqualTheOneValueFormulas() {
        for (lo, hi) in [(Float(0.21), Float(2.97)), (0.5, 18.3), (1, 1)] {
            for meaning in [ModelDescription.Meaning.depth, .inverseDepth] {
                let scale = NearnessScale(lo: lo, hi: hi, meaning: meaning)
                let values = Self.values(lo: lo, hi: hi)
                for metric in [true, false] {
                    let inRange = metric ? values : values.filter { $0 >= lo && $0 <= hi }  // relative maps: their own range
                    var bulk = [UInt8](repeating: 0, count: 2 * inRange.count)
                    inRange.withUnsafeBufferPointer { v in
                        bulk.withUnsafeMutableBufferPointer { scale.samples16BigEndian(v.baseAddress!, count: v.count, metric: metric, into: $0.baseAddress!) }
                    }
                    for (i, v) in inRange.enumerated() {
                        let s = scale.sample16(v, metric: metric)
                        if bulk[2 * i] != UInt8(s >> 8) || bulk[2 * i + 1] != UInt8(s & 0xFF) {
                            XCTFail("sample16(\(v)) = \(s), bulk \(bulk[2 * i]) \(bulk[2 * i + 1]) (\(lo)...\(hi) \(meaning) metric \(metric))")
                            break
                        }
                    }
                }
                var indices = [UInt8](repeating: 0, count: values.count)
                values.withUnsafeBufferPointer { v in
                    indices.withUnsafeMutableBufferPointer { scale.paletteIndices(v.baseAddress!, count: v.count, into: $0.baseAddress!) }
                }
                XCTAssertEqual(indices, values.map(scale.paletteIndex), "\(lo)...\(hi) \(meaning)")
            }
        }
    }
}
