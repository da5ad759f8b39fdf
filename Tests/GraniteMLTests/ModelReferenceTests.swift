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

    /// The same with the C kernels capped at AVX2 (the path CPUs without AVX-512 take).
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
    /// is exact (VNNI: 32-bit dot products; the fixture records it), every value agrees: the int8 kernels requantise as ORT's QLinearConv and fuse
    /// where it fuses, and the float convolutions it leaves unfused sum their taps in its SGEMM's
    /// order, one fused multiply-add each. Without VNNI, ORT's AVX2 kernel sums byte-pair products
    /// in saturating 16-bit lanes (vpmaddubsw), so ORT itself departs from exact integer arithmetic
    /// (GraniteML's AVX2 path widens without saturating; every level agrees bit for bit,
    /// testEveryLevelGivesTheSameBits): there ~80% agree exactly and 99.8% within a step.
    func testFastDepthQuantised() throws {
        for name in ["fastdepth-224", "fastdepth-224-photo"] {
            let fixture = try Fixture.load(name)
            let (actual, expected) = try run(fixture)
            XCTAssertEqual(actual.elementType, .uint8)
            XCTAssertEqual(actual.shape, [1, 224, 224, 1])
            let diffs = zip(actual.values, expected.values).map { abs($0 - $1) }
            let within = diffs.filter { $0 <= 1 }.count, same = diffs.filter { $0 == 0 }.count
            print("\(name): \(within)/\(diffs.count) within 1 step, max \(diffs.max() ?? 0), exact \(same)")
            if fixture.exactInt8 {
                XCTAssertEqual(actual.values, expected.values, "\(name): ONNX Runtime's very depth map")
            } else {
                XCTAssertLessThanOrEqual(diffs.max() ?? 0, 2, name)
                XCTAssertGreaterThanOrEqual(Double(within) / Double(diffs.count), fixture.exactInt8 ? 0.999 : 0.995, name)
                XCTAssertGreaterThanOrEqual(Double(same) / Double(diffs.count), fixture.exactInt8 ? 0.99 : 0.75, name)
            }
            XCTAssertGreaterThan(Set(actual.values).count, 10, "a flat depth map means the network did nothing")
        }
    }

    /// One answer on every CPU: each instruction-set level this CPU has (portable, AVX2,
    /// AVX-512 VNNI, forced as `GRANITE_ML_ISA` would), on FastDepth int8 (synthetic scene and
    /// photograph) and the float models, gives the same bits as every other level; where ONNX
    /// Runtime's arithmetic is exact (its u8×s8 GEMM with VNNI, recorded in the fixture) FastDepth's
    /// map equals ORT's at every level, otherwise it is within the float tolerance of ORT. Two
    /// threads as one.
    func testEveryLevelGivesTheSameBits() throws {
        let levels = [KernelLevel.portable, KernelLevel.avx2, KernelLevel.avx512vnni].filter { $0 <= KernelLevel.detected }
        print("levels on this CPU: \(levels) (detected \(KernelLevel.detected))")
        defer { KernelLevel.cap.store(-1, ordering: .relaxed) }
        for name in ["fastdepth-224", "fastdepth-224-photo", "ppocr-det-256", "midas-small-replica-opset13"] {
            let fixture = try Fixture.load(name)
            let path = name.hasPrefix("midas")
                ? TestEnvironment.fixturesDirectory.appendingPathComponent("models/\(fixture.model)").path
                : try TestEnvironment.model(fixture.model)
            var first: (level: Int, values: [Float])?
            for level in levels {
                KernelLevel.cap.store(level, ordering: .relaxed)
                for threads in [1, 2] {
                    let model = try Model(path: path, threads: threads)
                    let output = model.outputs[0].name
                    let actual = try XCTUnwrap(model.run(fixture.inputs)[output])
                    let expected = try XCTUnwrap(fixture.outputs[output])
                    let differing = zip(actual.values, expected.values).filter { $0.bitPattern != $1.bitPattern }.count
                    print("\(name) level \(level) threads \(threads): \(differing) of \(actual.count) differ from ONNX Runtime")
                    if let first {
                        let apart = zip(actual.values, first.values).filter { $0.bitPattern != $1.bitPattern }.count
                        XCTAssertEqual(apart, 0, "\(name): level \(level) (\(threads) threads) against level \(first.level)")
                    } else {
                        first = (level, actual.values)
                    }
                    if actual.elementType == .uint8 && fixture.exactInt8 {
                        XCTAssertEqual(differing, 0, "\(name) at level \(level): ONNX Runtime's very depth map")
                    } else if actual.elementType != .uint8 {
                        assertClose(actual, expected)
                    }
                }
            }
        }
    }
}
