import Foundation
import XCTest
@testable import GraniteIPFS

/// Local CIDs against known answers and the independent importer `aleph-cid`.
final class LocalCIDTests: XCTestCase {
    private let hello = Array("hello world\n".utf8)

    func testKnownAnswers() throws {
        XCTAssertEqual(try UnixFSImporter(options: .init(cidVersion: 0)).cid(of: hello).description,
                       "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o")
        XCTAssertEqual(try UnixFSImporter(options: .init(cidVersion: 1)).cid(of: hello).description,
                       "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4")
    }

    func testCIDStringRoundTrip() throws {
        for text in ["QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o",
                     "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4"] {
            XCTAssertEqual(try CID(text).description, text)
        }
        XCTAssertEqual(try CID("bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4").codec, .raw)
        for bad in ["", "Qm", "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff50", "zb2rh", "bafy!", "baaaa"] {
            XCTAssertThrowsError(try CID(bad), bad) { error in
                guard case IPFSError.invalidCID = error else { return XCTFail("\(error)") }
            }
        }
    }

    func testInvalidOptionsAreTypedErrors() {
        XCTAssertThrowsError(try UnixFSImporter(options: .init(cidVersion: 2)))
        XCTAssertThrowsError(try UnixFSImporter(options: .init(chunkSize: 2 << 20)))
        XCTAssertThrowsError(try UnixFSImporter(options: .init()).importPaths(["/nonexistent/granite"])) { error in
            XCTAssertEqual(error as? IPFSError, .unreadable(path: "/nonexistent/granite", reason: "No such file or directory"))
        }
    }

    /// 0 B, 1 B, one chunk, one chunk + 1, and 45 MiB + 7 (181 leaves: two tree levels).
    func testFileSizesMatchOracle() throws {
        let dir = try TestSupport.tempDir(self)
        let sizes = [0, 1, 262_144, 262_145, 45 * 1_048_576 + 7]
        let paths = try sizes.enumerated().map { i, size in
            try TestSupport.write(TestSupport.bytes(size, seed: UInt64(i + 1)), to: dir, "f\(size)")
        }
        let expected = try TestSupport.oracle("""
            for p in sys.argv[1:]:
                data = open(p, "rb").read()
                h = aleph_cid.CidHasher.for_ipfs_v1_raw_leaves(); h.update(data)
                print(aleph_cid.compute_cid(data), h.finalize())
            """, paths)
        XCTAssertEqual(expected.count, sizes.count)
        for (path, line) in zip(paths, expected) {
            let want = line.split(separator: " ").map(String.init)
            for (version, cid) in zip([0, 1], want) {
                let result = try UnixFSImporter(options: .init(cidVersion: version)).importPaths([path])
                XCTAssertEqual(result.roots.map(\.cid.description), [cid], "v\(version) \(path)")
            }
        }
    }

    func testDirectoriesAndWrapMatchOracle() throws {
        let dir = try TestSupport.tempDir(self)
        let tree = dir.appendingPathComponent("tree")
        try TestSupport.write(hello, to: tree, "hello.txt")
        try TestSupport.write(TestSupport.bytes(300_000, seed: 7), to: tree, "sub/b.bin")
        try TestSupport.write([], to: tree, "sub/empty")
        try TestSupport.write(TestSupport.bytes(5, seed: 8), to: tree, "sub/deeper/Z")
        try TestSupport.write(TestSupport.bytes(9, seed: 9), to: tree, "sub/deeper/a b.txt")
        try TestSupport.write(TestSupport.bytes(70_000, seed: 10), to: tree, "ümlaut")
        let flat = dir.appendingPathComponent("flat")
        let flatFiles = try (0..<3).map { try TestSupport.write(TestSupport.bytes(1000 * $0 + 1, seed: UInt64($0)), to: flat, "file\($0)") }
        let expected = try TestSupport.oracle("""
            for v in (0, 1):
                print(aleph_cid.hash_folder(sys.argv[1], cid_version=v), aleph_cid.hash_folder(sys.argv[2], cid_version=v))
            """, [tree.path, flat.path])
        for (version, line) in zip([0, 1], expected) {
            let want = line.split(separator: " ").map(String.init)
            let tree = try UnixFSImporter(options: .init(cidVersion: version)).importPaths([tree.path])
            XCTAssertEqual(tree.roots.first?.cid.description, want[0], "tree v\(version)")
            XCTAssertEqual(tree.entries.last?.name, "tree")
            XCTAssertEqual(tree.entries.count, 9)
            let wrapped = try UnixFSImporter(options: .init(cidVersion: version, wrapWithDirectory: true)).importPaths(flatFiles)
            XCTAssertEqual(wrapped.roots.map(\.cid.description), [want[1]], "wrap v\(version)")
            XCTAssertEqual(wrapped.roots.first?.name, "")
            XCTAssertEqual(wrapped.entries.count, 4)
        }
    }

    /// The HAMT's name hash: MurmurHash3 x64_128's first 64 bits (values of the test node's
    /// importer, whose HAMT CIDs equal Kubo's; "hello" is the published mmh3 value).
    func testHAMTNameHashIsMurmur3() {
        for (name, hash): (String, UInt64) in [("", 0), ("hello", 0xcbd8_a7b3_41bd_9b02), ("frame-00001.png", 0x7d8d_34a7_270f_bb86),
                                               ("a-much-longer-file-name-00001.jpeg", 0x9cd5_636d_7192_b19a)] {
            XCTAssertEqual(HAMTShard.murmur3(ArraySlice(name.utf8)), hash, name)
        }
    }

    /// A directory past Kubo's 256 KiB estimate is sharded (1100 links of 220 + 36 bytes), not refused:
    /// its root is a HAMT shard whose links carry two hex digits before each name.
    func testLargeDirectoryIsSharded() throws {
        let dir = try TestSupport.tempDir(self).appendingPathComponent("big")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let stem = String(repeating: "n", count: 220)
        for i in 0..<1100 { FileManager.default.createFile(atPath: dir.appendingPathComponent("\(stem)\(i)").path, contents: nil) }
        let sink = BlockCollector()
        let result = try UnixFSImporter(options: .init()).importPaths([dir.path], sink: sink, progress: nil)
        XCTAssertEqual(sink.unixfsType(of: result.roots[0].cid), 5)
        XCTAssertEqual(result.entries.count, 1101)
        XCTAssertGreaterThan(sink.blocks.count, 2, "root shard, child shards, the empty file")
    }
}
