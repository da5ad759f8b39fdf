import Foundation
import GraniteCodecs
import XCTest

final class AtomicFileTests: XCTestCase {
    func testWritesAndReplacesWithoutLeftovers() throws {
        let dir = TestSupport.temporaryDirectory("atomic")
        let path = dir + "/out.bin"
        try AtomicFile.write([1, 2, 3], to: path)
        XCTAssertEqual(try FileBytes.read(path), [1, 2, 3])
        let big = [UInt8](repeating: 7, count: 3_000_001)
        try AtomicFile.write(big, to: path)
        XCTAssertEqual(try FileBytes.read(path), big)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["out.bin"])
    }

    func testFailureNamesThePathAndLeavesNothing() throws {
        let dir = TestSupport.temporaryDirectory("atomic-fail")
        XCTAssertThrowsError(try AtomicFile.write([1], to: dir + "/missing/out.bin")) { error in
            let e = error as? CodecError
            XCTAssertEqual(e?.phase, "io")
            XCTAssertTrue(e?.path.contains("missing") ?? false)
            XCTAssertTrue(e?.reason.contains("ENOENT") == true || e?.reason.contains("No such file") == true, "\(error)")
        }
        XCTAssertThrowsError(try FileBytes.read(dir)) { XCTAssertEqual(($0 as? CodecError)?.phase, "io") }
        XCTAssertThrowsError(try FileBytes.read(dir + "/nope")) { XCTAssertEqual(($0 as? CodecError)?.phase, "io") }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), [])
    }

    /// A full disk, simulated with a file-size limit (the write fails with EFBIG like ENOSPC):
    /// the final name never appears and the temporary is removed.
    func testWriteFailureMidwayLeavesNoFinalFile() throws {
        let dir = TestSupport.temporaryDirectory("atomic-full")
        try AtomicFile.write([9, 9], to: dir + "/old.bin")
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        let oldHandler = signal(SIGXFSZ, SIG_IGN)
        var small = saved
        small.rlim_cur = 4096
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &small)
        defer {
            setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
            signal(SIGXFSZ, oldHandler)
        }
        XCTAssertThrowsError(try AtomicFile.write([UInt8](repeating: 1, count: 100_000), to: dir + "/new.bin")) { error in
            XCTAssertEqual((error as? CodecError)?.phase, "io")
        }
        XCTAssertThrowsError(try AtomicFile.write([UInt8](repeating: 1, count: 100_000), to: dir + "/old.bin"))
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &saved)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["old.bin"])
        XCTAssertEqual(try FileBytes.read(dir + "/old.bin"), [9, 9])
    }

    func testSniffUsesBytesNotNames() throws {
        let png = try Codecs.encodePNG(TestSupport.gradient(width: 4, height: 4))
        let jpeg = try Codecs.encodeJPEG(TestSupport.gradient(width: 4, height: 4), quality: 80)
        XCTAssertEqual(Codecs.sniff(png), .png)
        XCTAssertEqual(Codecs.sniff(jpeg), .jpeg)
        XCTAssertNil(Codecs.sniff(Array(png[0..<7])))
        XCTAssertNil(Codecs.sniff([]))
        let dir = TestSupport.temporaryDirectory("sniff")
        TestSupport.write(png, dir + "/looks-like.jpg")
        XCTAssertEqual(try Codecs.decodeFile(dir + "/looks-like.jpg").width, 4)
    }
}
