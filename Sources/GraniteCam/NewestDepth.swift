import GraniteMedia
import GraniteSync
import Synchronization

/// A live run's newest depth map, in one place: which frame it was made from, where it is (a
/// host map the depth relay made, or a map a model wrote on the chain's device), and whether the
/// next one is being made (the depth relay's one place: latest frame wins).
///
/// ```
///  depth relay ─DepthReady─► root ─LatestDepth─► capture relay: made(map, sequence) ─┐
///  result loop (depth in the stream): madeOnDevice(sequence) ───────────────────────┤
///                                                                                    ▼
///  capture loop: newest ─► the frame's job (.newest(map, version: sequence) / .liveOnDevice)
/// ```
/// A GPU chain keeps its own copy on the device (Marble's resident depth buffer), named by the
/// `sequence` given here as its version: a cache of this map, uploaded once per new version; it
/// never decides which map is the newest. With depth in the stream the map exists only on the
/// device and this records the frame it came from (its age in frames goes with each frame).
final class NewestDepth: Sendable {
    /// The newest map as the capture loop reads it.
    struct Latest: Sendable {
        /// The host map (`grayF32`); nil when the map lives on the chain's device only.
        let map: Image?
        /// The frame it was made from (a GPU chain's version of its device copy).
        let sequence: UInt64

        /// How many frames older than frame `sequence` the map is.
        func age(at frame: UInt64) -> UInt64 { frame >= sequence ? frame - sequence : 0 }
    }

    private let latest = Locked<Latest?>(nil)
    /// Whether the depth relay is free for the next due frame (one frame at a time).
    private let makerIdle = Atomic<Bool>(true)

    /// The newest map, nil before the first.
    var newest: Latest? { latest.withLock { $0 } }

    /// The depth relay made `map` from frame `sequence` (a chain that reads depth gets it).
    func made(_ map: Image, sequence: UInt64) { latest.withLock { $0 = Latest(map: map, sequence: sequence) } }

    /// A model wrote frame `sequence`'s map on the chain's device (depth in the stream).
    func madeOnDevice(sequence: UInt64) { latest.withLock { $0 = Latest(map: nil, sequence: sequence) } }

    /// Takes the depth relay's one place, when it is free.
    func takeMaker() -> Bool {
        makerIdle.compareExchange(expected: true, desired: false, ordering: .acquiringAndReleasing).exchanged
    }

    /// Frees the depth relay's place (its answer came back, or the frame never reached it).
    func freeMaker() { makerIdle.store(true, ordering: .releasing) }

    /// Whether the depth relay is free.
    var makerFree: Bool { makerIdle.load(ordering: .acquiring) }
}
