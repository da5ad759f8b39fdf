import Foundation
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
        XCTAssertTrue(page.contains("<img src=\"/stream\""))
        let status = String(decoding: loopbackGet(port: port, path: "/status"), as: UTF8.self)
        XCTAssertTrue(status.contains("frames "), status)
        XCTAssertTrue(String(decoding: loopbackGet(port: port, path: "/nope"), as: UTF8.self).hasPrefix("HTTP/1.1 404"))
    }
}
