import Foundation
import GraniteMedia
import XCTest

@testable import GraniteCapture

/// `--audio`'s sources without a sound server: the spelling, ALSA's errors for a PCM that is not
/// there, and a real read through libasound from its `null` PCM (on every machine, card or not).
final class AudioSourceTests: XCTestCase {
    func testSpecParsing() throws {
        XCTAssertEqual(try AudioSourceSpec(parsing: "pipewire"), .pipeWire(node: nil))
        XCTAssertEqual(try AudioSourceSpec(parsing: "pipewire:av-microphone"), .pipeWire(node: "av-microphone"))
        XCTAssertEqual(try AudioSourceSpec(parsing: "alsa"), .alsa(pcm: "default"))
        XCTAssertEqual(try AudioSourceSpec(parsing: "alsa:hw:1,0"), .alsa(pcm: "hw:1,0"))
        XCTAssertEqual(try AudioSourceSpec(parsing: "alsa:pipewire:NODE=mic"), .alsa(pcm: "pipewire:NODE=mic"))
        XCTAssertEqual(try AudioSourceSpec(parsing: "alsa:plughw:CARD=Mic,DEV=0").description, "alsa:plughw:CARD=Mic,DEV=0")
        XCTAssertEqual(try AudioSourceSpec(parsing: "alsa").description, "alsa:default")
        for bad in ["jack", "alsa:", "pipewire:", "ALSA", "hw:1,0"] {
            XCTAssertThrowsError(try AudioSourceSpec(parsing: bad), bad) { error in
                XCTAssertTrue("\(error)".contains("--audio takes pipewire, pipewire:NODE, alsa or alsa:PCM"), "\(error)")
                XCTAssertTrue("\(error)".hasSuffix("not \(bad)"), "\(error)")
            }
        }
        XCTAssertEqual(AudioSourceSpec.alsa(pcm: "null").makeSource(firstBlockTimeout: 1).name, "alsa:null")
        XCTAssertEqual(AudioSourceSpec.pipeWire(node: "mic").makeSource(firstBlockTimeout: 1).name, "pipewire:mic")
    }

    func testAMissingPCMIsATypedErrorNamingIt() {
        for pcm in ["hw:99,0", "granite-no-such-pcm"] {
            let source = ALSAAudioSource(pcm: pcm, firstBlockTimeout: 2)
            XCTAssertThrowsError(try source.start { _ in XCTFail("no sound from \(pcm)") }) { error in
                guard case let .alsa(named, detail)? = error as? CaptureError else { return XCTFail("\(pcm): \(error)") }
                XCTAssertEqual(named, pcm)
                XCTAssertTrue(detail.hasPrefix("no such PCM (snd_pcm_open: "), detail)
                XCTAssertTrue(detail.contains("sound card") || detail.contains("the cards are"), detail)
                XCTAssertTrue("\(error)".hasPrefix("\(pcm): ALSA: no such PCM"), "\(error)")
            }
            XCTAssertNil(source.format)
            XCTAssertEqual(source.samplesDelivered, 0)
            source.stop()   // nothing open: a no-op
        }
    }

    /// What snd-aloop's card answered in the vivid-vm tier (a real driver under qemu), typed without
    /// a card: another capture holding the PCM is EBUSY at open; the card unbound mid-run is ENODEV
    /// from snd_pcm_wait; both name the PCM.
    func testABusyOrVanishedCardIsATypedErrorNamingThePCM() {
        let source = ALSAAudioSource(pcm: "hw:Loopback,1,0")
        XCTAssertEqual("\(source.error("snd_pcm_open", code: EBUSY, opening: true))",
                       "hw:Loopback,1,0: ALSA: busy: another program is capturing from it (snd_pcm_open)")
        for code in [ENODEV, EIO, EPIPE] {
            let failure = source.readFailure("snd_pcm_wait", code: code, seconds: 8.56)
            guard case let .disconnected(device, detail) = failure else { return XCTFail("\(code): \(failure)") }
            XCTAssertEqual(device, "alsa:hw:Loopback,1,0")
            XCTAssertEqual(detail, "snd_pcm_wait: \(ALSAAudioSource.message(-code)), after 8.6 s of sound")
        }
        XCTAssertEqual("\(source.readFailure("snd_pcm_wait", code: ENODEV, seconds: 3))",
                       "alsa:hw:Loopback,1,0: device disconnected (snd_pcm_wait: No such device, after 3 s of sound)")
        let other = source.readFailure("snd_pcm_readi", code: EINVAL, seconds: 0.5)
        guard case let .alsa(pcm, detail) = other else { return XCTFail("\(other)") }
        XCTAssertEqual(pcm, "hw:Loopback,1,0")
        XCTAssertEqual(detail, "snd_pcm_readi failed: Invalid argument, after 0.5 s of sound")
    }

    /// libasound's `null` PCM captures silence in any format asked, as fast as it is read: the
    /// source holds it to real time (a second of sound takes most of a second).
    func testTheNullPCMGivesSilenceAtTheRateAskedInCountedBlocks() throws {
        for (rate, seconds) in [(48_000, 1.0), (44_100, 0.5)] {
            let source = ALSAAudioSource(pcm: "null", firstBlockTimeout: 5, preferredRate: rate)
            let blocks = Collected()
            let started = monotonicNanos()
            try source.start { block in blocks.withLock { $0.append(block) } }
            let format = try XCTUnwrap(source.format)
            XCTAssertEqual(format.sampleRate, rate)
            XCTAssertEqual(format.channels, 2)
            let want = Int(seconds * Double(rate))
            let deadline = monotonicNanos() + 10_000_000_000
            while blocks.withLock({ $0.reduce(0) { $0 + $1.frames } }) < want, monotonicNanos() < deadline { usleep(1000) }
            let took = Double(monotonicNanos() - started) / 1e9
            source.stop()
            let got = blocks.withLock { $0 }
            let frames = got.reduce(0) { $0 + $1.frames }
            XCTAssertGreaterThanOrEqual(frames, want)
            // Ahead of real time by at most the allowance (0.1 s) and one read (0.1 s).
            XCTAssertGreaterThanOrEqual(took, seconds - 0.25, "\(frames) samples at \(rate) Hz in \(took) s: faster than real time")
            XCTAssertLessThan(Double(frames) / Double(rate), took * 1.01 + 0.25, "\(frames) samples at \(rate) Hz in \(took) s")
            XCTAssertEqual(frames, source.samplesDelivered, "every sample read is delivered")
            XCTAssertTrue(got.allSatisfy { $0.sampleRate == rate && $0.channels == 2 && $0.frames > 0 && $0.samples.count == $0.frames * 2 })
            XCTAssertTrue(got.allSatisfy { $0.samples.allSatisfy { $0 == 0 } }, "the null PCM is silent")
            XCTAssertTrue(got.allSatisfy { $0.timestampNanos > 0 && $0.timestampNanos <= monotonicNanos() }, "stamped on CLOCK_MONOTONIC, not ahead of now")
            XCTAssertNil(source.failure)
            XCTAssertEqual(source.overruns, 0)
            usleep(50_000)
            XCTAssertEqual(blocks.withLock { $0.count }, got.count, "nothing delivered after stop")
            source.stop()
        }
    }

    func testSixteenBitSamplesAsFloats() {
        let s16: [Int16] = [-32768, 0, 16384, 32767]
        let floats = s16.withUnsafeBytes { AudioBlock.floats(s16: $0.baseAddress!, count: 4) }
        XCTAssertEqual(floats, [-1, 0, 0.5, Float(32767) / 32768])
        let f32: [Float] = [0.25, -0.75]
        XCTAssertEqual(f32.withUnsafeBytes { AudioBlock.floats(f32: $0.baseAddress!, count: 2) }, f32)
    }

    /// Blocks that arrive together are stamped one after another from the clock's time for them.
    func testBlocksThatArriveTogetherFollowEachOther() {
        var clock = AudioArrivalClock(rate: 48_000)
        let stamped = clock.stamp([[Float](repeating: 0, count: 960 * 2), [Float](repeating: 0, count: 480 * 2)], channels: 2, arrival: 10_000_000_000)
        XCTAssertEqual(stamped.map(\.frames), [960, 480])
        XCTAssertEqual(stamped[0].timestampNanos, 10_000_000_000 - 30_000_000, "the last sample arrived at the arrival: 1440 samples = 30 ms before it")
        XCTAssertEqual(stamped[1].timestampNanos, stamped[0].endNanos)
        XCTAssertEqual(clock.samples, 1440)
    }

    /// A block's time from the PCM's status: its newest sample `delay` samples before the status's time.
    func testTheStatusPlacesABlockEndingDelaySamplesBeforeItsTime() {
        let arrival: UInt64 = 50_000_000_000
        // 960 samples read; 480 more captured since (10 ms at 48 kHz); the status 0.2 ms after the read.
        XCTAssertEqual(ALSAAudioSource.captureStart(statusNanos: 50_000_200_000, delay: 480, frames: 960, rate: 48_000, arrival: arrival),
                       50_000_200_000 - 10_000_000 - 20_000_000)
        XCTAssertNil(ALSAAudioSource.captureStart(statusNanos: 0, delay: 0, frames: 960, rate: 48_000, arrival: arrival), "no time")
        XCTAssertNil(ALSAAudioSource.captureStart(statusNanos: 50_100_000_000, delay: 0, frames: 960, rate: 48_000, arrival: arrival),
                     "a block that ends after it was read")
        XCTAssertNil(ALSAAudioSource.captureStart(statusNanos: 48_000_000_000, delay: 0, frames: 960, rate: 48_000, arrival: arrival),
                     "a clock other than CLOCK_MONOTONIC (or a status from long ago)")
    }

    func testPacingHoldsAnUnpacedPCMToRealTimeAndLeavesACardAlone() {
        XCTAssertLessThanOrEqual(ALSAAudioSource.secondsAhead(frames: 48_000, rate: 48_000, elapsedNanos: 1_000_000_000), 0, "a card: a second in a second")
        XCTAssertLessThanOrEqual(ALSAAudioSource.secondsAhead(frames: 48_000 * 3601, rate: 48_000, elapsedNanos: 3_600_000_000_000), 0, "a card 0.03 % fast for an hour")
        XCTAssertLessThanOrEqual(ALSAAudioSource.secondsAhead(frames: 2048, rate: 48_000, elapsedNanos: 0), 0, "a plugin's first cycles at once")
        XCTAssertEqual(ALSAAudioSource.secondsAhead(frames: 48_000, rate: 48_000, elapsedNanos: 0), 0.9, accuracy: 1e-9, "null: a second at once")
    }
}

/// The blocks a source delivered (on its thread), read on the test's.
private final class Collected: @unchecked Sendable {
    // @unchecked: `blocks` is touched only holding `lock`.
    private let lock = NSLock()
    private var blocks: [AudioBlock] = []

    func withLock<R>(_ body: (inout [AudioBlock]) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&blocks)
    }
}
