import Foundation
import GraniteMedia
import XCTest

@testable import GraniteCapture

/// Collects every event of a stream.
func drain(_ stream: AsyncStream<CaptureEvent>, perFrame delayMicros: UInt32 = 0) async -> (frames: [Frame], faults: [CaptureError], formats: [StreamFormat]) {
    var frames: [Frame] = [], faults: [CaptureError] = [], formats: [StreamFormat] = []
    for await event in stream {
        switch event {
        case let .frame(frame):
            frames.append(frame)
            if delayMicros > 0 { usleep(delayMicros) }
        case let .fault(error): faults.append(error)
        case let .started(format): formats.append(format)
        }
    }
    return (frames, faults, formats)
}

final class TestPatternSourceTests: XCTestCase {
    func testExactCountOrderAndMonotonicTimestamps() async throws {
        let source = TestPatternSource(size: FrameSize(width: 160, height: 120), fps: nil, frameLimit: 50)
        let (frames, faults, formats) = await drain(try source.start(buffering: 64))
        XCTAssertEqual(frames.count, 50)
        XCTAssertEqual(frames.map(\.sequence), Array(0..<50))
        XCTAssertTrue(zip(frames, frames.dropFirst()).allSatisfy { $0.timestampNanos <= $1.timestampNanos })
        XCTAssertEqual(frames.map { source.pattern.readCounter($0.image) }, frames.map { $0.sequence })
        XCTAssertTrue(faults.isEmpty)
        XCTAssertEqual(formats.map(\.size), [FrameSize(width: 160, height: 120)])
        XCTAssertEqual(source.stats.delivered, 50)
        XCTAssertEqual(source.stats.dropped, 0)
    }

    /// The capture log (GRANITE_CAPTURE_LOG): each frame's counter and its time stamp, written
    /// when the source stops.
    func testCaptureLogHasEachFramesCounterAndTime() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("granite-capture-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = TestPatternSource(size: FrameSize(width: 64, height: 48), fps: nil, frameLimit: 12, captureLog: path)
        let (frames, faults, _) = await drain(try source.start(buffering: 32))
        source.stop()
        XCTAssertTrue(faults.isEmpty)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines, frames.map { "\($0.sequence) \($0.timestampNanos)"[...] })
        XCTAssertEqual(lines.count, 12)
    }

    func testPacingHoldsTheRate() async throws {
        let source = TestPatternSource(size: FrameSize(width: 64, height: 48), fps: 100, frameLimit: 21)
        let (frames, _, _) = await drain(try source.start(buffering: 32))
        XCTAssertEqual(frames.count, 21)
        let span = Double(frames.last!.timestampNanos - frames.first!.timestampNanos) / 1e9
        XCTAssertGreaterThanOrEqual(span, 0.195, "20 intervals at 100 fps cannot take less than 0.2 s")
        XCTAssertLessThan(span, 2.0)
    }

    func testSlowConsumerDropsAreCounted() async throws {
        let source = TestPatternSource(size: FrameSize(width: 64, height: 48), fps: nil, frameLimit: 400)
        let (frames, _, _) = await drain(try source.start(buffering: 2), perFrame: 3000)
        let stats = source.stats
        XCTAssertEqual(stats.delivered, 400)
        XCTAssertGreaterThan(stats.droppedByConsumer, 0)
        XCTAssertEqual(UInt64(frames.count) + stats.droppedByConsumer, 400)
        XCTAssertTrue(zip(frames, frames.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
        XCTAssertEqual(frames.last?.sequence, 399, "the newest frame is kept, older ones dropped")
    }

    func testStopEndsAnEndlessStreamAndIsIdempotent() async throws {
        let source = TestPatternSource(size: FrameSize(width: 64, height: 48), fps: 200)
        let stream = try source.start(buffering: 4)
        var count = 0
        for await event in stream {
            if case .frame = event { count += 1 }
            if count == 10 { source.stop() }
        }
        XCTAssertGreaterThanOrEqual(count, 10)
        source.stop()
        XCTAssertThrowsError(try source.start()) { error in
            XCTAssertEqual(error as? CaptureError, .invalidRequest("testpattern: a source can be started only once"))
        }
    }

    func testCancellingTheConsumerStopsTheSource() async throws {
        let source = TestPatternSource(size: FrameSize(width: 64, height: 48), fps: 500)
        let stream = try source.start(buffering: 4)
        let task = Task { await drain(stream).frames.count }
        try await Task.sleep(nanoseconds: 50_000_000)
        task.cancel()
        _ = await task.value
        source.stop()   // must return: the loop saw the termination
        let delivered = source.stats.delivered
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(source.stats.delivered, delivered, "no frames after stop")
    }
}

/// The delivery policies at the source: live drops the oldest, lossless makes the source wait.
final class FrameDeliveryTests: XCTestCase {
    func testLosslessSourceWaitsForASlowConsumer() async throws {
        let source = TestPatternSource(size: FrameSize(width: 16, height: 8), fps: nil, frameLimit: 50)
        var sequences: [UInt64] = []
        for await frame in try source.start(.lossless(buffering: 1)).frames {
            sequences.append(frame.sequence)
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        XCTAssertEqual(sequences, Array(0..<50))
        XCTAssertEqual(source.stats.dropped, 0)
        XCTAssertEqual(source.stats.delivered, 50)
    }

    func testLiveSourceDropsTheOldestAndCountsIt() async throws {
        let source = TestPatternSource(size: FrameSize(width: 16, height: 8), fps: nil, frameLimit: 50)
        var sequences: [UInt64] = []
        for await frame in try source.start(.live(buffering: 2)).frames {
            sequences.append(frame.sequence)
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        XCTAssertEqual(sequences.last, 49, "the latest frame wins")
        XCTAssertEqual(UInt64(sequences.count) + source.stats.droppedByConsumer, 50)
        XCTAssertGreaterThan(source.stats.droppedByConsumer, 0)
        XCTAssertEqual(sequences, sequences.sorted(), "order is kept")
    }

    func testStoppingUnblocksAWaitingSource() async throws {
        let source = TestPatternSource(size: FrameSize(width: 16, height: 8), fps: nil, frameLimit: nil)
        let stream = try source.start(.lossless(buffering: 1))
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        try await Task.sleep(nanoseconds: 20_000_000)   // the source now waits on a full channel
        let started = ContinuousClock.now
        source.stop()
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(1), "stop() returns although the source was blocked")
        var rest = 0
        while await iterator.next() != nil { rest += 1 }
        XCTAssertLessThanOrEqual(rest, 2, "what was queued is still readable, then the stream ends")
    }
}
