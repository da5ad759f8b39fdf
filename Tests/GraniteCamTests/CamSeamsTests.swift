import Foundation
import GraniteCapture
import GraniteCodecs
import GraniteGPU
import GraniteTesting
import GraniteMedia
import XCTest

@testable import GraniteCam

/// The app with the real codecs and Marble plugged into its seams.
final class CamSeamsTests: XCTestCase {
    /// A GPU stage starts frames without waiting for them (the pump starts the next frame while
    /// one computes): three frames in flight at once on one chain, each result its own frame's —
    /// equal to Marble's CPU reference — whichever order they were started and read in.
    func testAGPUStageKeepsSeveralFramesInFlight() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        let specs = ["blur:sigma=1.5", "sobel", "invert"]
        let stage = try MarbleStage(specs: specs)
        _ = try stage.prepare(for: nil, yuv: [])
        if try GPUContext.shared().deviceKind == .cpu {
            XCTAssertFalse(stage.chain.overlapsFrames, "a CPU device finishes each frame before the next")
        }
        GraniteDebug.override([.overlap])   // the GPU's way, on whatever device this is
        defer { GraniteDebug.override(nil) }
        XCTAssertTrue(stage.chain.overlapsFrames)
        let reference = try MarbleStage(specs: specs, gpu: false)
        let pattern = TestPattern(size: FrameSize(width: 61, height: 37))
        let frames = (0..<3).map { pattern.render(index: UInt64($0 * 7)) }
        let started = try frames.map { try stage.start(FrameJob(image: $0)) }
        for (index, frame) in frames.enumerated().reversed() {
            XCTAssertEqual(try started[index].result().image, try reference.process(frame), "frame \(index)")
        }
        // And again in order, with the plans handed back: nothing leaked between the rounds.
        let again = try frames.map { try stage.start(FrameJob(image: $0)) }
        for (index, frame) in frames.enumerated() {
            XCTAssertEqual(try again[index].result().image, try reference.process(frame), "frame \(index), second round")
        }
    }

    func testPNGFolderThroughMarbleInvertToPNG() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("granite-seams-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let input = root.appendingPathComponent("in"), output = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let pattern = TestPattern(size: FrameSize(width: 48, height: 32))
        for i in 0..<3 {
            try Data(try Codecs.encodePNG(pattern.render(index: UInt64(i)))).write(to: input.appendingPathComponent("p\(i).png"))
        }
        var s = CamSettings()
        s.source = .folder(input.path)
        s.outputDirectory = output.path
        s.save = .every
        s.paced = false
        s.buffering = 8
        let pipeline = try CamPipeline(settings: s, stages: [try MarbleStage(specs: ["invert"], gpu: false)],
                                       encoder: CodecsEncoder(.png), decoder: DecoderSet.all)
        let summary = try await CamApp(pipeline: pipeline).run()
        XCTAssertEqual(summary.frames, 3)
        XCTAssertEqual(summary.saved, 3)
        for i in 0..<3 {
            let written = try Codecs.decodeFile(output.appendingPathComponent("frame_0000000\(i).png").path)
            let original = pattern.render(index: UInt64(i))
            XCTAssertEqual(written.width, 48)
            XCTAssertEqual(pattern.readCounter(try invert(written)), UInt64(i), "frame \(i) came back inverted, in order")
            XCTAssertEqual(written.bytes[0], 255 - original.bytes[0])
        }
    }

    func testCorruptJPEGInFolderIsAFaultNotACrash() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("granite-seams-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3]).write(to: root.appendingPathComponent("a.jpg"))
        try Data(try Codecs.encodeJPEG(TestPattern(size: FrameSize(width: 32, height: 24)).render(index: 1)))
            .write(to: root.appendingPathComponent("b.jpg"))
        let source = FolderSource(path: root.path, decoder: DecoderSet.all)
        var frames = 0, faults: [CaptureError] = []
        for await event in try source.start(buffering: 8) {
            if case .frame = event { frames += 1 }
            if case let .fault(error) = event { faults.append(error) }
        }
        XCTAssertEqual(frames, 1)
        guard case let .decodeFailed(path, _)? = faults.first else { return XCTFail("\(faults)") }
        XCTAssertTrue(path.hasSuffix("/a.jpg"))
    }

    private func invert(_ image: Image) throws -> Image {
        var bytes = image.bytes
        for i in stride(from: 0, to: bytes.count, by: 4) {
            bytes[i] = 255 - bytes[i]; bytes[i + 1] = 255 - bytes[i + 1]; bytes[i + 2] = 255 - bytes[i + 2]
        }
        return try Image(width: image.width, height: image.height, format: .rgba8, bytes: bytes)
    }
}
