import Foundation
import GraniteCodecs
@testable import GraniteConvert
import XCTest

/// `BatchConverter.shard`: N shards into one folder are one run, split.
final class BatchConverterShardTests: XCTestCase {
    let settings = ConvertSettings(resize: .scale(0.5), filters: "sharpen:amount=1")

    func converter(_ inputs: [String], _ out: String, shard: ShardSpec? = nil) throws -> BatchConverter {
        var c = BatchConverter(inputs: inputs, outputDirectory: out, settings: settings,
                               processor: try FilterPipeline(specs: ["sharpen"], cpu: true), jobs: 2)
        c.shard = shard
        return c
    }

    func read(_ path: String) throws -> Manifest {
        try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// 4 shards at once into one folder make exactly the files of one unsharded run, each input
    /// once, and the merged manifest is byte for byte the unsharded one (it has no time fields).
    func testFourConcurrentShardsMatchOneRun() async throws {
        let input = ConvertFixtures.folder("shard-in")
        try ConvertFixtures.writeJPEGs(21, to: input, width: 48, height: 32)
        let loose = ConvertFixtures.folder("shard-loose") + "/loose.jpg"
        try AtomicFile.write(try Codecs.encodeJPEG(ConvertFixtures.photo(width: 40, height: 30, seed: 77), quality: 90), to: loose)
        let inputs = [input, loose]
        let whole = ConvertFixtures.folder("shard-whole")
        let single = try await converter(inputs, whole).run { _ in nil }
        XCTAssertEqual([single.converted, single.failed.count], [22, 0])

        let split = ConvertFixtures.folder("shard-split")
        let summaries = try await withThrowingTaskGroup(of: (Int, ConvertSummary).self) { group in
            for i in 0..<4 {
                let c = try converter(inputs, split, shard: try ShardSpec(index: i, count: 4))
                group.addTask { (i, try await c.run { _ in nil }) }
            }
            var all = [Int: ConvertSummary]()
            for try await (i, s) in group { all[i] = s }
            return all
        }
        let parts = try (0..<4).map { try read(split + "/manifest.shard-\($0)-of-4.json") }
        let partNames = (0..<4).map { "manifest.shard-\($0)-of-4.json" }

        // Same files, same bytes.
        let wholeFiles = ConvertFixtures.files(whole).filter { $0 != "manifest.json" }
        XCTAssertEqual(ConvertFixtures.files(split), (wholeFiles + partNames).sorted(), "no journal or temporary left")
        for name in wholeFiles {
            XCTAssertEqual(try FileBytes.read(split + "/" + name), try FileBytes.read(whole + "/" + name), name)
        }
        // None converted twice: each part holds its own shard's inputs, and they add up to the whole.
        var seen = [String]()
        for (i, part) in parts.enumerated() {
            XCTAssertEqual(part.shard, try ShardSpec(index: i, count: 4))
            XCTAssertEqual(summaries[i]?.converted, part.entries.count, "shard \(i)")
            XCTAssertEqual(summaries[i]?.failed.count, 0)
            for e in part.entries {
                let rel = e.input == loose ? "loose.jpg" : String(e.input.dropFirst(input.count + 1))
                XCTAssertEqual(ShardSpec.index(of: rel, count: 4), i, e.input)
            }
            seen += part.entries.map(\.output)
        }
        XCTAssertEqual(seen.count, 22)
        XCTAssertEqual(Set(seen).count, 22)
        XCTAssertEqual(summaries.values.map(\.converted).reduce(0, +), 22)
        XCTAssertTrue(parts.allSatisfy { !$0.entries.isEmpty }, "22 inputs over 4 shards: \(parts.map(\.entries.count))")

        let (merged, report) = try ManifestMerge.merge(directory: split)
        XCTAssertTrue(report.written, report.problems.joined(separator: "\n"))
        XCTAssertEqual(merged, try read(whole + "/manifest.json"))
        XCTAssertEqual(try FileBytes.read(split + "/manifest.json"), try FileBytes.read(whole + "/manifest.json"))

        // A shard re-run resumes from its part; a plain run afterwards knows every output from the parts.
        let again = try await converter(inputs, split, shard: try ShardSpec(index: 2, count: 4)).run { _ in nil }
        XCTAssertEqual([again.converted, again.skipped], [0, parts[2].entries.count])
        XCTAssertEqual(try read(split + "/" + partNames[2]), parts[2])
        let plain = try await converter(inputs, split).run { _ in nil }
        XCTAssertEqual([plain.converted, plain.skipped, plain.failed.count], [0, 22, 0])
        XCTAssertEqual(try FileBytes.read(split + "/manifest.json"), try FileBytes.read(whole + "/manifest.json"))
    }

    /// A shard starting up removes only its own leftover temporaries: another shard may be writing the rest now.
    func testShardRemovesOnlyItsOwnTemporaries() async throws {
        let input = ConvertFixtures.folder("shard-tmp-in")
        try ConvertFixtures.writeJPEGs(8, to: input, width: 32, height: 24)
        let out = ConvertFixtures.folder("shard-tmp-out")
        let items = try InputPlan.expand([input], outputDirectory: out, format: nil)
        let mine = items.filter { ShardSpec.index(of: $0.relativePath, count: 2) == 0 }.map(\.output)
        let theirs = items.filter { ShardSpec.index(of: $0.relativePath, count: 2) == 1 }.map(\.output)
        XCTAssertFalse(mine.isEmpty || theirs.isEmpty)
        func temporary(_ rel: String) -> String {
            let dir = (rel as NSString).deletingLastPathComponent
            return (dir as NSString).appendingPathComponent(".\((rel as NSString).lastPathComponent).tmp-4242-abc")
        }
        let own = [mine[0], DepthImages.names(beside: mine[0]).depth, "manifest.shard-0-of-2.json"].map(temporary)
        let other = [theirs[0], theirs.last!, DepthImages.names(beside: theirs[0]).preview, "manifest.shard-1-of-2.json",
                     "manifest.json"].map(temporary)
        for rel in own + other {
            try FileManager.default.createDirectory(atPath: ((out + "/" + rel) as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            TestSupportFiles.write([7], out + "/" + rel)
        }
        let summary = try await converter([input], out, shard: try ShardSpec(index: 0, count: 2)).run { _ in nil }
        XCTAssertEqual(summary.converted, mine.count)
        for rel in own { XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/" + rel), rel) }
        for rel in other { XCTAssertTrue(FileManager.default.fileExists(atPath: out + "/" + rel), rel) }
    }

    /// A shard with no inputs still writes its (empty) part, so the merge knows it ran.
    func testEmptyShardWritesAnEmptyPart() async throws {
        let input = ConvertFixtures.folder("shard-empty-in")
        try ConvertFixtures.writeJPEGs(3, to: input, width: 16, height: 16)  // shards 1, 7, 7 of 8
        let out = ConvertFixtures.folder("shard-empty-out")
        var total = 0
        for i in 0..<8 {
            let s = try await converter([input], out, shard: try ShardSpec(index: i, count: 8)).run { _ in nil }
            XCTAssertEqual(s.converted, [1: 1, 7: 2][i] ?? 0, "shard \(i)")
            total += s.converted
        }
        XCTAssertEqual(total, 3)
        let empty = try read(out + "/manifest.shard-0-of-8.json")
        XCTAssertEqual(empty.entries, [])
        XCTAssertEqual(empty.shard, try ShardSpec(index: 0, count: 8))
        let report = try ManifestMerge.merge(directory: out).report
        XCTAssertTrue(report.written)
        XCTAssertEqual(report.entries, 3)
    }
}
