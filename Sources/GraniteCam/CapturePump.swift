import Granite
import GraniteCapture
import GraniteMedia
import Synchronization

/// The pump: pulls frames from the source, starts each one's stages, and broadcasts each result
/// in order. Two loops share it so a frame's transfers and compute overlap the next one's:
///
/// ```
///  capture loop: source ─► flow.acquire() ─► (depth slot) ─► stages.start ──┐  (upload, submit)
///                                                                           ▼  started frames, in order
///  result loop:                       FrameReady (.quiet, broadcast) ◄── result()  (wait, read back)
/// ```
/// The gate (``FlowGate``) bounds the frames between source and outlets, started ones included:
/// each admitted frame carries its ``FrameSlot`` in `FrameReady`, and its last outlet frees it.
/// A live run feeds the chain the newest depth map the depth relay made (its age in frames goes
/// with the frame) and, for a frame due for depth while the depth relay is free, the model's input
/// made by the chain from the frame it uploaded (the frame goes to the device once); a non-live
/// run estimates every due frame's own depth before the chain, so the filters and the written
/// map belong to the same frame. After `frameLimit` frames it stops the source itself, so no
/// frame past the limit is ever broadcast.
enum CapturePump {
    /// One frame between the two loops.
    struct Started: Sendable {
        let frame: Frame
        let slot: FrameSlot
        let work: Result<StartedFrame, any Error>
        let wantsDepth: Bool
        let depthSkipped: Bool
        let depthAge: UInt64?
    }

    /// Frames the run may still start (the frame limit less those started, plus those lost: a
    /// frame lost in the result loop gives its place back).
    final class Budget: Sendable {
        private let left: Atomic<Int>
        init(_ limit: UInt64?) { left = Atomic(limit.map { Int(clamping: $0) } ?? Int.max) }
        /// Takes a place; false when none is left.
        func take() -> Bool {
            var current = left.load(ordering: .sequentiallyConsistent)
            while current > 0 {
                let (done, now) = left.compareExchange(expected: current, desired: current - 1, ordering: .sequentiallyConsistent)
                if done { return true }
                current = now
            }
            return false
        }
        /// Gives a place back.
        func giveBack() { left.add(1, ordering: .sequentiallyConsistent) }
        /// Whether a place is left.
        var isOpen: Bool { left.load(ordering: .sequentiallyConsistent) > 0 }
    }

    /// What the result loop counted.
    struct Losses: Sendable {
        var lost: UInt64 = 0
        var first: String?
    }

    static func run(_ parts: CaptureParts, resources: CaptureResources, connection: GraniteConnection) async {
        let source: any FrameSource, stream: AsyncStream<CaptureEvent>
        do throws(CaptureError) {
            (source, stream) = try resources.startSource(parts)
        } catch {
            connection.request(CamEvents.SourceEnded(sourceStats: CaptureStats(), failure: error.description), .broadcast)
            return
        }
        let budget = Budget(parts.settings.frameLimit)
        let (started, feed) = AsyncStream.makeStream(of: Started.self)
        var failure: String?
        let losses = await withTaskGroup(of: Losses.self) { group in
            group.addTask {
                await results(started, parts: parts, resources: resources, source: source, budget: budget, connection: connection)
            }
            failure = await capture(stream, parts: parts, resources: resources, budget: budget, feed: feed, connection: connection)
            feed.finish()
            return await group.next() ?? Losses()
        }
        source.stop()
        connection.request(CamEvents.SourceEnded(sourceStats: source.stats, failure: failure, lostToFaults: losses.lost,
                                                 firstLoss: losses.first), .broadcast)
    }

    /// The capture loop: admits frames and starts their stages; returns the source's last failure.
    static func capture(_ stream: AsyncStream<CaptureEvent>, parts: CaptureParts, resources: CaptureResources,
                        budget: Budget, feed: AsyncStream<Started>.Continuation, connection: GraniteConnection) async -> String? {
        let settings = parts.settings
        let live = settings.isLive
        let chainWantsDepth = parts.chainWantsDepth
        var admitted: UInt64 = 0
        var failure: String?
        for await event in stream {
            switch event {
            case let .started(format):
                connection.request(CamEvents.FormatChanged(format: format), .broadcast)
            case let .fault(error):
                connection.request(CamEvents.Fault(message: error.description), .broadcast)
                failure = error.description
            case let .frame(frame):
                failure = nil
                // Past the limit (frames started, none lost yet): not admitted; the stop is coming.
                guard budget.isOpen, let slot = await resources.flow.acquire() else { continue }
                guard budget.take() else {
                    slot.done()
                    continue
                }
                let index = admitted
                admitted += 1
                var depthModel: (any DepthStage)?
                if !live, let every = settings.depthEvery, let stage = parts.depth, index % UInt64(every) == 0 {
                    depthModel = stage
                }
                // The newest depth map, read once per frame from its one place.
                let newest = live ? resources.depth.newest : nil
                let depthAge = newest?.age(at: frame.sequence)
                // Live depth: a due frame goes to the depth relay only while it is free (latest wins).
                var wantsDepth = false
                var depthSkipped = false
                if live, let every = parts.liveDepthEvery, index % UInt64(every) == 0 {
                    wantsDepth = resources.depth.takeMaker()
                    depthSkipped = !wantsDepth
                }
                let job: FrameJob
                if live, let (model, every) = parts.inStreamDepth {
                    // Depth in the stream: a due frame makes the map on the device, the rest read it there.
                    job = parts.job(frame.image, depth: .liveOnDevice(index % UInt64(every) == 0 ? model : nil))
                } else if let depthModel {
                    // Non-live: this frame's own map, the model's input resized on the GPU when it can be.
                    job = parts.job(frame.image, depth: .own(depthModel))
                } else if live, chainWantsDepth, let newest, let map = newest.map {
                    // Live: the newest map in, the model's input out when due. A large map (depth at
                    // the frame's size) is kept on the device and goes up once, though a new one waits
                    // for the frames in flight that read the old; a small one (a person mask at the
                    // model's size, 147 KB) goes up with each frame, so a new mask never stalls them.
                    let small = map.bytes.count * 8 <= frame.image.bytes.count
                    job = parts.job(frame.image, depth: small ? .map(map) : .newest(map, version: newest.sequence), modelInput: wantsDepth)
                } else {
                    job = parts.job(frame.image, depth: .none, modelInput: wantsDepth)
                }
                let work = Result<StartedFrame, any Error> { try parts.start(job) }
                feed.yield(Started(frame: frame, slot: slot, work: work, wantsDepth: wantsDepth, depthSkipped: depthSkipped, depthAge: depthAge))
            }
        }
        return failure
    }

    /// The result loop: waits for each started frame in order and broadcasts it.
    static func results(_ started: AsyncStream<Started>, parts: CaptureParts, resources: CaptureResources, source: any FrameSource,
                        budget: Budget, connection: GraniteConnection) async -> Losses {
        var losses = Losses()
        var sent: UInt64 = 0
        for await item in started {
            let frame = item.frame
            var request: DepthRequest?
            do {
                let result = try item.work.get().result()
                var out = frame
                (out.image, out.yuv, out.deviceYUV) = (result.image, result.yuv, result.deviceYUV)
                var depthAge = item.depthAge
                if result.depth != nil || result.depthOnDevice { depthAge = 0 }
                if result.depthOnDevice && parts.settings.isLive { resources.depth.madeOnDevice(sequence: frame.sequence) }
                if let failure = result.depthFailure {
                    connection.request(CamEvents.Fault(message: "depth, frame \(frame.sequence): \(failure)"), .broadcast)
                }
                if item.wantsDepth {
                    request = DepthRequest(image: result.modelInput ?? frame.image, modelSized: result.modelInput != nil,
                                           width: frame.image.width, height: frame.image.height,
                                           newest: resources.depth, keepsMap: parts.chainWantsDepth)
                }
                connection.request(CamEvents.FrameReady(frame: out, processedNanos: monotonicNanos(),
                                                        sourceStats: source.stats, depth: result.depth,
                                                        depthOnDevice: result.depthOnDevice, depthAge: depthAge,
                                                        depthRequest: request, depthSkipped: item.depthSkipped, slot: item.slot),
                                   .broadcast)
                sent += 1
                if let limit = parts.settings.frameLimit, sent >= limit { resources.requestStop() }
            } catch {
                if item.wantsDepth && request == nil { resources.depth.freeMaker() }
                item.slot.done()
                budget.giveBack()
                losses.lost += 1
                if losses.first == nil { losses.first = "frame \(frame.sequence): \(error)" }
                connection.request(CamEvents.Fault(message: "frame \(frame.sequence): \(error)"), .broadcast)
            }
        }
        return losses
    }
}
