import Granite
import GraniteCapture
import GraniteMedia

/// What a finished run reports.
public struct CamSummary: Sendable, Equatable {
    /// Frames that went through the pipeline.
    public var frames: UInt64
    /// Frames written.
    public var saved: UInt64
    /// Frames lost (source gaps + a full pipeline).
    public var dropped: UInt64
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
    /// The live output whose reader went away, ending the run (`--pipe` into a closed pipe).
    public var closedSink: String?
    /// The last status line.
    public var statusLine: String
}

/// One `granite-cam` run: mounts the root component, ticks the status, waits for the end,
/// flushes outputs, unmounts.
public final class CamApp: Sendable {
    /// The pipeline of this run.
    public let pipeline: CamPipeline
    /// The root component.
    public let root: CamComponent
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
        let ticker = Task.detached { [root] in
            let interval = UInt64(1e9 / max(0.1, settings.statusHz))
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: interval)
                if Task.isCancelled { break }
                try? root.sendEvent(CamEvents.Tick())
            }
        }
        if let threshold = settings.largeBlockMmapThreshold { MemoryProbe.mapLargeBlocks(atLeast: threshold) }
        let trimmer = settings.memoryTrimInterval.map { seconds in
            Task.detached(priority: .utility) {
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: UInt64(max(0.1, seconds) * 1e9))
                    if !Task.isCancelled { MemoryProbe.trim() }
                }
            }
        }
        let timer = settings.duration.map { seconds in
            Task.detached { [pipeline] in
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                if !Task.isCancelled { pipeline.requestStop() }
            }
        }
        await pipeline.waitUntilEnded()
        ticker.cancel()
        timer?.cancel()
        trimmer?.cancel()
        await root.command.settle()
        await root.center.output.command.settle()
        await root.center.depth.command.settle()
        await root.center.preview.command.settle()
        await root.center.sinks.command.settle()
        for sink in pipeline.sinks { sink.finish() }
        await root.command.settle()
        await root.center.pin.command.settle()
        pipeline.writer?.close()
        try? root.sendEvent(CamEvents.Tick())   // the final status line
        await root.command.settle()
        let state = root.state
        let closedSink = root.center.sinks.state.closedBy
        root.unmount()
        let pinning = await pipeline.pins?.finish()
        var summary = CamSummary(frames: state.frames, saved: state.saved, dropped: state.sourceStats.dropped,
                                 renders: root.command.renderCount, latencyP50: state.latency.percentile(50),
                                 latencyP99: state.latency.percentile(99), depthFrames: state.depthFrames,
                                 seconds: Double(monotonicNanos() - started) / 1e9, failure: state.failure,
                                 statusLine: state.statusLine)
        summary.depthSaved = state.depthSaved
        summary.pinning = pinning
        summary.closedSink = closedSink
        if let failure = state.failure, state.frames == 0 {
            throw .invalidOptions(failure)
        }
        return summary
    }

    /// Asks the run to finish: the current frame completes, outputs flush, `run` returns.
    public func stop() { pipeline.requestStop() }
}
