import Foundation
import GraniteMedia
import XCTest

@testable import GraniteCapture

final class FolderSourceTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("granite-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A 4x2 P6 image whose first byte is `marker`.
    func ppm(_ marker: UInt8) -> Data {
        var data = Data("P6\n# granite test\n4 2\n255\n".utf8)
        data.append(contentsOf: [marker] + [UInt8](repeating: 9, count: 4 * 2 * 3 - 1))
        return data
    }

    func write(_ name: String, _ data: Data) throws {
        try data.write(to: folder.appendingPathComponent(name))
    }

    func testPlaysFilesInNameOrderSkippingOthers() async throws {
        for i in [3, 1, 10, 2] { try write(String(format: "frame_%03d.ppm", i), ppm(UInt8(i))) }
        try write("notes.txt", Data("not an image".utf8))
        try write(".hidden.ppm", ppm(99))
        let source = FolderSource(path: folder.path)
        XCTAssertEqual(try source.files().map { ($0 as NSString).lastPathComponent },
                       ["frame_001.ppm", "frame_002.ppm", "frame_003.ppm", "frame_010.ppm"])
        let (frames, faults, _) = await drain(try source.start(buffering: 16))
        XCTAssertEqual(frames.map { $0.image.bytes[0] }, [1, 2, 3, 10])
        XCTAssertEqual(frames.map(\.sequence), [0, 1, 2, 3])
        XCTAssertTrue(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNanos <= $1.timestampNanos })
        XCTAssertTrue(faults.isEmpty)
        XCTAssertEqual(frames.first?.format, .rgb24)
        XCTAssertEqual(frames.first?.source, "folder:\(folder.path)")
    }

    func testCorruptFileIsAFaultNamingItAndCountsAsDropped() async throws {
        try write("a.ppm", ppm(1))
        try write("b.ppm", Data("P6\n4 2\n255\n\u{1}\u{2}".utf8))
        try write("c.ppm", ppm(3))
        let source = FolderSource(path: folder.path)
        let (frames, faults, _) = await drain(try source.start(buffering: 16))
        XCTAssertEqual(frames.map { $0.image.bytes[0] }, [1, 3])
        XCTAssertEqual(frames.map(\.sequence), [0, 2])
        XCTAssertEqual(faults.count, 1)
        guard case let .decodeFailed(path, reason)? = faults.first else { return XCTFail("\(faults)") }
        XCTAssertTrue(path.hasSuffix("/b.ppm"))
        XCTAssertTrue(reason.contains("raster has 2 bytes, needs 24"), reason)
        XCTAssertEqual(source.stats.droppedBySource, 1)
    }

    func testLoopingWithAFrameLimit() async throws {
        for i in 0..<3 { try write("f\(i).pgm", Data("P5 2 2 255\n".utf8) + Data([UInt8(i), 0, 0, 0])) }
        let source = FolderSource(path: folder.path, loop: true, frameLimit: 8)
        let (frames, _, _) = await drain(try source.start(buffering: 16))
        XCTAssertEqual(frames.map { $0.image.bytes[0] }, [0, 1, 2, 0, 1, 2, 0, 1])
        XCTAssertEqual(frames.first?.format, .gray8)
    }

    /// Looping, the first pass's frames come back from memory: files rewritten after it do not
    /// show; with no cache budget every pass reads them again.
    func testLoopingKeepsTheFirstPassDecoded() async throws {
        for budget in [256 << 20, 0] {
            for i in 0..<2 { try write("f\(i).ppm", ppm(UInt8(i))) }
            // Paced at 5 fps: the files change well before the second pass reads them.
            let source = FolderSource(path: folder.path, fps: 5, loop: true, frameLimit: 6, loopCacheBytes: budget)
            var markers: [UInt8] = []
            for await event in try source.start(.lossless(buffering: 1)) {
                guard case let .frame(frame) = event else { continue }
                markers.append(frame.image.bytes[0])
                // After the first pass, the files change.
                if markers.count == 2 {
                    for i in 0..<2 { try ppm(UInt8(10 + i)).write(to: folder.appendingPathComponent("f\(i).ppm"), options: .atomic) }
                }
            }
            XCTAssertEqual(markers, budget > 0 ? [0, 1, 0, 1, 0, 1] : [0, 1, 10, 11, 10, 11], "budget \(budget)")
        }
    }

    func testLoopOverOnlyCorruptFilesEnds() async throws {
        try write("bad.ppm", Data("P3\n1 1\n255\n0 0 0\n".utf8))
        let source = FolderSource(path: folder.path, loop: true)
        let (frames, faults, _) = await drain(try source.start())
        XCTAssertTrue(frames.isEmpty)
        XCTAssertEqual(faults.count, 1)
    }

    func testEmptyAndMissingFolders() {
        XCTAssertThrowsError(try FolderSource(path: folder.path).start()) { error in
            XCTAssertEqual(error as? CaptureError, .emptyFolder(path: folder.path))
        }
        let missing = folder.appendingPathComponent("nope").path
        XCTAssertThrowsError(try FolderSource(path: missing).start()) { error in
            XCTAssertEqual(error as? CaptureError, .systemCall(device: missing, call: "opendir", errno: ENOENT))
            XCTAssertTrue("\(error)".contains("No such file or directory"))
        }
    }

    func testPacedPlayback() async throws {
        for i in 0..<5 { try write("f\(i).ppm", ppm(UInt8(i))) }
        let source = FolderSource(path: folder.path, fps: 50)
        let (frames, _, _) = await drain(try source.start(buffering: 16))
        XCTAssertEqual(frames.count, 5)
        XCTAssertGreaterThanOrEqual(Double(frames[4].timestampNanos - frames[0].timestampNanos) / 1e9, 0.079)
    }
}
