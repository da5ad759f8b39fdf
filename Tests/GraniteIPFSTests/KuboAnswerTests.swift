import Foundation
import XCTest
@testable import GraniteIPFS

/// Kubo answers parsed without a node: the pure functions the client (and the fuzzer) call.
final class KuboAnswerTests: XCTestCase {
    private let node = "http://127.0.0.1:5001"
    private let cid = "bafkreidfw5x4v2tcxj3pdo5mhvyr6q6n3ju3u6gdozqxvc6fxj7vtlc6ey"

    func testLineSplitterJoinsPiecesAndKeepsTheUnterminatedTail() {
        var splitter = KuboAnswer.LineSplitter()
        XCTAssertEqual(splitter.append(Array("{\"a\":1}\n{\"b\"".utf8)), [Array("{\"a\":1}".utf8)])
        XCTAssertEqual(splitter.append(Array(":2}\n\n{\"c\":3}".utf8)), [Array("{\"b\":2}".utf8), []])
        XCTAssertEqual(splitter.finish(), Array("{\"c\":3}".utf8))
        XCTAssertNil(splitter.finish())
    }

    func testAddLinesBecomeEntriesAndProgress() throws {
        let added = try XCTUnwrap(try KuboAnswer.line(Array("{\"Name\":\"a.jpg\",\"Hash\":\"\(cid)\",\"Size\":\"42\"}".utf8),
                                                      node: node, command: "add"))
        XCTAssertEqual(KuboAnswer.addEvent(added), .added(name: "a.jpg", hash: cid, size: 42))
        let progress = try XCTUnwrap(try KuboAnswer.line(Array("{\"Name\":\"a.jpg\",\"Bytes\":262144}".utf8), node: node, command: "add"))
        XCTAssertEqual(KuboAnswer.addEvent(progress), .progress(AddProgress(name: "a.jpg", bytes: 262_144)))
        XCTAssertNil(try KuboAnswer.line(Array(" \t\r".utf8), node: node, command: "add"), "blank lines are skipped")
        XCTAssertNil(KuboAnswer.addEvent(["Other": 1]))
    }

    func testBadAndInBandErrorLinesThrowTypedErrors() {
        XCTAssertThrowsError(try KuboAnswer.line(Array("{\"Name\":".utf8), node: node, command: "add")) { error in
            guard case .badResponse(_, "add", let reason) = error as? KuboError else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("not a JSON object"), reason)
        }
        XCTAssertThrowsError(try KuboAnswer.line(Array("{\"Message\":\"context canceled\",\"Code\":0,\"Type\":\"error\"}".utf8),
                                                 node: node, command: "add")) { error in
            XCTAssertEqual(error as? KuboError, .streamError(node: node, command: "add", message: "context canceled"))
        }
    }

    func testErrorBodiesAndTrailers() {
        XCTAssertEqual(KuboAnswer.commandError(status: 500, text: "{\"Message\":\"not pinned or pinned indirectly\",\"Code\":0,\"Type\":\"error\"}\n",
                                               node: node, command: "pin/rm"),
                       .command(node: node, command: "pin/rm", status: 500, message: "not pinned or pinned indirectly", code: 0))
        XCTAssertEqual(KuboAnswer.commandError(status: 403, text: "403 - Forbidden\n", node: node, command: "add"),
                       .forbidden(node: node, command: "add", message: "403 - Forbidden"))
        XCTAssertEqual(KuboAnswer.streamError(trailer: "unexpected EOF", node: node, command: "add"),
                       .streamError(node: node, command: "add", message: "unexpected EOF"))
        XCTAssertNil(KuboAnswer.streamError(trailer: "", node: node, command: "add"))
        XCTAssertNil(KuboAnswer.streamError(trailer: nil, node: node, command: "add"))
    }

    func testSingleValueAnswers() throws {
        let version = try KuboAnswer.object(Array("{\"Version\":\"0.29.0\",\"Repo\":\"15\",\"System\":\"amd64/linux\"}".utf8),
                                            node: node, command: "version")
        XCTAssertEqual(try KuboAnswer.version(version, node: node), KuboVersion(version: "0.29.0", repo: "15", system: "amd64/linux"))
        XCTAssertThrowsError(try KuboAnswer.version(["Repo": "15"], node: node))
        XCTAssertEqual(KuboAnswer.pins(["Pins": [cid]]), [cid])
        XCTAssertEqual(KuboAnswer.pinTypes(["Keys": [cid: ["Type": "recursive"]]]), [cid: "recursive"])
        XCTAssertEqual(KuboAnswer.pinTypes([:]), [:], "Keys is absent when nothing is pinned")
        XCTAssertThrowsError(try KuboAnswer.object(Array("[1]".utf8), node: node, command: "pin/ls"))
    }
}
