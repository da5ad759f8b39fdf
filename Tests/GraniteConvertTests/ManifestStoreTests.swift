import Foundation
@testable import GraniteConvert
import XCTest

final class ManifestStoreTests: XCTestCase {
    func entry(_ name: String) -> Manifest.Entry {
        Manifest.Entry(input: "in/" + name, output: name, inputBytes: 1, inputSHA256: "a", outputBytes: 2,
                       outputSHA256: "b", settings: "format=jpg", width: 3, height: 4)
    }

    /// A journal torn by a kill mid-line: its whole lines are kept, and new lines start fresh.
    func testTornJournalIsRecoveredAndAppendedCleanly() async throws {
        let dir = ConvertFixtures.folder("journal")
        let good = try JSONEncoder().encode(entry("a.jpg"))
        let torn = Data(good) + Data("\n".utf8) + Data(try JSONEncoder().encode(entry("b.jpg")).prefix(20))
        try torn.write(to: URL(fileURLWithPath: dir + "/" + Manifest.journalName))

        let store = ManifestStore(directory: dir)
        XCTAssertEqual(Set(store.previous.keys), ["a.jpg"])
        try await store.open()
        try await store.record(entry("c.jpg"))
        let reloaded = ManifestStore(directory: dir)
        XCTAssertEqual(Set(reloaded.previous.keys), ["a.jpg", "c.jpg"])

        try await store.finish(settings: ConvertSettings())
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/" + Manifest.journalName))
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json")))
        XCTAssertEqual(manifest.entries.map(\.output), ["a.jpg", "c.jpg"])
    }

    /// A shard journals and writes only its own files; it reads everything left in the folder to
    /// skip, but carries into its part only its own earlier entries and those for outputs it owns.
    func testShardStoreKeepsToItsOwnFiles() async throws {
        let dir = ConvertFixtures.folder("shard-store")
        let shard = try ShardSpec(index: 1, count: 3)
        var whole = Manifest(entries: [entry("mine-from-merge.jpg"), entry("theirs.jpg")])
        try Data(Manifest.encode(whole)).write(to: URL(fileURLWithPath: dir + "/manifest.json"))
        whole.entries = [entry("mine-stale.jpg")]
        try Data(Manifest.encode(whole)).write(to: URL(fileURLWithPath: dir + "/" + shard.manifestName))
        TestSupportFiles.write(Array(try JSONEncoder().encode(entry("other-journal.jpg"))) + [10], dir + "/manifest.shard-0-of-3.journal")

        let store = ManifestStore(directory: dir, shard: shard, owns: ["mine-from-merge.jpg", "mine-new.jpg"])
        XCTAssertEqual(Set(store.previous.keys), ["mine-from-merge.jpg", "theirs.jpg", "mine-stale.jpg", "other-journal.jpg"])
        try await store.open()
        try await store.record(entry("mine-new.jpg"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/manifest.shard-1-of-3.journal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/" + Manifest.journalName))
        try await store.finish(settings: ConvertSettings())
        let part = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/" + shard.manifestName)))
        XCTAssertEqual(part.entries.map(\.output), ["mine-from-merge.jpg", "mine-new.jpg", "mine-stale.jpg"])
        XCTAssertEqual(part.shard, shard)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/manifest.shard-1-of-3.journal"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir + "/manifest.shard-0-of-3.journal"), "another shard's journal is not ours to remove")
        let untouched = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: dir + "/manifest.json")))
        XCTAssertEqual(untouched.entries.map(\.output), ["mine-from-merge.jpg", "theirs.jpg"])
    }

    func testUnreadableManifestIsAWarningNotACrash() {
        let dir = ConvertFixtures.folder("badmanifest")
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data("{not json".utf8))
        let store = ManifestStore(directory: dir)
        XCTAssertTrue(store.previous.isEmpty)
        XCTAssertTrue(store.loadWarning?.contains("unreadable manifest") ?? false)
    }
}
