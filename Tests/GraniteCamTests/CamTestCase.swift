import Foundation
import GraniteCapture
import XCTest

@testable import GraniteCam

/// The scaffolding the app-level tests share: a fresh output folder per test (removed after it)
/// and small, fast settings to change per test.
class CamTestCase: XCTestCase {
    /// This test's own folder, `granite-cam-<TestClass>-<UUID>` under the temporary directory.
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("granite-cam-\(type(of: self))-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// 64×48 frames at up to 200 fps from the automatic source format, then `change`.
    func settings(_ change: (inout CamSettings) -> Void) -> CamSettings {
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 64, height: 48), fps: 200)
        change(&s)
        return s
    }
}
