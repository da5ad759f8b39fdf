import Dispatch

/// Splits `0..<count` into at most `threads` contiguous chunks and runs them in parallel.
///
/// With one thread (or little work) it runs inline, so single-threaded runs never touch
/// Dispatch. The kernels' own threads; OpenBLAS keeps its own pool.
@inline(__always)
func parallelFor(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    parallelChunks(count, threads: threads) { _, range in body(range) }
}

/// Like ``parallelFor``, also passing each chunk's index (below `threads`), so a kernel can
/// give every chunk its own slice of scratch space.
@inline(__always)
func parallelChunks(_ count: Int, threads: Int, _ body: (Int, Range<Int>) -> Void) {
    let chunks = min(threads, count)
    if chunks <= 1 {
        if count > 0 { body(0, 0..<count) }
        return
    }
    withoutActuallyEscaping(body) { body in
        let box = UncheckedBox(body)
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            let lo = count * chunk / chunks
            let hi = count * (chunk + 1) / chunks
            if lo < hi { box.value(chunk, lo..<hi) }
        }
    }
}

/// Carries a non-Sendable closure into `concurrentPerform`, whose chunks touch disjoint memory.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
