/// The bound on a source's first frame: from linking (or reopening) until a frame arrives, a
/// source that sends nothing for `timeout` seconds ends the run rather than wait silently. A pure
/// value over the times it is given, so its rule is tested without a clock.
struct FirstFrameWait: Sendable, Hashable {
    /// When the wait began (monotonic ns).
    let since: UInt64
    /// Seconds allowed.
    let timeout: Double
    /// Whether no frame has come yet.
    private(set) var isWaiting = true

    init(since: UInt64, timeout: Double) {
        self.since = since
        self.timeout = timeout
    }

    /// A frame came: the bound no longer applies (until the next reopen makes a new wait).
    mutating func frameArrived() { isWaiting = false }

    /// Whether the first frame is late at `now` (monotonic ns).
    func isOverdue(now: UInt64) -> Bool {
        isWaiting && now >= since && Double(now - since) / 1e9 >= timeout
    }
}
