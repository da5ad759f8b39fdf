import GraniteCapture
import GraniteMedia
import GraniteML
import Marble
import XCTest
@testable import GraniteCam

/// A finished run lets go of its parts: a program that runs one pipeline after another (an app of
/// the library's, granite-bench) does not keep every earlier run's chain, buffers and model. No
/// app-level release: the event core frees the unmounted tree, its centers and the relays they own.
final class RunLifetimeTests: XCTestCase {
    func testAFinishedRunLetsGoOfItsChainAndModel() async throws {
        weak var chain: FilterChain?
        weak var model: DepthEstimator?
        do {
            var s = CamSettings()
            s.request = CaptureRequest(format: .auto, size: FrameSize(width: 64, height: 48), fps: 30)
            s.paced = false
            s.frameLimit = 3
            s.depthEvery = 1
            let stage = try MarbleStage(specs: ["depthmask:near=0,far=2"], gpu: false)
            let depth = try DepthEstimatorStage()
            (chain, model) = (stage.chain, depth.estimator)
            let summary = try await CamApp(pipeline: try CamPipeline(settings: s, stages: [stage], depth: depth)).run()
            XCTAssertEqual(summary.frames, 3)
            XCTAssertEqual(summary.depthFrames, 3)
        }
        // Relays finish their last hops on their own executors: wait for the event, bounded.
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(5))
        while (chain != nil || model != nil) && clock.now < deadline { try await clock.sleep(for: .milliseconds(2)) }
        XCTAssertNil(chain, "the run's filter chain was let go")
        XCTAssertNil(model, "the run's depth model was let go")
    }
}
