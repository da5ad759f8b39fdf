import CGraniteKernels
import XCTest
@testable import GraniteML

/// The C epilogue (``KernelEpilogue``, `gk_epilogue`) against GraniteML's Swift ``Epilogue``, bit
/// for bit at every instruction-set level: step by step on odd lengths, and fused into the float
/// GEMM, the convolution GEMM and the float depthwise kernel (against the same kernel without
/// it, followed by the Swift steps).
final class EpilogueKernelTests: XCTestCase {
    private var levels: [Int] { KernelTestSupport.levels(for: "EpilogueKernelTests") }

    /// Every step C runs, both operand orders of the scalar ones.
    private static let steps: [Epilogue] = [
        .relu, .clip(lo: -0.5, hi: 0.75), .leakyRelu(alpha: 0.1), .hardSigmoid(alpha: 0.2, beta: 0.5),
        .scalar(op: .add, value: 0.3, constantFirst: false), .scalar(op: .add, value: 0.3, constantFirst: true),
        .scalar(op: .sub, value: 0.3, constantFirst: false), .scalar(op: .sub, value: 0.3, constantFirst: true),
        .scalar(op: .mul, value: 1.7, constantFirst: false), .scalar(op: .div, value: 6, constantFirst: false),
        .scalar(op: .div, value: 6, constantFirst: true), .gatedClip(add: 3, lo: 0, hi: 6),
        .fakeQuant(scale: 0.05, zeroPoint: 3, lo: 0, hi: 255), .onGrid(scale: 0.05, zeroPoint: 3, lo: 0, hi: 255),
    ]

    /// PP-LCNetV3's tail of a convolution: affine, HardSwish (add, clip, multiply, divide), affine.
    private static let hardSwishChain: [Epilogue] = [
        .scalar(op: .mul, value: 1.3, constantFirst: false), .scalar(op: .add, value: -0.2, constantFirst: false),
        .gatedClip(add: 3, lo: 0, hi: 6), .scalar(op: .div, value: 6, constantFirst: false),
        .scalar(op: .mul, value: 0.8, constantFirst: true), .scalar(op: .add, value: 0.1, constantFirst: false),
    ]

    /// Values around every threshold the steps compare with, signed zeros, fake-quantisation ties.
    private static func values(_ count: Int, seed: UInt64) -> [Float] {
        var r = KernelTestSupport.Numbers(state: seed)
        let special: [Float] = [0, -0, -0.5, 0.75, -3, 3, 6, -6, 2.5 * 0.05, 3.5 * 0.05, -1e-30, 1e30, -2.5, 0.15]
        return (0..<count).map { i in i % 5 == 0 ? special[(i / 5) % special.count] : Float(r.next(-8000...8000)) / 1000 }
    }

    private func swift(_ steps: [Epilogue], _ values: [Float], bias: Float = 0) -> [Float] {
        var out = values.map { bias != 0 ? $0 + bias : $0 }
        out.withUnsafeMutableBufferPointer { Epilogue.apply(steps, $0.baseAddress!, $0.count) }
        return out
    }

    private func assertSameBits(_ a: [Float], _ b: [Float], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let bad = zip(a, b).filter { $0.bitPattern != $1.bitPattern }.count
        XCTAssertEqual(bad, 0, "\(what): \(bad) of \(a.count) differ", file: file, line: line)
    }

    func testEachStepMatchesSwift() {
        for (index, step) in (Self.steps + [.sigmoid]).enumerated() {
            for count in [1, 13, 64, 127, 317] {
                let x = Self.values(count, seed: UInt64(index * 10 + count))
                for level in levels {
                    let epilogue = KernelEpilogue([step], level: level)
                    XCTAssertEqual(epilogue.rest.isEmpty, step != .sigmoid, "sigmoid stays in Swift")
                    for bias: Float in [0, 0.25] {
                        var got = x
                        got.withUnsafeMutableBufferPointer { epilogue.apply($0.baseAddress!, count, bias: bias) }
                        assertSameBits(got, swift([step], x, bias: bias), "\(step) count \(count) bias \(bias) level \(level)")
                    }
                }
            }
        }
    }

    func testChainsSplitAtTheFirstStepCLacks() {
        let chain: [Epilogue] = [.relu, .sigmoid, .scalar(op: .mul, value: 2, constantFirst: false)]
        let epilogue = KernelEpilogue(chain)
        XCTAssertEqual(epilogue.rest, Array(chain.dropFirst()))
        XCTAssertNotNil(epilogue.pointer)
        XCTAssertNil(KernelEpilogue([.sigmoid]).pointer)
        let x = Self.values(99, seed: 3)
        var got = x
        got.withUnsafeMutableBufferPointer { epilogue.apply($0.baseAddress!, $0.count, bias: -0.5) }
        assertSameBits(got, swift(chain, x, bias: -0.5), "relu, sigmoid, mul")
    }

    /// gk_sgemm with bias and epilogue applied to its register tiles, in two column ranges.
    func testGemmAppliesBiasAndEpilogueToItsTiles() {
        for (index, (m, n, k)) in [(1, 1, 1), (7, 70, 5), (13, 129, 300), (24, 64, 12), (6, 200, 600)].enumerated() {
            var r = KernelTestSupport.Numbers(state: UInt64(300 + index))
            let a = (0..<(m * k)).map { _ in Float(r.next(-100...100)) / 64 }
            let b = (0..<(k * n)).map { _ in Float(r.next(-100...100)) / 64 }
            let bias = (0..<m).map { $0 % 3 == 0 ? 0 : Float(r.next(-100...100)) / 16 }
            for steps in [Self.hardSwishChain, [.relu, .fakeQuant(scale: 0.1, zeroPoint: 0, lo: -128, hi: 127)], []] {
                for level in levels {
                    let epilogue = KernelEpilogue(steps, level: level)
                    var plain = [Float](repeating: .nan, count: m * n), fused = plain
                    let split = Int32(n / 2 / 16 * 16)
                    for (lo, hi) in [(Int32(0), split), (split, Int32(n))] {
                        gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &plain, Int32(n), lo, hi, nil, nil)
                        gk_sgemm(Int32(level), Int32(m), Int32(k), a, Int32(k), b, Int32(n), &fused, Int32(n), lo, hi, bias,
                                 epilogue.pointer)
                    }
                    var expected: [Float] = []
                    for i in 0..<m { expected += swift(steps, Array(plain[(i * n)..<((i + 1) * n)]), bias: bias[i]) }
                    assertSameBits(fused, expected, "\(m)×\(n)×\(k) \(steps.count) steps level \(level)")
                }
            }
        }
    }

    /// gk_sgemm_conv and the float depthwise kernel with the epilogue fused.
    func testConvolutionKernelsApplyTheEpilogue() {
        let (ch, h, w, m) = (5, 13, 22, 7)
        var r = KernelTestSupport.Numbers(state: 400)
        let input = (0..<(ch * h * w)).map { _ in Float(r.next(-100...100)) / 64 }
        let weights = (0..<(m * ch * 9)).map { _ in Float(r.next(-100...100)) / 64 }
        let bias = (0..<max(m, ch)).map { _ in Float(r.next(-100...100)) / 16 }
        let plane = h * w
        for level in levels {
            let epilogue = KernelEpilogue(Self.hardSwishChain, level: level)
            var plain = [Float](repeating: .nan, count: m * plane), fused = plain
            input.withUnsafeBufferPointer { ip in
                var g = gk_conv_geometry(input: ip.baseAddress, channels: Int32(ch), h: Int32(h), w: Int32(w), kh: 3, kw: 3,
                                         sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pl: 1, ow: Int32(w))
                gk_sgemm_conv(Int32(level), Int32(m), weights, Int32(ch * 9), &g, &plain, Int32(plane), 0, Int32(plane), nil, nil)
                gk_sgemm_conv(Int32(level), Int32(m), weights, Int32(ch * 9), &g, &fused, Int32(plane), 0, Int32(plane), bias,
                              epilogue.pointer)
            }
            var expected: [Float] = []
            for i in 0..<m { expected += swift(Self.hardSwishChain, Array(plain[(i * plane)..<((i + 1) * plane)]), bias: bias[i]) }
            assertSameBits(fused, expected, "conv GEMM level \(level)")

            // Depthwise, float mode: bias as the shift, then the epilogue over the plane.
            let tables = RequantTables(bias: [Int32](repeating: 0, count: ch), scale: [Float](repeating: 1, count: ch),
                                       shift: bias, requant: nil)
            let per = gk_dw_scratch(Int32(h), Int32(w), 5, 5, 2, 2, 2, 2, 7, 11)
            for c in 0..<ch {
                var scratch = [Float](repeating: .nan, count: per)
                var dwPlain = [Float](repeating: .nan, count: 77), dwFused = dwPlain
                let src = Array(input[(c * plane)..<((c + 1) * plane)]), kernel = Array(weights[(c * 25)..<((c + 1) * 25)])
                gk_depthwise(Int32(level), src, Int32(h), Int32(w), 0, kernel, 5, 5, 2, 2, 2, 2, 7, 11, tables.pointer, Int32(c), nil,
                             &scratch, &dwPlain)
                gk_depthwise(Int32(level), src, Int32(h), Int32(w), 0, kernel, 5, 5, 2, 2, 2, 2, 7, 11, tables.pointer, Int32(c),
                             epilogue.pointer, &scratch, &dwFused)
                assertSameBits(dwFused, swift(Self.hardSwishChain, dwPlain), "depthwise channel \(c) level \(level)")
            }
        }
    }
}
