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

/// What one binding of a dispatch is: a storage-buffer range or a storage image.
public enum GPUBinding {
    /// A storage buffer (`buffer` block in GLSL).
    case buffer(BufferSlice)
    /// A storage image (`layout(r32ui) uimage2D` in GLSL), in the general layout.
    case image(GPUImage)

    var kind: GPUBindingKind {
        switch self {
        case .buffer: return .buffer
        case .image: return .image
        }
    }
}

/// Appends commands to a `CommandSequence` while it records.
public struct CommandRecorder {
    let sequence: CommandSequence

    /// Binds `buffers` to bindings 0..<n, pushes `push` (32-bit words) and dispatches `groups`.
    public mutating func dispatch(_ pipeline: ComputePipeline, buffers: [BufferSlice], push: [UInt32] = [],
                                  groups: (x: Int, y: Int, z: Int)) throws {
        try dispatch(pipeline, bindings: buffers.map { .buffer($0) }, push: push, groups: groups)
    }

    /// Binds buffers and images to bindings 0..<n (kinds as the pipeline declares them), pushes
    /// `push` (32-bit words) and dispatches `groups`.
    public mutating func dispatch(_ pipeline: ComputePipeline, bindings: [GPUBinding], push: [UInt32] = [],
                                  groups: (x: Int, y: Int, z: Int)) throws {
        guard bindings.map(\.kind) == pipeline.bindingKinds else {
            throw GPUError.invalidPipeline(name: pipeline.name,
                                           reason: "bound \(bindings.map(\.kind)), the shader declares \(pipeline.bindingKinds)")
        }
        let buffers = bindings.compactMap { if case let .buffer(slice) = $0 { slice } else { nil } }
        guard push.count * 4 <= ComputePipeline.pushConstantSize else {
            throw GPUError.invalidPipeline(name: pipeline.name, reason: "\(push.count * 4) push-constant bytes, at most \(ComputePipeline.pushConstantSize)")
        }
        for slice in buffers where slice.offset < 0 || slice.size <= 0 || slice.offset + slice.size > slice.buffer.size
            || slice.offset % sequence.context.storageAlignment != 0 {
            throw GPUError.outOfBounds(what: "binding for \(pipeline.name)", offset: slice.offset, count: slice.size, size: slice.buffer.size)
        }
        let set = try sequence.allocateSet(pipeline)
        let bufferInfos = bindings.map { binding -> VkDescriptorBufferInfo in
            guard case let .buffer(slice) = binding else { return VkDescriptorBufferInfo() }
            return VkDescriptorBufferInfo(buffer: slice.buffer.buffer, offset: VkDeviceSize(slice.offset), range: VkDeviceSize(slice.size))
        }
        let imageInfos = bindings.map { binding -> VkDescriptorImageInfo in
            guard case let .image(image) = binding else { return VkDescriptorImageInfo() }
            return VkDescriptorImageInfo(sampler: nil, imageView: image.view, imageLayout: VK_IMAGE_LAYOUT_GENERAL)
        }
        bufferInfos.withUnsafeBufferPointer { bufferPointer in
            imageInfos.withUnsafeBufferPointer { imagePointer in
                var writes = bindings.indices.map { index in
                    var write = VkWriteDescriptorSet()
                    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
                    write.dstSet = set
                    write.dstBinding = UInt32(index)
                    write.descriptorCount = 1
                    if case .image = bindings[index] {
                        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                        write.pImageInfo = imagePointer.baseAddress! + index
                    } else {
                        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                        write.pBufferInfo = bufferPointer.baseAddress! + index
                    }
                    return write
                }
                vkUpdateDescriptorSets(sequence.context.device, UInt32(writes.count), &writes, 0, nil)
            }
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
        for binding in bindings {
            switch binding {
            case let .buffer(slice): sequence.retained.append(slice.buffer)
            case let .image(image): sequence.retained.append(image)
            }
        }
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

    /// Moves a fresh image from the undefined to the general layout (`GPUImage` does it once).
    mutating func transitionToGeneral(_ image: GPUImage) {
        var barrier = VkImageMemoryBarrier()
        barrier.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER
        barrier.srcAccessMask = 0
        barrier.dstAccessMask = VkAccessFlags(VK_ACCESS_SHADER_READ_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue
            | VK_ACCESS_TRANSFER_READ_BIT.rawValue | VK_ACCESS_TRANSFER_WRITE_BIT.rawValue)
        barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED
        barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL
        barrier.srcQueueFamilyIndex = granite_vk_queue_family_ignored()
        barrier.dstQueueFamilyIndex = granite_vk_queue_family_ignored()
        barrier.image = image.image
        barrier.subresourceRange = GPUImage.wholeColour
        let stages = VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue)
        vkCmdPipelineBarrier(sequence.commandBuffer, VkPipelineStageFlags(VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue), stages,
                             0, 0, nil, 0, nil, 1, &barrier)
        sequence.retained.append(image)
    }

    /// Copies a tightly packed `image.width`×`image.height` picture from `buffer` (at `offset`) into `image`.
    public mutating func copy(from buffer: GPUBuffer, offset: Int = 0, to image: GPUImage) throws {
        guard offset >= 0, offset % 4 == 0, offset + image.byteCount <= buffer.size else {
            throw GPUError.outOfBounds(what: "copy to image", offset: offset, count: image.byteCount, size: buffer.size)
        }
        var region = GPUImage.region(image, offset: offset)
        vkCmdCopyBufferToImage(sequence.commandBuffer, buffer.buffer, image.image, VK_IMAGE_LAYOUT_GENERAL, 1, &region)
        sequence.retained.append(buffer)
        sequence.retained.append(image)
    }

    /// Copies all of `image` into `buffer` (at `offset`), tightly packed.
    public mutating func copy(from image: GPUImage, to buffer: GPUBuffer, offset: Int = 0) throws {
        guard offset >= 0, offset % 4 == 0, offset + image.byteCount <= buffer.size else {
            throw GPUError.outOfBounds(what: "copy from image", offset: offset, count: image.byteCount, size: buffer.size)
        }
        var region = GPUImage.region(image, offset: offset)
        vkCmdCopyImageToBuffer(sequence.commandBuffer, image.image, VK_IMAGE_LAYOUT_GENERAL, buffer.buffer, 1, &region)
        sequence.retained.append(buffer)
        sequence.retained.append(image)
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
