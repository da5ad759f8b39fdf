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

    func testUnreadableManifestIsAWarningNotACrash() {
        let dir = ConvertFixtures.folder("badmanifest")
        _ = FileManager.default.createFile(atPath: dir + "/manifest.json", contents: Data("{not json".utf8))
        let store = ManifestStore(directory: dir)
        XCTAssertTrue(store.previous.isEmpty)
        XCTAssertTrue(store.loadWarning?.contains("unreadable manifest") ?? false)
    }
}
