import Foundation
import GraniteCapture
import GraniteGPU
import GraniteMedia
import GraniteTesting
import XCTest

@testable import GraniteCam

/// `--pipe y4m` as a user runs it: into Debian's ffmpeg/ffprobe, compared with the files the
/// same run wrote; a reader that goes away ends the run cleanly.
final class Y4MPipeTests: XCTestCase {

    func tool(_ name: String) throws -> String {
        for dir in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
            return "\(dir)/\(name)"
        }
        try Prerequisite.unmet("\(name) is not installed (Debian package ffmpeg, in scripts/lib.sh's GRANITE_APT_PACKAGES)")
        return ""
    }

    func shell(_ script: String) throws -> ChildProgram.Result { try ChildProgram.shell(script) }

    func camBinary() throws -> String { try ChildProgram.built("granite-cam") }

    /// The pixels of a `P6` file as written by ``NetpbmEncoder``.
    func ppmPixels(_ path: String, width: Int, height: Int) throws -> [UInt8] {
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let header = "P6\n\(width) \(height)\n255\n".utf8.count
        XCTAssertEqual(data.count, header + width * height * 3, path)
        return Array(data.dropFirst(header))
    }

    func check(chroma: String, pixFmt: String, meanLimit: Double, maxLimit: Int) throws {
        let ffmpeg = try tool("ffmpeg"), ffprobe = try tool("ffprobe"), cam = try camBinary()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-y4m-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let w = 160, h = 90, frames = 12
        let y4m = dir.appendingPathComponent("stream.y4m").path, rgb = dir.appendingPathComponent("stream.rgb").path
        let run = try shell("'\(cam)' --source testpattern --size \(w)x\(h) --fps 30 --frames \(frames) --out '\(dir.path)/files' "
                            + "--image-format ppm --status-hz 1 --pipe \(chroma) | tee '\(y4m)' | '\(ffmpeg)' -v error -f yuv4mpegpipe -i - "
                            + "-sws_flags accurate_rnd+full_chroma_int -f rawvideo -pix_fmt rgb24 '\(rgb)'")
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertTrue(run.out.isEmpty, "nothing but video on stdout: \(run.out)")
        let probe = try shell("'\(ffprobe)' -v error -count_frames -show_entries stream=width,height,nb_read_frames,pix_fmt -of compact=p=0 '\(y4m)'")
        XCTAssertEqual(probe.status, 0, probe.err)
        let sidecar = try String(contentsOfFile: "\(dir.path)/files/frames.jsonl", encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(probe.out.trimmingCharacters(in: .whitespacesAndNewlines),
                       "width=\(w)|height=\(h)|pix_fmt=\(pixFmt)|nb_read_frames=\(sidecar.count)")
        XCTAssertGreaterThan(sidecar.count, frames / 2, "most frames arrive at 30 fps")
        XCTAssertTrue(run.err.contains("granite-cam: \(sidecar.count) frames in"), "the summary goes to stderr: \(run.err)")
        // Frame k of the stream is the k-th line of the sidecar: compare one in the middle.
        let k = sidecar.count / 2
        let line = String(sidecar[k])
        let file = line.split(separator: "\"file\":\"")[1].split(separator: "\"")[0]
        let expected = try ppmPixels("\(dir.path)/files/\(file)", width: w, height: h)
        let all = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rgb)))
        XCTAssertEqual(all.count, sidecar.count * w * h * 3)
        let got = Array(all[(k * w * h * 3)..<((k + 1) * w * h * 3)])
        var sum = 0, worst = 0
        for (a, b) in zip(expected, got) { let d = abs(Int(a) - Int(b)); sum += d; worst = max(worst, d) }
        let mean = Double(sum) / Double(expected.count)
        print("y4m \(chroma): frame \(k) of \(sidecar.count) against \(file): mean |difference| \(mean), largest \(worst)")
        XCTAssertLessThan(mean, meanLimit, "mean |difference| of frame \(k) (\(file))")
        XCTAssertLessThanOrEqual(worst, maxLimit, "largest difference of frame \(k) (\(file))")
    }

    func testY4M420IntoFFmpegMatchesTheFiles() throws {
        // 4:2:0 halves the chroma: the test pattern's hard color edges differ most.
        try check(chroma: "y4m", pixFmt: "yuv420p", meanLimit: 6, maxLimit: 160)
    }

    func testY4M444IntoFFmpegMatchesTheFiles() throws {
        try check(chroma: "y4m:444", pixFmt: "yuv444p", meanLimit: 1, maxLimit: 3)
    }

    /// With a GPU filter chain the pipe's YUV is made on the device (`yuv_out.comp`): byte for byte
    /// what the CPU conversion makes of the file the same run wrote (odd size: edge chroma too).
    func testGPUConvertedPipeEqualsTheFilesConvertedOnTheCPU() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        let cam = try camBinary()
        // The live run with --depth (the newest map resident, the model's input made on the device)
        // and the non-live one (each frame's own map) take their own chain calls: their YUV too.
        for (chroma, layout, depth) in [("y4m", YUVLayout.i420, ""), ("y4m:444", .planar444, ""),
                                        ("y4m", .i420, "--depth --depth-every 2"), ("y4m", .i420, "--no-live --depth")] {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-y4m-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            let w = 161, h = 91
            let y4m = dir.appendingPathComponent("stream.y4m").path
            // GRANITE_DEBUG=gpu-yuv: on lavapipe too (a CPU device otherwise converts on the CPU).
            let run = try shell("GRANITE_DEBUG=gpu-yuv '\(cam)' --source testpattern --size \(w)x\(h) --fps 30 --frames 6 --out '\(dir.path)/files' "
                                + "--image-format ppm --status-hz 1 --filter 'blur:sigma=1 | brightness:amount=0.05 | depthmask:near=0,far=1' "
                                + "\(depth) --pipe \(chroma) > '\(y4m)'")
            XCTAssertEqual(run.status, 0, run.err)
            XCTAssertTrue(run.err.contains("converted to \(layout) on the GPU"), run.err)
            let stream = try [UInt8](Data(contentsOf: URL(fileURLWithPath: y4m)))
            let headerEnd = try XCTUnwrap(stream.firstIndex(of: 10))
            let frameBytes = layout.byteCount(width: w, height: h)
            let frames = (stream.count - headerEnd - 1) / (6 + frameBytes)
            XCTAssertEqual(stream.count, headerEnd + 1 + frames * (6 + frameBytes), "whole frames")
            let sidecar = try String(contentsOfFile: "\(dir.path)/files/frames.jsonl", encoding: .utf8).split(separator: "\n")
            XCTAssertEqual(frames, sidecar.count)
            XCTAssertGreaterThan(frames, 0)
            for (k, line) in sidecar.enumerated() {
                let file = line.split(separator: "\"file\":\"")[1].split(separator: "\"")[0]
                let rgb = try ppmPixels("\(dir.path)/files/\(file)", width: w, height: h)
                var rgba = [UInt8]()
                for i in stride(from: 0, to: rgb.count, by: 3) { rgba += [rgb[i], rgb[i + 1], rgb[i + 2], 255] }
                let expected = ColorConversion.yuv(try Image(width: w, height: h, format: .rgba8, bytes: rgba), layout: layout, vectorised: false)
                let start = headerEnd + 1 + k * (6 + frameBytes) + 6
                XCTAssertEqual(Array(stream[(start - 6)..<start]), Array("FRAME\n".utf8))
                XCTAssertTrue(Array(stream[start..<(start + frameBytes)]) == expected,
                              "\(chroma) \(depth) frame \(k) (\(file)) equals the CPU conversion of the file")
            }
        }
    }

    /// The capture relay's parts ask a GPU chain for the sinks' layouts: the frame leaves the
    /// stage with its YUV made on the device (nothing left for the sink to convert).
    func testGPUChainHandsTheSinksTheirYUV() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        GraniteDebug.override([.gpuYUV])
        defer { GraniteDebug.override(nil) }
        let sinks: [any FrameSink] = [Y4MSink(fd: -1, chroma: .s420, fps: 30), Y4MSink(fd: -1, chroma: .s444, fps: 30)]
        let pipeline = try CamPipeline(settings: CamSettings(), stages: [try MarbleStage(specs: ["invert"])], sinks: sinks)
        let parts = CaptureParts(pipeline)
        XCTAssertEqual(parts.yuvLayouts, [.i420, .planar444])
        XCTAssertFalse(parts.readsRGBA, "only YUV sinks: nothing reads the result as rgba8")
        let image = TestPattern(size: FrameSize(width: 33, height: 17)).render(index: 1)
        let expected = try MarbleStage(specs: ["invert"]).process(image)
        let before = try XCTUnwrap(pipeline.stages.first as? MarbleStage).chain.transfers
        let out = try parts.process(parts.job(image, depth: .none))
        let after = try XCTUnwrap(pipeline.stages.first as? MarbleStage).chain.transfers
        for layout in parts.yuvLayouts {
            let bytes = try XCTUnwrap(out.yuv[layout], "\(layout) made on the GPU")
            XCTAssertTrue(bytes == ColorConversion.yuv(expected, layout: layout, vectorised: false), "\(layout)")
        }
        // Only the YUV came back: the frame is the I420 bytes as an image, no rgba8 read-back.
        XCTAssertEqual(out.image.format, .i420)
        XCTAssertEqual(out.image.bytes, out.yuv[.i420])
        XCTAssertEqual(after.downloadBytes - before.downloadBytes,
                       YUVLayout.i420.byteCount(width: 33, height: 17) + YUVLayout.planar444.byteCount(width: 33, height: 17),
                       "read back: the two layouts' bytes, not the 4-byte pixels")
        XCTAssertEqual(try ColorConversion.rgba(out.image), try ColorConversion.rgba(
            try Image(width: 33, height: 17, format: .i420, bytes: ColorConversion.yuv(expected, layout: .i420, vectorised: false))))
        // A run that also writes files reads rgba8 back as well.
        var writes = CamSettings()
        writes.outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("granite-yuv-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: writes.outputDirectory!) }
        let filing = CaptureParts(try CamPipeline(settings: writes, stages: [try MarbleStage(specs: ["invert"])], sinks: sinks))
        XCTAssertTrue(filing.readsRGBA)
        let both = try filing.process(filing.job(image, depth: .none))
        XCTAssertEqual(both.image, expected)
        XCTAssertEqual(both.yuv[.i420], out.yuv[.i420])
        // The CPU reference chain makes none: the sinks convert.
        let cpu = CaptureParts(try CamPipeline(settings: CamSettings(), stages: [try MarbleStage(specs: ["invert"], gpu: false)], sinks: sinks))
        XCTAssertTrue(try cpu.process(cpu.job(image, depth: .none)).yuv.isEmpty)
    }

    /// The runs with depth take the chain's own calls (a live frame with the newest map resident and
    /// the model's input made on the device; a frame with a map made from it); the sinks still get
    /// their YUV from the device, converted from that very result.
    func testGPUChainHandsTheSinksTheirYUVWithDepth() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        GraniteDebug.override([.gpuYUV, .deviceInput])
        defer { GraniteDebug.override(nil) }
        let specs = ["blur:sigma=1", "depthmask:near=0.2,far=0.6"]
        let sinks: [any FrameSink] = [Y4MSink(fd: -1, chroma: .s420, fps: 30)]
        let parts = CaptureParts(try CamPipeline(settings: CamSettings(), stages: [try MarbleStage(specs: specs)], sinks: sinks))
        let image = TestPattern(size: FrameSize(width: 45, height: 27)).render(index: 3)
        var ramp = [Float](repeating: 0, count: 45 * 27)
        for i in ramp.indices { ramp[i] = Float(i % 45) / 44 }
        let map = try Image(width: 45, height: 27, floats: ramp)
        // Live: the newest map resident, the model's input made on the device.
        let live = try parts.process(FrameJob(image: image, depth: .newest(map, version: 7), modelInput: FrameSize(width: 16, height: 16),
                                                       yuv: [.i420]))
        XCTAssertEqual(live.modelInput?.width, 16)
        // On a CPU device the model takes the frame and resizes it itself (no read-back submission).
        GraniteDebug.override([.gpuYUV])
        let hostInput = try parts.process(FrameJob(image: image, depth: .newest(map, version: 7), modelInput: FrameSize(width: 16, height: 16),
                                                   yuv: [.i420]))
        let onGPU = try GPUContext.shared().deviceKind != .cpu
        XCTAssertEqual(hostInput.modelInput == nil, !onGPU, "the model's input made on the device only on a GPU")
        XCTAssertEqual(hostInput.image, live.image)
        GraniteDebug.override([.gpuYUV, .deviceInput])
        let liveYUV = try XCTUnwrap(live.yuv[.i420], "the live depth run's YUV made on the GPU")
        XCTAssertTrue(liveYUV == ColorConversion.yuv(live.image, layout: .i420, vectorised: false), "live")
        XCTAssertEqual(live.image, try MarbleStage(specs: specs, gpu: false).process(image, depth: map), "the resident map was read")
        // Non-live: a map made from this frame (the model answers with the ramp flipped).
        let flipped = try Image(width: 45, height: 27, floats: ramp.map { 1 - $0 })
        var ownJob = parts.job(image, depth: .own(FixedDepthFake(map: flipped)))
        ownJob.rgba = true   // compared below with the rgba8 result
        let own = try parts.process(ownJob)
        XCTAssertNotEqual(own.image, live.image, "another map, another picture")
        XCTAssertEqual(own.depth?.map, flipped, "this frame's own maps come back")
        let ownYUV = try XCTUnwrap(own.yuv[.i420], "the depth-input run's YUV made on the GPU")
        XCTAssertTrue(ownYUV == ColorConversion.yuv(own.image, layout: .i420, vectorised: false), "own map")
    }

    func testReaderGoingAwayEndsCleanly() throws {
        let cam = try camBinary()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("granite-y4m-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let started = Date()
        // head takes about three 320x240 4:2:0 frames and exits; the run had 20 s to go.
        let run = try shell("'\(cam)' --source testpattern --size 320x240 --fps 30 --duration 20 --out '\(dir.path)' "
                            + "--image-format ppm --status-hz 1 --pipe y4m | head -c 350000 > /dev/null; echo \"granite-cam exit status ${PIPESTATUS[0]}\"")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the run ends when the reader goes away")
        XCTAssertEqual(run.status, 0, run.err)
        XCTAssertEqual(run.out, "granite-cam exit status 0\n", run.err)
        XCTAssertTrue(run.err.contains("y4m pipe: the reader went away; stopped"), run.err)
        XCTAssertTrue(run.err.contains("granite-cam: "), run.err)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        let written = names.filter { $0.hasSuffix(".ppm") }.count
        let lines = try String(contentsOfFile: "\(dir.path)/frames.jsonl", encoding: .utf8).split(separator: "\n").count
        XCTAssertGreaterThan(written, 0)
        XCTAssertEqual(written, lines, "every file written has its sidecar line (flushed)")
        XCTAssertFalse(names.contains { $0.hasSuffix(".partial") })
    }

    /// Frame after frame through the reused planes buffer: the header once, then `FRAME` and the
    /// planes of each frame (not the previous one's), in one stream; the pipe is widened to 1 MiB.
    func testSinkStreamsEachFrameIntoAWidenedPipe() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        defer { close(fds[0]) }
        let sink = Y4MSink(fd: fds[1], chroma: .s420, fps: 30)
        let pattern = TestPattern(size: FrameSize(width: 34, height: 9))
        let frames = (0..<3).map { Frame(image: pattern.render(index: UInt64($0 * 7)), sequence: UInt64($0), timestampNanos: 0, source: "test") }
        for frame in frames { try sink.write(frame) }
        XCTAssertGreaterThanOrEqual(fcntl(fds[1], 1032 /* F_GETPIPE_SZ */), Int32(Y4MSink.pipeBytes), "the pipe is widened")
        close(fds[1])
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fds[0], $0.baseAddress!, $0.count) }
            if n <= 0 { break }
            got += chunk[..<n]
        }
        var expected = Array(sink.header(width: 34, height: 9).utf8)
        for frame in frames {
            expected += Array("FRAME\n".utf8)
            try ColorConversion.appendPlanarYUV(frame.image, subsampled: true, to: &expected)
        }
        XCTAssertEqual(got.count, expected.count)
        XCTAssertTrue(got == expected, "the stream is the header and each frame's own planes")
        XCTAssertThrowsError(try sink.write(Frame(image: TestPattern(size: FrameSize(width: 8, height: 8)).render(index: 0),
                                                  sequence: 9, timestampNanos: 0, source: "test"))) { error in
            XCTAssertTrue("\(error)".contains("size changed from 34x9 to 8x8"), "\(error)")
        }
    }

    func testConversionRoundTripsThroughTheYUVDecode() throws {
        // RGBA → YUYV (this file's encode) → RGBA (ColorConversion's decode): one pair of formulas.
        var bytes = [UInt8]()
        for i in 0..<(13 * 7) { bytes += [UInt8(i * 37 % 256), UInt8(i * 91 % 256), UInt8(i * 13 % 256), 255] }
        let image = try Image(width: 13, height: 7, format: .rgba8, bytes: bytes)
        var grayBytes: [UInt8] = []
        for i in 0..<(13 * 7) { let v = UInt8(i * 2); grayBytes += [v, v, v, 255] }
        let gray = try Image(width: 13, height: 7, format: .rgba8, bytes: grayBytes)
        let yuyv = try ColorConversion.packed(gray, as: .yuyv)
        XCTAssertEqual(yuyv.count, 7 * 7 * 4)
        let back = try ColorConversion.rgba(try Image(width: 13, height: 7, format: .yuyv, bytes: yuyv))
        for (a, b) in zip(gray.bytes, back.bytes) { XCTAssertLessThanOrEqual(abs(Int(a) - Int(b)), 2) }
        var planes: [UInt8] = []
        try ColorConversion.appendPlanarYUV(image, subsampled: true, to: &planes)
        XCTAssertEqual(planes.count, 13 * 7 + 2 * 7 * 4, "odd sizes round chroma up")
        XCTAssertEqual(try ColorConversion.packed(image, as: .bgr24).prefix(3), [bytes[2], bytes[1], bytes[0]])
        XCTAssertEqual(Y4MSink(fps: 29.97).header(width: 13, height: 7),
                       "YUV4MPEG2 W13 H7 F29970:1000 Ip A1:1 C420jpeg XYSCSS=420JPEG XCOLORRANGE=LIMITED\n")
    }
}

/// A V4L2 output whose YU12 rows are padded (bytesperline > width) gets re-strided rows.
final class PaddedYU12Tests: XCTestCase {
    /// The layout a V4L2 node asks the GPU for is the bytes the CPU packing writes for it.
    func testNodeLayoutsAreWhatTheCPUPacks() throws {
        var bytes = [UInt8]()
        for i in 0..<(14 * 5) { bytes += [UInt8(i * 37 % 256), UInt8(i * 91 % 256), UInt8(i * 13 % 256), 255] }
        let image = try Image(width: 14, height: 5, format: .rgba8, bytes: bytes)
        for (format, bpl) in [(VideoOutputFormat.yuyv, 0), (.yuyv, 28), (.yuyv, 40), (.yu12, 14), (.yu12, 32)] {
            let layout = try XCTUnwrap(V4L2OutputSink.layout(format, bytesPerLine: max(bpl, format.minimumBytesPerLine(width: 14))))
            XCTAssertEqual(ColorConversion.yuv(image, layout: layout, vectorised: false),
                           try ColorConversion.packed(image, as: format, bytesPerLine: bpl), "\(format) bytesperline \(bpl)")
        }
        XCTAssertNil(V4L2OutputSink.layout(.rgb24, bytesPerLine: 42))
    }

    func testPaddedRowsAreReStrided() throws {
        var bytes = [UInt8]()
        for i in 0..<(14 * 5) { bytes += [UInt8(i * 37 % 256), UInt8(i * 91 % 256), UInt8(i * 13 % 256), 255] }
        let image = try Image(width: 14, height: 5, format: .rgba8, bytes: bytes)
        let tight = try ColorConversion.packed(image, as: .yu12)
        XCTAssertEqual(tight.count, 14 * 5 + 2 * 7 * 3)
        let bpl = 32
        let padded = try ColorConversion.packed(image, as: .yu12, bytesPerLine: bpl)
        XCTAssertEqual(padded.count, VideoOutputFormat.yu12.frameBytes(width: 14, height: 5, bytesPerLine: bpl))
        for y in 0..<5 {
            XCTAssertEqual(Array(padded[(y * bpl)..<(y * bpl + 14)]), Array(tight[(y * 14)..<(y * 14 + 14)]), "Y row \(y)")
            XCTAssertEqual(Array(padded[(y * bpl + 14)..<((y + 1) * bpl)]), [UInt8](repeating: 0, count: bpl - 14), "padding")
        }
        for plane in 0..<2 {
            for y in 0..<3 {
                let p = bpl * 5 + plane * (bpl / 2) * 3 + y * (bpl / 2), t = 14 * 5 + plane * 7 * 3 + y * 7
                XCTAssertEqual(Array(padded[p..<(p + 7)]), Array(tight[t..<(t + 7)]), "chroma plane \(plane) row \(y)")
            }
        }
    }
}

/// A depth model that answers every frame with the same map, at a 16×16 input size (a fake
/// standing in for the network, so the chain's depth paths are checked with a known map).
struct FixedDepthFake: DepthStage {
    let map: Image
    func estimate(_ image: Image) throws -> Image { map }
    var modelInputSize: (width: Int, height: Int)? { (16, 16) }
    func estimateMaps(modelInput: Image, width: Int, height: Int) throws -> DepthEstimate {
        XCTAssertEqual(modelInput.width, 16)
        return DepthEstimate(map: map, png: try depthMap(map).to16BitPNGImage())
    }
}
