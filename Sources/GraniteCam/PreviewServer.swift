import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP preview a person can watch: `/` is a small page with the stream and the
/// status line, `/stream` an MJPEG stream (`multipart/x-mixed-replace`), `/status` the line.
///
/// Security (as Kubo's RPC does it): it binds loopback unless told another address, and answers
/// 403 to any request whose `Host` (or `Origin`, when sent) is not the address it serves — so a
/// web page using DNS rebinding cannot read the camera. Only GET and HEAD are answered (405).
///
/// ```
///  PreviewRelay ─publish(jpeg)─► latest frame ─► every /stream client that can take it now
///                                               (a slow client skips frames, never queues)
/// ```
public final class PreviewServer: Sendable {
    static let boundary = "granitepreview"
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let state = Mutex<(clients: [ObjectIdentifier: any Channel], status: String, frames: UInt64)>(([:], "starting", 0))

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

    /// Sends a JPEG to every streaming client whose connection can take it now.
    public func publish(jpeg: [UInt8]) {
        let clients = state.withLock { s -> [any Channel] in
            s.frames += 1
            return Array(s.clients.values)
        }
        let header = "--\(Self.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n"
        for client in clients where client.isWritable {
            var buffer = client.allocator.buffer(capacity: header.utf8.count + jpeg.count + 2)
            buffer.writeString(header)
            buffer.writeBytes(jpeg)
            buffer.writeString("\r\n")
            client.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }

    /// Sets the status line the page shows.
    public func publish(status: String) {
        state.withLock { $0.status = status }
    }

    /// Frames published so far.
    public var framesPublished: UInt64 { state.withLock { $0.frames } }

    /// Stops listening and closes every client.
    public func close() {
        let clients = state.withLock { s in
            defer { s.clients = [:] }
            return Array(s.clients.values)
        }
        for client in clients { client.close(promise: nil) }
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    var status: String { state.withLock { $0.status } }

    /// The `Host` values that name this server: the bound address (bracketed for IPv6), and for a
    /// loopback bind `localhost`, `127.0.0.1` and `[::1]`; each with and without the port.
    static func hosts(bind: String, port: Int) -> Set<String> {
        var names = [bind.contains(":") ? "[\(bind)]" : bind]
        if bind == "127.0.0.1" || bind == "::1" || bind == "localhost" { names += ["localhost", "127.0.0.1", "[::1]"] }
        return Set(names.flatMap { [$0.lowercased(), "\($0.lowercased()):\(port)"] })
    }

    /// Whether a request with these headers may be answered: `Host` must name this server, and
    /// an `Origin`, when present, must be `http://` plus such a host.
    func admits(host: String?, origin: String?) -> Bool {
        guard let host, allowedHosts.contains(host.lowercased()) else { return false }
        guard let origin else { return true }
        let lowered = origin.lowercased()
        guard lowered.hasPrefix("http://") else { return false }
        return allowedHosts.contains(String(lowered.dropFirst(7)))
    }

    func add(_ client: any Channel) { state.withLock { $0.clients[ObjectIdentifier(client)] = client } }
    func remove(_ client: any Channel) { _ = state.withLock { $0.clients.removeValue(forKey: ObjectIdentifier(client)) } }

    static let page = """
        <!doctype html><html><head><meta charset="utf-8"><title>granite-cam preview</title>
        <style>body{background:#111;color:#ddd;font:14px monospace;margin:1em}img{max-width:100%}</style></head>
        <body><img src="/stream" alt="live frames"><pre id="s">…</pre>
        <script>setInterval(()=>fetch('/status').then(r=>r.text()).then(t=>s.textContent=t),500)</script>
        </body></html>
        """
}

/// Lets handlers reach the server after it finished initialising.
final class ServerBox: Sendable {
    let server = Mutex<PreviewServer?>(nil)
}

/// Routes one HTTP connection: the page, the status, or a standing MJPEG stream.
final class PreviewHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let box: ServerBox
    private var path = "/"
    private var streaming = false
    private var admitted = false
    private var method = HTTPMethod.GET

    init(server: ServerBox) { box = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            path = head.uri
            method = head.method
            admitted = box.server.withLock { $0 }?.admits(host: head.headers.first(name: "Host"),
                                                           origin: head.headers.first(name: "Origin")) ?? false
        case .body:
            break
        case .end:
            respond(context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if streaming { box.server.withLock { $0 }?.remove(context.channel) }
        context.fireChannelInactive()
    }

    private func respond(_ context: ChannelHandlerContext) {
        guard let server = box.server.withLock({ $0 }) else { return context.close(promise: nil) }
        guard admitted else {
            return send(context, status: .forbidden, type: "text/plain", body: "forbidden: Host or Origin is not this preview's address\n")
        }
        guard method == .GET || method == .HEAD else {
            return send(context, status: .methodNotAllowed, type: "text/plain", body: "method not allowed\n")
        }
        switch path {
        case "/stream":
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "multipart/x-mixed-replace; boundary=\(PreviewServer.boundary)")
            headers.add(name: "Cache-Control", value: "no-store")
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            streaming = true
            server.add(context.channel)
        case "/", "/index.html":
            send(context, status: .ok, type: "text/html; charset=utf-8", body: PreviewServer.page)
        case "/status":
            send(context, status: .ok, type: "text/plain; charset=utf-8", body: server.status)
        default:
            send(context, status: .notFound, type: "text/plain", body: "not found: \(path)\n")
        }
    }

    private func send(_ context: ChannelHandlerContext, status: HTTPResponseStatus, type: String, body: String) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
