import Dispatch
import GraniteSync

/// The bounded queue between a source's thread and its consumer, with the ``FrameDelivery``
/// policy: a live channel drops its oldest frame when full, a lossless one blocks the producer
/// until the consumer takes one. Control events (format, faults) are never dropped.
///
/// The producer is the source's own thread (it may block); the consumer is async (it suspends
/// on a continuation, never polls).
final class FrameChannel: Sendable {
    /// What a `push` did with a frame.
    enum Outcome: Equatable {
        /// Queued (or handed straight to a waiting consumer).
        case enqueued
        /// Queued; an older frame was dropped to make room (live only).
        case droppedOldest
        /// The channel is closed: nobody will read it.
        case closed
    }

    private struct State {
        /// Pending events from `head` on; taken ones are nil (their frames let go at once, not
        /// when the queue is next compacted: a frame's storage is reused once nobody holds it).
        var queue: [CaptureEvent?] = []
        var head = 0
        var frames = 0
        var closed = false
        var consumer: CheckedContinuation<CaptureEvent?, Never>?
        var producerWaiting = false
    }

    let delivery: FrameDelivery
    private let state = Locked(State())
    private let space = DispatchSemaphore(value: 0)

    init(delivery: FrameDelivery) {
        self.delivery = delivery
    }

    /// Queues a frame per the policy; a lossless channel blocks here while it is full.
    func push(frame: CaptureEvent) -> Outcome {
        while true {
            enum Step { case done(Outcome, CheckedContinuation<CaptureEvent?, Never>?), wait }
            let step: Step = state.withLock { s in
                if s.closed { return .done(.closed, nil) }
                if let consumer = s.consumer {
                    s.consumer = nil
                    return .done(.enqueued, consumer)
                }
                if s.frames < delivery.buffering {
                    s.queue.append(frame)
                    s.frames += 1
                    return .done(.enqueued, nil)
                }
                if delivery.isLive {
                    // Drop the oldest frame (control events stay in place).
                    if let index = s.queue[s.head...].firstIndex(where: { if case .frame = $0 { true } else { false } }) {
                        s.queue.remove(at: index)
                    }
                    s.queue.append(frame)
                    return .done(.droppedOldest, nil)
                }
                s.producerWaiting = true
                return .wait
            }
            switch step {
            case let .done(outcome, consumer):
                consumer?.resume(returning: frame)
                return outcome
            case .wait:
                space.wait()
            }
        }
    }

    /// Queues a control event (never dropped, never blocks).
    func push(control event: CaptureEvent) {
        let consumer: CheckedContinuation<CaptureEvent?, Never>? = state.withLock { s in
            if s.closed { return nil }
            if let consumer = s.consumer {
                s.consumer = nil
                return consumer
            }
            s.queue.append(event)
            return nil
        }
        consumer?.resume(returning: event)
    }

    /// The next event, or nil once the channel is closed and empty.
    func next() async -> CaptureEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CaptureEvent?, Never>) in
                enum Ready { case event(CaptureEvent?), parked }
                var wake = false
                let ready: Ready = state.withLock { s in
                    if s.head < s.queue.count {
                        let event = s.queue[s.head]
                        s.queue[s.head] = nil
                        s.head += 1
                        if case .frame = event {
                            s.frames -= 1
                            if s.producerWaiting {
                                s.producerWaiting = false
                                wake = true
                            }
                        }
                        if s.head == s.queue.count {
                            s.queue.removeAll(keepingCapacity: true)
                            s.head = 0
                        } else if s.head > 64 {
                            s.queue.removeFirst(s.head)
                            s.head = 0
                        }
                        return .event(event)
                    }
                    if s.closed { return .event(nil) }
                    s.consumer = continuation
                    return .parked
                }
                if wake { space.signal() }
                if case let .event(event) = ready { continuation.resume(returning: event) }
            }
        } onCancel: {
            close(discarding: true)
        }
    }

    /// Ends the channel: the consumer reads what is queued (or nothing, when `discarding`), then nil;
    /// a blocked producer wakes and its frame is refused.
    func close(discarding: Bool = false) {
        let (consumer, wake): (CheckedContinuation<CaptureEvent?, Never>?, Bool) = state.withLock { s in
            s.closed = true
            if discarding {
                s.queue.removeAll()
                s.head = 0
                s.frames = 0
            }
            let consumer = s.consumer
            s.consumer = nil
            let wake = s.producerWaiting
            s.producerWaiting = false
            return (consumer, wake)
        }
        if wake { space.signal() }
        consumer?.resume(returning: nil)
    }

    /// The channel as an `AsyncStream`; `onRelease` runs when the stream is dropped or its
    /// consumer is cancelled (the source should stop).
    func stream(onRelease: @escaping @Sendable () -> Void) -> AsyncStream<CaptureEvent> {
        let guardian = ReleaseGuard(onRelease)
        return AsyncStream(unfolding: { [self] in
            withExtendedLifetime(guardian) {}
            return await self.next()
        }, onCancel: { [self] in
            close(discarding: true)
            onRelease()
        })
    }
}

/// Runs a closure when the last reference goes (the stream that held it was dropped).
private final class ReleaseGuard: Sendable {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}
