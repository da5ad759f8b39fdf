import GraniteCodecs
import GraniteMedia
import XCTest

@testable import GraniteCam
@testable import GraniteCapture

/// The MJPEG capture path (vivid offers no MJPEG): real JPEG bytes from TurboJPEG go through
/// the same `FrameAssembler.deliver` that `V4L2Source` calls for each dequeued buffer.
final class MJPEGCaptureTests: XCTestCase {
    let size = FrameSize(width: 640, height: 480)

    func jpeg(_ image: Image) throws -> [UInt8] {
        try Codecs.encodeJPEG(image, quality: 95, subsampling: .s444)
    }

    /// Feeds `buffers` (sequence, payload) through the assembler on a runner's thread; returns the events and counters.
    func capture(_ buffers: [(UInt64, [UInt8])], decoder: (any ImageDecoder)?) async throws -> ([CaptureEvent], CaptureStats) {
        let runner = SourceRunner(name: "/dev/video-mjpeg-test")
        let format = StreamFormat(format: .mjpeg, size: size, bytesPerLine: 0, fps: 30)
        let stream = try runner.start(.live(buffering: 64)) { runner in
            var assembler = FrameAssembler(device: "/dev/video-mjpeg-test", decoder: decoder)
            for (sequence, payload) in buffers {
                assembler.deliver(V4L2Device.Dequeued(payload: payload, sequence: sequence, timestampNanos: 1_000 + sequence),
                                  format: format, runner: runner)
            }
        }
        var events: [CaptureEvent] = []
        for await event in stream { events.append(event) }
        runner.stop()
        return (events, runner.stats)
    }

    func testMJPEGBuffersDecodeToFramesAndCorruptOnesAreCountedFaults() async throws {
        let pattern = TestPattern(size: size)
        var buffers: [(UInt64, [UInt8])] = []
        for sequence in UInt64(0)..<10 {
            var payload = try jpeg(pattern.render(index: sequence))
            switch sequence {
            case 3: payload = Array(payload.prefix(payload.count / 2))             // truncated mid-scan
            case 6: payload = [0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x5A, count: 2000)   // JPEG header, then garbage
            case 8: payload = try jpeg(TestPattern(size: FrameSize(width: 320, height: 240)).render(index: 8)) // wrong size
            default: break
            }
            buffers.append((sequence, payload))
        }
        let (events, stats) = try await capture(buffers, decoder: CodecsDecoder())

        var frames: [Frame] = [], faults: [CaptureError] = []
        for event in events {
            switch event {
            case let .frame(frame): frames.append(frame)
            case let .fault(error): faults.append(error)
            case .started: XCTFail("no format announced by the assembler")
            }
        }
        XCTAssertEqual(frames.map(\.sequence), [0, 1, 2, 4, 5, 7, 9])
        for frame in frames {
            XCTAssertEqual(frame.image.width, 640)
            XCTAssertEqual(frame.image.height, 480)
            XCTAssertEqual(frame.source, "/dev/video-mjpeg-test")
            let rgba = try ColorConversion.rgba(frame.image)
            XCTAssertEqual(pattern.readCounter(rgba), frame.sequence, "frame \(frame.sequence) decoded to its own picture")
            let original = pattern.render(index: frame.sequence)
            let error = zip(rgba.bytes, original.bytes).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            XCTAssertLessThan(Double(error) / Double(original.bytes.count), 4, "close to the original at quality 95")
        }
        XCTAssertEqual(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNanos < $1.timestampNanos }, true)

        XCTAssertEqual(faults.count, 3)
        let messages = faults.map(\.description)
        for (index, sequence) in [3, 6, 8].enumerated() {
            guard case let .decodeFailed(path, _) = faults[index] else { return XCTFail("fault \(index) is \(faults[index])") }
            XCTAssertEqual(path, "/dev/video-mjpeg-test (frame \(sequence))")
        }
        XCTAssertTrue(messages[2].contains("decoded 320x240, but the stream was negotiated at 640x480"), messages[2])
        XCTAssertEqual(stats.faults, 3)
        XCTAssertEqual(stats.delivered, 7)
        XCTAssertEqual(stats.droppedBySource, 3, "each lost buffer shows as a sequence gap")
    }

    func testMJPEGBufferWithoutDecoderIsAFaultNotACrash() async throws {
        let (events, stats) = try await capture([(0, try jpeg(TestPattern(size: size).render(index: 0)))], decoder: nil)
        XCTAssertEqual(events.count, 1)
        guard case let .fault(error) = events.first else { return XCTFail("expected a fault, got \(events)") }
        XCTAssertTrue(error.description.contains("MJPEG frames need a JPEG decoder"), error.description)
        XCTAssertEqual(stats.delivered, 0)
    }

    func testNegotiationPicksMJPEGOnlyWithADecoder() throws {
        let hd = FrameSize(width: 1280, height: 720)
        let info = DeviceInfo(path: "/dev/video-mjpeg-test", card: "cam", driver: "uvcvideo", bus: "usb", capabilities: 0, canCapture: true,
                              formats: [
                                FormatInfo(fourcc: FourCC.make("YUYV"), name: "YUYV", compressed: false, emulated: false,
                                           sizes: [SizeInfo(size: hd, rates: [10]), SizeInfo(size: size, rates: [30])]),
                                FormatInfo(fourcc: FourCC.make("MJPG"), name: "Motion-JPEG", compressed: true, emulated: false,
                                           sizes: [SizeInfo(size: hd, rates: [30]), SizeInfo(size: size, rates: [30])]),
                              ])
        let request = CaptureRequest(format: .auto, size: hd, fps: 30)
        let withDecoder = V4L2Source(path: info.path, request: request, decoder: DecoderSet.all)
        let without = V4L2Source(path: info.path, request: request)
        XCTAssertEqual(try withDecoder.chooseFormat(.auto, info: info), .mjpeg, "720p30 needs MJPEG here")
        XCTAssertEqual(try without.chooseFormat(.auto, info: info), .yuyv, "no decoder: the best uncompressed")
        XCTAssertEqual(try withDecoder.chooseFormat(.mjpeg, info: info), .mjpeg)
        XCTAssertThrowsError(try without.chooseFormat(.mjpeg, info: info)) { error in
            XCTAssertEqual("\(error)", "/dev/video-mjpeg-test: MJPEG needs a JPEG decoder; ask for rgb24 to let libv4l2 convert")
        }
        let small = V4L2Source(path: info.path, request: CaptureRequest(format: .auto, size: size, fps: 30), decoder: DecoderSet.all)
        XCTAssertEqual(try small.chooseFormat(.auto, info: info), .yuyv, "uncompressed still wins where it fits")
    }
}
