import CVulkan

/// A storage buffer in host-visible, coherent memory, mapped for its whole life.
///
/// Device-local memory is preferred when it is also host-visible (integrated GPUs, lavapipe, BAR
/// memory), so uploads and downloads are plain copies with no staging pass. The buffer holds its
/// context, so the device cannot go away under it.
public final class GPUBuffer: @unchecked Sendable {
    /// The context the buffer lives in.
    public let context: GPUContext
    let buffer: VkBuffer
    let memory: VkDeviceMemory
    let mapped: UnsafeMutableRawPointer
    /// Size in bytes.
    public let size: Int

    /// Allocates `size` bytes (rounded up to 4) usable as a storage, uniform or texel buffer and for transfers.
    public init(context: GPUContext, size: Int) throws(GPUError) {
        let size = max(4, (size + 3) & ~3)
        self.context = context
        self.size = size
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
            var allocate = VkMemoryAllocateInfo()
            allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
            allocate.allocationSize = requirements.size
            allocate.memoryTypeIndex = try context.memoryType(
                bits: requirements.memoryTypeBits,
                required: VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT.rawValue
                    | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT.rawValue),
                preferred: VkMemoryPropertyFlags(VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT.rawValue))
            var memory: VkDeviceMemory?
            try vk("vkAllocateMemory") { vkAllocateMemory(device, &allocate, nil, &memory) }
            do throws(GPUError) {
                try vk("vkBindBufferMemory") { vkBindBufferMemory(device, buffer, memory, 0) }
                var pointer: UnsafeMutableRawPointer?
                try vk("vkMapMemory") { vkMapMemory(device, memory, 0, VkDeviceSize(size), 0, &pointer) }
                self.memory = memory!
                self.mapped = pointer!
            } catch {
                vkFreeMemory(device, memory, nil)
                throw error
            }
        } catch {
            vkDestroyBuffer(device, buffer, nil)
            throw error
        }
        self.buffer = buffer!
    }

    deinit {
        vkUnmapMemory(context.device, memory)
        vkDestroyBuffer(context.device, buffer, nil)
        vkFreeMemory(context.device, memory, nil)
    }

    /// Copies `bytes` into the buffer at `offset` (bytes).
    public func write(_ bytes: [UInt8], at offset: Int = 0) throws(GPUError) {
        try checkRange(offset, bytes.count, "GPUBuffer.write")
        bytes.withUnsafeBytes { (mapped + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }

    /// Copies plain values (`UInt32`, `Float`, ...) into the buffer at `offset` (bytes).
    public func write<T: BitwiseCopyable>(values: [T], at offset: Int = 0) throws(GPUError) {
        try checkRange(offset, values.count * MemoryLayout<T>.stride, "GPUBuffer.write")
        values.withUnsafeBytes { raw in
            if let base = raw.baseAddress { (mapped + offset).copyMemory(from: base, byteCount: raw.count) }
        }
    }

    /// Reads `count` bytes from `offset`.
    public func read(count: Int, at offset: Int = 0) throws(GPUError) -> [UInt8] {
        try checkRange(offset, count, "GPUBuffer.read")
        return [UInt8](UnsafeRawBufferPointer(start: mapped + offset, count: count))
    }

    /// Copies `destination.count` bytes from `offset` into `destination` (e.g. a recycled frame's storage).
    public func read(into destination: UnsafeMutableRawBufferPointer, at offset: Int = 0) throws(GPUError) {
        try checkRange(offset, destination.count, "GPUBuffer.read")
        guard let base = destination.baseAddress else { return }
        base.copyMemory(from: mapped + offset, byteCount: destination.count)
    }

    /// Reads `count` values of type `T` from `offset` (bytes).
    public func read<T: BitwiseCopyable>(_ type: T.Type, count: Int, at offset: Int = 0) throws(GPUError) -> [T] {
        try checkRange(offset, count * MemoryLayout<T>.stride, "GPUBuffer.read")
        guard count > 0 else { return [] }
        return [T](unsafeUninitializedCapacity: count) { out, initialized in
            UnsafeMutableRawPointer(out.baseAddress!).copyMemory(from: mapped + offset, byteCount: count * MemoryLayout<T>.stride)
            initialized = count
        }
    }

    private func checkRange(_ offset: Int, _ count: Int, _ what: String) throws(GPUError) {
        guard offset >= 0, count >= 0, offset + count <= size else {
            throw GPUError.outOfBounds(what: what, offset: offset, count: count, size: size)
        }
    }
}
