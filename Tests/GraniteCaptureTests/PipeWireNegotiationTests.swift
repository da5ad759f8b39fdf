import CPipeWire
import XCTest
@testable import GraniteCapture
import GraniteMedia

/// How a PipeWire source picks among a producer's `EnumFormat` offers (formats, size and rate
/// choices), and how those pods are read: the pods are built and parsed by the C shim itself.
final class PipeWireNegotiationTests: XCTestCase {
    private let yuy2 = PipeWireVideoFormat.yuy2.spaID, nv12 = PipeWireVideoFormat.nv12.spaID
    private let i420 = PipeWireVideoFormat.i420.spaID, rgbx = PipeWireVideoFormat.rgbx.spaID
    private let vga = FrameSize(width: 640, height: 480)
    private func rate(_ n: UInt32) -> PipeWireRate { PipeWireRate(num: n, den: 1) }
    private func size(_ w: Int, _ h: Int) -> FrameSize { FrameSize(width: w, height: h) }

    func testAutoPrefersYUVOverRGBAndRawOverMJPEG() throws {
        let offers = [
            PipeWireOffer(kind: .mjpeg, sizes: .one(vga), rates: .one(rate(30))),
            PipeWireOffer(kind: .raw(formats: [rgbx, i420, nv12]), sizes: .one(vga), rates: .one(rate(30))),
        ]
        let chosen = try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(), mjpeg: true, node: "n")
        XCTAssertEqual(chosen, PipeWireChosenFormat(format: .nv12, size: vga, rate: rate(30)))
        XCTAssertEqual(chosen.description, "NV12 640x480 @ 30 fps")
        let rgb = try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(format: .rgb24), mjpeg: true, node: "n")
        XCTAssertEqual(rgb.format, .rgbx)
    }

    func testSizeRangeWithStepTakesTheNearestSizeOnTheStep() throws {
        let offer = PipeWireOffer(kind: .raw(formats: [yuy2]),
                                  sizes: .range(default: size(320, 240), min: size(16, 16), max: size(1920, 1080), step: size(16, 8)),
                                  rates: .range(default: rate(30), min: rate(1), max: rate(60), step: nil))
        let chosen = try PipeWireChosenFormat.choose(among: [offer], for: CaptureRequest(size: size(650, 485), fps: 25), mjpeg: false, node: "n")
        XCTAssertEqual(chosen.size, size(656, 488))   // 16 + 40×16, 16 + 59×8
        XCTAssertEqual(chosen.rate, rate(25))
        let big = try PipeWireChosenFormat.choose(among: [offer], for: CaptureRequest(size: size(4000, 3000), fps: 240), mjpeg: false, node: "n")
        XCTAssertEqual(big.size, size(1920, 1080))
        XCTAssertEqual(big.rate, rate(60))
        let own = try PipeWireChosenFormat.choose(among: [offer], for: CaptureRequest(), mjpeg: false, node: "n")
        XCTAssertEqual(own, PipeWireChosenFormat(format: .yuy2, size: size(320, 240), rate: rate(30)))
    }

    func testFixedSizesAndARateListTakeTheNearest() throws {
        let offers = [size(320, 240), size(640, 480), size(1280, 720)].map {
            PipeWireOffer(kind: .raw(formats: [i420]), sizes: .one($0), rates: .list([rate(30), rate(15), rate(60)]))
        }
        let chosen = try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(size: size(1200, 700), fps: 50), mjpeg: false, node: "n")
        XCTAssertEqual(chosen, PipeWireChosenFormat(format: .i420, size: size(1280, 720), rate: rate(60)))
        let listed = PipeWireOffer(kind: .raw(formats: [i420]), sizes: .list([size(320, 240), vga]), rates: .one(PipeWireRate(num: 0, den: 1)))
        let variable = try PipeWireChosenFormat.choose(among: [listed], for: CaptureRequest(size: size(300, 200), fps: 30), mjpeg: false, node: "n")
        XCTAssertEqual(variable.size, size(320, 240))
        XCTAssertEqual(variable.description, "I420 320x240 @ variable rate")
    }

    func testOnlyMJPEGIsTakenWhenItCanBeDecoded() throws {
        let offers = [PipeWireOffer(kind: .mjpeg, sizes: .one(vga), rates: .one(rate(30)))]
        XCTAssertEqual(try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(), mjpeg: true, node: "n").format, nil)
        XCTAssertThrowsError(try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(), mjpeg: false, node: "pipewire:cam")) {
            XCTAssertEqual("\($0)", "pipewire:cam: format auto (one of YUY2, NV12, I420, RGBx, BGRx, RGBA, BGRA) is not offered; "
                           + "the device offers: MJPEG 640x480 @ 30")
        }
    }

    func testNothingReadableIsRefusedListingTheOffers() {
        let rgb = SPA_VIDEO_FORMAT_RGB.rawValue
        let offers = [PipeWireOffer(kind: .raw(formats: [rgb]), sizes: .one(vga), rates: .one(rate(30))),
                      PipeWireOffer(kind: .raw(formats: []), sizes: .one(size(320, 240)), rates: .one(rate(30))),
                      PipeWireOffer(kind: .other("h264"), sizes: .one(vga), rates: nil)]
        XCTAssertThrowsError(try PipeWireChosenFormat.choose(among: offers, for: CaptureRequest(), mjpeg: true, node: "pipewire:x")) { error in
            guard case let CaptureError.unsupportedFormat(device, _, offered) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(device, "pipewire:x")
            XCTAssertEqual(offered, ["RGB 640x480 @ 30", "raw (no format PipeWire names) 320x240 @ 30", "h264 640x480"])
        }
        // A format asked for strictly: YUY2 is not there, though NV12 is.
        let nv = [PipeWireOffer(kind: .raw(formats: [nv12]), sizes: .one(vga), rates: .one(rate(30)))]
        XCTAssertThrowsError(try PipeWireChosenFormat.choose(among: nv, for: CaptureRequest(format: .yuyv), mjpeg: true, node: "n"))
    }

    /// The C shim reads the pods it builds: a range offer (what an input accepts) and a fixed one.
    func testShimReadsRangeAndFixedPods() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 4096)
        defer { buffer.deallocate() }
        var params = [UnsafePointer<spa_pod>?](repeating: nil, count: 2)
        let ids = [yuy2, nv12]
        XCTAssertEqual(cpw_video_formats(buffer, 4096, ids, 2, 0, 0, 0, 0, &params), 2)
        var c = cpw_offer()
        XCTAssertEqual(cpw_parse_offer(params[1], &c), 0)
        let range = try XCTUnwrap(PipeWireOffer(c))
        XCTAssertEqual(range.kind, .raw(formats: [nv12]))
        XCTAssertEqual(range.sizes, .range(default: vga, min: size(1, 1), max: size(8192, 8192), step: nil))
        XCTAssertEqual(range.rates, .range(default: rate(30), min: rate(0), max: rate(1000), step: nil))

        let fixed = cpw_video_format_fixed(buffer, 4096, SPA_MEDIA_SUBTYPE_mjpg.rawValue, 0, 800, 600, 15, 1)
        XCTAssertEqual(cpw_parse_offer(fixed, &c), 0)
        let mjpeg = try XCTUnwrap(PipeWireOffer(c))
        XCTAssertEqual(mjpeg.kind, .mjpeg)
        XCTAssertEqual(mjpeg.description, "MJPEG 800x600 @ 15")
        var subtype: UInt32 = 0, format: UInt32 = 9, w: UInt32 = 0, h: UInt32 = 0, num: UInt32 = 0, den: UInt32 = 0
        XCTAssertEqual(cpw_parse_fixed_format(fixed, &subtype, &format, &w, &h, &num, &den), 0)
        XCTAssertEqual([subtype, format, w, h, num, den], [SPA_MEDIA_SUBTYPE_mjpg.rawValue, 0, 800, 600, 15, 1])
        XCTAssertEqual(cpw_video_format_fixed(buffer, 16, SPA_MEDIA_SUBTYPE_raw.rawValue, yuy2, 8, 8, 1, 1), nil)
    }

    func testFirstFrameWaitEndsOnlyWhileNothingCame() {
        var wait = FirstFrameWait(since: 1_000_000_000, timeout: 10)
        XCTAssertFalse(wait.isOverdue(now: 10_999_999_999))
        XCTAssertTrue(wait.isOverdue(now: 11_000_000_000))
        XCTAssertFalse(wait.isOverdue(now: 500))   // a clock before the start is not late
        wait.frameArrived()
        XCTAssertFalse(wait.isOverdue(now: 100_000_000_000))
        let message = CaptureError.noFirstFrame(device: "pipewire:cam", seconds: 2, detail: "negotiated YUY2 320x240 @ 30 fps").description
        XCTAssertEqual(message, "pipewire:cam: no first frame within 2 s (negotiated YUY2 320x240 @ 30 fps); "
                       + "the producer may be paused or stalled (--first-frame-timeout sets the bound)")
        XCTAssertFalse(CaptureError.noFirstFrame(device: "d", seconds: 1, detail: "").isTransient)
    }
}
