import Foundation
import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import XCTest

@testable import GraniteCam

/// Person segmentation in the stream (issue 38) as a user runs it: `granite-cam` with a
/// `background` filter on a real photograph with a person (scikit-image's astronaut, from
/// `scripts/tiers/pre-ml.sh`) fed as a folder source, its frames out through the y4m pipe: where the
/// run's own mask says person the pixels are the unfiltered run's, where it says background they
/// changed; the mask made on the device inside the frame (live, `--segment-device gpu`) does the
/// same; every n-th frame makes a mask; depth and segmentation cannot share the chain's map.
final class SegmentStreamTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("granite-segment-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: work) }

    /// A folder holding the astronaut `copies` times.
    func photoFolder(copies: Int = 1) throws -> String {
        let photo = Self.root.appendingPathComponent(".build-ml-fixtures/photos/astronaut.png").path
        guard FileManager.default.fileExists(atPath: photo) else {
            try Prerequisite.unmet("\(photo) is missing (scripts/tiers/pre-ml.sh takes it out of Debian's python3-skimage)")
            return ""
        }
        let folder = work.appendingPathComponent("in")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for k in 0..<copies { try FileManager.default.copyItem(atPath: photo, toPath: folder.appendingPathComponent("a\(k).png").path) }
        return folder.path
    }

    /// Runs granite-cam with `arguments` and `--pipe y4m:444` into a file; returns its frames (Y, U, V
    /// planes each) and the run.
    func frames(_ arguments: [String], name: String) throws -> (frames: [[UInt8]], run: ChildProgram.Result) {
        let cam = try ChildProgram.built("granite-cam")
        let y4m = work.appendingPathComponent("\(name).y4m").path
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        let run = try ChildProgram.shell("'\(cam)' \(quoted) --status-hz 1 --pipe y4m:444 > '\(y4m)'")
        XCTAssertEqual(run.status, 0, run.err)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: y4m)))
        guard let end = bytes.firstIndex(of: 10) else { XCTFail("no y4m header: \(run.err)"); return ([], run) }
        let header = String(decoding: bytes[..<end], as: UTF8.self)
        XCTAssertTrue(header.contains(" W512 ") && header.contains(" H512 ") && header.contains("C444"), header)
        let frameBytes = 512 * 512 * 3, marker = Array("FRAME\n".utf8)
        var out: [[UInt8]] = [], at = end + 1
        while at + marker.count + frameBytes <= bytes.count {
            XCTAssertEqual(Array(bytes[at..<(at + marker.count)]), marker)
            out.append(Array(bytes[(at + marker.count)..<(at + marker.count + frameBytes)]))
            at += marker.count + frameBytes
        }
        return (out, run)
    }

    /// Mean |difference| of the Y, U and V samples of `a` and `b` over the pixels `where` picks.
    func meanDifference(_ a: [UInt8], _ b: [UInt8], where pick: (Int) -> Bool) -> (mean: Double, count: Int) {
        let plane = 512 * 512
        var sum = 0, count = 0
        for i in 0..<plane where pick(i) {
            for p in 0..<3 { sum += abs(Int(a[p * plane + i]) - Int(b[p * plane + i])) }
            count += 1
        }
        return (Double(sum) / Double(max(1, count * 3)), count)
    }

    /// The run's own mask, as written (`mask-NNNNNNNN.png`, 8-bit, 255 = person).
    func mask(in folder: URL) throws -> [UInt8] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("mask-") && $0.hasSuffix(".png") }.sorted()
        guard let first = names.first else { XCTFail("no mask written in \(folder.path)"); return [] }
        let image = try Codecs.decode([UInt8](Data(contentsOf: folder.appendingPathComponent(first))))
        XCTAssertEqual([image.width, image.height], [512, 512])
        XCTAssertTrue(FileManager.default.fileExists(atPath: folder.appendingPathComponent("mask.jsonl").path), "mask.jsonl beside the masks")
        let log = try String(contentsOf: folder.appendingPathComponent("mask.jsonl"), encoding: .utf8)
        XCTAssertTrue(log.contains("\"bits\":8"), "an 8-bit mask: \(log)")
        // The decoder hands gray PNGs back as gray8 or expanded to rgba8: the first channel either way.
        XCTAssertTrue([.gray8, .rgba8].contains(image.format), "\(image.format)")
        let step = image.format == .gray8 ? 1 : 4
        return (0..<image.height).flatMap { y in (0..<image.width).map { x in image.bytes[y * image.bytesPerRow + x * step] } }
    }

    func testBackgroundBlurKeepsThePersonAndChangesTheBackground() throws {
        let folder = try photoFolder()
        let plain = try frames(["--source", "folder:\(folder)"], name: "plain")
        let out = work.appendingPathComponent("out")
        let blurred = try frames(["--source", "folder:\(folder)", "--size", "512x512", "--filter", "background:mode=blur,sigma=12",
                                  "--out", out.path, "--image-format", "ppm"], name: "blurred")
        XCTAssertEqual(plain.frames.count, 1)
        XCTAssertEqual(blurred.frames.count, 1)
        XCTAssertTrue(blurred.run.err.contains("granite-cam: segmenting people with selfie-segmentation-256.onnx (256x256)"), blurred.run.err)
        XCTAssertTrue(blurred.run.err.contains("granite-cam: 1 person masks, 1 written"), blurred.run.err)
        let mask = try mask(in: out)
        guard let a = plain.frames.first, let b = blurred.frames.first, mask.count == 512 * 512 else { return }
        let person = meanDifference(a, b) { mask[$0] == 255 }
        let background = meanDifference(a, b) { mask[$0] == 0 }
        print("background blur: person \(person.count) px, mean |difference| \(person.mean); background \(background.count) px, \(background.mean)")
        XCTAssertGreaterThan(person.count, 512 * 512 / 5, "the astronaut covers much of the photo")
        XCTAssertGreaterThan(background.count, 512 * 512 / 10)
        XCTAssertLessThan(person.mean, 0.5, "the person's pixels are the frame's")
        XCTAssertGreaterThan(background.mean, 4, "the background is blurred")
    }

    func testMaskMadeOnTheDeviceInTheLiveStreamEveryNthFrame() throws {
        let folder = try photoFolder(copies: 6)
        let vulkan = try ChildProgram.run(try ChildProgram.built("granite"), ["filters", "--device"])
        try Prerequisite.require(vulkan.status == 0, "no Vulkan device (granite filters --device: \(vulkan.err))")
        let plain = try frames(["--source", "folder:\(folder)", "--live", "--fps", "15"], name: "plain")
        // Mode color: the background is painted 0x00B140; no --out, no preview: the mask stays on the device.
        let colored = try frames(["--source", "folder:\(folder)", "--live", "--fps", "15", "--segment-device", "gpu", "--segment-every", "2",
                                  "--filter", "background:mode=color,color=0x00B140"], name: "colored")
        XCTAssertTrue(colored.run.err.contains("on the GPU ("), colored.run.err)
        XCTAssertGreaterThanOrEqual(colored.frames.count, 3, colored.run.err)
        let masks = colored.run.err.split(separator: "\n").first { $0.contains(" person masks, ") }.map(String.init) ?? ""
        let made = Int(masks.split(separator: " ").dropFirst().first ?? "") ?? -1
        XCTAssertTrue((1...(colored.frames.count + 1) / 2).contains(made), "every 2nd frame makes a mask: \(masks) of \(colored.frames.count) frames")
        guard let a = plain.frames.first, let b = colored.frames.last else { return }
        // The astronaut's face (as tier 52 checks the mask there) is kept; the top right corner is painted.
        let face = meanDifference(a, b) { (i: Int) -> Bool in
            let x = i % 512, y = i / 512
            return x >= 200 && x < 280 && y >= 60 && y < 140
        }
        XCTAssertLessThan(face.mean, 1, "the face is the frame's")
        let plane = 512 * 512, pixel = 20 * 512 + 470
        let corner: [Int] = [Int(b[pixel]), Int(b[plane + pixel]), Int(b[2 * plane + pixel])]
        // 0x00B140 in BT.601 limited range: Y 111.5, U 104.6, V 58.3 (the y4m pipe's conversion), within rounding.
        let want: [Int] = [111, 105, 58]
        for k in 0..<3 { XCTAssertLessThanOrEqual(abs(corner[k] - want[k]), 2, "corner \(corner)") }
    }

    /// `--record` takes the frames the chain made: the astronaut's face as it is, the corner painted.
    func testRecordingHoldsTheReplacedBackground() throws {
        let folder = try photoFolder()
        try Prerequisite.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg"), "ffmpeg is not installed (Debian package ffmpeg)")
        let file = work.appendingPathComponent("call.mkv").path, rgb = work.appendingPathComponent("call.rgb").path
        let run = try ChildProgram.run(try ChildProgram.built("granite-cam"), ["--source", "folder:\(folder)", "--size", "512x512",
                                       "--filter", "background:mode=color,color=0x00B140", "--status-hz", "1", "--record", file, "--quality", "10"])
        XCTAssertEqual(run.status, 0, run.err)
        let decode = try ChildProgram.shell("/usr/bin/ffmpeg -v error -i '\(file)' -frames:v 1 -f rawvideo -pix_fmt rgb24 '\(rgb)'")
        XCTAssertEqual(decode.status, 0, decode.err)
        let got = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rgb)))
        guard got.count == 512 * 512 * 3 else { return XCTFail("\(got.count) bytes decoded") }
        let photo = try Codecs.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: "\(folder)/a0.png"))))
        let corner = (20 * 512 + 470) * 3, face = (100 * 512 + 240) * 3
        let painted: [Int] = [Int(got[corner]), Int(got[corner + 1]), Int(got[corner + 2])]
        for (k, want) in [0, 0xB1, 0x40].enumerated() { XCTAssertLessThanOrEqual(abs(painted[k] - want), 8, "corner \(painted)") }
        let step = photo.format == .rgba8 ? 4 : 3, at = 100 * photo.bytesPerRow + 240 * step
        for k in 0..<3 {
            XCTAssertLessThanOrEqual(abs(Int(got[face + k]) - Int(photo.bytes[at + k])), 12, "the face is the photo's (x264 at quality 10)")
        }
    }

    /// The preview's map view shows a segmentation run's mask in gray (white = person), captioned
    /// as a mask; a depth run's stays viridis.
    func testThePreviewShowsTheMaskInGray() throws {
        let stage = try SegmentationStage(frameSize: FrameSize(width: 640, height: 360))
        XCTAssertEqual(stage.modelInputSize?.width, 256)
        XCTAssertEqual(stage.modelInputSize?.height, 144, "the landscape model for a 16:9 frame")
        XCTAssertEqual(try SegmentationStage(frameSize: FrameSize(width: 480, height: 640)).modelInputSize?.height, 256, "the square one for portrait")
        let map = try Image(width: 3, height: 1, floats: [0, 0.5, 1])
        let shown = try PreviewDepth.colorized(map, by: stage)
        XCTAssertEqual(shown.format, .gray8)
        XCTAssertEqual(shown.bytes, [0, 128, 255])
        let json = PreviewJSON.encode(PreviewState(setup: PreviewSetup(depthEnabled: true, mapName: stage.mapName)))
        XCTAssertTrue(json.contains("\"mapName\":\"mask\""), json)
        XCTAssertTrue(PreviewPage.script.contains("person mask (white = person)"))
        XCTAssertTrue(PreviewPage.html.contains("id=\"depthCaption\""))
    }

    func testDepthAndSegmentationCannotShareTheMap() throws {
        let run = try ChildProgram.run(try ChildProgram.built("granite-cam"), ["--depth", "--filter", "background", "--frames", "1"])
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.err.contains("--depth and segmentation (--segment, or a background filter) cannot run together"), run.err)
        let every = try ChildProgram.run(try ChildProgram.built("granite-cam"), ["--segment", "--segment-every", "0"])
        XCTAssertEqual(every.status, 64)
        XCTAssertTrue(every.err.contains("--segment-every must be at least 1"), every.err)
    }
}
