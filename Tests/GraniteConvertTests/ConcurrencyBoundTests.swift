import Foundation
import GraniteConvert
import GraniteMedia
import XCTest

/// Images overlap across workers, and never more than `jobs` are in flight.
final class ConcurrencyBoundTests: XCTestCase {
    /// A processor that records how many calls run at once (a probe, not a fake filter: it returns the image).
    final class InFlightProbe: ImageProcessor, @unchecked Sendable {
        private let lock = NSLock()
        private var current = 0
        private(set) var most = 0
        var fingerprint: String { "probe" }

        func process(_ image: Image) throws -> Image {
            lock.lock(); current += 1; most = max(most, current); lock.unlock()
            usleep(30_000)
            lock.lock(); current -= 1; lock.unlock()
            return image
        }

        var peak: Int { lock.lock(); defer { lock.unlock() }; return most }
    }

    func testInFlightImagesAreBoundedByJobs() async throws {
        let input = ConvertFixtures.folder("bound-in")
        try ConvertFixtures.writeJPEGs(10, to: input, width: 32, height: 24)
        for jobs in [1, 2] {
            let probe = InFlightProbe()
            let summary = try await BatchConverter(inputs: [input], outputDirectory: ConvertFixtures.folder("bound-out"),
                                                   settings: ConvertSettings(filters: "probe"), processor: probe, jobs: jobs)
                .run { _ in nil }
            XCTAssertEqual(summary.converted, 10)
            XCTAssertLessThanOrEqual(probe.peak, jobs)
            if jobs == 2, ProcessInfo.processInfo.activeProcessorCount >= 2 {
                XCTAssertEqual(probe.peak, 2, "two workers never overlapped")
            }
        }
    }
}
