/// The kind of a Vulkan physical device, in the order the context prefers them.
public enum GPUDeviceKind: Int, Sendable, Comparable, CustomStringConvertible {
    /// A discrete GPU, integrated GPU, virtual GPU, CPU driver (lavapipe) or anything else.
    case discrete = 0, integrated, virtual, cpu, other

    /// Orders by preference: discrete first.
    public static func < (a: GPUDeviceKind, b: GPUDeviceKind) -> Bool { a.rawValue < b.rawValue }

    /// A human-readable name of the kind.
    public var description: String {
        switch self {
        case .discrete: return "discrete GPU"
        case .integrated: return "integrated GPU"
        case .virtual: return "virtual GPU"
        case .cpu: return "CPU"
        case .other: return "other"
        }
    }
}

/// One candidate device as the choice sees it.
package struct DeviceCandidate: Sendable, Equatable {
    /// The driver's device name.
    package var name: String
    /// Discrete, integrated, CPU...
    package var kind: GPUDeviceKind
    /// Whether a queue family supports compute.
    package var hasComputeQueue: Bool

    /// A candidate as the loader reported it.
    package init(name: String, kind: GPUDeviceKind, hasComputeQueue: Bool) {
        self.name = name
        self.kind = kind
        self.hasComputeQueue = hasComputeQueue
    }
}

/// Picks the physical device: a name substring when asked (case-insensitive), else the best kind.
package enum DeviceChoice {
    /// The index of the device to use among `candidates`.
    package static func pick(_ candidates: [DeviceCandidate], requested: String?) throws(GPUError) -> Int {
        let usable = candidates.indices.filter { candidates[$0].hasComputeQueue }
        if let requested, !requested.isEmpty {
            let needle = requested.lowercased()
            guard let hit = usable.first(where: { candidates[$0].name.lowercased().contains(needle) }) else {
                throw GPUError.deviceNotFound(requested: requested, available: candidates.map(\.name))
            }
            return hit
        }
        guard let best = usable.min(by: { (candidates[$0].kind, $0) < (candidates[$1].kind, $1) }) else {
            throw GPUError.noDevice(detail: candidates.isEmpty
                ? "the Vulkan loader lists no physical device"
                : "none of \(candidates.map(\.name)) has a compute queue")
        }
        return best
    }
}
