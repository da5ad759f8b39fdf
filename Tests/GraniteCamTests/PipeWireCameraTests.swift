import XCTest
@testable import GraniteCam
import GraniteCapture
import GraniteGPU
import GraniteMedia
import GraniteTesting

/// The PipeWire camera's pieces that need no daemon (the tier `45-pipewire` runs the rest against
/// a real one): `--source pipewire[:NODE]`, and how the sink fills a consumer's buffer.
final class PipeWireCameraTests: XCTestCase {
    func testSourceSpecNamesAPipeWireNode() throws {
        XCTAssertEqual(try SourceSpec(parsing: "pipewire"), .pipeWire(nil))
        XCTAssertEqual(try SourceSpec(parsing: "pipewire:gst-test-source"), .pipeWire("gst-test-source"))
        XCTAssertEqual(try SourceSpec(parsing: "pipewire:42").description, "pipewire:42")
        XCTAssertThrowsError(try SourceSpec(parsing: "pipewire:"))
        var settings = CamSettings()
        settings.source = .pipeWire(nil)
        XCTAssertTrue(settings.isLive, "a PipeWire source is live, like a camera")
    }

    func frame(_ w: Int, _ h: Int) throws -> Frame {
        let bytes = (0..<(w * h * 4)).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ $0 / 7) }
        return Frame(image: try Image(width: w, height: h, format: .rgba8, bytes: bytes), sequence: 7, timestampNanos: 1, source: "test")
    }

    func filled(_ frame: Frame, _ format: PipeWireVideoFormat) throws -> [UInt8] {
        let size = PipeWireOutputSink.even(FrameSize(width: frame.width, height: frame.height))
        let rgba = try PipeWireOutputSink.crop(frame.image, to: size)
        var out = [UInt8](repeating: 0xAA, count: format.byteCount(width: size.width, height: size.height))
        out.withUnsafeMutableBytes { PipeWireOutputSink.fill($0, format: format, from: frame, size: size, rgba: { rgba }) }
        return out
    }

    func testRGBFormatsCopyOrSwapRedAndBlue() throws {
        let f = try frame(6, 4)
        XCTAssertEqual(try filled(f, .rgbx), f.image.bytes)
        let bgrx = try filled(f, .bgrx)
        for p in 0..<24 {
            XCTAssertEqual([bgrx[p * 4], bgrx[p * 4 + 1], bgrx[p * 4 + 2]],
                           [f.image.bytes[p * 4 + 2], f.image.bytes[p * 4 + 1], f.image.bytes[p * 4]], "pixel \(p)")
        }
    }

    func testYUVFormatsAreTheOneConversionAtTheirStrides() throws {
        let f = try frame(10, 6)   // 10 wide: YUY2 rows 20 bytes, I420 chroma rows 5 → 8 bytes (rounded up to 4)
        for format in [PipeWireVideoFormat.yuy2, .nv12, .i420] {
            let layout = try XCTUnwrap(format.yuvLayout(width: 10))
            XCTAssertEqual(try filled(f, format), ColorConversion.yuv(f.image, layout: layout), "\(format)")
        }
    }

    func testTheGPUsBytesAreTakenWhenTheFrameCarriesTheLayout() throws {
        var f = try frame(8, 4)
        let layout = try XCTUnwrap(PipeWireVideoFormat.yuy2.yuvLayout(width: 8))
        let marker = [UInt8](repeating: 0x42, count: layout.byteCount(width: 8, height: 4))
        f.yuv[layout] = marker
        XCTAssertEqual(try filled(f, .yuy2), marker)
        // The device's bytes are copied without making the rgba8 frame at all.
        var out = [UInt8](repeating: 0xAA, count: marker.count)
        var asked = false
        out.withUnsafeMutableBytes {
            PipeWireOutputSink.fill($0, format: .yuy2, from: f, size: FrameSize(width: 8, height: 4), rgba: { asked = true; return nil })
        }
        XCTAssertEqual(out, marker)
        XCTAssertFalse(asked, "no rgba8 frame made for a layout the GPU made")
    }

    /// A GPU chain's YUV left on the device (a job whose sinks read in place) is read straight into
    /// the consumer's buffer: the device's conversion of the chain's result, the rgba8 frame not
    /// asked for, each layout's bytes downloaded once; a layout the device did not make is converted.
    func testTheDevicesYUVIsReadStraightIntoTheBuffer() throws {
        do { _ = try GPUContext.shared() } catch { try Prerequisite.unmet("no Vulkan device for the GPU chain: \(error)") }
        GraniteDebug.override([.gpuYUV])
        defer { GraniteDebug.override(nil) }
        let stage = try MarbleStage(specs: ["invert"])
        let image = TestPattern(size: FrameSize(width: 34, height: 18)).render(index: 5)
        let expected = try MarbleStage(specs: ["invert"]).process(image)
        let layout = try XCTUnwrap(PipeWireVideoFormat.yuy2.yuvLayout(width: 34))
        var job = FrameJob(image: image, yuv: [layout], rgba: true)
        job.yuvInPlace = true
        let result = try stage.process(job)
        XCTAssertTrue(result.yuv.isEmpty, "no bytes of ours: they stay on the device")
        XCTAssertEqual(result.image, expected)
        var frame = Frame(image: result.image, sequence: 5, timestampNanos: 1, source: "test")
        frame.deviceYUV = try XCTUnwrap(result.deviceYUV)
        let before = stage.chain.transfers.downloadBytes
        var out = [UInt8](repeating: 0xAA, count: layout.byteCount(width: 34, height: 18))
        var asked = false
        let read = out.withUnsafeMutableBytes {
            PipeWireOutputSink.fill($0, format: .yuy2, from: frame, size: FrameSize(width: 34, height: 18), rgba: { asked = true; return nil })
        }
        XCTAssertTrue(read)
        XCTAssertFalse(asked, "no rgba8 frame made")
        XCTAssertEqual(out, ColorConversion.yuv(expected, layout: layout, vectorised: false))
        XCTAssertEqual(stage.chain.transfers.downloadBytes - before, out.count, "one download, into the buffer")
        // I420 was not made on the device: converted from the rgba8 result.
        let i420 = try XCTUnwrap(PipeWireVideoFormat.i420.yuvLayout(width: 34))
        var planar = [UInt8](repeating: 0xAA, count: i420.byteCount(width: 34, height: 18))
        XCTAssertFalse(planar.withUnsafeMutableBytes {
            PipeWireOutputSink.fill($0, format: .i420, from: frame, size: FrameSize(width: 34, height: 18), rgba: { expected })
        })
        XCTAssertEqual(planar, ColorConversion.yuv(expected, layout: i420))
    }

    func testOddSidesLoseTheirLastColumnAndRow() throws {
        let f = try frame(7, 5)
        XCTAssertEqual(PipeWireOutputSink.even(FrameSize(width: 7, height: 5)), FrameSize(width: 6, height: 4))
        let cut = try PipeWireOutputSink.crop(f.image, to: FrameSize(width: 6, height: 4))
        XCTAssertEqual(cut.width, 6)
        XCTAssertEqual(cut.height, 4)
        XCTAssertEqual(Array(cut.bytes[24..<48]), Array(f.image.bytes[28..<52]), "row 1 starts at the source's row 1")
    }
}
