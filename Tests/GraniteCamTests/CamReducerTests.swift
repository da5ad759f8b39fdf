import Foundation
import Granite
import GraniteCapture
import GraniteMedia
import GraniteTesting
import GraniteSync
import Synchronization
import XCTest

@testable import GraniteCam

/// A live sink whose reader has gone away: every write throws `.closed` (fault injection).
final class ClosedReaderSinkFake: FrameSink {
    let writes = Atomic<Int>(0)
    let finished = Atomic<Bool>(false)
    var name: String { "closed-reader-fake" }
    func write(_ frame: Frame) throws(SinkError) {
        writes.add(1, ordering: .relaxed)
        throw .closed(sink: name)
    }
    func finish() { finished.store(true, ordering: .relaxed) }
}

/// Every reducer of `granite-cam`'s root component under the exhaustive `GraniteTestStore`:
/// exact state changes, follow-up events from the relays, renders. The root routes; the figures
/// belong to the status child (``StatusReducerTests``), which the relays' broadcasts reach too.
///
/// The store's component runs over a device that does not exist, so mounting reduces `Start`,
/// the capture relay fails to open it, and `SourceEnded` comes back: after that no frame arrives
/// on its own and each test feeds the reducers its own events.
final class CamReducerTests: CamTestCase {
    static let missing = "/dev/video-granite-none"

    /// A store over a pipeline with `change`d settings; asserts the mount's Start and SourceEnded.
    func store(_ change: (inout CamSettings) -> Void = { _ in }, stages: [any FrameStage] = [ToRGBA()],
               depth: (any DepthStage)? = nil, sinks: [any FrameSink] = [], preview: PreviewServer? = nil)
        async throws -> GraniteTestStore<CamComponent> {
        var s = CamSettings()
        s.source = .device(Self.missing)
        change(&s)
        let pipeline = try CamPipeline(settings: s, stages: stages, depth: depth, preview: preview, sinks: sinks)
        let component = CamComponent(pipeline: pipeline)
        let store = try await GraniteTestStore(component)
        Task { await component.runCapture() }   // the run's owner runs the capture (CamApp does)
        await store.receive(CamEvents.Start.self, renders: 1)
        await store.receive(CamEvents.SourceEnded.self, renders: 1) {
            $0.ended = true
            $0.failure = "\(Self.missing): no such video device"
        }
        return store
    }

    func frame(_ sequence: UInt64, captured: UInt64 = 1_000_000) throws -> Frame {
        Frame(image: try Image(width: 4, height: 2, format: .rgba8, bytes: [UInt8](repeating: UInt8(sequence), count: 32)),
              sequence: sequence, timestampNanos: captured, source: "test")
    }

    /// A processed frame holding `slot`, its place in the capture relay's gate.
    func ready(_ frame: Frame, at processed: UInt64, stats: CaptureStats = CaptureStats(), depth: DepthEstimate? = nil,
               request: DepthRequest? = nil, skipped: Bool = false, slot: FrameSlot) -> CamEvents.FrameReady {
        CamEvents.FrameReady(frame: frame, processedNanos: processed, sourceStats: stats, depth: depth,
                             depthRequest: request, depthSkipped: skipped, slot: slot)
    }

    /// Admits one frame into the store's capture gate (as the pump does).
    func admit(_ store: GraniteTestStore<CamComponent>) throws -> FrameSlot {
        try XCTUnwrap(capture(store).resources.flow.admit(), "the gate has room")
    }

    func gate(_ store: GraniteTestStore<CamComponent>) -> FlowGate { capture(store).resources.flow }

    func maps() throws -> DepthEstimate {
        DepthEstimate(map: try Image(width: 2, height: 2, format: .grayF32, bytes: [UInt8](repeating: 0, count: 16)),
                  png: try Image(width: 2, height: 2, format: .gray16, bytes: [UInt8](repeating: 9, count: 8)))
    }

    func capture(_ store: GraniteTestStore<CamComponent>) -> CaptureRelay { store.component.center.capture }

    func testStartOpensTheSourceAndItsEndReachesTheTree() async throws {
        let store = try await store()
        XCTAssertTrue(capture(store).state.running, "the capture relay reduced Open")
        XCTAssertEqual(store.component.body, "ended: \(Self.missing): no such video device")
        await store.runtime.drain()
        XCTAssertTrue(store.component.status.state.ended, "the source's end reached the status child too")
        await store.finish()
    }

    /// No outlet: the root, the frame's last holder, frees its place in the gate at once.
    func testAFrameWithNoOutletIsReleasedAtOnce() async throws {
        let store = try await store()
        let slot = try admit(store)
        await store.send(ready(try frame(7), at: 3_000_000, slot: slot), renders: 0) { $0.routed = 1 }
        XCTAssertTrue(slot.isFree, "freed as the root finished routing it")
        await store.runtime.drain()
        XCTAssertEqual(gate(store).freed, 1)
        XCTAssertEqual(store.component.status.state.frames, 0, "a frame sent to the root is not a relay broadcast")
        await store.finish()
    }

    /// A saved frame keeps its place until the output relay wrote it, which frees it; `Saved` (a
    /// broadcast the status counts too) is news for pinning, not a release.
    func testSavedFrameKeepsItsPlaceUntilTheOutputRelayWroteIt() async throws {
        let output = folder.appendingPathComponent("out").path
        let store = try await store { $0.outputDirectory = output; $0.save = .every }
        let slot = try admit(store)
        await store.send(ready(try frame(0), at: 2_000_000, slot: slot), renders: 0) { $0.routed = 1 }
        await store.receive(CamEvents.Saved.self, renders: 0)
        XCTAssertTrue(slot.isFree, "the output relay freed it once written, before telling the tree")
        await store.runtime.drain()
        XCTAssertEqual(store.component.center.output.state.written, 1)
        XCTAssertEqual(gate(store).freed, 1, "freed once")
        XCTAssertEqual(store.component.status.state.saved, 1, "the output relay's broadcast reached the status child")
        XCTAssertTrue(FileManager.default.fileExists(atPath: output + "/frame_00000000.ppm"))
        await store.finish()
    }

    /// Non-live: the frame carries its own map; it is released after both the image and the map are written.
    func testNonLiveFrameAndItsDepthMapAreTwoOutlets() async throws {
        let output = folder.appendingPathComponent("depth").path
        let store = try await store { $0.outputDirectory = output; $0.save = .every; $0.live = false; $0.depthEvery = 1 }
        let slot = try admit(store)
        await store.send(ready(try frame(3), at: 2_000_000, depth: try maps(), slot: slot), renders: 0) { $0.routed = 1 }
        await store.receive(CamEvents.DepthSaved.self, renders: 0) { _, event in
            XCTAssertEqual(event.path, output + "/depth-00000003.png")
        }
        await store.receive(CamEvents.Saved.self, renders: 0)
        XCTAssertTrue(slot.isFree, "the image, its last outlet, freed it")
        await store.runtime.drain()
        XCTAssertEqual(store.component.center.output.state.depthWritten, 1)
        XCTAssertEqual(gate(store).freed, 1, "one place per frame, given back by its last outlet")
        XCTAssertEqual(store.component.status.state.depthSaved, 1)
        await store.finish()
    }

    /// Live: one frame at a time goes to the depth relay (the capture relay took its place and made
    /// the request); frames due meanwhile are skipped; the map goes to the writer and, for a chain
    /// that reads depth, back to the capture relay, which frees the depth relay's place.
    func testLiveDepthOneFrameAtATimeAndTheMapGoesToTheChainAndTheWriter() async throws {
        let output = folder.appendingPathComponent("live").path
        let depth = SlowDepthFake(delayMicros: 300_000)
        let store = try await store({ $0.live = true; $0.depthEvery = 1; $0.outputDirectory = output },
                                    stages: [try MarbleStage(specs: ["depthmask:near=0,far=1"], gpu: false)], depth: depth)
        let newest = capture(store).resources.depth
        XCTAssertTrue(newest.takeMaker(), "the pump takes the depth relay's place for frame 5")
        XCTAssertFalse(newest.takeMaker(), "one frame at a time")
        let five = try frame(5)
        let request = DepthRequest(image: five.image, modelSized: false, width: 4, height: 2, newest: newest, keepsMap: true)
        await store.send(ready(five, at: 2_000_000, request: request, slot: try admit(store)), renders: 0) {
            $0.routed = 1
        }
        await store.send(ready(try frame(6), at: 3_000_000, skipped: true, slot: try admit(store)), renders: 0) {
            $0.routed = 2
            $0.depthSkipped = 1
        }
        await store.receive(CamEvents.DepthReady.self, renders: 0) { state, event in
            XCTAssertEqual(event.sequence, 5)
            XCTAssertNil(event.failure)
        }
        await store.receive(CamEvents.DepthSaved.self, renders: 0) { _, event in
            XCTAssertEqual(event.path, output + "/depth-00000005.png")
        }
        await store.runtime.drain()
        XCTAssertEqual(newest.newest?.sequence, 5, "the chain reads the newest map (handed over by the depth relay)")
        XCTAssertTrue(newest.makerFree, "the depth relay freed its place where the model finished")
        XCTAssertEqual(store.component.center.depth.state.estimated, 1)
        XCTAssertEqual(depth.calls.load(ordering: .relaxed), 1)
        XCTAssertEqual(gate(store).freed, 2)
        XCTAssertEqual(gate(store).pending, 0, "a live map holds no frame's place")
        await store.finish()
    }

    /// At most one preview frame per interval goes to the preview relay, which encodes and publishes it.
    func testPreviewGetsAFramePerIntervalThroughThePreviewRelay() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let store = try await store(preview: server)
        await store.send(ready(try frame(0), at: 200_000_000, slot: try admit(store)), renders: 0) {
            $0.routed = 1
            $0.lastPreviewNanos = 200_000_000
        }
        await store.send(ready(try frame(1), at: 250_000_000, slot: try admit(store)), renders: 0) { $0.routed = 2 }
        await store.runtime.drain()
        XCTAssertEqual(store.component.center.preview.state.published, 1, "the second frame came within 100 ms")
        XCTAssertEqual(server.framesPublished, 1)
        await store.finish()
    }

    /// A live sink whose reader went away: the frame's place is freed by the sink relay, the root
    /// hears it once (`SinkClosed`) and stops the run; later frames are freed there too, unheard.
    func testASinkWhoseReaderWentAwayStopsTheRun() async throws {
        let sink = ClosedReaderSinkFake()
        let store = try await store(sinks: [sink])
        let (first, second) = (try admit(store), try admit(store))   // both in flight when the reader goes
        await store.send(ready(try frame(0), at: 2_000_000, slot: first), renders: 0) { $0.routed = 1 }
        await store.receive(CamEvents.SinkClosed.self, renders: 0) {
            $0.closedBy = "closed-reader-fake"
            $0.stopping = true
        }
        // The root asks the capture relay to stop (an effect, after the root's state is published);
        // the relay closes the gate on its own executor: wait for it before looking.
        await store.runtime.drain()
        XCTAssertNil(gate(store).admit(), "the stop closed the gate")
        await store.send(ready(try frame(1), at: 3_000_000, slot: second), renders: 0) { $0.routed = 2 }
        await store.runtime.drain()
        XCTAssertTrue(first.isFree && second.isFree, "the sink relay freed both")
        XCTAssertEqual(sink.writes.load(ordering: .relaxed), 1, "no write after the reader went away")
        XCTAssertTrue(capture(store).state.stopping)
        XCTAssertEqual(gate(store).freed, 2)
        await store.finish()
        store.component.unmount()
        XCTAssertTrue(sink.finished.load(ordering: .relaxed), "the sink relay finishes its sinks when unhosted")
    }

    func testSnapshotWritesTheNextFrameOnly() async throws {
        let output = folder.appendingPathComponent("snap").path
        let store = try await store { $0.outputDirectory = output; $0.save = SavePolicy.none }
        await store.send(ready(try frame(0), at: 2_000_000, slot: try admit(store)), renders: 0) { $0.routed = 1 }
        await store.send(CamEvents.Snapshot(), renders: 0) {
            $0.snapshotPending = true
            $0.actions.snapshots = 1
        }
        await store.send(ready(try frame(1), at: 3_000_000, slot: try admit(store)), renders: 0) {
            $0.routed = 2
            $0.snapshotPending = false
        }
        await store.receive(CamEvents.Saved.self, renders: 0)
        await store.send(ready(try frame(2), at: 4_000_000, slot: try admit(store)), renders: 0) { $0.routed = 3 }
        XCTAssertTrue(FileManager.default.fileExists(atPath: output + "/frame_00000001.ppm"))
        await store.finish()
    }

    func testStopAsksTheCaptureRelayOnce() async throws {
        let store = try await store()
        await store.send(CamEvents.Stop(), renders: 0) { $0.stopping = true }
        await store.send(CamEvents.Stop(), renders: 0)
        await store.runtime.drain()
        XCTAssertTrue(capture(store).state.stopping)
        XCTAssertTrue(capture(store).resources.isStopping)
        await store.finish()
    }
}

/// Every reducer of the status child under the exhaustive `GraniteTestStore`.
final class StatusReducerTests: CamTestCase {
    func frame(_ sequence: UInt64, captured: UInt64 = 1_000_000) throws -> Frame {
        Frame(image: try Image(width: 4, height: 2, format: .rgba8, bytes: [UInt8](repeating: 1, count: 32)),
              sequence: sequence, timestampNanos: captured, source: "test")
    }

    func store(output: @escaping @Sendable (String) -> Void = { _ in }) async throws -> GraniteTestStore<StatusComponent> {
        try await GraniteTestStore(StatusComponent(output: output))
    }

    func testFrameReadyCountsQuietlyFromTheEventsTimes() async throws {
        let store = try await store()
        let gate = FlowGate(limit: 2)   // the frames' places (the status never touches them)
        var stats = CaptureStats()
        stats.delivered = 8
        stats.droppedByConsumer = 1
        let map = try Image(width: 2, height: 2, format: .grayF32)
        let png = try Image(width: 2, height: 2, format: .gray16)
        let first = CamEvents.FrameReady(frame: try frame(7), processedNanos: 3_000_000,
                                         sourceStats: stats, depthAge: 2, slot: try XCTUnwrap(gate.admit()))
        await store.send(first, renders: 0) {
            $0.frames = 1
            $0.lastSequence = 7
            $0.sourceStats = stats
            $0.rate.tick(3_000_000)
            $0.latency.add(2_000_000)
            $0.depthAge = 2
        }
        XCTAssertEqual(store.state.latency.percentile(50), 2.0)
        let own = CamEvents.FrameReady(frame: try frame(8), processedNanos: 4_000_000,
                                       sourceStats: stats, depth: DepthEstimate(map: map, png: png), depthAge: 0,
                                       slot: try XCTUnwrap(gate.admit()))
        await store.send(own, renders: 0) {
            $0.frames = 2
            $0.lastSequence = 8
            $0.rate.tick(4_000_000)
            $0.latency.add(3_000_000)
            $0.depthAge = 0
            $0.depthFrames = 1
            $0.depthRate.tick(4_000_000)
        }
        await store.finish()
    }

    func testFormatFaultSavedAndDepthEventsUpdateTheirCounters() async throws {
        let store = try await store()
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
        await store.send(CamEvents.DepthReady(sequence: 2, finishedNanos: 5_000, failure: "model broke"), renders: 0) {
            $0.lastFault = "depth: model broke"
        }
        let maps = DepthEstimate(map: try Image(width: 1, height: 1, format: .grayF32), png: try Image(width: 1, height: 1, format: .gray16))
        await store.send(CamEvents.DepthReady(sequence: 3, finishedNanos: 6_000, maps: maps, failure: nil), renders: 0) {
            $0.depthFrames = 1
            $0.depthRate.tick(6_000)
        }
        await store.send(CamEvents.DepthSaved(sequence: 3, path: "/tmp/depth-3.png", failure: nil), renders: 0) { $0.depthSaved = 1 }
        await store.send(CamEvents.DepthSaved(sequence: 4, path: nil, failure: "disk full"), renders: 0) {
            $0.saveFailures = 2
            $0.lastFault = "depth: disk full"
        }
        await store.finish()
    }

    func testTickAndTheSourcesEndRenderTheStatusLine() async throws {
        let lines = Locked<[String]>([])
        let store = try await store(output: { line in lines.withLock { $0.append(line) } })
        await store.send(CamEvents.Tick(), renders: 1)
        XCTAssertTrue(store.state.statusLine.hasPrefix("warming up | frames 0 | fps 0.0 | latency p50 – ms"), store.state.statusLine)
        // Once the source has a format, the line says it waits for the first frame, and of what.
        var format = StreamFormat(format: .yuyv, size: FrameSize(width: 320, height: 240), bytesPerLine: 640, fps: 30)
        format.detail = "pipewire:cam sends YUY2"
        await store.send(CamEvents.FormatChanged(format: format), renders: 0) { $0.format = format }
        XCTAssertTrue(store.state.statusLine.hasPrefix("waiting for the first frame | frames 0 |"), store.state.statusLine)
        XCTAssertTrue(store.state.statusLine.contains("| yuyv 320x240 @ 30 fps (pipewire:cam sends YUY2)"), store.state.statusLine)
        var stats = CaptureStats()
        stats.droppedBySource = 3
        await store.send(CamEvents.SourceEnded(sourceStats: stats, failure: nil), renders: 1) {
            $0.ended = true
            $0.sourceStats = stats
        }
        XCTAssertEqual(lines.withLock { $0.count }, 3, "one line per render: mount, Tick, SourceEnded")
        XCTAssertTrue(lines.withLock { $0.last ?? "" }.contains("dropped 3"), lines.withLock { $0.last ?? "" })
        await store.finish()
    }
}
