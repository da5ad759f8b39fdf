import Granite
import GraniteCapture
import GraniteMedia
import GraniteSync
import Synchronization

/// Everything the capture relay owns for a run: its parts, the running source, the run's one
/// admission gate and the newest depth map the chain reads (live runs). Only the relay's
/// expeditions and its pump touch it; other parts of the tree reach it with events, except a
/// frame's ``FrameSlot``, which frees its place in ``flow`` wherever the frame's last outlet is.
final class CaptureResources: Sendable {
    /// The source, stages and model (given once, before mounting).
    let parts = Owned<CaptureParts>()
    /// Admission: frames in flight, at most 3. The pump takes a ``FrameSlot`` per frame; the
    /// frame's last outlet frees it (``FrameSlot/done()``).
    let flow = FlowGate(limit: 3)
    /// The newest depth map, the frame it came from, and the depth relay's one place (live runs).
    let depth = NewestDepth()
    private let stopRequested = Atomic<Bool>(false)
    private let source = Locked<(any FrameSource)?>(nil)
    /// The relay's connection, once ``CaptureRelayEvents/Open`` was reduced: the pump sends its
    /// frames through it.
    private let connection = Locked<GraniteConnection?>(nil)
    private let opened = Latch()

    /// Hands the pump the relay's connection and lets ``pump()`` start (the Open expedition, once).
    func open(_ connection: GraniteConnection) {
        self.connection.withLock { $0 = connection }
        opened.signal()
    }

    /// The relay's last host left: drop the connection the pump was handed (it holds the relay),
    /// so the relay and what it owns are freed once the pump, which keeps its own copy, has ended.
    func close() {
        connection.withLock { $0 = nil }
    }

    /// Runs the run's capture: waits until the relay was opened (mounted, its Open reduced),
    /// then pumps frames until the source ends. The run's owner calls this in its own task
    /// (``CamApp/run()``; a test that drives the component does the same), so the pump lives
    /// and ends in the owner's scope; the relay's reducers only open it and stop the source.
    func pump() async {
        await opened.wait()
        guard let connection = connection.withLock({ $0 }), let parts = parts.value else { return }
        await CapturePump.run(parts, resources: self, connection: connection)
    }

    /// Makes and starts the source; the pump calls this once.
    func startSource(_ parts: CaptureParts) throws(CaptureError) -> (any FrameSource, AsyncStream<CaptureEvent>) {
        let made = parts.makeSource()
        let stream = try made.start(parts.settings.delivery)
        source.withLock { $0 = made }
        if isStopping { stopSourceSoon() }
        return (made, stream)
    }

    /// Ends the run's capture: the gate admits nothing more, the source stops.
    func requestStop() {
        guard !stopRequested.exchange(true, ordering: .sequentiallyConsistent) else { return }
        flow.close()
        stopSourceSoon()
    }

    /// Whether a stop was asked for.
    var isStopping: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    private func stopSourceSoon() {
        // FrameSource.stop() waits for the source's thread; never do that on a reducer's executor.
        guard let running = source.withLock({ $0 }) else { return }
        Task.detached { running.stop() }
    }
}
