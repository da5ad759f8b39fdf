import CVulkan

/// A view of a buffer for one binding: the whole buffer or a range of it.
public struct BufferSlice {
    /// The buffer.
    public var buffer: GPUBuffer
    /// Start in bytes (a multiple of the device's storage alignment).
    public var offset: Int
    /// Length in bytes.
    public var size: Int

    /// A range of `buffer`; the whole of it by default.
    public init(_ buffer: GPUBuffer, offset: Int = 0, size: Int? = nil) {
        self.buffer = buffer
        self.offset = offset
        self.size = size ?? (buffer.size - offset)
    }
}

/// Appends commands to a `CommandSequence` while it records.
public struct CommandRecorder {
    let sequence: CommandSequence

    /// Binds `buffers` to bindings 0..<n, pushes `push` (32-bit words) and dispatches `groups`.
    public mutating func dispatch(_ pipeline: ComputePipeline, buffers: [BufferSlice], push: [UInt32] = [],
                                  groups: (x: Int, y: Int, z: Int)) throws {
        guard buffers.count == pipeline.bindingCount else {
            throw GPUError.invalidPipeline(name: pipeline.name,
                                           reason: "\(buffers.count) buffers bound, the shader declares \(pipeline.bindingCount)")
        }
        guard push.count * 4 <= ComputePipeline.pushConstantSize else {
            throw GPUError.invalidPipeline(name: pipeline.name, reason: "\(push.count * 4) push-constant bytes, at most \(ComputePipeline.pushConstantSize)")
        }
        for slice in buffers where slice.offset < 0 || slice.size <= 0 || slice.offset + slice.size > slice.buffer.size
            || slice.offset % sequence.context.storageAlignment != 0 {
            throw GPUError.outOfBounds(what: "binding for \(pipeline.name)", offset: slice.offset, count: slice.size, size: slice.buffer.size)
        }
        let set = try sequence.allocateSet(pipeline)
        let infos = buffers.map {
            VkDescriptorBufferInfo(buffer: $0.buffer.buffer, offset: VkDeviceSize($0.offset), range: VkDeviceSize($0.size))
        }
        infos.withUnsafeBufferPointer { infoPointer in
            var writes = (0..<buffers.count).map { index in
                var write = VkWriteDescriptorSet()
                write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
                write.dstSet = set
                write.dstBinding = UInt32(index)
                write.descriptorCount = 1
                write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                write.pBufferInfo = infoPointer.baseAddress! + index
                return write
            }
            vkUpdateDescriptorSets(sequence.context.device, UInt32(writes.count), &writes, 0, nil)
        }
        let commands = sequence.commandBuffer
        vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline)
        var sets: VkDescriptorSet? = set
        vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &sets, 0, nil)
        if !push.isEmpty {
            push.withUnsafeBytes { raw in
                vkCmdPushConstants(commands, pipeline.layout, VkShaderStageFlags(VK_SHADER_STAGE_COMPUTE_BIT.rawValue),
                                   0, UInt32(raw.count), raw.baseAddress)
            }
        }
        vkCmdDispatch(commands, UInt32(max(1, groups.x)), UInt32(max(1, groups.y)), UInt32(max(1, groups.z)))
        sequence.retained.append(pipeline)
        sequence.retained.append(contentsOf: buffers.map(\.buffer) as [AnyObject])
    }

    /// Makes every earlier shader or transfer write visible to later shaders and transfers.
    public func barrier() {
        var memory = VkMemoryBarrier()
        memory.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
        memory.srcAccessMask = VkAccessFlags(VK_ACCESS_SHADER_WRITE_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        memory.dstAccessMask = VkAccessFlags(VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue
            | VK_ACCESS_TRANSFER_READ_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        let stages = VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue)
        vkCmdPipelineBarrier(sequence.commandBuffer, stages, stages, 0, 1, &memory, 0, nil, 0, nil)
    }

    /// Fills `slice` with a repeated 32-bit `value`.
    public mutating func fill(_ slice: BufferSlice, value: UInt32) {
        vkCmdFillBuffer(sequence.commandBuffer, slice.buffer.buffer, VkDeviceSize(slice.offset), VkDeviceSize(slice.size), value)
        sequence.retained.append(slice.buffer)
    }

    /// Copies `size` bytes between buffers.
    public mutating func copy(from source: GPUBuffer, to destination: GPUBuffer, size: Int) throws {
        guard size <= source.size, size <= destination.size else {
            throw GPUError.outOfBounds(what: "copy", offset: 0, count: size, size: min(source.size, destination.size))
        }
        var region = VkBufferCopy(srcOffset: 0, dstOffset: 0, size: VkDeviceSize(size))
        vkCmdCopyBuffer(sequence.commandBuffer, source.buffer, destination.buffer, 1, &region)
        sequence.retained.append(source)
        sequence.retained.append(destination)
    }
}
