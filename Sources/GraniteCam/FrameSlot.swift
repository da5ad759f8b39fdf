import Synchronization

/// One admitted frame's place in the run's ``FlowGate``, carried forward with the frame (in
/// `FrameReady`, then in each outlet's event): the frame carries its own release.
///
/// The carrier holds it once. Whoever hands the frame to `n` outlets calls ``share(_:)`` with `n`
/// first, then ``done()`` for its own hold; each outlet calls ``done()`` where it finishes with
/// the frame (the sink relay after the sinks took it, the output relay after the file and the
/// depth PNG are written). The last ``done()`` frees the place in the gate, on that outlet's own
/// executor — no event travels back through the tree for it. A slot nobody finishes (its event
/// dropped by an unmounted relay) frees its place when it is deallocated.
final class FrameSlot: Sendable {
    private let gate: FlowGate
    /// Holders not done yet (the carrier's own hold first).
    private let holds = Atomic<Int>(1)
    private let freed = Atomic<Bool>(false)

    /// A place ``FlowGate`` admitted (only the gate makes slots).
    init(gate: FlowGate) { self.gate = gate }

    /// `count` more holders (the outlets the frame is about to be handed to). Call before handing
    /// it on, while holding it: the count never reaches zero in between.
    func share(_ count: Int) {
        guard count > 0 else { return }
        holds.add(count, ordering: .acquiringAndReleasing)
    }

    /// One holder is done with the frame; the last one frees its place in the gate.
    func done() {
        let (_, left) = holds.subtract(1, ordering: .acquiringAndReleasing)
        assert(left >= 0, "FrameSlot: done() more often than the frame was held")
        if left == 0 { free() }
    }

    /// Whether the place was given back.
    var isFree: Bool { freed.load(ordering: .acquiring) }

    private func free() {
        guard !freed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        gate.free()
    }

    deinit { free() }
}
