import Foundation
import GraniteCapture
import GraniteMedia
import GraniteProcess
import GraniteTesting
import XCTest

@testable import GraniteCam

/// A stage that fails on every `every`-th frame (fault injection), converting the others.
struct FailingStageFake: FrameStage {
    let every: Int
    var name: String { "failing-fake" }
    struct Injected: Error, CustomStringConvertible { var description: String { "injected fault" } }
    func process(_ job: FrameJob) throws -> FrameResult {
        try job.onCPU { image, _ in
            if image.bytes.first.map({ Int($0) % every == 0 }) == true { throw Injected() }
            return try ColorConversion.rgba(image)
        }
    }
}

/// Failure is loud: frames lost to a fault are counted (a non-live run that lost any fails), and a
/// run that needs a Vulkan device and has none stops before capturing, with a clear message and
/// a non-zero status.
final class FailureTests: CamTestCase {
    /// A folder of PPMs whose first byte is the file's index, so the fake knows which to fail.
    func makeFolder(count: Int) throws -> URL {
        let input = folder.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        for i in 0..<count {
            try (Data("P6 4 3 255\n".utf8) + Data([UInt8(i)] + [UInt8](repeating: 9, count: 4 * 3 * 3 - 1)))
                .write(to: input.appendingPathComponent(String(format: "%02d.ppm", i)))
        }
        return input
    }

    func testFramesLostToFaultsAreCountedAndNamed() async throws {
        let input = try makeFolder(count: 12)
        let s = settings { $0.source = .folder(input.path); $0.paced = false }
        let app = CamApp(pipeline: try CamPipeline(settings: s, stages: [FailingStageFake(every: 4)]))
        let summary = try await app.run()
        XCTAssertFalse(summary.live)
        XCTAssertEqual(summary.lostToFaults, 3, "frames 0, 4 and 8 failed")
        XCTAssertEqual(summary.frames, 9)
        XCTAssertEqual(summary.dropped, 3, "lost frames count as dropped")
        XCTAssertTrue(summary.firstLoss?.contains("injected fault") == true, summary.firstLoss ?? "nil")
        XCTAssertTrue(summary.modeLine.contains("3: failed while processing"), summary.modeLine)
    }

    /// `granite-cam` with no Vulkan driver: exit 1 before capturing, saying why and what to do.
    func testNoVulkanDeviceStopsBeforeCapturing() throws {
        let cam = try ChildProgram.built("granite-cam")
        let out = folder.appendingPathComponent("out").path
        let run = try ChildProgram.run(cam, ["--source", "testpattern", "--frames", "5", "--unpaced", "--filter", "invert", "--out", out],
                                       environment: ["VK_DRIVER_FILES": "/nonexistent.json", "VK_ICD_FILENAMES": "/nonexistent.json"])
        let err = String(decoding: run.stderr, as: UTF8.self)
        XCTAssertEqual(run.status, 1, err)
        XCTAssertTrue(err.contains("Vulkan"), err)
        XCTAssertTrue(err.contains("--cpu-filters"), "names the way out: \(err)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/frames.jsonl"), "nothing was captured")
        // The CPU reference runs without a device.
        let cpu = try ChildProgram.run(cam, ["--source", "testpattern", "--frames", "3", "--unpaced", "--filter", "invert", "--cpu-filters"],
                                       environment: ["VK_DRIVER_FILES": "/nonexistent.json", "VK_ICD_FILENAMES": "/nonexistent.json"])
        XCTAssertEqual(cpu.status, 0, String(decoding: cpu.stderr, as: UTF8.self))
        XCTAssertTrue(String(decoding: cpu.stdout, as: UTF8.self).contains("granite-cam: 3 frames"))
    }
}
