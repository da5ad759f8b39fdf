import CGraniteKernels
import Dispatch

/// Runs `body` over `0..<count` on `threads` threads, in up to four contiguous chunks per
/// thread claimed as threads come free: a thread slowed down (another process on its core)
/// takes fewer of them.
///
/// With one thread (or little work) it runs inline, so single-threaded runs never touch a
/// second thread. The kernels' own threads; OpenBLAS keeps its own pool.
@inline(__always)
func parallelFor(_ count: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    let chunks = threads > 1 ? min(count, threads * 4) : min(count, 1)
    runChunks(count, chunks: chunks, threads: threads) { _, range in body(range) }
}

/// Splits `n` GEMM columns into blocks aligned to 16 floats (64 bytes) and runs them through
/// ``parallelFor``; with less than `threshold` multiply-adds (`work`) in all, or few columns,
/// one block on the calling thread.
func parallelColumns(_ n: Int, work: Int, threshold: Int, threads: Int, _ body: (Range<Int>) -> Void) {
    let parts = threads > 1 && work >= threshold && n >= 64 * threads ? min(threads * 4, max(threads, n / 256)) : 1
    parallelFor(parts, threads: threads) { chunks in
        for part in chunks {
            let lo = (n * part / parts) & ~15, hi = part == parts - 1 ? n : (n * (part + 1) / parts) & ~15
            if hi > lo { body(lo..<hi) }
        }
    }
}

/// Like ``parallelFor``, also passing each chunk's index (below `threads`), so a kernel can
/// give every chunk its own slice of scratch space.
///
/// Chunks go to GraniteML's worker pool (`gk_pool`, C): workers that spin between the many
/// short steps of a model run, where Dispatch's `concurrentPerform` often woke its second
/// thread too late to share a step (2 threads ran PP-OCR no faster than 1). When the pool is
/// taken (another model running, or a nested loop) Dispatch runs the chunks.
@inline(__always)
func parallelChunks(_ count: Int, threads: Int, _ body: (Int, Range<Int>) -> Void) {
    runChunks(count, chunks: min(threads, count), threads: threads, body)
}

/// `0..<count` in `chunks` contiguous chunks on up to `threads` threads.
@inline(__always)
private func runChunks(_ count: Int, chunks: Int, threads: Int, _ body: (Int, Range<Int>) -> Void) {
    if chunks <= 1 {
        if count > 0 { body(0, 0..<count) }
        return
    }
    withoutActuallyEscaping(body) { body in
        var job = ChunkJob(count: count, chunks: chunks, body: body)
        let pooled = withUnsafeMutablePointer(to: &job) { job in
            gk_pool_run(gk_pool_shared(Int32(threads)), Int32(chunks), { context, chunk in
                context!.assumingMemoryBound(to: ChunkJob.self).pointee.run(Int(chunk))
            }, job)
        }
        if pooled != 0 { return }
        let box = UncheckedBox(job)
        DispatchQueue.concurrentPerform(iterations: chunks) { box.value.run($0) }
    }
}

/// Runs `body` (a whole model run) with GraniteML's workers held spinning between its parallel
/// steps; with one thread just runs it.
func withWorkersHeld<T>(threads: Int, _ body: () -> T) -> T {
    guard threads > 1, let pool = gk_pool_shared(Int32(threads)) else { return body() }
    gk_pool_hold(pool, 1)
    defer { gk_pool_hold(pool, 0) }
    return body()
}

/// One parallel loop: the chunking of `0..<count` and the body each chunk runs.
private struct ChunkJob {
    let count: Int
    let chunks: Int
    let body: (Int, Range<Int>) -> Void

    func run(_ chunk: Int) {
        let lo = count * chunk / chunks, hi = count * (chunk + 1) / chunks
        if lo < hi { body(chunk, lo..<hi) }
    }
}

/// Carries a non-Sendable value into `concurrentPerform`, whose chunks touch disjoint memory.
private struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
