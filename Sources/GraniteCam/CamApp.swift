import Granite
import GraniteCapture
import GraniteIPFS
import GraniteMedia
import Synchronization

/// What a finished run reports.
public struct CamSummary: Sendable, Equatable {
    /// Frames that went through the pipeline.
    public var frames: UInt64
    /// Frames written.
    public var saved: UInt64
    /// Frames lost (source gaps + a full pipeline).
    public var dropped: UInt64
    /// Whether the run was live (frames dropped when behind) or not (back-pressure).
    public var live: Bool = false
    /// Frames a live run dropped because the pipeline was behind (latest frame won).
    public var droppedBehind: UInt64 = 0
    /// Frames the source itself lost (gaps in its sequence, e.g. the driver's, or unreadable files).
    public var droppedBySource: UInt64 = 0
    /// Frames lost to a fault while processing (a stage threw: no device, a GPU error); counted
    /// in ``dropped``. A non-live run that lost any fails (`granite-cam` exits 1).
    public var lostToFaults: UInt64 = 0
    /// The first of those faults.
    public var firstLoss: String?
    /// Status renders (the render step ran this often).
    public var renders: Int
    /// Latency p50, ms (capture to processed).
    public var latencyP50: Double?
    /// Latency p99, ms (capture to processed).
    public var latencyP99: Double?
    /// Depth maps made.
    public var depthFrames: UInt64
    /// Depth maps written as 16-bit PNGs.
    public var depthSaved: UInt64 = 0
    /// What `--pin` did (nil without it).
    public var pinning: CamPinning.Outcome?
    /// Wall time, seconds.
    public var seconds: Double
    /// Why the source ended, if it failed.
    public var failure: String?
    /// Times the source went away and came back (a camera reopened, a PipeWire node made anew).
    public var reconnects: UInt64 = 0
    /// The longest of those gaps, in seconds.
    public var longestGap: Double = 0
    /// The live output whose reader went away, ending the run (`--pipe` into a closed pipe).
    public var closedSink: String?
    /// The last status line.
    public var statusLine: String

    /// Which mode ran and what was dropped, and why
    /// (`live run: 12 dropped (11: pipeline behind, latest frame won; 1: lost by the source)`).
    public var modeLine: String {
        var text = "\(live ? "live" : "non-live") run: \(dropped) dropped"
        var reasons: [String] = []
        if droppedBehind > 0 { reasons.append("\(droppedBehind): pipeline behind, latest frame won") }
        if droppedBySource > 0 { reasons.append("\(droppedBySource): lost by the source") }
        if lostToFaults > 0 { reasons.append("\(lostToFaults): failed while processing") }
        if !reasons.isEmpty { text += " (" + reasons.joined(separator: "; ") + ")" }
        return text
    }
}

/// One `granite-cam` run: mounts the component tree (root, its relays, the status child),
/// ticks the status, waits for the source to end, drains the tree, unmounts.
public final class CamApp: Sendable {
    /// The pipeline of this run.
    public let pipeline: CamPipeline
    /// The root component.
    let root: CamComponent
    private let runtime: GraniteRuntime

    /// An app over `pipeline`, in its own runtime.
    public init(pipeline: CamPipeline, runtime: GraniteRuntime = GraniteRuntime()) {
        self.pipeline = pipeline
        self.runtime = runtime
        root = CamComponent(pipeline: pipeline)
    }

    /// Runs until the source ends, the frame limit or duration is reached, or ``stop()``.
    public func run() async throws(CamError) -> CamSummary {
        let started = monotonicNanos()
        do {
            try root.mount(in: runtime)
        } catch {
            throw .invalidOptions("cannot start the pipeline: \(error)")
        }
        let settings = pipeline.settings
        await pipeline.pins?.queue.start()
        if let threshold = settings.largeBlockMmapThreshold { MemoryProbe.mapLargeBlocks(atLeast: threshold) }
        // The run lives in this scope: the capture (source, stages, pump) runs in this task until
        // the source ends; the status ticker, the memory trimmer and the --duration timer beside
        // it are cancelled then.
        await withDiscardingTaskGroup { group in
            group.addTask { [status = root.status] in
                let interval = UInt64(1e9 / max(0.1, settings.statusHz))
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: interval)
                    if Task.isCancelled { break }
                    try? status.sendEvent(CamEvents.Tick())
                }
            }
            if let seconds = settings.memoryTrimInterval {
                group.addTask(priority: .utility) {
                    while !Task.isCancelled {
                        try? await Task.sleep(nanoseconds: UInt64(max(0.1, seconds) * 1e9))
                        if !Task.isCancelled { MemoryProbe.trim() }
                    }
                }
            }
            if let seconds = settings.duration {
                group.addTask { [self] in
                    try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                    if !Task.isCancelled { stop() }
                }
            }
            await root.runCapture()
            group.cancelAll()
        }
        // The source has ended: what is left is in the tree's mailboxes (writes, depth, preview,
        // live outputs, pins and their replies). The runtime drains it all, follow-ups included.
        await runtime.drain()
        try? root.status.sendEvent(CamEvents.Tick())   // the final status line
        await runtime.drain()
        let state = root.state, figures = root.status.state
        let renders = root.status.command.renderCount
        // Unmounting unhosts the relays: the output relay closes its writer, the sink relay finishes its sinks.
        root.unmount()
        let pinning = await pipeline.pins?.finish()
        var summary = CamSummary(frames: figures.frames, saved: figures.saved, dropped: figures.sourceStats.dropped,
                                 renders: renders, latencyP50: figures.latency.percentile(50),
                                 latencyP99: figures.latency.percentile(99), depthFrames: figures.depthFrames,
                                 seconds: Double(monotonicNanos() - started) / 1e9, failure: state.failure,
                                 statusLine: figures.statusLine)
        summary.depthSaved = figures.depthSaved
        summary.live = settings.isLive
        summary.droppedBehind = figures.sourceStats.droppedByConsumer
        summary.droppedBySource = figures.sourceStats.droppedBySource
        summary.lostToFaults = figures.lostToFaults
        summary.firstLoss = figures.firstLoss
        summary.dropped += figures.lostToFaults
        summary.pinning = pinning
        summary.closedSink = state.closedBy
        summary.reconnects = figures.sourceStats.reconnects
        summary.longestGap = figures.sourceStats.longestGap
        if let failure = state.failure, figures.frames == 0 {
            throw .invalidOptions(failure)
        }
        return summary
    }

    /// Frames processed so far (for progress while it runs).
    public var framesSoFar: UInt64 { root.status.state.frames }

    /// Asks the run to finish: the current frame completes, outputs flush, `run` returns.
    public func stop() {
        // Before `run` mounts the tree the event waits in the root's mailbox and is reduced once
        // it is mounted (after the Start link), when the capture relay is hosted.
        try? root.sendEvent(CamEvents.Stop())
    }

    /// Asks for the next processed frame to be written whatever the save policy (needs an
    /// output folder): `granite-cam` does this on SIGUSR1; the preview page's button sends the
    /// same `CamEvents.Snapshot` into the root.
    public func requestSnapshot() { try? root.sendEvent(CamEvents.Snapshot()) }

    /// The capture relay's back-pressure gate (tests check its bounds).
    var flow: FlowGate { root.center.capture.resources.flow }
}
