import CGraniteKernels
import Dispatch
import GraniteSync
import Synchronization
import XCTest
@testable import GraniteML

/// The parallel loops over GraniteML's worker pool: every chunk runs exactly once, whatever the
/// thread count, also with nested loops and several callers at once (the pool is taken, so
/// Dispatch runs those), and with the workers held between jobs as a model run holds them.
final class ParallelTests: XCTestCase {
    /// Runs one loop and checks the chunks: indices below `threads`, ranges tiling 0..<count.
    private func check(count: Int, threads: Int, file: StaticString = #filePath, line: UInt = #line) {
        let hits = Locked([Int](repeating: 0, count: count)), chunks = Locked<[Int]>([])
        parallelChunks(count, threads: threads) { chunk, range in
            chunks.withLock { $0.append(chunk) }
            hits.withLock { for i in range { $0[i] += 1 } }
        }
        let ran = chunks.withLock { $0.sorted() }
        XCTAssertEqual(ran, Array(0..<min(max(threads, 1), count)), "count \(count) threads \(threads)", file: file, line: line)
        XCTAssertTrue(hits.withLock { $0.allSatisfy { $0 == 1 } }, "count \(count) threads \(threads)", file: file, line: line)
    }

    func testEveryChunkRunsOnce() {
        for threads in [1, 2, 3, 8] {
            for count in [0, 1, 2, 5, 100, 1001] { check(count: count, threads: threads) }
        }
    }

    func testHeldWorkersRunManyShortJobs() {
        withWorkersHeld(threads: 3) {
            for count in 0..<2000 { check(count: count % 37, threads: 3) }
        }
        // Released: the workers sleep after a short spin and wake for the next job.
        usleep(5000)
        check(count: 64, threads: 2)
    }

    func testNestedLoopsAndConcurrentCallers() {
        let total = Atomic<Int>(0)
        parallelFor(4, threads: 2) { outer in
            for _ in outer {
                parallelFor(100, threads: 2) { inner in total.add(inner.count, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(total.load(ordering: .relaxed), 400)

        let sums = Locked([Int](repeating: 0, count: 4))
        DispatchQueue.concurrentPerform(iterations: 4) { caller in
            for _ in 0..<300 {
                parallelFor(10, threads: 2) { r in sums.withLock { $0[caller] += r.reduce(0, +) } }
            }
        }
        XCTAssertEqual(sums.withLock { $0 }, [Int](repeating: 300 * 45, count: 4))
    }
}
