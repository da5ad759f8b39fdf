import XCTest
@testable import GraniteML

/// The real models against ONNX Runtime on the same inputs (fixtures from scripts/ml/make_fixtures.py).
final class ModelReferenceTests: XCTestCase {
    /// Float outputs: max |diff| ≤ 1e-3 of the reference's range.
    private func assertClose(_ actual: Tensor, _ expected: Tensor, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.shape, expected.shape, file: file, line: line)
        XCTAssertEqual(actual.count, expected.count, file: file, line: line)
        guard actual.count == expected.count else { return }
        let range = max((expected.values.max() ?? 0) - (expected.values.min() ?? 0), 1e-6)
        var worst: Float = 0
        for (a, e) in zip(actual.values, expected.values) { worst = max(worst, abs(a - e)) }
        print("max |diff| = \(worst), output range = \(range), relative = \(worst / range)")
        XCTAssertLessThanOrEqual(worst / range, 1e-3, file: file, line: line)
    }

    private func run(_ name: String, threads: Int = 1) throws -> (Tensor, Tensor) {
        try run(Fixture.load(name), threads: threads)
    }

    private func run(_ fixture: Fixture, threads: Int = 1) throws -> (Tensor, Tensor) {
        let model = try Model(path: try TestEnvironment.model(fixture.model), threads: threads)
        let outputs = try model.run(fixture.inputs)
        let name = model.outputs[0].name
        let actual = try XCTUnwrap(outputs[name]), expected = try XCTUnwrap(fixture.outputs[name])
        return (actual, expected)
    }

    func testPPOCRDetector256() throws {
        let (actual, expected) = try run("ppocr-det-256")
        assertClose(actual, expected)
    }

    /// The same with the C kernels capped at AVX2: OpenBLAS and stored im2col blocks instead of
    /// GraniteML's AVX-512 GEMM (the path CPUs without AVX-512 take).
    func testPPOCRDetector256WithoutAVX512Kernels() throws {
        KernelLevel.cap.store(KernelLevel.avx2, ordering: .relaxed)
        defer { KernelLevel.cap.store(-1, ordering: .relaxed) }
        let (actual, expected) = try run("ppocr-det-256")
        assertClose(actual, expected)
    }

    func testPPOCRDetector640TwoThreads() throws {
        let (actual, expected) = try run("ppocr-det-640", threads: 2)
        assertClose(actual, expected)
    }

    func testPPOCRClassifier() throws {
        let (actual, expected) = try run("ppocr-cls")
        assertClose(actual, expected)
        XCTAssertEqual(actual.values.reduce(0, +), 1, accuracy: 1e-4)
    }

    /// Quantised output, on a synthetic scene and on a photograph: where ONNX Runtime's u8×s8 GEMM
    /// is exact (VNNI: 32-bit dot products; the fixture records it) and GraniteML's kernels are its
    /// AVX-512 ones, every value agrees: the int8 kernels requantise as ORT's QLinearConv and fuse
    /// where it fuses, and the float convolutions it leaves unfused sum their taps in its SGEMM's
    /// order, one fused multiply-add each. Without VNNI, ORT's AVX2 kernel sums byte-pair products
    /// in saturating 16-bit lanes (vpmaddubsw), so ORT itself departs from exact integer arithmetic
    /// (GraniteML's AVX2 path widens without saturating; its portable C build agrees bit for bit,
    /// testFastDepthPortableKernelsMatchSIMD): there ~80% agree exactly and 99.8% within a step.
    func testFastDepthQuantised() throws {
        for name in ["fastdepth-224", "fastdepth-224-photo"] {
            let fixture = try Fixture.load(name)
            let (actual, expected) = try run(fixture)
            XCTAssertEqual(actual.elementType, .uint8)
            XCTAssertEqual(actual.shape, [1, 224, 224, 1])
            let diffs = zip(actual.values, expected.values).map { abs($0 - $1) }
            let within = diffs.filter { $0 <= 1 }.count, same = diffs.filter { $0 == 0 }.count
            print("\(name): \(within)/\(diffs.count) within 1 step, max \(diffs.max() ?? 0), exact \(same)")
            if fixture.exactInt8 && Model.kernelInstructionSet == "avx512vnni" {
                XCTAssertEqual(actual.values, expected.values, "\(name): ONNX Runtime's very depth map")
            } else {
                XCTAssertLessThanOrEqual(diffs.max() ?? 0, 2, name)
                XCTAssertGreaterThanOrEqual(Double(within) / Double(diffs.count), fixture.exactInt8 ? 0.999 : 0.995, name)
                XCTAssertGreaterThanOrEqual(Double(same) / Double(diffs.count), fixture.exactInt8 ? 0.99 : 0.75, name)
            }
            XCTAssertGreaterThan(Set(actual.values).count, 10, "a flat depth map means the network did nothing")
        }
    }

    /// The int8 kernels forced to their portable C build give the same depth map, bit for bit,
    /// as the SIMD build this CPU picks (and with two threads as with one).
    func testFastDepthPortableKernelsMatchSIMD() throws {
        let fixture = try Fixture.load("fastdepth-224")
        let path = try TestEnvironment.model(fixture.model)
        let simd = try Model(path: path, threads: 2)
        XCTAssertGreaterThanOrEqual(simd.quantizedConvs, 30, "the QDQ convolutions should run on the int8 kernels")
        let fast = try simd.run(fixture.inputs)
        KernelLevel.cap.store(KernelLevel.portable, ordering: .relaxed)
        defer { KernelLevel.cap.store(-1, ordering: .relaxed) }
        let portable = try Model(path: path, threads: 1).run(fixture.inputs)
        XCTAssertEqual(fast, portable)
    }
}
