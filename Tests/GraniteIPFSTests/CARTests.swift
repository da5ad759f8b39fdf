import Foundation
import XCTest
@testable import GraniteIPFS

/// CARv1 export: a valid file whose blocks hash to their CIDs, the same block set as aleph-cid's.
final class CARTests: XCTestCase {
    /// The root and blocks of a CARv1 file, every block checked against its CID.
    private func readCAR(_ path: String) throws -> (roots: Int, blocks: Set<String>) {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var i = 0
        let headerLength = try XCTUnwrap(Varint.read(bytes, at: &i))
        let header = Array(bytes[i..<i + Int(headerLength)])
        XCTAssertEqual(Array(header.suffix(9)), [0x67] + Array("version".utf8) + [0x01])
        i += Int(headerLength)
        var blocks = Set<String>()
        while i < bytes.count {
            let length = Int(try XCTUnwrap(Varint.read(bytes, at: &i)))
            let section = Array(bytes[i..<i + length])
            i += length
            let cid: CID
            let data: ArraySlice<UInt8>
            if section.starts(with: [0x12, 0x20]) {
                cid = CID(version: 0, codec: .dagPB, digest: Array(section[2..<34]))
                data = section[34...]
            } else {
                XCTAssertEqual(section[0], 0x01)
                let codec = try XCTUnwrap(CID.Codec(rawValue: UInt64(section[1])))
                XCTAssertEqual(Array(section[2..<4]), [0x12, 0x20])
                cid = CID(version: 1, codec: codec, digest: Array(section[4..<36]))
                data = section[36...]
            }
            XCTAssertEqual(CID(version: cid.version, codec: cid.codec, block: Array(data)), cid, "block hash")
            blocks.insert(cid.description)
        }
        return (Int(header[7] & 0x1F), blocks)
    }

    func testCARMatchesOracleForBothVersions() throws {
        let dir = try TestSupport.tempDir(self)
        let tree = dir.appendingPathComponent("tree")
        try TestSupport.write(TestSupport.bytes(700_000, seed: 1), to: tree, "a.bin")
        try TestSupport.write(Array("hello world\n".utf8), to: tree, "sub/hello.txt")
        try TestSupport.write(TestSupport.bytes(262_144, seed: 1), to: tree, "sub/same-as-first-chunk")
        for version in [0, 1] {
            let ours = dir.appendingPathComponent("ours\(version).car").path
            let theirs = dir.appendingPathComponent("theirs\(version).car").path
            let result = try UnixFSImporter(options: .init(cidVersion: version)).importPaths([tree.path], carPath: ours)
            let oracle = try TestSupport.oracle("""
                print(aleph_cid.write_folder_car(sys.argv[1], sys.argv[2], cid_version=int(sys.argv[3])))
                print(aleph_cid.read_carv1_root(sys.argv[4]))
                """, [tree.path, theirs, "\(version)", ours])
            XCTAssertEqual(oracle, [result.roots[0].cid.description, result.roots[0].cid.description])
            let (roots, blocks) = try readCAR(ours)
            XCTAssertEqual(roots, 1)
            XCTAssertEqual(blocks, try readCAR(theirs).blocks, "v\(version) block set")
            XCTAssertTrue(blocks.contains(result.roots[0].cid.description))
            XCTAssertFalse(FileManager.default.fileExists(atPath: ours + ".partial"))
            XCTAssertFalse(FileManager.default.fileExists(atPath: ours + ".blocks.partial"))
        }
    }

    func testFailedExportLeavesNoFile() throws {
        let dir = try TestSupport.tempDir(self)
        let car = dir.appendingPathComponent("out.car").path
        XCTAssertThrowsError(try UnixFSImporter(options: .init()).importPaths(["/nonexistent/x"], carPath: car))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
        // A file where a folder of the CAR's path should be: a typed error naming the CAR.
        let blocker = dir.appendingPathComponent("blocker").path
        XCTAssertTrue(FileManager.default.createFile(atPath: blocker, contents: Data([1])))
        XCTAssertThrowsError(try UnixFSImporter(options: .init()).importPaths([blocker], carPath: blocker + "/sub/out.car")) {
            guard case IPFSError.carWrite(path: blocker + "/sub/out.car", _) = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["blocker"])
    }

    /// `--car` into folders that do not exist yet creates them (mkdir -p), then the file.
    func testExportCreatesTheCARFolder() throws {
        let dir = try TestSupport.tempDir(self)
        let input = dir.appendingPathComponent("in.txt")
        try Data("granite".utf8).write(to: input)
        let car = dir.appendingPathComponent("new/deeper/out.car").path
        let result = try UnixFSImporter(options: .init()).importPaths([input.path], carPath: car)
        XCTAssertTrue(try readCAR(car).blocks.contains(result.roots[0].cid.description))
    }
}
