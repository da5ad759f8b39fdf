/// What a buffer is for, which decides where its memory lives (``MemoryPolicy``).
///
/// ```
///  discrete GPU:   host ─write─► upload (system RAM) ─copy─► device (VRAM) ─shaders─► device ─copy─► readback (cached RAM) ─read─► host
///  unified memory: host ─write─► device (mapped) ─shaders─► device (mapped) ─read─► host        (no copies)
/// ```
public enum GPUMemoryRole: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Storage that shaders alone touch (frames, intermediate images, results before they are
    /// read back). Device-local; on unified-memory devices also mapped, so no copies are needed.
    case device
    /// Small values the host writes and shaders read (per-frame floats, filter tables, weights).
    /// Host-visible; device-local too where the device offers such a type (its BAR window).
    case constants
    /// Staging for uploads: the host writes it once per frame, a copy command reads it. Host-visible
    /// system memory; write-combined (uncached) is right, the host never reads it.
    case upload
    /// Staging for read-backs: a copy command writes it, the host reads it. Host-visible and cached
    /// (reading uncached or PCIe-mapped memory is what made the first GPU run 7.9 fps).
    case readback

    public var description: String { rawValue }
}

/// The property flags of a Vulkan memory type, as the driver reports them.
public struct MemoryTypeFlags: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT`
    public static let deviceLocal = MemoryTypeFlags(rawValue: 0x1)
    /// `VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT`
    public static let hostVisible = MemoryTypeFlags(rawValue: 0x2)
    /// `VK_MEMORY_PROPERTY_HOST_COHERENT_BIT`
    public static let hostCoherent = MemoryTypeFlags(rawValue: 0x4)
    /// `VK_MEMORY_PROPERTY_HOST_CACHED_BIT`
    public static let hostCached = MemoryTypeFlags(rawValue: 0x8)
    /// `VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT`
    public static let lazilyAllocated = MemoryTypeFlags(rawValue: 0x10)
    /// `VK_MEMORY_PROPERTY_PROTECTED_BIT`
    public static let protected = MemoryTypeFlags(rawValue: 0x20)
    /// `VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD`
    public static let deviceCoherentAMD = MemoryTypeFlags(rawValue: 0x40)
    /// `VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD`
    public static let deviceUncachedAMD = MemoryTypeFlags(rawValue: 0x80)

    /// Short names joined by `|` (`DL|HV|HC|HCached`), `none` for a type with no flags.
    public var description: String {
        let names: [(MemoryTypeFlags, String)] = [(.deviceLocal, "DL"), (.hostVisible, "HV"), (.hostCoherent, "HC"),
                                                  (.hostCached, "HCached"), (.lazilyAllocated, "lazy"), (.protected, "protected"),
                                                  (.deviceCoherentAMD, "devCoherentAMD"), (.deviceUncachedAMD, "devUncachedAMD")]
        let present = names.filter { contains($0.0) }.map(\.1)
        return present.isEmpty ? "none" : present.joined(separator: "|")
    }
}

/// A device's memory types and heaps (`VkPhysicalDeviceMemoryProperties`), as plain values so a
/// policy can be checked against the tables of devices that are not in the machine.
public struct MemoryTable: Sendable, Equatable {
    /// One memory type: its flags and the heap it allocates from.
    public struct MemoryType: Sendable, Equatable {
        public var flags: MemoryTypeFlags
        public var heap: Int
        public init(_ flags: MemoryTypeFlags, heap: Int) { (self.flags, self.heap) = (flags, heap) }
    }
    /// One heap: its size and whether it is the device's own memory.
    public struct Heap: Sendable, Equatable {
        public var size: UInt64
        public var deviceLocal: Bool
        public init(size: UInt64, deviceLocal: Bool) { (self.size, self.deviceLocal) = (size, deviceLocal) }
    }
    public var types: [MemoryType]
    public var heaps: [Heap]
    public init(types: [MemoryType], heaps: [Heap]) { (self.types, self.heaps) = (types, heaps) }

    /// The index of the largest device-local heap (the GPU's own memory), or nil when none is.
    var mainDeviceHeap: Int? {
        heaps.indices.filter { heaps[$0].deviceLocal }.max { heaps[$0].size < heaps[$1].size }
    }
}

/// Decides the memory type of every buffer from its role and the device's memory table.
///
/// - Unified memory (CPU drivers such as lavapipe, integrated GPUs): the device's main memory is
///   also host-visible, so `device` buffers are mapped and the host reads and writes them in place;
///   no staging buffers, no copy commands.
/// - Discrete GPUs: `device` buffers are device-local and *not* host-visible where a type allows
///   (the BAR window is small without resizable BAR, and reading it from the CPU crosses PCIe
///   uncached); uploads stage through write-combined system memory, read-backs through cached
///   system memory, both copied by commands recorded in the frame's submission.
public struct MemoryPolicy: Sendable, Equatable {
    /// The table the choices are made from.
    public let table: MemoryTable
    /// The kind of device (a discrete GPU never counts as unified, even with resizable BAR).
    public let kind: GPUDeviceKind
    /// Whether `device` buffers are host-visible, so no staging copies are needed.
    public let unified: Bool

    /// A policy for a device of `kind` with `table`; `forceStaging` treats a unified-memory device
    /// as a discrete one (staging buffers and copy commands everywhere), so the discrete path runs
    /// and is checked on lavapipe (`GRANITE_DEBUG=staging`, or the old `GRANITE_GPU_STAGING=1`).
    public init(table: MemoryTable, kind: GPUDeviceKind, forceStaging: Bool = false) {
        self.table = table
        self.kind = kind
        // Unified: not a discrete GPU, and its main device-local heap has a host-visible type.
        if kind != .discrete, !forceStaging, let main = table.mainDeviceHeap {
            unified = table.types.contains { $0.heap == main && $0.flags.isSuperset(of: [.deviceLocal, .hostVisible, .hostCoherent]) }
        } else {
            unified = false
        }
    }

    /// Whether buffers of `role` are mapped for the host.
    public func isHostVisible(_ role: GPUMemoryRole) -> Bool {
        role != .device || unified
    }

    /// Whether uploads and read-backs need a staging buffer and a copy command.
    public var needsStaging: Bool { !unified }

    /// The memory type for a buffer of `role` among `allowed` (the buffer's `memoryTypeBits`),
    /// or nil when the device has none that serves the role.
    public func memoryType(for role: GPUMemoryRole, allowed: UInt32 = .max) -> Int? {
        let candidates = table.types.indices.filter { allowed & (1 << UInt32($0)) != 0 && !table.types[$0].flags.contains(.protected)
            && !table.types[$0].flags.contains(.lazilyAllocated) }
        // Lower score wins; nil: the type cannot serve the role. Ties keep the driver's order.
        func score(_ index: Int) -> Int? {
            let flags = table.types[index].flags
            let heap = table.types[index].heap
            let onMainHeap = heap == table.mainDeviceHeap
            // AMD's device-coherent/uncached types are for debugging markers: slow for everything else.
            var penalty = flags.contains(.deviceCoherentAMD) || flags.contains(.deviceUncachedAMD) ? 100 : 0
            switch role {
            case .device:
                guard flags.contains(.deviceLocal) else { return nil }
                if unified {
                    guard flags.isSuperset(of: [.hostVisible, .hostCoherent]) else { return nil }
                    penalty += flags.contains(.hostCached) ? 0 : 1  // the host reads results in place
                } else {
                    penalty += flags.contains(.hostVisible) ? 4 : 0  // keep the BAR window for constants
                    penalty += onMainHeap ? 0 : 2
                }
                return penalty
            case .constants:
                guard flags.isSuperset(of: [.hostVisible, .hostCoherent]) else { return nil }
                return penalty + (flags.contains(.deviceLocal) ? 0 : 2)
            case .upload:
                guard flags.isSuperset(of: [.hostVisible, .hostCoherent]) else { return nil }
                if unified { return penalty + (flags.contains(.deviceLocal) ? 0 : 1) }
                // System memory, uncached (write-combined): the host only writes it sequentially.
                return penalty + (flags.contains(.deviceLocal) ? 4 : 0) + (flags.contains(.hostCached) ? 1 : 0)
            case .readback:
                guard flags.contains(.hostVisible) else { return nil }
                // Cached is what matters; coherent saves an invalidate; device-local BAR memory is
                // the worst place to read from on a discrete GPU.
                return penalty + (flags.contains(.hostCached) ? 0 : 8) + (flags.contains(.hostCoherent) ? 0 : 1)
                    + (!unified && flags.contains(.deviceLocal) ? 4 : 0)
            }
        }
        return candidates.compactMap { index in score(index).map { (index, $0) } }.min { $0.1 < $1.1 }?.0
    }

    /// One line per role: the type chosen and its flags (`granite-bench`, `granite devices`).
    public var summary: String {
        GPUMemoryRole.allCases.map { role in
            guard let index = memoryType(for: role) else { return "\(role): none" }
            return "\(role): type \(index) (\(table.types[index].flags))"
        }.joined(separator: ", ") + (unified ? "; unified memory, no staging copies" : "; staged uploads and read-backs")
    }
}
