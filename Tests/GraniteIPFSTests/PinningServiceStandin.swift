import Foundation
import GraniteIPFSTesting
import XCTest
@testable import GraniteIPFS

/// The project's test pinning service (scripts/ipfs/pinning-service) for one test: started on
/// 127.0.0.1, stopped in teardown, its spec violations checked then; skips (fails under CI=true)
/// when python or openapi-core is missing.
final class PinningServiceStandin {
    let server: PinningServiceProcess
    let token: String

    /// `http://127.0.0.1:PORT`.
    var url: String { server.url }

    /// Starts one accepting `token` with `options` (`--rate-429 0.1`, `--pin-delay 2`, ...).
    init(_ options: [String] = [], token: String = "granite-test-token", test: XCTestCase) throws {
        let ok = FileManager.default.isExecutableFile(atPath: TestSupport.python)
            && (try? TestSupport.run(TestSupport.python, ["-c", "import openapi_core"])) != nil
        try TestSupport.requirement(ok, "openapi-core is not installed in \(TestSupport.python)")
        let log = try TestSupport.tempDir(test).appendingPathComponent("pinning-service.log").path
        do {
            server = try PinningServiceProcess(packageRoot: TestSupport.root, tokens: [token], options: options, log: log)
        } catch {
            try TestSupport.requirement(false, "\(error)")
            throw error
        }
        self.token = token
        let server = self.server
        test.addTeardownBlock {
            // Every request the code under test made, and every answer, matched openapi.yaml.
            if let stats = try? server.stats() { XCTAssertEqual(stats.violations, [], "spec violations") }
            server.stop()
        }
    }

    /// Request counts so far.
    func requests() throws -> [String: Int] { try server.stats().requests }

    /// A client for it with short timeouts and quick back-off.
    func client(token: String? = nil, tries: Int = 6, timeout: Duration = .seconds(10)) throws -> PinningServiceClient {
        var configuration = PinningServiceClient.Configuration()
        configuration.connectTimeout = .seconds(2)
        configuration.requestTimeout = timeout
        configuration.maxTries = tries
        configuration.initialBackoff = .milliseconds(20)
        configuration.maxBackoff = .milliseconds(200)
        return try PinningServiceClient(service: url, token: PinningServiceToken(token ?? self.token), configuration: configuration)
    }
}
