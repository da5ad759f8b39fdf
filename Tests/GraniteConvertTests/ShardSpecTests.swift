import Foundation
@testable import GraniteConvert
import XCTest

final class ShardSpecTests: XCTestCase {
    func testParsesSpecsAndRejectsBadOnesClearly() throws {
        XCTAssertEqual(try ShardSpec.parse("0/4", environment: [:]), try ShardSpec(index: 0, count: 4))
        XCTAssertEqual(try ShardSpec.parse("3/4", environment: [:]).description, "3/4")
        XCTAssertEqual(try ShardSpec.parse("0/1", environment: [:]).manifestName, "manifest.shard-0-of-1.json")
        let bad: [(String, [String: String], String)] = [
            ("3/3", [:], "must be in 0...2"),
            ("a/2", [:], "expected I/N or auto/N"),
            ("4", [:], "expected I/N or auto/N"),
            ("1/2/3", [:], "expected I/N or auto/N"),
            ("0/0", [:], "at least 1"),
            ("-1/4", [:], "must be in 0...3"),
            ("auto/4", [:], "auto needs JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID"),
            ("auto/4", ["JOB_COMPLETION_INDEX": ""], "neither is set"),
            ("auto/4", ["JOB_COMPLETION_INDEX": "x"], "JOB_COMPLETION_INDEX='x' is not a number"),
            ("auto/4", ["JOB_COMPLETION_INDEX": "4"], "JOB_COMPLETION_INDEX=4 is not in 0...3"),
            ("auto/4", ["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1"], "number the array from 0 (--array=0-3)"),
        ]
        for (text, environment, reason) in bad {
            XCTAssertThrowsError(try ShardSpec.parse(text, environment: environment), text) { error in
                guard let error = error as? ConvertError, case let .badOption(option, value, why) = error else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertEqual(option, "--shard")
                XCTAssertEqual(value, text)
                XCTAssertTrue(why.contains(reason), "\(text): \(why)")
                XCTAssertEqual(error.exitCode, ConvertExitCode.usage)
            }
        }
    }

    /// Kubernetes' index first, then Slurm's, used as is (a re-run of `--array=2` is still shard 2).
    func testAutoReadsTheJobIndex() throws {
        XCTAssertEqual(try ShardSpec.parse("auto/4", environment: ["JOB_COMPLETION_INDEX": "2"]).index, 2)
        XCTAssertEqual(try ShardSpec.parse("auto/4", environment: ["SLURM_ARRAY_TASK_ID": "3"]).index, 3)
        XCTAssertEqual(try ShardSpec.parse("auto/4", environment: ["JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "3"]).index, 1)
        XCTAssertEqual(try ShardSpec.parse("auto/4", environment: ["JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": "0"]).index, 0)
        XCTAssertEqual(try ShardSpec.parse("auto/4", environment: ["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "2"]).index, 2)
    }

    /// Fixed vectors: the first 4 bytes of SHA-256(relative path), big-endian, modulo N — the same
    /// on every run, machine and toolchain, and what `printf %s REL | sha256sum | cut -c1-8` gives.
    func testAssignmentIsAFixedFunctionOfTheRelativePath() {
        let vectors: [(String, Int, Int)] = [("img0.jpg", 1, 1), ("set1/img1.jpg", 3, 0), ("set2/img2.jpg", 3, 0),
                                             ("img3.jpg", 0, 3), ("a.jpg", 2, 1), ("photos/2024/IMG_0001.JPG", 2, 2)]
        for (path, of4, of7) in vectors {
            XCTAssertEqual(ShardSpec.index(of: path, count: 4), of4, path)
            XCTAssertEqual(ShardSpec.index(of: path, count: 7), of7, path)
            XCTAssertEqual(ShardSpec.index(of: path, count: 1), 0, path)
        }
    }

    /// Every input lands in exactly one shard, for any N; with more shards than inputs some are
    /// empty, and which ones is decided by the paths alone.
    func testEveryInputIsInExactlyOneShard() throws {
        let paths = (0..<60).map { "set\($0 % 5)/img\($0).jpg" }
        for n in 1...9 {
            var seen = [String]()
            for i in 0..<n {
                let shard = try ShardSpec(index: i, count: n)
                seen += paths.filter { shard.contains($0) }
            }
            XCTAssertEqual(seen.sorted(), paths.sorted(), "N=\(n)")
        }
        let sizes = (0..<4).map { i in paths.filter { ShardSpec.index(of: $0, count: 4) == i }.count }
        XCTAssertEqual(sizes.reduce(0, +), 60)
        XCTAssertTrue(sizes.allSatisfy { $0 >= 8 }, "a fair split of 60 over 4: \(sizes)")
        let few = ["img0.jpg", "set1/img1.jpg", "set2/img2.jpg"]
        XCTAssertEqual(few.map { ShardSpec.index(of: $0, count: 8) }, [1, 7, 7])
        let empty = (0..<8).filter { i in !few.contains { ShardSpec.index(of: $0, count: 8) == i } }
        XCTAssertEqual(empty, [0, 2, 3, 4, 5, 6], "shards 0, 2...6 of 8 get nothing (they still write an empty part)")
    }

    /// The same tree at two absolute locations (one reached through a symlink) splits the same way.
    func testAssignmentDoesNotDependOnWhereTheInputIs() throws {
        let a = ConvertFixtures.folder("shard-where-a") + "/photos"
        let b = ConvertFixtures.folder("shard-where-b") + "/deeper/still/photos"
        for root in [a, b] {
            for rel in ["x.jpg", "sub/y.png", "sub/deep/z.jpeg", "w.jpg", "v.jpg"] {
                let path = root + "/" + rel
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                TestSupportFiles.write([1], path)
            }
        }
        let link = ConvertFixtures.folder("shard-where-link") + "/mounted"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: b)
        func split(_ root: String) throws -> [[String]] {
            let items = try InputPlan.expand([root], outputDirectory: root + "-out", format: nil)
            return (0..<3).map { i in items.filter { ShardSpec.index(of: $0.relativePath, count: 3) == i }.map(\.output) }
        }
        let expected = try split(a)
        XCTAssertEqual(try split(b), expected)
        XCTAssertEqual(try split(link), expected)
        XCTAssertEqual(expected.flatMap { $0 }.count, 5)
        // A file given directly is keyed by its name, as it would be inside a folder.
        let direct = try InputPlan.expand([a + "/sub/y.png"], outputDirectory: a + "-out", format: nil)
        XCTAssertEqual(direct.map(\.relativePath), ["y.png"])
    }

    func testPartFileNamesRoundTrip() throws {
        let shard = try ShardSpec(index: 2, count: 12)
        XCTAssertEqual(shard.manifestName, "manifest.shard-2-of-12.json")
        XCTAssertEqual(shard.journalName, "manifest.shard-2-of-12.journal")
        XCTAssertEqual(ShardSpec.fromFileName(shard.manifestName)?.shard, shard)
        XCTAssertEqual(ShardSpec.fromFileName(shard.journalName)?.isJournal, true)
        for name in ["manifest.json", "manifest.journal", "manifest.shard-3-of-3.json", "manifest.shard-02-of-12.json",
                     "manifest.shard-+1-of-2.json", "manifest.shard-1-of-2.json.tmp-1-x", "manifest.shard-1-2.json"] {
            XCTAssertNil(ShardSpec.fromFileName(name), name)
        }
    }
}
