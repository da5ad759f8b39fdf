/// A few byte arrays a producer of same-size frames (the test pattern, a filter chain's read-back)
/// fills again and again, round-robin, instead of allocating every frame.
///
/// Megabyte frames are given their own mmap by the camera app (so freed frames go back to the
/// kernel and memory stays flat); every new one is then fresh pages, zeroed by a page fault each:
/// about 2 ms of kernel time per 1280×720 frame. Reusing the storage skips that.
///
/// Safe by construction: the array handed out `slots` calls ago is refilled in place only when
/// nobody holds it any more; when a frame made from it is still in use (a slow writer), Swift's
/// copy-on-write gives the new frame fresh storage and the old one stays intact. So `slots` should
/// exceed the frames a producer usually has alive at once (queued, in flight), or that copy
/// happens every time. Not thread-safe: one producer owns it.
///
/// ```
///  make(count) ─► slot k: unique? ─yes─► fill in place ─► [UInt8] (shares the slot's storage)
///                              └─no (still held)─► copy-on-write, fill the copy
/// ```
public struct RecycledBytes: Sendable {
    private var ring: [[UInt8]]
    private var next = 0

    /// A recycler of `slots` arrays (at least 1).
    public init(slots: Int) {
        ring = [[UInt8]](repeating: [], count: max(1, slots))
    }

    /// An array of `count` bytes whose every byte `fill` writes (the previous contents are
    /// undefined): the next slot's storage when it is free and the same size, else new storage.
    public mutating func make(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        // Moved out of the ring, the slot's array is unique unless a frame made from it is alive.
        var bytes = ring[next]
        ring[next] = []
        if bytes.count != count {
            bytes = [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        }
        bytes.withUnsafeMutableBytes { fill($0) }
        ring[next] = bytes
        next = (next + 1) % ring.count
        return bytes
    }
}
