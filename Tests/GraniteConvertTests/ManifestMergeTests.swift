import Foundation
@testable import GraniteConvert
import XCTest

final class ManifestMergeTests: XCTestCase {
    func entry(_ name: String, hash: String = "b") -> Manifest.Entry {
        Manifest.Entry(input: "in/" + name, output: name, inputBytes: 1, inputSHA256: "a", outputBytes: 2,
                       outputSHA256: hash, settings: "format=jpg;quality=85", width: 3, height: 4)
    }

    /// Writes shard `i` of `n`'s part with `names` as its entries.
    func writePart(_ dir: String, _ i: Int, of n: Int, _ names: [String], settings: ConvertSettings = ConvertSettings()) throws {
        var part = Manifest(settings: settings, entries: names.map { entry($0) })
        part.shard = try ShardSpec(index: i, count: n)
        try Data(Manifest.encode(part)).write(to: URL(fileURLWithPath: dir + "/" + part.shard!.manifestName))
    }

    func read(_ path: String) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func testCleanMergeWritesOneSortedManifestAtomically() throws {
        let dir = ConvertFixtures.folder("merge-clean")
        try writePart(dir, 0, of: 3, ["b.jpg", "d/e.jpg"])
        try writePart(dir, 1, of: 3, [])
        try writePart(dir, 2, of: 3, ["a.jpg", "c.jpg"])
        let (manifest, report) = try ManifestMerge.merge(directory: dir)
        XCTAssertTrue(report.isClean)
        XCTAssertTrue(report.written)
        XCTAssertEqual(report.exitCode, 0)
        XCTAssertEqual(report.found, [0, 1, 2])
        XCTAssertEqual(report.summary, "merged 3 of 3 parts: 4 entries -> \(dir)/manifest.json")
        XCTAssertEqual(manifest.entries.map(\.output), ["a.jpg", "b.jpg", "c.jpg", "d/e.jpg"])
        XCTAssertNil(manifest.shard)
        XCTAssertEqual(try read(dir + "/manifest.json"), manifest)
        XCTAssertEqual(ConvertFixtures.files(dir), ["manifest.json", "manifest.shard-0-of-3.json", "manifest.shard-1-of-3.json",
                                                    "manifest.shard-2-of-3.json"], "no temporary left, parts kept")
    }

    func testMissingPartIsReportedAndNothingIsWritten() throws {
        let dir = ConvertFixtures.folder("merge-missing")
        let old = Data("{\"old\": true}\n".utf8)
        try old.write(to: URL(fileURLWithPath: dir + "/manifest.json"))
        try writePart(dir, 0, of: 4, ["a.jpg"])
        try writePart(dir, 3, of: 4, ["b.jpg"])
        let report = try ManifestMerge.merge(directory: dir).report
        XCTAssertEqual(report.missing, [1, 2])
        XCTAssertFalse(report.written)
        XCTAssertEqual(report.exitCode, ConvertExitCode.partialFailure)
        XCTAssertEqual(report.problems, [
            "missing: shard 1 of 4 (no manifest.shard-1-of-4.json); run it with --shard 1/4",
            "missing: shard 2 of 4 (no manifest.shard-2-of-4.json); run it with --shard 2/4",
        ])
        XCTAssertEqual(report.summary, "manifest.json not written: 2 problems (2 of 4 parts found)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json")), old, "the old manifest is left as it was")
    }

    func testDuplicateOutputIsReported() throws {
        let dir = ConvertFixtures.folder("merge-dup")
        try writePart(dir, 0, of: 2, ["a.jpg", "same.jpg"])
        try writePart(dir, 1, of: 2, ["b.jpg", "same.jpg"])
        let report = try ManifestMerge.merge(directory: dir).report
        XCTAssertEqual(report.duplicates, [ManifestMerge.Duplicate(output: "same.jpg", shards: [0, 1])])
        XCTAssertEqual(report.problems, ["duplicate: same.jpg is listed by shards 0, 1 of 2"])
        XCTAssertFalse(report.written)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/manifest.json"))
    }

    /// A shard that left its journal was killed (or still runs): its part may miss outputs on disk.
    func testUnfinishedShardAndDifferentSettingsAreReported() throws {
        let dir = ConvertFixtures.folder("merge-unfinished")
        try writePart(dir, 0, of: 2, ["a.jpg"])
        try writePart(dir, 1, of: 2, ["b.jpg"], settings: ConvertSettings(quality: 50))
        TestSupportFiles.write(Array("{}\n".utf8), dir + "/manifest.shard-1-of-2.journal")
        let report = try ManifestMerge.merge(directory: dir).report
        XCTAssertEqual(report.unfinished, [1])
        XCTAssertEqual(report.settingsDiffer, [1])
        XCTAssertEqual(report.problems, [
            "unfinished: shard 1 of 2 left manifest.shard-1-of-2.journal (killed, or still running); re-run it with --shard 1/2",
            "settings differ: shard 1 of 2 ran with other settings than shard 0",
        ])
        XCTAssertFalse(report.written)
    }

    func testFolderWithoutPartsOrWithMixedCountsIsAnError() throws {
        let dir = ConvertFixtures.folder("merge-none")
        XCTAssertThrowsError(try ManifestMerge.merge(directory: dir)) { error in
            XCTAssertEqual(error as? ConvertError, .inputMissing(path: dir, reason: "no manifest parts (manifest.shard-I-of-N.json) to merge"))
        }
        XCTAssertThrowsError(try ManifestMerge.merge(directory: dir + "/nope")) { error in
            XCTAssertEqual((error as? ConvertError)?.exitCode, ConvertExitCode.noInput)
        }
        try writePart(dir, 0, of: 1, ["a.jpg"])
        try writePart(dir, 0, of: 2, ["a.jpg"])
        try writePart(dir, 1, of: 2, ["b.jpg"])
        XCTAssertThrowsError(try ManifestMerge.merge(directory: dir)) { error in
            XCTAssertEqual(error as? ConvertError, .output(path: dir, reason: "holds parts of 1, 2 shards; pick one with --shards N"))
        }
        let two = try ManifestMerge.merge(directory: dir, count: 2)
        XCTAssertTrue(two.report.written)
        XCTAssertEqual(two.manifest.entries.map(\.output), ["a.jpg", "b.jpg"])

        TestSupportFiles.write(Array("{torn".utf8), dir + "/manifest.shard-0-of-1.json")
        XCTAssertThrowsError(try ManifestMerge.merge(directory: dir, count: 1)) { error in
            guard case let .output(path, reason)? = error as? ConvertError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, dir + "/manifest.shard-0-of-1.json")
            XCTAssertTrue(reason.hasPrefix("unreadable manifest part"), reason)
        }
    }
}
