import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Granite
import GraniteCapture
import GraniteCodecs
import GraniteMedia
import GraniteTesting
import GraniteSync
import XCTest

@testable import GraniteCam

/// The preview page's actions as Granite events: the preview component (a child attached to the
/// root and listening to it and to the status) turns a POST into an event, contacts the root, and
/// hears the answer. The components under the exhaustive `GraniteTestStore`, in one runtime.
final class PreviewActionReducerTests: CamTestCase {
    static let missing = "/dev/video-granite-none"

    /// The root and its preview child, each under a store; the root's mount (Start, then the
    /// missing device's SourceEnded) asserted.
    func stores(output: String? = nil, chain: LiveChainStage? = nil) async throws
        -> (root: GraniteTestStore<CamComponent>, preview: GraniteTestStore<PreviewComponent>,
            status: GraniteTestStore<StatusComponent>, pipeline: CamPipeline, server: PreviewServer) {
        var s = CamSettings()
        s.source = .device(Self.missing)
        s.outputDirectory = output
        if output != nil { s.save = SavePolicy.none }
        let server = try PreviewServer(port: 0)
        let stages: [any FrameStage] = chain.map { [$0] } ?? [ToRGBA()]
        let pipeline = try CamPipeline(settings: s, stages: stages, preview: server)
        let component = CamComponent(pipeline: pipeline)
        let runtime = GraniteRuntime()
        // The children first: their stores observe them before the root's mount would mount them.
        let preview = try await GraniteTestStore(try XCTUnwrap(component.preview), runtime: runtime)
        let status = try await GraniteTestStore(component.status, runtime: runtime)
        let root = try await GraniteTestStore(component, runtime: runtime)
        Task { await component.runCapture() }   // the run's owner runs the capture (CamApp does)
        await root.receive(CamEvents.Start.self, renders: 1)
        await root.receive(CamEvents.SourceEnded.self, renders: 1) {
            $0.ended = true
            $0.failure = "\(Self.missing): no such video device"
        }
        await status.receive(CamEvents.SourceEnded.self, renders: 1) { $0.ended = true }
        return (root, preview, status, pipeline, server)
    }

    func testAChainTypedOnThePageGoesUpToTheRootWhichSwapsItAndAnswers() async throws {
        let chain = try LiveChainStage.marble("invert", gpu: false)
        let (root, preview, status, pipeline, server) = try await stores(chain: chain)
        defer { server.close() }
        await preview.send(PreviewEvents.ChainSubmitted(text: "grayscale | blur:sigma=1"), renders: 0) { $0.chainsAsked = 1 }
        await root.receive(CamEvents.ChangeChain.self, renders: 0)
        await root.receive(CamEvents.ChainChanged.self, renders: 0) { $0.actions.chainChanges = 1 }
        let expected = "grayscale | blur:sigma=1"
        await preview.receive(PreviewEvents.ChainAnswered.self, renders: 1) {
            $0.chainsApplied = 1
            $0.setup.chain = expected
        }
        XCTAssertEqual(pipeline.liveChain?.text, expected, "the pipeline runs the new chain")
        XCTAssertTrue(server.json.contains("\"chain\":\"\(expected)\""), server.json)
        await root.finish()
        await preview.finish()
        await status.finish()
    }

    func testAChainThatDoesNotParseIsRefusedAndTheOldOneStays() async throws {
        let chain = try LiveChainStage.marble("invert", gpu: false)
        let (root, preview, status, pipeline, server) = try await stores(chain: chain)
        defer { server.close() }
        await preview.send(PreviewEvents.ChainSubmitted(text: "blur:sigma=2 | nosuchfilter"), renders: 0) { $0.chainsAsked = 1 }
        await root.receive(CamEvents.ChangeChain.self, renders: 0)
        await root.receive(CamEvents.ChainChanged.self, renders: 0) { $0.actions.chainsRefused = 1 }
        await preview.receive(PreviewEvents.ChainAnswered.self, renders: 1) { state, event in
            XCTAssertTrue(event.error?.contains("nosuchfilter") == true, "\(String(describing: event.error))")
            XCTAssertEqual(event.chain, "invert", "the old chain stays")
            state.chainsRejected = 1
            state.chainError = event.error
        }
        XCTAssertEqual(pipeline.liveChain?.text, "invert", "the old chain stays")
        XCTAssertTrue(server.json.contains("\"chainError\":\"") && server.json.contains("nosuchfilter"), server.json)
        await root.finish()
        await preview.finish()
        await status.finish()
    }

    func testAFixedChainIsRefused() async throws {
        let (root, preview, status, _, server) = try await stores()
        defer { server.close() }
        await preview.send(PreviewEvents.ChainSubmitted(text: "sobel"), renders: 0) { $0.chainsAsked = 1 }
        await root.receive(CamEvents.ChangeChain.self, renders: 0)
        await root.receive(CamEvents.ChainChanged.self, renders: 0) { $0.actions.chainsRefused = 1 }
        await preview.receive(PreviewEvents.ChainAnswered.self, renders: 1) {
            $0.chainsRejected = 1
            $0.chainError = "this run's filter chain cannot be changed"
        }
        await root.finish()
        await preview.finish()
        await status.finish()
    }

    func testTheSnapshotButtonDoesWhatSIGUSR1Does() async throws {
        let output = folder.appendingPathComponent("snap").path
        let (root, preview, status, _, server) = try await stores(output: output)
        defer { server.close() }
        await preview.send(PreviewEvents.SnapshotPressed(), renders: 0) { $0.snapshotsAsked = 1 }
        await root.receive(CamEvents.Snapshot.self, renders: 0) {
            $0.actions.snapshots = 1
            $0.snapshotPending = true   // the next frame is marked for writing
        }
        await preview.receive(PreviewEvents.SnapshotAnswered.self, renders: 1) {
            $0.notice = "snapshot: the next frame is written to \(output)"
        }
        await root.finish()
        await preview.finish()
        await status.finish()
    }

    func testASnapshotWithoutAnOutputFolderIsRefused() async throws {
        let (root, preview, status, _, server) = try await stores()
        defer { server.close() }
        await preview.send(PreviewEvents.SnapshotPressed(), renders: 0) { $0.snapshotsAsked = 1 }
        await root.receive(CamEvents.Snapshot.self, renders: 0) { $0.actions.snapshotsRefused = 1 }
        await preview.receive(PreviewEvents.SnapshotAnswered.self, renders: 1) {
            $0.notice = "snapshot: no output folder: start granite-cam with --out DIR"
        }
        await root.finish()
        await preview.finish()
        await status.finish()
    }

    func testEachTickTheStatusLetsThePreviewHearItsFigures() async throws {
        let (root, preview, status, _, server) = try await stores()
        defer { server.close() }
        await status.send(CamEvents.Tick(), renders: 1)
        await preview.receive(PreviewEvents.Status.self, renders: 1) { state, event in
            XCTAssertEqual(event.status.line, status.state.statusLine)
            XCTAssertTrue(event.status.ended)
            state.status = event.status
        }
        XCTAssertEqual(server.status, status.state.statusLine, "the render step published the line")
        XCTAssertTrue(server.json.contains("\"chain\":null"), "a fixed chain: \(server.json)")
        XCTAssertTrue(server.json.contains("\"frames\":0") && server.json.contains("\"latencyP50\":null"), server.json)
        await root.finish()
        await preview.finish()
        await status.finish()
    }
}

/// The live chain: a replacement that does not build leaves the old one running.
final class LiveChainStageTests: XCTestCase {
    func testReplaceSwapsOrKeeps() throws {
        let chain = try LiveChainStage.marble("", gpu: false)
        XCTAssertEqual(chain.text, "")
        XCTAssertEqual(chain.name, "to-rgba")
        let image = try Image(width: 2, height: 1, format: .rgba8, bytes: [10, 20, 30, 255, 200, 100, 50, 255])
        XCTAssertEqual(try chain.process(image).bytes, image.bytes)
        XCTAssertEqual(try chain.replace(with: " invert "), "invert")
        XCTAssertEqual(try chain.process(image, depth: nil).bytes, [245, 235, 225, 255, 55, 155, 205, 255])
        XCTAssertThrowsError(try chain.replace(with: "invert | blur:sigma=oops"))
        XCTAssertEqual(chain.text, "invert", "the old chain stays")
        XCTAssertThrowsError(try LiveChainStage.marble("nosuch", gpu: false))
    }
}

/// The page's HTTP side: routes, methods, actions, the event stream, the CSP.
final class PreviewPageHTTPTests: XCTestCase {
    func request(_ port: Int, _ path: String, method: String = "GET", body: String? = nil,
                 headers: [String: String] = [:]) async throws -> (Int, String, HTTPURLResponse) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 5
        if let body { request.httpBody = Data(body.utf8) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try XCTUnwrap(response as? HTTPURLResponse)
        return (http.statusCode, String(decoding: data, as: UTF8.self), http)
    }

    func testActionsArePostOnlyAndReachTheHandler() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let port = server.port
        let none = try await request(port, "/snapshot", method: "POST")
        XCTAssertEqual(none.0, 503, "no component takes actions yet")
        let seen = Locked<[PreviewAction]>([])
        server.setActionHandler { action in seen.withLock { $0.append(action) }; return true }
        let snap = try await request(port, "/snapshot", method: "POST", headers: ["Origin": "http://127.0.0.1:\(port)"])
        XCTAssertEqual(snap.0, 202)
        let chain = try await request(port, "/chain", method: "POST", body: "blur:sigma=2 | sobel")
        XCTAssertEqual(chain.0, 202)
        XCTAssertEqual(seen.withLock { $0 }, [.snapshot, .chain("blur:sigma=2 | sobel")])
        let get = try await request(port, "/chain")
        XCTAssertEqual(get.0, 405, "no state change on GET")
        XCTAssertEqual(get.2.value(forHTTPHeaderField: "Allow"), "POST")
        let postPage = try await request(port, "/", method: "POST")
        XCTAssertEqual(postPage.0, 405)
        let put = try await request(port, "/chain", method: "PUT", body: "x")
        XCTAssertEqual(put.0, 405)
        let foreign = try await request(port, "/snapshot", method: "POST", headers: ["Origin": "http://evil.example"])
        XCTAssertEqual(foreign.0, 403, "a page elsewhere cannot press the button")
        let crossSite = try await request(port, "/chain", method: "POST", body: "sobel", headers: ["Sec-Fetch-Site": "cross-site"])
        XCTAssertEqual(crossSite.0, 403)
        let rebinding = try await request(port, "/chain", method: "POST", body: "sobel", headers: ["Host": "evil.example:\(port)"])
        XCTAssertEqual(rebinding.0, 403)
        let huge = try await request(port, "/chain", method: "POST", body: String(repeating: "a", count: 10_000))
        XCTAssertEqual(huge.0, 413)
        XCTAssertEqual(seen.withLock { $0.count }, 2, "refused requests reached nothing")
    }

    func testThePageIsSelfContainedUnderAStrictPolicy() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let (code, page, response) = try await request(server.port, "/")
        XCTAssertEqual(code, 200)
        let csp = try XCTUnwrap(response.value(forHTTPHeaderField: "Content-Security-Policy"))
        XCTAssertTrue(csp.hasPrefix("default-src 'none'; img-src 'self'; media-src 'self'; connect-src 'self'; script-src 'sha256-"), csp)
        XCTAssertFalse(csp.contains("unsafe"), csp)
        XCTAssertEqual(response.value(forHTTPHeaderField: "X-Frame-Options"), "DENY")
        // The hashes in the policy are those of the page's one script and one style.
        for (tag, hash) in [("script", PreviewPage.hash(PreviewPage.script)), ("style", PreviewPage.hash(PreviewPage.style))] {
            XCTAssertTrue(csp.contains("\(tag)-src '\(hash)'"), csp)
            XCTAssertEqual(page.components(separatedBy: "<\(tag)>").count, 2, "one \(tag)")
        }
        XCTAssertTrue(page.contains("<script>\(PreviewPage.script)</script>"))
        XCTAssertFalse(page.contains("http://") || page.contains("https://") || page.contains("//cdn"), "nothing from elsewhere")
        XCTAssertFalse(page.contains(" on") && page.contains("=\"") && page.range(of: #" on[a-z]+=""#, options: .regularExpression) != nil,
                       "no inline handlers (the policy would block them)")
        for id in ["live", "depth", "fps", "latencyP50", "latencyP99", "dropped", "depthFPS", "depthAge", "snap", "chain"] {
            XCTAssertTrue(page.contains("id=\"\(id)\""), id)
        }
        // A known vector: SHA-256 of "abc" in base64.
        XCTAssertEqual(PreviewPage.hash("abc"), "sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=")
    }

    func testTheLiveFolderIsServedForThePagesVideoAndNothingElse() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let port = server.port
        let none = try await request(port, "/live/live.m3u8")
        XCTAssertEqual(none.0, 404, "no folder served without --segments")
        XCTAssertNil(server.livePlaylist)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("granite-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let playlist = "#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:1.0,\nseg00000.m4s\n"
        try Data(playlist.utf8).write(to: folder.appendingPathComponent("live.m3u8"))
        try Data([0, 1, 2, 255]).write(to: folder.appendingPathComponent("seg00000.m4s"))
        try Data("secret".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        server.serveLive(folder: folder.path)
        XCTAssertEqual(server.livePlaylist, "/live/live.m3u8")
        let list = try await request(port, "/live/live.m3u8")
        XCTAssertEqual(list.0, 200)
        XCTAssertEqual(list.1, playlist)
        XCTAssertEqual(list.2.value(forHTTPHeaderField: "Content-Type"), "application/vnd.apple.mpegurl")
        let segment = try await request(port, "/live/seg00000.m4s")
        XCTAssertEqual(segment.0, 200)
        XCTAssertEqual(segment.2.value(forHTTPHeaderField: "Content-Type"), "video/iso.segment")
        XCTAssertEqual(segment.2.value(forHTTPHeaderField: "Content-Length"), "4", "the bytes as they are")
        for path in ["/live/init.mp4", "/live/notes.txt", "/live/%2e%2e%2fx.m3u8", "/live/.hidden.mp4", "/live/"] {
            let answer = try await request(port, path)
            XCTAssertEqual(answer.0, 404, path)
        }
        let foreign = try await request(port, "/live/live.m3u8", headers: ["Host": "evil.example:\(port)"])
        XCTAssertEqual(foreign.0, 403, "the recording is the camera's: same rules as the picture")
        var state = PreviewState(setup: PreviewSetup(livePlaylist: server.livePlaylist, livePlaylistFile: server.livePlaylistFile))
        state.status.fps = 1
        XCTAssertTrue(PreviewJSON.encode(PreviewState(setup: PreviewSetup(livePlaylist: server.livePlaylist)))
            .contains("\"livePlaylist\":\"\\/live\\/live.m3u8\""), "no file to wait for")
        // The page is told of the playlist once a player can start it: three segments, or ended.
        XCTAssertTrue(PreviewJSON.encode(state).contains("\"livePlaylist\":null"), "one segment, live: " + PreviewJSON.encode(state))
        let three = playlist + "#EXTINF:1.0,\nseg00001.m4s\n#EXTINF:1.0,\nseg00002.m4s\n"
        try Data(three.utf8).write(to: folder.appendingPathComponent("live.m3u8"))
        XCTAssertTrue(PreviewJSON.encode(state).contains("\"livePlaylist\":\"\\/live\\/live.m3u8\""), PreviewJSON.encode(state))
        try Data((playlist + "#EXT-X-ENDLIST\n").utf8).write(to: folder.appendingPathComponent("live.m3u8"))
        XCTAssertTrue(PreviewJSON.encode(state).contains("\"livePlaylist\":\"\\/live\\/live.m3u8\""), "ended: " + PreviewJSON.encode(state))
        // Before the first segment closes there is no playlist: not told (its video would meet a 404).
        try FileManager.default.removeItem(at: folder.appendingPathComponent("live.m3u8"))
        XCTAssertTrue(PreviewJSON.encode(state).contains("\"livePlaylist\":null"), PreviewJSON.encode(state))
        XCTAssertTrue(PreviewPage.html.contains("<video id=\"hls\""))
        XCTAssertTrue(PreviewPage.script.contains("canPlayType(\"application/vnd.apple.mpegurl\")"))
    }

    func testTheStatusStreamPushesEachRender() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let port = server.port
        server.publish(status: "frames 1", json: "{\"frames\":1}")
        let reader = Task.detached { loopbackGet(port: port, path: "/events", enough: 400) }
        try await Task.sleep(nanoseconds: 300_000_000)
        server.publish(status: "frames 2", json: "{\"frames\":2,\"line\":\"a\\u003cb\"}")
        let text = String(decoding: await reader.value, as: UTF8.self)
        XCTAssertTrue(text.contains("Content-Type: text/event-stream"), text)
        XCTAssertTrue(text.contains("data: {\"frames\":1}\n\n"), "the current status on connect: \(text)")
        XCTAssertTrue(text.contains("data: {\"frames\":2,"), "then each render: \(text)")
        let json = try await request(port, "/status.json")
        XCTAssertEqual(json.1, "{\"frames\":2,\"line\":\"a\\u003cb\"}")
    }

    func testTheJSONIsEscapedAndRounded() throws {
        var state = PreviewState(setup: PreviewSetup(chain: "a\"b\\c\n</script>\u{1}"))
        state.status.fps = 12.34
        let json = PreviewJSON.encode(state)
        XCTAssertFalse(json.contains("</script>"), json)
        XCTAssertTrue(json.contains("\"fps\":12.3,"), json)
        XCTAssertTrue(json.contains("\"latencyP50\":null"), "unknown figures are null: \(json)")
        let decoded = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(decoded["chain"] as? String, "a\"b\\c\n</script>\u{1}", "the text survives a JSON parser")
    }
}

/// A whole run with the page: a chain submitted over HTTP changes the frames the stream sends,
/// and with depth the depth stream sends colourised maps.
final class PreviewRunTests: CamTestCase {
    /// The JPEGs in an MJPEG capture, in order.
    func jpegs(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        let marker = Array("Content-Length: ".utf8)
        var i = 0
        while i + marker.count < bytes.count {
            if Array(bytes[i..<i + marker.count]) == marker {
                var j = i + marker.count, n = 0
                while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 { n = n * 10 + Int(bytes[j] - 48); j += 1 }
                let start = j + 4
                if start + n <= bytes.count { out.append(Array(bytes[start..<start + n])) }
                i = start + n
            } else {
                i += 1
            }
        }
        return out
    }

    func testAChainPostedDuringTheRunChangesTheStreamedFrames() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let s = settings { $0.request = CaptureRequest(format: .auto, size: FrameSize(width: 160, height: 120), fps: 30); $0.duration = 3; $0.depthEvery = 1 }
        let pipeline = try CamPipeline(settings: s, stages: [try LiveChainStage.marble("", gpu: false)], depth: SlowDepthFake(delayMicros: 0),
                                       preview: server)
        let app = CamApp(pipeline: pipeline)
        let port = server.port
        let run = Task { try await app.run() }
        let depthReader = Task.detached { loopbackGet(port: port, path: "/depth", enough: 4_000) }
        try await Task.sleep(nanoseconds: 800_000_000)
        let before = jpegs(loopbackGet(port: port, path: "/stream", enough: 30_000))
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/chain")!)
        request.httpMethod = "POST"
        request.httpBody = Data("grayscale".utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 202)
        try await Task.sleep(nanoseconds: 400_000_000)
        let after = jpegs(loopbackGet(port: port, path: "/stream", enough: 30_000))
        let depth = jpegs(await depthReader.value)
        let summary = try await run.value
        XCTAssertGreaterThan(summary.frames, 10)
        func spread(_ jpeg: [UInt8]) throws -> Int {
            // The largest difference between a pixel's channels: 0 for gray (JPEG noise aside).
            let image = try ColorConversion.rgba(try Codecs.decode(jpeg, path: "stream.jpg"))
            var most = 0
            for p in stride(from: 0, to: image.bytes.count, by: 4) {
                let r = Int(image.bytes[p]), g = Int(image.bytes[p + 1]), b = Int(image.bytes[p + 2])
                most = max(most, max(r, g, b) - min(r, g, b))
            }
            return most
        }
        let colorful = try spread(try XCTUnwrap(before.first))
        let gray = try spread(try XCTUnwrap(after.last))
        XCTAssertGreaterThan(colorful, 100, "the test pattern has color before")
        XCTAssertLessThan(gray, 12, "grayscale after the chain changed")
        XCTAssertTrue(server.json.contains("\"chain\":\"grayscale\""), server.json)
        XCTAssertTrue(server.json.contains("\"depthEnabled\":true"), server.json)
        XCTAssertFalse(depth.isEmpty, "the depth stream sent a map")
        XCTAssertGreaterThan(server.depthFramesPublished, 0)
        if let map = depth.first {
            let image = try Codecs.decode(map, path: "depth.jpg")
            XCTAssertEqual(image.width, 160)
        }
    }
}
