// Kubo RPC answers as the client parses them: a streamed NDJSON body (cut into pieces of a size
// taken from the first byte) through the line splitter, each line and each `add` event; the
// same bytes as a single JSON answer (version, pin/add, pin/ls), as an error body
// (`{"Message","Code","Type"}` or plain text) and as an `X-Stream-Error` trailer.
import FuzzSupport
@testable import KuboParsing

fuzzMain { data in
    let bytes = Array(data)
    let node = "http://127.0.0.1:5001"
    let piece = Int(bytes.first ?? 0) % 64 + 1
    var splitter = KuboAnswer.LineSplitter()
    var lines: [[UInt8]] = []
    var offset = 0
    while offset < bytes.count {
        lines += splitter.append(bytes[offset..<min(offset + piece, bytes.count)])
        offset += piece
    }
    if let last = splitter.finish() { lines.append(last) }
    precondition(lines.reduce(0) { $0 + $1.count } + bytes.count(where: { $0 == UInt8(ascii: "\n") }) == bytes.count)
    for line in lines {
        guard let object = try? KuboAnswer.line(line, node: node, command: "add") else { continue }
        _ = KuboAnswer.addEvent(object)
        _ = KuboAnswer.importedRoot(object)
    }
    if let object = try? KuboAnswer.object(bytes, node: node, command: "pin/ls") {
        _ = try? KuboAnswer.version(object, node: node)
        _ = KuboAnswer.pins(object)
        _ = KuboAnswer.pinTypes(object)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    _ = KuboAnswer.commandError(status: 500, text: text, node: node, command: "pin/add").description
    _ = KuboAnswer.commandError(status: 403, text: text, node: node, command: "add").isTransient
    _ = KuboAnswer.streamError(trailer: text, node: node, command: "add")
}
