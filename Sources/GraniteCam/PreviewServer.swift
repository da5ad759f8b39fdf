import GraniteCodecs
import NIOCore
import NIOHTTP1
import NIOPosix
import GraniteSync

/// A stream a client keeps open.
enum PreviewStream: Sendable {
    /// The processed frames, MJPEG (`/stream`).
    case frames
    /// The colourised depth maps, MJPEG (`/depth`).
    case depth
    /// The status as Server-Sent Events (`/events`).
    case events
}

/// What the page asks for with a POST; the preview component turns it into an event.
enum PreviewAction: Sendable, Equatable {
    /// `POST /snapshot`: write the next frame (as SIGUSR1 does).
    case snapshot
    /// `POST /chain` with the chain as the body: replace the filter chain.
    case chain(String)
}

/// The loopback HTTP preview a person keeps open: `/` is the page (live picture, depth beside it,
/// status, snapshot button, filter chain box), `/stream` and `/depth` MJPEG streams
/// (`multipart/x-mixed-replace`), `/events` the status as Server-Sent Events, `/status` the
/// status line, `/status.json` the page's JSON, `/live/live.m3u8` and its segments with `--segments`
/// (``serveLive(folder:)``); `POST /snapshot` and `POST /chain` the actions.
///
/// Security (as Kubo's RPC does it): it binds loopback unless told another address, and answers
/// 403 to any request whose `Host` (or `Origin`, when sent) is not the address it serves — so a
/// web page using DNS rebinding cannot read the camera — or that a browser marks cross-site
/// (`Sec-Fetch-Site`). GET and HEAD change nothing; the two actions take POST only (405
/// otherwise). The page loads nothing from elsewhere and is served with a strict
/// Content-Security-Policy (its one script and one style by hash).
///
/// ```
///  PreviewRelay ─publish(jpeg / depth jpeg)─► every /stream (/depth) client that can take it now
///                                              (a slow client skips frames, never queues)
///  PreviewComponent render ─publish(status, json)─► every /events client; /status, /status.json
///  POST /snapshot, /chain ─► action handler ─► PreviewComponent event ─.contact─► the root
/// ```
public final class PreviewServer: Sendable {
    static let boundary = "granitepreview"
    /// The largest POST body taken (a chain is a line of text).
    static let maxBody = 4096
    private struct Shared {
        var clients: [ObjectIdentifier: (channel: any Channel, stream: PreviewStream)] = [:]
        var status = "starting"
        var json = "{}"
        var frames: UInt64 = 0
        var depthFrames: UInt64 = 0
        var actions: (@Sendable (PreviewAction) -> Bool)?
        var liveFolder: String?
    }
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state = Locked(Shared())

    /// The port it listens on (useful with port 0).
    public let port: Int
    /// The address it listens on.
    public let address: String
    /// `Host` values it answers (`127.0.0.1:PORT`, `localhost:PORT`, … and the same without port).
    let allowedHosts: Set<String>

    /// Starts listening on `bind`:`port` (0 picks a free port; `bind` is loopback by default).
    public init(port: Int, bind: String = "127.0.0.1") throws(CamError) {
        address = bind
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = ServerBox()
        do {
            let bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMap {
                        channel.pipeline.addHandler(PreviewHandler(server: box))
                    }
                }
            channel = try bootstrap.bind(host: bind, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw .invalidOptions("--preview: cannot listen on \(bind):\(port): \(error)")
        }
        self.port = channel.localAddress?.port ?? port
        allowedHosts = PreviewServer.hosts(bind: bind, port: self.port)
        box.server.withLock { $0 = self }
    }

    /// Sends a JPEG of a processed frame to every `/stream` client whose connection can take it now.
    func publish(jpeg: [UInt8]) {
        state.withLock { $0.frames += 1 }
        send(jpeg: jpeg, to: .frames)
    }

    /// Sends a JPEG of a colourised depth map to every `/depth` client that can take it now.
    func publish(depthJPEG jpeg: [UInt8]) {
        state.withLock { $0.depthFrames += 1 }
        send(jpeg: jpeg, to: .depth)
    }

    /// Sets the status line (`/status`) and the page's JSON (`/status.json`), and pushes the
    /// JSON to every `/events` client.
    func publish(status: String, json: String) {
        let clients = state.withLock { s in
            s.status = status
            s.json = json
            return s.clients.values.filter { $0.stream == .events }.map(\.channel)
        }
        let event = "data: \(json)\n\n"
        for client in clients where client.isWritable {
            var buffer = client.allocator.buffer(capacity: event.utf8.count)
            buffer.writeString(event)
            client.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    /// Sets the status line the page shows (and nothing else).
    func publish(status: String) {
        state.withLock { $0.status = status }
    }

    /// Serves `--segments`' folder under `/live/`: its HLS playlist at ``livePlaylist`` and the
    /// segments it names (plain names only — `live.m3u8`, `init.mp4`, `seg00000.m4s` — read from the
    /// folder at each request; the recorder renames each file into place, so none is half-written).
    /// Set before the run starts.
    package func serveLive(folder: String) { state.withLock { $0.liveFolder = folder } }

    /// The live playlist's path on this server (`/live/live.m3u8`), when a folder is served.
    var livePlaylist: String? { state.withLock { $0.liveFolder } == nil ? nil : "/live/live.m3u8" }

    /// The live playlist's file in the served folder (there once the first segment has closed).
    var livePlaylistFile: String? { state.withLock { $0.liveFolder }.map { $0 + "/live.m3u8" } }

    /// The file `/live/NAME` names in the served folder and its media type; nil for anything else
    /// (no folder served, a name with a slash or dot-dot, another extension).
    func liveFile(_ path: String) -> (path: String, type: String)? {
        guard path.hasPrefix("/live/"), let folder = state.withLock({ $0.liveFolder }) else { return nil }
        let name = path.dropFirst("/live/".count)
        guard !name.isEmpty, !name.hasPrefix("."), name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else { return nil }
        let types = ["m3u8": "application/vnd.apple.mpegurl", "mp4": "video/mp4", "m4s": "video/iso.segment"]
        guard let type = name.split(separator: ".").last.flatMap({ types[String($0)] }), name.contains(".") else { return nil }
        return (folder + "/" + name, type)
    }

    /// Routes the page's POST actions to `handler`; it returns false when the run no longer takes them.
    func setActionHandler(_ handler: @escaping @Sendable (PreviewAction) -> Bool) {
        state.withLock { $0.actions = handler }
    }

    /// Frames published so far.
    var framesPublished: UInt64 { state.withLock { $0.frames } }

    /// Depth maps published so far.
    var depthFramesPublished: UInt64 { state.withLock { $0.depthFrames } }

    /// Stops listening and closes every client.
    public func close() {
        let clients = state.withLock { s in
            defer { s.clients = [:] }
            return s.clients.values.map(\.channel)
        }
        for client in clients { client.close(promise: nil) }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    var status: String { state.withLock { $0.status } }
    var json: String { state.withLock { $0.json } }

    /// Hands `action` to the handler; false when there is none or it refused.
    func perform(_ action: PreviewAction) -> Bool {
        guard let handler = state.withLock({ $0.actions }) else { return false }
        return handler(action)
    }

    private func send(jpeg: [UInt8], to stream: PreviewStream) {
        let clients = state.withLock { $0.clients.values.filter { $0.stream == stream }.map(\.channel) }
        let header = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n"
        for client in clients where client.isWritable {
            var buffer = client.allocator.buffer(capacity: header.utf8.count + jpeg.count + 2)
            buffer.writeString(header)
            buffer.writeBytes(jpeg)
            buffer.writeString("\r\n")
            client.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    /// The `Host` values that name this server: the bound address (bracketed for IPv6), and for a
    /// loopback bind `localhost`, `127.0.0.1` and `[::1]`; each with and without the port.
    static func hosts(bind: String, port: Int) -> Set<String> {
        var names = [bind.contains(":") ? "[\(bind)]" : bind]
        if bind == "127.0.0.1" || bind == "::1" || bind == "localhost" { names += ["localhost", "127.0.0.1", "[::1]"] }
        return Set(names.flatMap { [$0.lowercased(), "\($0.lowercased()):\(port)"] })
    }

    /// Whether a request with these headers may be answered: `Host` must name this server, an
    /// `Origin`, when present, must be `http://` plus such a host, and a browser's
    /// `Sec-Fetch-Site`, when present, must not say `cross-site`.
    func admits(host: String?, origin: String?, fetchSite: String? = nil) -> Bool {
        guard let host, allowedHosts.contains(host.lowercased()) else { return false }
        if let fetchSite, fetchSite.lowercased() == "cross-site" { return false }
        guard let origin else { return true }
        let lowered = origin.lowercased()
        guard lowered.hasPrefix("http://") else { return false }
        return allowedHosts.contains(String(lowered.dropFirst(7)))
    }

    func add(_ client: any Channel, _ stream: PreviewStream) {
        state.withLock { $0.clients[ObjectIdentifier(client)] = (client, stream) }
    }

    func remove(_ client: any Channel) { _ = state.withLock { $0.clients.removeValue(forKey: ObjectIdentifier(client)) } }
}

/// Lets handlers reach the server after it finished initialising.
final class ServerBox: Sendable {
    let server = Locked<PreviewServer?>(nil)
}

/// Routes one HTTP connection: the page, the status, a standing stream, or an action.
final class PreviewHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let box: ServerBox
    private var path = "/"
    private var streaming = false
    private var admitted = false
    private var method = HTTPMethod.GET
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    init(server: ServerBox) { box = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            path = String(head.uri.prefix { $0 != "?" })
            method = head.method
            body = []
            bodyTooLarge = false
            admitted = box.server.withLock { $0 }?.admits(host: head.headers.first(name: "Host"),
                                                           origin: head.headers.first(name: "Origin"),
                                                           fetchSite: head.headers.first(name: "Sec-Fetch-Site")) ?? false
        case var .body(chunk):
            if body.count + chunk.readableBytes > PreviewServer.maxBody {
                bodyTooLarge = true
            } else if let bytes = chunk.readBytes(length: chunk.readableBytes) {
                body += bytes
            }
        case .end:
            respond(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if streaming { box.server.withLock { $0 }?.remove(context.channel) }
        context.fireChannelInactive()
    }

    /// Routes that take POST (they change the run); every other route takes GET and HEAD.
    static let actionRoutes: Set<String> = ["/snapshot", "/chain"]

    private func respond(_ context: ChannelHandlerContext) {
        guard let server = box.server.withLock({ $0 }) else { return context.close(promise: nil) }
        guard admitted else {
            return send(context, status: .forbidden, type: "text/plain", body: "forbidden: Host or Origin is not this preview's address\n")
        }
        if Self.actionRoutes.contains(path) {
            guard method == .POST else {
                return send(context, status: .methodNotAllowed, type: "text/plain", body: "method not allowed: \(path) takes POST\n",
                            extra: [("Allow", "POST")])
            }
            return act(context, server)
        }
        guard method == .GET || method == .HEAD else {
            return send(context, status: .methodNotAllowed, type: "text/plain", body: "method not allowed\n", extra: [("Allow", "GET, HEAD")])
        }
        switch path {
        case "/stream":
            stream(context, server, .frames, type: "multipart/x-mixed-replace; boundary=\(PreviewServer.boundary)")
        case "/depth":
            stream(context, server, .depth, type: "multipart/x-mixed-replace; boundary=\(PreviewServer.boundary)")
        case "/events":
            stream(context, server, .events, type: "text/event-stream")
            var buffer = context.channel.allocator.buffer(capacity: 64)
            buffer.writeString("retry: 1000\ndata: \(server.json)\n\n")
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        case "/", "/index.html":
            send(context, status: .ok, type: "text/html; charset=utf-8", body: PreviewPage.html, extra: PreviewPage.headers)
        case "/status":
            send(context, status: .ok, type: "text/plain; charset=utf-8", body: server.status)
        case "/status.json":
            send(context, status: .ok, type: "application/json", body: server.json)
        case _ where path.hasPrefix("/live/"):
            guard let file = server.liveFile(path) else {
                return send(context, status: .notFound, type: "text/plain", body: "not found: \(path)\n")
            }
            guard let bytes = try? FileBytes.read(file.path, maxBytes: 256 << 20) else {
                return send(context, status: .notFound, type: "text/plain", body: "not written yet: \(path)\n")
            }
            send(context, status: .ok, type: file.type, bytes: bytes)
        default:
            send(context, status: .notFound, type: "text/plain", body: "not found: \(path)\n")
        }
    }

    private func stream(_ context: ChannelHandlerContext, _ server: PreviewServer, _ kind: PreviewStream, type: String) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        streaming = true
        server.add(context.channel, kind)
    }

    /// A POST action: handed to the preview component as an event; 202 once queued.
    private func act(_ context: ChannelHandlerContext, _ server: PreviewServer) {
        guard !bodyTooLarge else {
            return send(context, status: .payloadTooLarge, type: "text/plain", body: "a chain is at most \(PreviewServer.maxBody) bytes\n")
        }
        let action: PreviewAction
        if path == "/snapshot" {
            action = .snapshot
        } else {
            guard let text = String(validating: body, as: UTF8.self) else {
                return send(context, status: .badRequest, type: "text/plain", body: "the chain must be UTF-8 text\n")
            }
            action = .chain(text)
        }
        if server.perform(action) {
            send(context, status: .accepted, type: "application/json", body: "{\"accepted\":true}")
        } else {
            send(context, status: .serviceUnavailable, type: "text/plain", body: "the run is not taking actions (not started, or ended)\n")
        }
    }

    private func send(_ context: ChannelHandlerContext, status: HTTPResponseStatus, type: String, body: String,
                      extra: [(String, String)] = []) {
        send(context, status: status, type: type, bytes: Array(body.utf8), extra: extra)
    }

    private func send(_ context: ChannelHandlerContext, status: HTTPResponseStatus, type: String, bytes body: [UInt8],
                      extra: [(String, String)] = []) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
