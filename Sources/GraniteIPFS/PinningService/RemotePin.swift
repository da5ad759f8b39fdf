import Foundation

/// A pin request on a pinning service, as its `PinStatus` says (text from the service escaped).
public struct RemotePin: Sendable, Hashable {
    /// Where a pin request stands.
    public enum Status: String, Sendable, Hashable, CaseIterable, Codable {
        /// Waiting in the service's queue.
        case queued
        /// The service is fetching the DAG.
        case pinning
        /// Pinned.
        case pinned
        /// The service gave up (``RemotePin/details`` may say why).
        case failed

        /// True for `pinned` and `failed`: the request will not change any more.
        public var isFinal: Bool { self == .pinned || self == .failed }
    }

    /// The service's id of this request (`GET /pins/{requestid}`).
    public var requestID: String
    /// Where it stands.
    public var status: Status
    /// The CID pinned (as the service wrote it).
    public var cid: String
    /// The name given with it, if any.
    public var name: String?
    /// When the service accepted the request.
    public var created: Date
    /// The service's `info.status_details`, if any (why a pin failed, queue position, ...).
    public var details: String?
}

extension RemotePin {
    init(_ status: Components.Schemas.PinStatus) {
        self.init(requestID: status.requestid, status: Status(rawValue: status.status.rawValue) ?? .failed,
                  cid: status.pin.cid, name: status.pin.name.map { NodeText.escaped($0, limit: 255) },
                  created: status.created,
                  details: status.info?.additionalProperties["status_details"].map { NodeText.escaped($0, limit: 500) })
    }
}
