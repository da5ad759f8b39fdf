import Foundation
import GraniteCodecs
import GraniteConvert
import GraniteMedia
import XCTest

final class BatchConverterTests: XCTestCase {
    func manifest(_ out: String) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json")))
    }

    func testConvertsFolderKeepingLayoutAndRecordsManifest() async throws {
        let input = ConvertFixtures.folder("in")
        let out = ConvertFixtures.folder("out") + "/result"
        try ConvertFixtures.writeJPEGs(7, to: input)
        let converter = BatchConverter(inputs: [input], outputDirectory: out,
                                       settings: ConvertSettings(resize: .scale(0.5), format: .png, filters: "sharpen:amount=1"),
                                       processor: try FilterPipeline(specs: ["sharpen"], cpu: true), jobs: 3)
        let summary = try await converter.run { _ in nil }
        XCTAssertEqual(summary.converted, 7)
        XCTAssertEqual(summary.failed.count, 0)
        XCTAssertEqual(summary.exitCode, 0)
        let expected = ["img0.png", "img3.png", "img6.png", "set1/img1.png", "set1/img4.png", "set2/img2.png", "set2/img5.png"]
        XCTAssertEqual(ConvertFixtures.files(out), (expected + ["manifest.json"]).sorted())
        let m = try manifest(out)
        XCTAssertEqual(m.entries.map(\.output), expected)
        for entry in m.entries {
            let bytes = try FileBytes.read(out + "/" + entry.output)
            XCTAssertEqual(bytes.count, entry.outputBytes)
            XCTAssertEqual(ContentHash.hex(bytes), entry.outputSHA256)
            XCTAssertEqual(ContentHash.hex(try FileBytes.read(entry.input)), entry.inputSHA256)
            let image = try Codecs.decode(bytes)
            XCTAssertEqual([image.width, image.height], [48, 32])
            XCTAssertEqual(entry.settings, "format=png;resize=50%;filters=sharpen:amount=1")
        }
        XCTAssertEqual(m.settings?.resize, .scale(0.5))
    }

    func testRerunSkipsDoneAndRedoesChangedOrDamaged() async throws {
        let input = ConvertFixtures.folder("rerun-in")
        let out = ConvertFixtures.folder("rerun-out")
        let paths = try ConvertFixtures.writeJPEGs(5, to: input)
        let settings = ConvertSettings(resize: .fit(width: 40, height: 40), quality: 80)
        let first = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual(first.converted, 5)
        let second = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual([second.converted, second.skipped], [0, 5])

        // Damage one output, change one input: exactly those two are redone.
        let damaged = out + "/img0.jpg"
        var bytes = try FileBytes.read(damaged)
        bytes[bytes.count / 2] ^= 0xFF
        try AtomicFile.write(bytes, to: damaged)
        try AtomicFile.write(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 80, height: 60, seed: 99), quality: 90), to: paths[1])
        let third = try await BatchConverter(inputs: [input], outputDirectory: out, settings: settings).run { _ in nil }
        XCTAssertEqual([third.converted, third.skipped], [2, 3])
        XCTAssertEqual(try Codecs.decode(try FileBytes.read(out + "/set1/img1.jpg")).width, 40)

        // Other settings: everything is redone.
        var other = settings
        other.quality = 60
        let fourth = try await BatchConverter(inputs: [input], outputDirectory: out, settings: other).run { _ in nil }
        XCTAssertEqual(fourth.converted, 5)
    }

    func testBadInputsAreReportedAndTheBatchGoesOn() async throws {
        let input = ConvertFixtures.folder("bad-in")
        let out = ConvertFixtures.folder("bad-out")
        try ConvertFixtures.writeJPEGs(3, to: input)
        let good = try FileBytes.read(input + "/img0.jpg")
        TestSupportFiles.write(Array(good.prefix(good.count / 2)), input + "/truncated.jpg")
        TestSupportFiles.write([], input + "/empty.png")
        TestSupportFiles.write(Array("not an image".utf8), input + "/text.jpg")
        var bomb = good
        let sof = (2..<bomb.count - 9).first { bomb[$0] == 0xFF && bomb[$0 + 1] == 0xC0 }!
        bomb.replaceSubrange(sof + 5..<sof + 9, with: [0xFF, 0x00, 0xFF, 0x00])
        TestSupportFiles.write(bomb, input + "/bomb.jpg")
        let summary = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings()).run { _ in nil }
        XCTAssertEqual(summary.converted, 3)
        XCTAssertEqual(summary.exitCode, ConvertExitCode.partialFailure)
        let failures = Dictionary(uniqueKeysWithValues: summary.failed.map { (($0.path as NSString).lastPathComponent, $0.reason) })
        XCTAssertEqual(Set(failures.keys), ["truncated.jpg", "empty.png", "text.jpg", "bomb.jpg"])
        XCTAssertTrue(failures["truncated.jpg"]!.hasPrefix("decode error"), failures["truncated.jpg"]!)
        XCTAssertTrue(failures["empty.png"]!.contains("empty file"))
        XCTAssertTrue(failures["text.jpg"]!.contains("not a \(ImageFormat.readableNames)"))
        XCTAssertTrue(failures["bomb.jpg"]!.contains("over the limit"), failures["bomb.jpg"]!)
        // No output, partial or otherwise, for the failed inputs.
        XCTAssertEqual(ConvertFixtures.files(out), ["img0.jpg", "manifest.json", "set1/img1.jpg", "set2/img2.jpg"])
    }

    func testForeignFilesAreNotOverwrittenWithoutFlag() async throws {
        let input = ConvertFixtures.folder("foreign-in")
        let out = ConvertFixtures.folder("foreign-out")
        try ConvertFixtures.writeJPEGs(1, to: input)
        TestSupportFiles.write([1, 2, 3], out + "/img0.jpg")
        let summary = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings()).run { _ in nil }
        XCTAssertEqual(summary.failed.count, 1)
        XCTAssertTrue(summary.failed[0].reason.contains("--overwrite"))
        XCTAssertEqual(try FileBytes.read(out + "/img0.jpg"), [1, 2, 3])
        let forced = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings(), overwrite: true).run { _ in nil }
        XCTAssertEqual(forced.converted, 1)
        XCTAssertEqual(Codecs.sniff(try FileBytes.read(out + "/img0.jpg")), .jpeg)
    }

    func testOutputFolderInsideInputIsNotWalked() async throws {
        let input = ConvertFixtures.folder("nested")
        try ConvertFixtures.writeJPEGs(2, to: input)
        let out = input + "/converted"
        _ = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings()).run { _ in nil }
        let again = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings()).run { _ in nil }
        XCTAssertEqual([again.converted, again.skipped, again.failed.count], [0, 2, 0])
    }

    func testMissingInputIsAnError() async {
        do {
            _ = try await BatchConverter(inputs: ["/nonexistent/x.jpg"], outputDirectory: ConvertFixtures.folder("m"),
                                         settings: ConvertSettings()).run { _ in nil }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error.exitCode, ConvertExitCode.noInput)
        }
    }
}

enum TestSupportFiles {
    static func write(_ bytes: [UInt8], _ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }
}

/// The corrupt corpus through the whole converter: every file reported once, no partial outputs.
final class CorruptBatchTests: XCTestCase {
    func testCorruptCorpusIsReportedFileByFile() async throws {
        let input = ConvertFixtures.folder("corpus-in")
        let out = ConvertFixtures.folder("corpus-out")
        let jpeg = try Codecs.encodeJPEG(ConvertFixtures.photo(width: 64, height: 48, seed: 5), quality: 85)
        let png = try Codecs.encodePNG(ConvertFixtures.photo(width: 40, height: 30, seed: 6))
        var names = [String]()
        var state: UInt64 = 7
        for (base, bytes) in [("j", jpeg), ("p", png)] {
            for k in 0..<12 {
                let cut = bytes.count * (k + 1) / 14
                TestSupportFiles.write(Array(bytes.prefix(cut)), input + "/\(base)-cut\(k).\(base == "j" ? "jpg" : "png")")
                names.append("\(base)-cut\(k)")
                var flipped = bytes
                state = state &* 6364136223846793005 &+ 1442695040888963407
                flipped[Int(state >> 33) % flipped.count] ^= 0x5A
                TestSupportFiles.write(flipped, input + "/\(base)-flip\(k).\(base == "j" ? "jpg" : "png")")
                names.append("\(base)-flip\(k)")
            }
        }
        let summary = try await BatchConverter(inputs: [input], outputDirectory: out, settings: ConvertSettings(format: .png))
            .run { _ in nil }
        XCTAssertEqual(summary.total, names.count)
        XCTAssertEqual(summary.converted + summary.failed.count, names.count)
        XCTAssertEqual(Set(summary.failed.map(\.path)).count, summary.failed.count, "a file reported twice")
        for cut in names where cut.contains("-cut") {
            XCTAssertTrue(summary.failed.contains { $0.path.contains("/\(cut).") }, "truncated \(cut) not reported")
        }
        // Outputs exist only for inputs that converted, and every one of them is a whole image.
        let outputs = ConvertFixtures.files(out).filter { $0 != "manifest.json" }
        XCTAssertEqual(outputs.count, summary.converted)
        for name in outputs {
            XCTAssertNoThrow(try Codecs.decode(try FileBytes.read(out + "/" + name), path: name))
        }
    }
}
