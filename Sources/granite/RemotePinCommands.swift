import Foundation
import GraniteIPFS

/// `granite pin --service URL --ls | --rm CID`: a pinning service's pin requests, listed or removed.
struct RemotePinCommands {
    let client: PinningServiceClient
    let json: Bool

    /// Lists (`remove` nil) or removes every request for `remove`.
    func run(remove: CID?) async throws {
        if let cid = remove {
            let requests = try await client.list(cids: [cid], statuses: Set(RemotePin.Status.allCases)).pins
            guard !requests.isEmpty else {
                throw PinningServiceError.refused(service: client.service, operation: "remove", status: 404,
                                                  reason: "no pin request for \(cid)")
            }
            for request in requests { try await client.remove(request.requestID) }
            Swift.print("removed \(requests.count) pin request(s) for \(cid) from \(client.service)")
            return
        }
        let (count, pins) = try await client.list(statuses: Set(RemotePin.Status.allCases))
        if json {
            struct Row: Encodable { var cid, status, requestID: String; var name, details: String?; var created: Date }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            let rows = pins.map { Row(cid: NodeText.escaped($0.cid), status: $0.status.rawValue, requestID: NodeText.escaped($0.requestID),
                                      name: $0.name, details: $0.details, created: $0.created) }
            Swift.print(String(decoding: try encoder.encode(rows), as: UTF8.self))
            return
        }
        for pin in pins {
            Swift.print("\(NodeText.escaped(pin.cid))  \(pin.status.rawValue)  \(NodeText.escaped(pin.requestID))"
                        + (pin.name.map { "  \($0)" } ?? "") + (pin.details.map { "  (\($0))" } ?? ""))
        }
        Swift.print("\(pins.count) of \(count) pin request(s) on \(client.service)")
    }
}

/// Prints a line each time a remote pin request moves on (on stderr, so stdout stays the summary).
final class RemotePinLines: Sendable {
    func handle(_ event: RemotePinEvent) {
        let line: String
        switch event {
        case let .requested(job, pin): line = "requested \(job.cid) (\(pin.status.rawValue), request \(NodeText.escaped(pin.requestID)))"
        case let .status(job, pin): line = "\(job.cid) \(pin.status.rawValue)" + (pin.details.map { ": \($0)" } ?? "")
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
