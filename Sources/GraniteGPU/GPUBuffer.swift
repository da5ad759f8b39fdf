import CVulkan

/// A storage buffer whose memory follows its role (``GPUMemoryRole``, chosen by the context's
/// ``MemoryPolicy``): device-local for what shaders alone touch, host-visible for constants and
/// staging. Host-visible buffers are mapped for their whole life; `read`/`write` on one that is not
/// throw (`GPUError.notHostVisible`). The buffer holds its context, so the device cannot go away
/// under it.
public final class GPUBuffer: @unchecked Sendable {
    /// The context the buffer lives in.
    public let context: GPUContext
    let buffer: VkBuffer
    let memory: VkDeviceMemory
    let mapped: UnsafeMutableRawPointer?
    /// Size in bytes.
    public let size: Int
    /// What the buffer is for.
    public let role: GPUMemoryRole
    /// The memory type it was allocated from (an index into the device's memory table).
    public let memoryType: Int
    /// Host-visible but not coherent (a cached read-back type without coherence): reads invalidate first.
    let needsInvalidate: Bool

    /// Whether the host can read and write it (`write`, `read`).
    public var isHostVisible: Bool { mapped != nil }

    /// Allocates `size` bytes (rounded up to 4) usable as a storage, uniform or texel buffer and for
    /// transfers, in the memory the context's policy picks for `role` (default: `.constants`,
    /// host-visible, device-local where the device offers it).
    public init(context: GPUContext, size: Int, role: GPUMemoryRole = .constants) throws(GPUError) {
        let size = max(4, (size + 3) & ~3)
        self.context = context
        self.size = size
        self.role = role
        let device = context.device
        var info = VkBufferCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
        info.size = VkDeviceSize(size)
        info.usage = VkBufferUsageFlags(VK_BUFFER_USAGE_STORAGE_BUFFER_BIT.rawValue | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT.rawValue
            | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT.rawValue
            | VK_BUFFER_USAGE_TRANSFER_SRC_BIT.rawValue | VK_BUFFER_USAGE_TRANSFER_DST_BIT.rawValue)
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
        var buffer: VkBuffer?
        try vk("vkCreateBuffer") { vkCreateBuffer(device, &info, nil, &buffer) }
        var requirements = VkMemoryRequirements()
        vkGetBufferMemoryRequirements(device, buffer, &requirements)
        do throws(GPUError) {
            guard let type = context.memoryPolicy.memoryType(for: role, allowed: requirements.memoryTypeBits) else {
                throw GPUError.noMemoryType(bits: requirements.memoryTypeBits, needs: "memory for \(role) buffers")
            }
            let flags = context.memoryPolicy.table.types[type].flags
            var allocate = VkMemoryAllocateInfo()
            allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
            allocate.allocationSize = requirements.size
            allocate.memoryTypeIndex = UInt32(type)
            var memory: VkDeviceMemory?
            try vk("vkAllocateMemory") { vkAllocateMemory(device, &allocate, nil, &memory) }
            do throws(GPUError) {
                try vk("vkBindBufferMemory") { vkBindBufferMemory(device, buffer, memory, 0) }
                var pointer: UnsafeMutableRawPointer?
                // Only roles the host may touch are mapped (a device buffer in a host-visible type,
                // as on lavapipe with staging forced, stays unmapped: the host goes through staging).
                if flags.contains(.hostVisible) && context.memoryPolicy.isHostVisible(role) {
                    try vk("vkMapMemory") { vkMapMemory(device, memory, 0, VkDeviceSize(granite_vk_whole_size()), 0, &pointer) }
                }
                self.memory = memory!
                self.mapped = pointer
                self.memoryType = type
                self.needsInvalidate = pointer != nil && !flags.contains(.hostCoherent)
            } catch {
                vkFreeMemory(device, memory, nil)
                throw error
            }
        } catch {
            vkDestroyBuffer(device, buffer, nil)
            throw error
        }
        self.buffer = buffer!
        context.memoryUse.add(role: role, bytes: size)
    }

    deinit {
        context.memoryUse.add(role: role, bytes: -size)
        if mapped != nil { vkUnmapMemory(context.device, memory) }
        vkDestroyBuffer(context.device, buffer, nil)
        vkFreeMemory(context.device, memory, nil)
    }

    /// Copies `bytes` into the buffer at `offset` (bytes).
    public func write(_ bytes: [UInt8], at offset: Int = 0) throws(GPUError) {
        let mapped = try host(offset, bytes.count, "GPUBuffer.write")
        bytes.withUnsafeBytes { (mapped + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Copies plain values (`UInt32`, `Float`, ...) into the buffer at `offset` (bytes).
    public func write<T: BitwiseCopyable>(values: [T], at offset: Int = 0) throws(GPUError) {
        let mapped = try host(offset, values.count * MemoryLayout<T>.stride, "GPUBuffer.write")
        values.withUnsafeBytes { raw in
            if let base = raw.baseAddress { (mapped + offset).copyMemory(from: base, byteCount: raw.count) }
        }
    }

    /// Reads `count` bytes from `offset`.
    public func read(count: Int, at offset: Int = 0) throws(GPUError) -> [UInt8] {
        let mapped = try host(offset, count, "GPUBuffer.read", reading: true)
        return [UInt8](UnsafeRawBufferPointer(start: mapped + offset, count: count))
    }

    /// Copies `destination.count` bytes from `offset` into `destination` (e.g. a recycled frame's storage).
    public func read(into destination: UnsafeMutableRawBufferPointer, at offset: Int = 0) throws(GPUError) {
        let mapped = try host(offset, destination.count, "GPUBuffer.read", reading: true)
        guard let base = destination.baseAddress else { return }
        base.copyMemory(from: mapped + offset, byteCount: destination.count)
    }

    /// Reads `count` values of type `T` from `offset` (bytes).
    public func read<T: BitwiseCopyable>(_ type: T.Type, count: Int, at offset: Int = 0) throws(GPUError) -> [T] {
        let mapped = try host(offset, count * MemoryLayout<T>.stride, "GPUBuffer.read", reading: true)
        guard count > 0 else { return [] }
        return [T](unsafeUninitializedCapacity: count) { out, initialized in
            UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: mapped + offset, byteCount: count * MemoryLayout<T>.stride)
            initialized = count
        }
    }

    /// The mapping, after checking the range is inside the buffer and the buffer is host-visible;
    /// a read of non-coherent memory first invalidates the host's view of it.
    private func host(_ offset: Int, _ count: Int, _ what: String, reading: Bool = false) throws(GPUError) -> UnsafeMutableRawPointer {
        guard offset >= 0, count >= 0, offset + count <= size else {
            throw GPUError.outOfBounds(what: what, offset: offset, count: count, size: size)
        }
        guard let mapped else { throw GPUError.notHostVisible(what: what, role: role.rawValue) }
        if reading && needsInvalidate {
            var range = VkMappedMemoryRange()
            range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE
            range.memory = memory
            range.offset = 0
            range.size = VkDeviceSize(granite_vk_whole_size())
            let device = context.device
            try vk("vkInvalidateMappedMemoryRanges") { vkInvalidateMappedMemoryRanges(device, 1, &range) }
        }
        return mapped
    }
}
