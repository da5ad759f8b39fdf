import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GraniteCapture
import XCTest

@testable import GraniteCam

/// A blocking HTTP GET over a loopback socket that reads until `enough` bytes or EOF.
func loopbackGet(port: Int, path: String, enough: Int = 1 << 20) -> [UInt8] {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var timeout = timeval(tv_sec: 3, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return [] }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while received.count < enough {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received += chunk[0..<n]
    }
    return received
}

final class PreviewTests: XCTestCase {
    func testPageStatusAndMJPEGStream() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        var s = CamSettings()
        s.request = CaptureRequest(format: .auto, size: FrameSize(width: 160, height: 120), fps: 60)
        s.duration = 1.5
        let app = CamApp(pipeline: try CamPipeline(settings: s, preview: server))
        let port = server.port
        let stream = Task.detached { loopbackGet(port: port, path: "/stream", enough: 20_000) }
        let summary = try await app.run()
        let bytes = await stream.value
        let text = String(decoding: bytes.prefix(400), as: UTF8.self)
        XCTAssertTrue(text.contains("multipart/x-mixed-replace; boundary=granitepreview"), text)
        XCTAssertTrue(text.contains("--granitepreview\r\nContent-Type: image/jpeg"), text)
        let soi = zip(bytes, bytes.dropFirst()).contains { $0 == 0xFF && $1 == 0xD8 }
        XCTAssertTrue(soi, "a JPEG start-of-image marker arrived")
        XCTAssertGreaterThan(server.framesPublished, 3)
        XCTAssertLessThanOrEqual(Double(server.framesPublished), summary.seconds * 10 + 2, "the preview is capped at 10 fps")
        let page = String(decoding: loopbackGet(port: port, path: "/"), as: UTF8.self)
        XCTAssertTrue(page.contains("<img id=\"live\" src=\"/stream\""), page)
        let status = String(decoding: loopbackGet(port: port, path: "/status"), as: UTF8.self)
        XCTAssertTrue(status.contains("frames "), status)
        XCTAssertTrue(String(decoding: loopbackGet(port: port, path: "/nope"), as: UTF8.self).hasPrefix("HTTP/1.1 404"))
    }
}

/// Host and Origin checks with a real HTTP client (URLSession over loopback).
final class PreviewSecurityTests: XCTestCase {
    func status(_ port: Int, path: String = "/status", host: String? = nil, origin: String? = nil, method: String = "GET") async throws -> Int {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 5
        if let host { request.setValue(host, forHTTPHeaderField: "Host") }
        if let origin { request.setValue(origin, forHTTPHeaderField: "Origin") }
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? -1
    }

    func testForeignHostOrOriginIsForbidden() async throws {
        let server = try PreviewServer(port: 0)
        defer { server.close() }
        let port = server.port
        let fine = try await status(port)
        XCTAssertEqual(fine, 200, "the client's own Host (127.0.0.1:PORT)")
        let localhost = try await status(port, host: "localhost:\(port)")
        XCTAssertEqual(localhost, 200)
        let rebinding = try await status(port, host: "evil.example:\(port)")
        XCTAssertEqual(rebinding, 403, "DNS rebinding: a foreign Host")
        let foreignOrigin = try await status(port, origin: "http://evil.example")
        XCTAssertEqual(foreignOrigin, 403, "a page elsewhere reading the preview")
        let ownOrigin = try await status(port, origin: "http://127.0.0.1:\(port)")
        XCTAssertEqual(ownOrigin, 200)
        let otherPort = try await status(port, host: "127.0.0.1:1")
        XCTAssertEqual(otherPort, 403)
        let post = try await status(port, path: "/", method: "POST")
        XCTAssertEqual(post, 405, "no state change through the page's GET routes")
        let raw = String(decoding: loopbackGet(port: port, path: "/stream", enough: 200), as: UTF8.self)
        XCTAssertTrue(raw.hasPrefix("HTTP/1.1 200"), "a bare client naming localhost is served: \(raw)")
    }

    func testHostsForABoundAddress() {
        XCTAssertEqual(PreviewServer.hosts(bind: "192.168.1.5", port: 8080), ["192.168.1.5", "192.168.1.5:8080"])
        XCTAssertTrue(PreviewServer.hosts(bind: "127.0.0.1", port: 80).contains("[::1]:80"))
        XCTAssertEqual(PreviewServer.hosts(bind: "fe80::1", port: 9), ["[fe80::1]", "[fe80::1]:9"])
    }
}
