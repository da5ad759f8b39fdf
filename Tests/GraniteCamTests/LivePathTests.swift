import Foundation
@testable import Granite
import GraniteCapture
import GraniteMedia
import GraniteTesting
import Synchronization
import XCTest

@testable import GraniteCam

/// A sink that holds each write until the test lets it go (a slow reader), and counts them.
final class HeldSinkFake: FrameSink {
    let writes = Atomic<Int>(0)
    private let go = DispatchSemaphore(value: 0)
    var name: String { "held-sink-fake" }
    func write(_ frame: Frame) throws(SinkError) {
        _ = go.wait(timeout: .now() + 10)   // never hangs a failing test for long
        writes.add(1, ordering: .relaxed)
    }
    func letGo() { go.signal() }
    func finish() {}
}

/// A sink that only counts.
final class CountingSinkFake: FrameSink {
    let writes = Atomic<Int>(0)
    var name: String { "counting-sink-fake" }
    func write(_ frame: Frame) throws(SinkError) { writes.add(1, ordering: .relaxed) }
    func finish() {}
}

/// The live path forward only: admission in one place (``FlowGate``), a frame that carries its
/// own release (``FrameSlot``: its last writer frees it, nothing comes back through the root),
/// the newest depth map in one place (``NewestDepth``), and in-process runs whose memory stays flat.
final class LivePathTests: CamTestCase {
    // MARK: Admission

    func testAdmissionRefusesWhenFullAndWhenClosed() {
        let gate = FlowGate(limit: 2)
        let first = gate.admit(), second = gate.admit()
        XCTAssertNotNil(first)
        XCTAssertNotNil(second)
        XCTAssertNil(gate.admit(), "full: a third frame is refused")
        XCTAssertEqual(gate.pending, 2)
        first?.done()
        XCTAssertEqual(gate.pending, 1, "the slot's last holder freed its place")
        let third = gate.admit()
        XCTAssertNotNil(third, "room again")
        XCTAssertNil(gate.admit())
        gate.close()
        second?.done()
        XCTAssertNil(gate.admit(), "closed: nothing more is admitted, room or not")
        third?.done()
        XCTAssertEqual(gate.pending, 0)
        XCTAssertEqual(gate.freed, 3)
        XCTAssertEqual(gate.peak, 2)
    }

    func testTheWaitingPumpIsAdmittedWhenASlotIsFreed() async {
        let gate = FlowGate(limit: 1)
        let held = gate.admit()
        let waiting = Task { await gate.acquire() }
        try? await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(gate.pending, 1, "the pump waits while the gate is full")
        held?.done()
        let next = await waiting.value
        XCTAssertNotNil(next, "freeing the slot admitted the waiting frame")
        XCTAssertEqual(gate.pending, 1)
        next?.done()
        gate.close()
        let refused = await gate.acquire()
        XCTAssertNil(refused, "a closed gate refuses at once")
    }

    // MARK: A frame carries its own release

    func testASlotIsFreedByItsLastHolderOnly() {
        let gate = FlowGate(limit: 3)
        guard let slot = gate.admit() else { return XCTFail("admitted") }
        slot.share(2)          // the root hands the frame to two outlets
        slot.done()            // the root is done routing it
        XCTAssertFalse(slot.isFree, "two outlets still write the frame")
        slot.done()            // the sinks took it
        XCTAssertFalse(slot.isFree)
        XCTAssertEqual(gate.pending, 1)
        slot.done()            // the file is written: the last writer frees the place
        XCTAssertTrue(slot.isFree)
        XCTAssertEqual(gate.pending, 0)
        XCTAssertEqual(gate.freed, 1, "freed once")
    }

    func testASlotNobodyFinishesFreesItsPlaceWhenDropped() {
        let gate = FlowGate(limit: 1)
        do {
            let slot = gate.admit()
            slot?.share(1)     // handed to an outlet whose event is then dropped (an unmounted relay)
        }
        XCTAssertEqual(gate.pending, 0, "a dropped slot gives its place back")
        XCTAssertNotNil(gate.admit())
    }

    /// The root hands a frame to the sinks and the writer; the sinks (held by a slow reader) are its
    /// last writer: the place is freed there, after the file, and no event comes back to the root
    /// for it (the exhaustive store fails on any the test does not assert: only `Saved`, the
    /// file's news for pinning and the status, reaches the root).
    func testAFrameIsFreedByItsLastWriterWithNoRootHop() async throws {
        let sink = HeldSinkFake()
        let output = folder.appendingPathComponent("out").path
        var s = CamSettings()
        s.source = .device(CamReducerTests.missing)
        s.outputDirectory = output
        s.save = .every
        let component = CamComponent(pipeline: try CamPipeline(settings: s, stages: [ToRGBA()], sinks: [sink]))
        let store = try await GraniteTestStore(component)
        Task { await component.runCapture() }
        await store.receive(CamEvents.Start.self, renders: 1)
        await store.receive(CamEvents.SourceEnded.self, renders: 1) {
            $0.ended = true
            $0.failure = "\(CamReducerTests.missing): no such video device"
        }
        let gate = component.center.capture.resources.flow
        guard let slot = gate.admit() else { return XCTFail("admitted") }
        let frame = Frame(image: try Image(width: 4, height: 2, format: .rgba8, bytes: [UInt8](repeating: 7, count: 32)),
                          sequence: 0, timestampNanos: 1_000_000, source: "test")
        await store.send(CamEvents.FrameReady(frame: frame, processedNanos: 2_000_000, sourceStats: CaptureStats(), slot: slot),
                         renders: 0) { $0.routed = 1 }
        await store.receive(CamEvents.Saved.self, renders: 0)
        XCTAssertFalse(slot.isFree, "the file is written, the sinks still hold the frame")
        XCTAssertEqual(gate.pending, 1)
        sink.letGo()
        await store.runtime.drain()
        XCTAssertTrue(slot.isFree, "the sink relay, the frame's last writer, freed its place")
        XCTAssertEqual(gate.pending, 0)
        XCTAssertEqual(sink.writes.load(ordering: .relaxed), 1)
        await store.finish()   // nothing else reached the root: no release travelled back
    }

    /// A whole run: the root reduces one job per frame (its FrameReady), none for releases — the
    /// jobs of a 40-frame run exceed a 10-frame run's by exactly 30.
    func testARunCostsTheRootOneJobPerFrame() async throws {
        func rootJobs(frames: UInt64) async throws -> (jobs: UInt64, written: Int) {
            let sink = CountingSinkFake()
            let s = settings { $0.frameLimit = frames; $0.paced = false; $0.live = false; $0.statusHz = 1 }
            let app = CamApp(pipeline: try CamPipeline(settings: s, sinks: [sink]))
            let summary = try await app.run()
            XCTAssertEqual(summary.frames, frames)
            XCTAssertEqual(app.flow.pending, 0, "every frame's place was freed")
            XCTAssertEqual(app.flow.freed, frames)
            return (app.root.command.jobsAccepted, sink.writes.load(ordering: .relaxed))
        }
        let short = try await rootJobs(frames: 10), long = try await rootJobs(frames: 40)
        XCTAssertEqual(short.written, 10)
        XCTAssertEqual(long.written, 40)
        XCTAssertEqual(long.jobs - short.jobs, 30, "one root job per frame (FrameReady); a release is none")
    }

    // MARK: The newest depth map in one place

    func testTheNewestDepthMapAndTheDepthRelaysPlaceLiveInOnePlace() throws {
        let newest = NewestDepth()
        XCTAssertNil(newest.newest)
        XCTAssertTrue(newest.takeMaker())
        XCTAssertFalse(newest.takeMaker(), "one frame at a time")
        let map = try Image(width: 2, height: 2, format: .grayF32, bytes: [UInt8](repeating: 0, count: 16))
        let request = DepthRequest(image: map, modelSized: false, width: 2, height: 2, newest: newest, keepsMap: true)
        request.answered(map, sequence: 5)
        XCTAssertEqual(newest.newest?.sequence, 5)
        XCTAssertNotNil(newest.newest?.map)
        XCTAssertEqual(newest.newest?.age(at: 9), 4)
        XCTAssertTrue(newest.makerFree, "the answer freed the place where the model finished")
        newest.madeOnDevice(sequence: 12)
        XCTAssertEqual(newest.newest?.sequence, 12)
        XCTAssertNil(newest.newest?.map, "a map made on the chain's device stays there")
        XCTAssertTrue(newest.takeMaker())
        DepthRequest(image: map, modelSized: false, width: 2, height: 2, newest: newest, keepsMap: true).answered(nil, sequence: 13)
        XCTAssertEqual(newest.newest?.sequence, 12, "a failed estimate keeps the last map")
        XCTAssertTrue(newest.makerFree)
    }

    // MARK: Debug switches, read once

    func testDebugSwitchesComeFromOneVariableAndTheOldNames() {
        func parse(_ env: [String: String]) -> (GraniteDebug, [String]) {
            let parsed = GraniteDebug.parse { env[$0] }
            return (parsed.switches, parsed.unknown)
        }
        XCTAssertEqual(parse([:]).0, [])
        XCTAssertEqual(parse(["GRANITE_DEBUG": "gpu-yuv, overlap,staging"]).0, [.gpuYUV, .overlap, .staging])
        XCTAssertEqual(parse(["GRANITE_DEBUG": "no-overlap,yuv-copy,bogus"]).1, ["bogus"])
        XCTAssertEqual(parse(["GRANITE_GPU_YUV": "1", "GRANITE_GPU_OVERLAP": "0", "GRANITE_GPU_STAGING": "1",
                              "GRANITE_YUV_IN_PLACE": "0"]).0, [.gpuYUV, .noOverlap, .staging, .yuvCopy], "the old names still work")
        XCTAssertEqual(parse(["GRANITE_GPU_OVERLAP": "1", "GRANITE_GPU_STAGING": "0"]).0, [.overlap])
    }

    // MARK: In-process runs, one after another

    /// `granite-bench cam`'s in-process runs (the paced test pattern through the benchmark's chain
    /// on the device), one after another in one process: resident memory stays flat run over run.
    func testInProcessRunsDoNotGrowMemoryRunOverRun() async throws {
        func run() async throws {
            var s = CamSettings()
            s.request = CaptureRequest(format: .auto, size: FrameSize(width: 320, height: 240), fps: 60)
            s.duration = 0.4
            s.statusHz = 2
            let stage = try MarbleStage(specs: ["blur:sigma=2 | sobel | colormatrix:rr=0.393,rg=0.769,rb=0.189"])
            let summary = try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage])).run()
            XCTAssertGreaterThan(summary.frames, 0)
        }
        for _ in 0..<3 { try await run() }   // warm-up: the device, its pipeline cache, the allocator's arenas
        MemoryProbe.trim()
        let before = MemoryProbe.residentKiB()
        let runs = 8
        var samples: [Int] = []
        for _ in 0..<runs {
            try await run()
            MemoryProbe.trim()
            samples.append(MemoryProbe.residentKiB())
        }
        let perRun = Double(samples.last! - before) / Double(runs)
        print("in-process runs: RSS \(before) KiB before, after each run \(samples) KiB; \(perRun) KiB a run")
        XCTAssertLessThan(perRun, 512, "resident memory grew \(perRun) KiB a run: \(before) → \(samples) KiB")
    }
}
