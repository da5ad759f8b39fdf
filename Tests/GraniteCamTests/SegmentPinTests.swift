import Foundation
import GraniteIPFS
import GraniteIPFSTesting
import GraniteMedia
import GraniteRecorder
import GraniteTesting
import XCTest

@testable import GraniteCam

/// `--segments DIR --pin`: each live segment journaled and pinned on the Kubo test node as it
/// closes, with the CID the node's own `add` gives; `live.ipfs.m3u8` names them by `ipfs://` address.
final class SegmentPinTests: XCTestCase {
    func testEachSegmentIsPinnedAsItClosesAndThePlaylistNamesItsCID() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("granite-segpin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let node: KuboStandinProcess
        do { node = try KuboStandinProcess(packageRoot: CamPinTests.root, repo: base.appendingPathComponent("repo").path) } catch {
            try Prerequisite.unmet("\(error) (run scripts/tiers/pre-ipfs.sh)")
        }
        defer { node.stop() }
        var config = KuboClient.Configuration()
        config.connectTimeout = .milliseconds(500)
        config.requestTimeout = .seconds(20)
        config.maxAttempts = 4
        let client = KuboClient(endpoint: try KuboEndpoint(parsing: node.url), configuration: config)
        let pins = try CamPinning(client: client, journalPath: base.appendingPathComponent("pins.jsonl").path, wait: .seconds(30),
                                  retryInterval: .milliseconds(500))
        let live = base.appendingPathComponent("live")
        try FileManager.default.createDirectory(at: live, withIntermediateDirectories: true)
        var options = RecordingOptions(fps: 30)
        options.segmentSeconds = 1
        let sink = try RecordSink(path: live.appendingPathComponent("live.m3u8").path, options: options,
                                  machine: EncoderChoice.Machine(nvenc: nil, vaapi: nil))
        let pinner = SegmentPinner(pins: pins, playlist: sink.path)
        sink.notifySegments { pinner.closed($0) }
        for k in 0..<75 {
            var bytes = [UInt8](repeating: 0, count: 96 * 64 * 4)
            for i in stride(from: 0, to: bytes.count, by: 4) { bytes[i] = UInt8((i / 4 + k * 3) & 255); bytes[i + 1] = 90; bytes[i + 2] = 200; bytes[i + 3] = 255 }
            let frame = Frame(image: try Image(width: 96, height: 64, format: .rgba8, bytes: bytes), sequence: UInt64(k),
                              timestampNanos: UInt64(k) * 33_333_333, source: "test")
            try sink.write(frame)
            // Before the recording ends (the encoder holds a few dozen frames in its look-ahead, so
            // the first segment closes some frames after its last one went in).
            if k == 74 {
                XCTAssertGreaterThanOrEqual(pinner.addresses.count, 2, "the init segment and the first segment, journaled as they closed")
            }
        }
        sink.finish()
        guard case .success? = sink.outcome else { XCTFail("\(String(describing: sink.outcome))"); return }
        let outcome = await pins.finish()
        let playlist = try String(contentsOfFile: sink.path, encoding: .utf8)
        let names = playlist.split(separator: "\n").filter { $0.hasSuffix(".m4s") }.map(String.init) + ["init.mp4"]
        XCTAssertEqual(names.count, 4, playlist)   // three 1 s segments of a 2.5 s recording, and the init segment
        XCTAssertEqual(pinner.failures, [])
        XCTAssertEqual(outcome.pinned, names.count, "\(outcome)")
        let ipfs = try String(contentsOfFile: pinner.ipfsPlaylist, encoding: .utf8)
        XCTAssertTrue(ipfs.contains("#EXT-X-ENDLIST"), ipfs)
        let pinned = try await client.pinLs(type: "recursive")
        let importer = try UnixFSImporter(options: ImportOptions())
        for name in names {
            let cid = try importer.cid(of: Array(try Data(contentsOf: live.appendingPathComponent(name))))
            XCTAssertEqual(pinner.addresses[name], cid.description, name)
            XCTAssertTrue(ipfs.contains("ipfs://\(cid)"), "\(name) at its address in \(ipfs)")
            XCTAssertEqual(pinned[cid.description], "recursive", "\(name) pinned on the node")
        }
    }

    func testTheSummarySaysHowToPlayTheRootThroughAGateway() {
        let paths = ["live", "live/live.m3u8", "live/init.mp4", "frame_00000000.png"]
        let line = SegmentPinner.gatewayLine(root: "bafyROOT", folder: "/tmp/run", paths: paths, playlist: "/tmp/run/./live/live.m3u8",
                                             node: "http://10.0.0.7:5001")
        XCTAssertEqual(line, "segments: play them through a gateway: http://10.0.0.7:8080/ipfs/bafyROOT/live/live.m3u8 (your node's, Kubo's default port) "
                           + "or a public one once the node is reachable: https://ipfs.io/ipfs/bafyROOT/live/live.m3u8")
        // Relative folders as typed on the command line; a node given as a socket path: loopback.
        let relative = SegmentPinner.gatewayLine(root: "bafyR", folder: "run", paths: ["seg/live.m3u8"], playlist: "run/seg/../seg/live.m3u8",
                                                 node: "/run/ipfs/api.sock")
        XCTAssertTrue(relative?.contains("http://127.0.0.1:8080/ipfs/bafyR/seg/live.m3u8 ") == true, "\(String(describing: relative))")
        // The segments outside --out, or a playlist the root does not hold: no line that would not play.
        XCTAssertNil(SegmentPinner.gatewayLine(root: "bafyR", folder: "/tmp/run", paths: paths, playlist: "/tmp/live/live.m3u8", node: ""))
        XCTAssertNil(SegmentPinner.gatewayLine(root: "bafyR", folder: "/tmp/run", paths: ["live/init.mp4"], playlist: "/tmp/run/live/live.m3u8", node: ""))
        XCTAssertNil(SegmentPinner.gatewayLine(root: "bafyR", folder: "/tmp/ru", paths: ["n/live.m3u8"], playlist: "/tmp/run/live.m3u8", node: ""))
    }

    func testTheIPFSPlaylistReplacesOnlyKnownNames() {
        let text = "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1.0,\nseg00000.m4s\n#EXTINF:1.0,\nseg00001.m4s\n"
        let out = SegmentPinner.ipfsText(text, addresses: ["init.mp4": "bafyA", "seg00000.m4s": "bafyB"])
        XCTAssertEqual(out, "#EXTM3U\n#EXT-X-MAP:URI=\"ipfs://bafyA\"\n#EXTINF:1.0,\nipfs://bafyB\n#EXTINF:1.0,\nseg00001.m4s\n")
    }
}
