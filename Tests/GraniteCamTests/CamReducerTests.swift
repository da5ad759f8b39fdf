import Foundation
import Granite
import GraniteCapture
import GraniteMedia
import GraniteTesting
import XCTest

@testable import GraniteCam

/// Every reducer of `granite-cam`'s root component under the exhaustive `GraniteTestStore`:
/// exact state changes, follow-up events from the relays, renders.
///
/// The store's component runs over a device that does not exist, so mounting reduces `Start`,
/// the capture relay fails to open it, and `SourceEnded` comes back: after that no frame arrives
/// on its own and each test feeds the reducers its own events.
final class CamReducerTests: CamTestCase {
    static let missing = "/dev/video-granite-none"

    /// A store over a pipeline with `change`d settings; asserts the mount's Start and SourceEnded.
    func store(_ change: (inout CamSettings) -> Void = { _ in }, depth: (any DepthStage)? = nil,
               encoder: any FrameEncoder = NetpbmEncoder()) async throws -> (GraniteTestStore<CamComponent>, CamPipeline) {
        var s = CamSettings()
        s.source = .device(Self.missing)
        change(&s)
        let pipeline = try CamPipeline(settings: s, encoder: encoder, depth: depth)
        let store = try await GraniteTestStore(CamComponent(pipeline: pipeline))
        await store.receive(CamEvents.Start.self, renders: 1)
        await store.receive(CamEvents.SourceEnded.self, renders: 1) {
            $0.ended = true
            $0.failure = "\(Self.missing): no such video device"
        }
        return (store, pipeline)
    }

    func frame(_ sequence: UInt64, captured: UInt64 = 1_000_000) throws -> Frame {
        Frame(image: try Image(width: 4, height: 2, format: .rgba8, bytes: [UInt8](repeating: UInt8(sequence), count: 32)),
              sequence: sequence, timestampNanos: captured, source: "test")
    }

    func ready(_ frame: Frame, at processed: UInt64, stats: CaptureStats = CaptureStats(), depth: DepthMaps? = nil) -> CamEvents.FrameReady {
        CamEvents.FrameReady(frame: frame, input: frame.image, processedNanos: processed, sourceStats: stats, depth: depth)
    }

    func testStartOpensTheSourceAndItsFailureEndsTheRun() async throws {
        let (store, pipeline) = try await store()
        await pipeline.waitUntilEnded()
        XCTAssertTrue(store.component.center.capture.state.running, "the capture relay reduced Open")
        await store.finish()
    }

    func testFrameReadyCountsQuietlyFromTheEventsTimes() async throws {
        let (store, pipeline) = try await store()
        var stats = CaptureStats()
        stats.delivered = 8
        stats.droppedByConsumer = 1
        await store.send(ready(try frame(7), at: 3_000_000, stats: stats), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 7
            $0.sourceStats = stats
            $0.rate.tick(3_000_000)
            $0.latency.add(2_000_000)
        }
        XCTAssertEqual(store.state.latency.percentile(50), 2.0)
        XCTAssertEqual(pipeline.flow.pending, 0, "an unsaved frame is released at once")
        await store.finish()
    }

    func testSavedFrameGoesThroughTheOutputRelayAndComesBackAsSaved() async throws {
        let output = folder.appendingPathComponent("out").path
        let (store, pipeline) = try await store { $0.outputDirectory = output; $0.save = .every }
        pipeline.flow.add()   // as the pump's acquire would
        await store.send(ready(try frame(0), at: 2_000_000), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 0
            $0.rate.tick(2_000_000)
            $0.latency.add(1_000_000)
        }
        await store.receive(CamEvents.Saved.self, renders: 0) { $0.saved = 1 }
        XCTAssertEqual(store.component.center.output.state.written, 1)
        XCTAssertEqual(pipeline.flow.pending, 0, "the output relay released the frame once written")
        XCTAssertTrue(FileManager.default.fileExists(atPath: output + "/frame_00000000.ppm"))
        await store.finish()
    }

    func testAFrameBeyondTheLimitChangesNothingAndTheLimitStopsTheRun() async throws {
        let (store, pipeline) = try await store { $0.frameLimit = 1 }
        await store.send(ready(try frame(0), at: 2_000_000), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 0
            $0.rate.tick(2_000_000)
            $0.latency.add(1_000_000)
        }
        XCTAssertTrue(pipeline.isStopping, "the frame limit asks the run to stop")
        await store.send(ready(try frame(1), at: 3_000_000), renders: 0)
        XCTAssertEqual(pipeline.flow.pending, 0)
        await store.finish()
    }

    /// Non-live: the frame carries its own depth map; the output relay writes it and answers.
    func testNonLiveDepthMapIsWrittenByTheOutputRelay() async throws {
        let output = folder.appendingPathComponent("depth").path
        let (store, pipeline) = try await store { $0.outputDirectory = output; $0.live = false; $0.depthEvery = 1 }
        let png = try Image(width: 2, height: 2, format: .gray16, bytes: [UInt8](repeating: 9, count: 8))
        let map = try Image(width: 2, height: 2, format: .grayF32, bytes: [UInt8](repeating: 0, count: 16))
        pipeline.flow.add()
        await store.send(ready(try frame(3), at: 2_000_000, depth: DepthMaps(map: map, png: png)), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 3
            $0.rate.tick(2_000_000)
            $0.latency.add(1_000_000)
        }
        await store.receive(CamEvents.DepthReady.self, renders: 0) { state, event in
            XCTAssertEqual(event.sequence, 3)
            XCTAssertEqual(event.path, output + "/depth-00000003.png")
            state.depthFrames = 1
            state.depthSaved = 1
            state.depthRate.tick(event.finishedNanos)
        }
        XCTAssertEqual(store.component.center.output.state.depthWritten, 1)
        XCTAssertEqual(pipeline.flow.pending, 0, "frame and depth write both released")
        await store.finish()
    }

    /// Live: the frame goes to the depth relay's latest-frame slot; its map becomes the latest.
    func testLiveDepthGoesThroughTheDepthRelay() async throws {
        let depth = SlowDepthFake(delayMicros: 0)
        let (store, pipeline) = try await store({ $0.live = true; $0.depthEvery = 1 }, depth: depth)
        await store.send(ready(try frame(5), at: 2_000_000), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 5
            $0.rate.tick(2_000_000)
            $0.latency.add(1_000_000)
        }
        await store.receive(CamEvents.DepthReady.self, renders: 0) { state, event in
            XCTAssertEqual(event.sequence, 5)
            XCTAssertNil(event.path)
            XCTAssertNil(event.failure)
            state.depthFrames = 1
            state.depthRate.tick(event.finishedNanos)
        }
        XCTAssertEqual(pipeline.latestDepth.withLock { $0?.sequence }, 5)
        XCTAssertEqual(store.component.center.depth.state.estimated, 1)
        await store.finish()
    }

    /// At most one preview frame per interval goes to the preview relay, which encodes and publishes it.
    func testPreviewGetsAFramePerIntervalThroughThePreviewRelay() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        var s = CamSettings()
        s.source = .device(Self.missing)
        let pipeline = try CamPipeline(settings: s, preview: server)
        let store = try await GraniteTestStore(CamComponent(pipeline: pipeline))
        await store.receive(CamEvents.Start.self, renders: 1)
        await store.receive(CamEvents.SourceEnded.self, renders: 1) {
            $0.ended = true
            $0.failure = "\(Self.missing): no such video device"
        }
        await store.send(ready(try frame(0), at: 200_000_000), renders: 0) {
            $0.frames = 1
            $0.lastSequence = 0
            $0.rate.tick(200_000_000)
            $0.latency.add(199_000_000)
            $0.lastPreviewNanos = 200_000_000
        }
        await store.send(ready(try frame(1), at: 250_000_000), renders: 0) {
            $0.frames = 2
            $0.lastSequence = 1
            $0.rate.tick(250_000_000)
            $0.latency.add(249_000_000)
        }
        await store.runtime.drain()
        XCTAssertEqual(store.component.center.preview.state.published, 1, "the second frame came within 100 ms")
        await store.finish()
    }

    func testFormatFaultSavedAndDepthEventsUpdateTheirCounters() async throws {
        let (store, _) = try await store()
        let format = StreamFormat(format: .yuyv, size: FrameSize(width: 640, height: 480), bytesPerLine: 1280, fps: 30)
        await store.send(CamEvents.FormatChanged(format: format), renders: 0) { $0.format = format }
        await store.send(CamEvents.Fault(message: "device went away"), renders: 0) {
            $0.faults = 1
            $0.lastFault = "device went away"
        }
        await store.send(CamEvents.Saved(sequence: 1, path: nil, failure: "disk full"), renders: 0) {
            $0.saveFailures = 1
            $0.lastFault = "disk full"
        }
        await store.send(CamEvents.Saved(sequence: 2, path: "/tmp/x.ppm", failure: nil), renders: 0) { $0.saved = 1 }
        await store.send(CamEvents.DepthReady(sequence: 2, finishedNanos: 5_000, path: nil, failure: "model broke"), renders: 0) {
            $0.depthFrames = 1
            $0.depthRate.tick(5_000)
            $0.lastFault = "depth: model broke"
        }
        await store.finish()
    }

    func testTickRendersTheStatusLineAndChangesNothing() async throws {
        let (store, _) = try await store()
        await store.send(CamEvents.Tick(), renders: 1)
        XCTAssertTrue(store.component.body.hasPrefix("frames 0 | fps 0.0 | latency p50 – ms"), store.component.body)
        await store.finish()
    }
}
