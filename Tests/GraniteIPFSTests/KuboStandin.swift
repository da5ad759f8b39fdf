import Foundation
import GraniteIPFSTesting
import XCTest
@testable import GraniteIPFS

/// The project's Kubo test node (scripts/ipfs/kubo-testnode: real Kubo core) for one test: started
/// on 127.0.0.1, stopped in teardown; skips (fails under CI=true) when it cannot start.
final class KuboStandin {
    private let server: KuboStandinProcess

    /// `http://127.0.0.1:PORT`.
    var url: String { server.url }
    /// Its port (to restart on the same one).
    var port: Int { server.port }

    /// Starts one with `options` (e.g. `["--fail-rate", "0.3"]`), its repo in a temp folder unless given.
    init(_ options: [String] = [], port: Int = 0, repo: URL? = nil, test: XCTestCase) throws {
        do {
            server = try KuboStandinProcess(packageRoot: TestSupport.root, options: options, port: port,
                                            repo: (try repo ?? TestSupport.tempDir(test)).path)
        } catch let error as StandinError {
            try TestSupport.requirement(false, "\(error)")
            throw error
        }
        let server = self.server
        test.addTeardownBlock { server.stop() }
    }

    /// A client for it with short timeouts and quick retries.
    func client(auth: KuboAuth? = nil, attempts: Int = 5) throws -> KuboClient {
        var config = KuboClient.Configuration()
        config.connectTimeout = .seconds(2)
        config.readTimeout = .seconds(20)
        config.requestTimeout = .seconds(20)
        config.maxAttempts = attempts
        config.initialBackoff = .milliseconds(20)
        config.maxBackoff = .milliseconds(200)
        return KuboClient(endpoint: try KuboEndpoint(parsing: url), auth: auth, configuration: config)
    }

    /// Stops it now (the node "goes away").
    func stop() { server.stop() }
}
