import Foundation
import XCTest
@testable import GraniteIPFS

/// The relay-facing queue: submit never waits for the node; jobs pin once it comes up.
final class PinQueueTests: XCTestCase {
    func testSubmitWhileTheNodeIsDownPinsOnceItIsUp() async throws {
        let repo = try TestSupport.tempDir(self)
        let probe = try KuboStandin(repo: repo, test: self)
        let port = probe.port
        probe.stop()  // the node is down from here on

        var config = try probe.client().configuration
        config.connectTimeout = .milliseconds(200)
        config.maxAttempts = 1
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: probe.url), configuration: config)
        let journal = try PinJournal(path: try TestSupport.tempDir(self).appendingPathComponent("pins.jsonl").path)
        let queue = PinQueue(pinner: try Pinner(client: client, journal: journal, options: .init()),
                             retryInterval: .milliseconds(300))
        await queue.start()

        let dir = try TestSupport.tempDir(self)
        var jobs: [PinJob] = []
        for i in 0..<5 {
            let path = try TestSupport.write(TestSupport.bytes(5000 + i, seed: UInt64(i)), to: dir, "out-\(i).png")
            let start = Date()
            jobs += try await queue.submit([path])
            XCTAssertLessThan(Date().timeIntervalSince(start), 0.5, "submit must not wait for the node")
        }
        XCTAssertEqual(try journal.state().pending.count, 5)

        let node = try KuboStandin(port: port, repo: repo, test: self)
        let deadline = Date().addingTimeInterval(20)
        while try journal.state().pending.count > 0, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        await queue.stop()

        let state = try journal.state()
        XCTAssertEqual(state.pending.count, 0)
        XCTAssertEqual(Set(state.done.map(\.id)), Set(jobs.map(\.id)))
        let pins = try await node.client().pinLs(type: "recursive")
        for job in jobs { XCTAssertEqual(pins[job.cid.description], "recursive") }
    }
}
