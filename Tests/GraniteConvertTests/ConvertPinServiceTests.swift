import Foundation
import GraniteIPFS
import GraniteIPFSTesting
import GraniteTesting
import XCTest

/// `granite convert --pin-service URL`: the batch is pinned on the Kubo test node, then its root
/// CID on the project's test pinning service (every request checked against openapi.yaml).
final class ConvertPinServiceTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    func testPinServicePinsTheBatchRootRemotely() throws {
        let input = ConvertFixtures.folder("psa-in"), out = ConvertFixtures.folder("psa-out")
        let state = ConvertFixtures.folder("psa-state")
        let python = Self.root.appendingPathComponent(".venv/bin/python").path
        let ok = (try? ChildProgram.output(python, ["-c", "import openapi_core"])) != nil
        try Prerequisite.require(ok, "openapi-core not installed in \(python) (run scripts/tiers/pre-ipfs.sh)")
        let node: KuboStandinProcess, service: PinningServiceProcess
        do {
            node = try KuboStandinProcess(packageRoot: Self.root, repo: ConvertFixtures.folder("psa-repo"))
            service = try PinningServiceProcess(packageRoot: Self.root, tokens: ["convert-token"], options: ["--pin-delay", "0.3"],
                                                log: state + "-service.log")
        } catch {
            try Prerequisite.require(false, "test node or service not startable: \(error)")
            throw error
        }
        addTeardownBlock { node.stop(); service.stop() }
        try ConvertFixtures.writeJPEGs(3, to: input)
        let r = try ConvertFixtures.runGranite(["convert", input, "-o", out, "--api", node.url, "--pin-service", service.url],
                                               environment: ["GRANITE_PIN_JOURNAL": state + "/pins.jsonl",
                                                             "GRANITE_PIN_SERVICE_TOKEN": "convert-token"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out + "/manifest.json"))) as? [String: Any])
        let root = try XCTUnwrap(manifest["rootCID"] as? String)
        XCTAssertTrue(r.stdout.contains("pinned 3 of 3 files on "), r.stdout)
        XCTAssertTrue(r.stdout.contains("pinned 1 of 1 on \(service.url): ipfs://\(root)/"), r.stdout)
        XCTAssertFalse(r.stdout.contains("convert-token") || r.stderr.contains("convert-token"))
        let stats = try service.stats()
        XCTAssertEqual(stats.requests["POST /pins"], 1, "only the root CID")
        XCTAssertEqual(stats.violations, [])
        let remote = try PinJournal(path: state + "/pins.jsonl").remoteState(service: service.url)
        XCTAssertEqual(remote.map(\.job.cid.description), [root])
        XCTAssertEqual(remote.map(\.outcome), [.pinned])
    }
}
