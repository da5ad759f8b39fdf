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
    /// A uniform-buffer range (`uniform` block in GLSL): offset a multiple of
    /// `GPUContext.uniformAlignment`, size at most `GPUContext.maxUniformRange`.
    case uniform(BufferSlice)
    /// A buffer range seen as `VK_FORMAT_R32_UINT` texels (`uniform usamplerBuffer` in GLSL, read
    /// with `texelFetch`): offset a multiple of `GPUContext.texelAlignment`.
    case texels(BufferSlice)
    /// A buffer range seen as `VK_FORMAT_R32G32B32A32_UINT` texels, four packed pixels each (also
    /// `uniform usamplerBuffer`; `texelFetch` returns a `uvec4`): offset a multiple of
    /// `GPUContext.texelAlignment`, size a multiple of 16. On CPU drivers one fetch gathers a quad.
    case quadTexels(BufferSlice)

    var kind: GPUBindingKind {
        switch self {
        case .buffer: return .buffer
        case .image: return .image
        case .uniform: return .uniform
        case .texels, .quadTexels: return .texels
        }
    }

    /// Bytes of one texel of a texel-buffer binding.
    var texelBytes: Int {
        if case .quadTexels = self { return 16 }
        return 4
    }

    /// The buffer range behind a buffer binding (nil for an image).
    var slice: BufferSlice? {
        switch self {
        case let .buffer(slice), let .uniform(slice), let .texels(slice), let .quadTexels(slice): return slice
        case .image: return nil
        }
    }
}

/// Appends commands to a `CommandSequence` while it records.
public struct CommandRecorder {
    let sequence: CommandSequence
    /// A prefix for the labels of the timestamps a timed sequence writes (e.g. the filter's name).
    public var section: String?

    init(sequence: CommandSequence) {
        self.sequence = sequence
    }

    /// Labels the commands recorded since the previous mark (timed sequences only).
    private func mark(_ what: String) {
        guard sequence.queryPool != nil else { return }
        sequence.markTimestamp(section.map { "\($0): \(what)" } ?? what)
    }

    /// Binds `buffers` to bindings 0..<n, pushes `push` (32-bit words) and dispatches `groups`.
    public mutating func dispatch(_ pipeline: ComputePipeline, buffers: [BufferSlice], push: [UInt32] = [],
                                  groups: (x: Int, y: Int, z: Int)) throws(GPUError) {
        try dispatch(pipeline, bindings: buffers.map { .buffer($0) }, push: push, groups: groups)
    }

    /// Binds buffers and images to bindings 0..<n (kinds as the pipeline declares them), pushes
    /// `push` (32-bit words) and dispatches `groups`.
    public mutating func dispatch(_ pipeline: ComputePipeline, bindings: [GPUBinding], push: [UInt32] = [],
                                  groups: (x: Int, y: Int, z: Int)) throws(GPUError) {
        guard bindings.map(\.kind) == pipeline.bindingKinds else {
            throw GPUError.invalidPipeline(name: pipeline.name,
                                           reason: "bound \(bindings.map(\.kind)), the shader declares \(pipeline.bindingKinds)")
        }
        guard push.count * 4 <= ComputePipeline.pushConstantSize else {
            throw GPUError.invalidPipeline(name: pipeline.name, reason: "\(push.count * 4) push-constant bytes, at most \(ComputePipeline.pushConstantSize)")
        }
        let context = sequence.context
        for binding in bindings {
            guard let slice = binding.slice else { continue }
            let kind = binding.kind
            let alignment = kind == .uniform ? context.uniformAlignment : kind == .texels ? context.texelAlignment : context.storageAlignment
            if slice.offset < 0 || slice.size <= 0 || slice.offset + slice.size > slice.buffer.size || slice.offset % alignment != 0
                || (kind == .uniform && slice.size > context.maxUniformRange)
                || (kind == .texels && (slice.size % binding.texelBytes != 0 || slice.size / binding.texelBytes > context.maxTexelCount)) {
                throw GPUError.outOfBounds(what: "\(kind) binding for \(pipeline.name)",
                                           offset: slice.offset, count: slice.size, size: slice.buffer.size)
            }
        }
        let set = try sequence.allocateSet(pipeline)
        let bufferInfos = bindings.map { binding -> VkDescriptorBufferInfo in
            guard let slice = binding.slice else { return VkDescriptorBufferInfo() }
            return VkDescriptorBufferInfo(buffer: slice.buffer.buffer, offset: VkDeviceSize(slice.offset), range: VkDeviceSize(slice.size))
        }
        var views = [VkBufferView?](repeating: nil, count: bindings.count)
        for (index, binding) in bindings.enumerated() {
            switch binding {
            case let .texels(slice): views[index] = try sequence.makeTexelView(slice, format: VK_FORMAT_R32_UINT)
            case let .quadTexels(slice): views[index] = try sequence.makeTexelView(slice, format: VK_FORMAT_R32G32B32A32_UINT)
            default: break
            }
        }
        let imageInfos = bindings.map { binding -> VkDescriptorImageInfo in
            guard case let .image(image) = binding else { return VkDescriptorImageInfo() }
            return VkDescriptorImageInfo(sampler: nil, imageView: image.view, imageLayout: VK_IMAGE_LAYOUT_GENERAL)
        }
        bufferInfos.withUnsafeBufferPointer { bufferPointer in
          views.withUnsafeBufferPointer { viewPointer in
            imageInfos.withUnsafeBufferPointer { imagePointer in
                var writes = bindings.indices.map { index in
                    var write = VkWriteDescriptorSet()
                    write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
                    write.dstSet = set
                    write.dstBinding = UInt32(index)
                    write.descriptorCount = 1
                    write.descriptorType = bindings[index].kind.descriptorType
                    switch bindings[index] {
                    case .image: write.pImageInfo = imagePointer.baseAddress! + index
                    case .texels, .quadTexels: write.pTexelBufferView = viewPointer.baseAddress! + index
                    case .buffer, .uniform: write.pBufferInfo = bufferPointer.baseAddress! + index
                    }
                    return write
                }
                vkUpdateDescriptorSets(sequence.context.device, UInt32(writes.count), &writes, 0, nil)
            }
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
        mark(pipeline.name)
        sequence.retained.append(pipeline)
        for binding in bindings {
            switch binding {
            case let .buffer(slice), let .uniform(slice), let .texels(slice), let .quadTexels(slice): sequence.retained.append(slice.buffer)
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

    /// Makes earlier transfer writes visible to the host once the submission's fence signals
    /// (read-backs into staging buffers).
    public func hostBarrier() {
        var memory = VkMemoryBarrier()
        memory.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER
        memory.srcAccessMask = VkAccessFlags(VK_ACCESS_TRANSFER_WRITE_BIT.rawValue | VK_ACCESS_SHADER_WRITE_BIT.rawValue)
        memory.dstAccessMask = VkAccessFlags(VK_ACCESS_HOST_READ_BIT.rawValue)
        let source = VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue)
        vkCmdPipelineBarrier(sequence.commandBuffer, source, VkPipelineStageFlags(VK_PIPELINE_STAGE_HOST_BIT.rawValue), 0, 1, &memory, 0, nil, 0, nil)
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
        barrier.subresourceRange = GPUImage.wholeColor
        let stages = VkPipelineStageFlags(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.rawValue | VK_PIPELINE_STAGE_TRANSFER_BIT.rawValue)
        vkCmdPipelineBarrier(sequence.commandBuffer, VkPipelineStageFlags(VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT.rawValue), stages,
                             0, 0, nil, 0, nil, 1, &barrier)
        sequence.retained.append(image)
    }

    /// Copies a tightly packed `image.width`×`image.height` picture from `buffer` (at `offset`) into `image`.
    public mutating func copy(from buffer: GPUBuffer, offset: Int = 0, to image: GPUImage) throws(GPUError) {
        guard offset >= 0, offset % 4 == 0, offset + image.byteCount <= buffer.size else {
            throw GPUError.outOfBounds(what: "copy to image", offset: offset, count: image.byteCount, size: buffer.size)
        }
        var region = GPUImage.region(image, offset: offset)
        vkCmdCopyBufferToImage(sequence.commandBuffer, buffer.buffer, image.image, VK_IMAGE_LAYOUT_GENERAL, 1, &region)
        mark("copy buffer→image")
        sequence.retained.append(buffer)
        sequence.retained.append(image)
    }

    /// Copies all of `image` into `buffer` (at `offset`), tightly packed.
    public mutating func copy(from image: GPUImage, to buffer: GPUBuffer, offset: Int = 0) throws(GPUError) {
        guard offset >= 0, offset % 4 == 0, offset + image.byteCount <= buffer.size else {
            throw GPUError.outOfBounds(what: "copy from image", offset: offset, count: image.byteCount, size: buffer.size)
        }
        var region = GPUImage.region(image, offset: offset)
        vkCmdCopyImageToBuffer(sequence.commandBuffer, image.image, VK_IMAGE_LAYOUT_GENERAL, buffer.buffer, 1, &region)
        mark("copy image→buffer")
        sequence.retained.append(buffer)
        sequence.retained.append(image)
    }

    /// Fills `slice` with a repeated 32-bit `value`.
    public mutating func fill(_ slice: BufferSlice, value: UInt32) {
        vkCmdFillBuffer(sequence.commandBuffer, slice.buffer.buffer, VkDeviceSize(slice.offset), VkDeviceSize(slice.size), value)
        mark("fill")
        sequence.retained.append(slice.buffer)
    }

    /// Copies `size` bytes between buffers, from `sourceOffset` to `destinationOffset` (bytes).
    public mutating func copy(from source: GPUBuffer, to destination: GPUBuffer, size: Int,
                              sourceOffset: Int = 0, destinationOffset: Int = 0) throws(GPUError) {
        guard sourceOffset >= 0, size <= source.size - sourceOffset else {
            throw GPUError.outOfBounds(what: "copy source", offset: sourceOffset, count: size, size: source.size)
        }
        guard destinationOffset >= 0, size <= destination.size - destinationOffset else {
            throw GPUError.outOfBounds(what: "copy destination", offset: destinationOffset, count: size, size: destination.size)
        }
        var region = VkBufferCopy(srcOffset: VkDeviceSize(sourceOffset), dstOffset: VkDeviceSize(destinationOffset), size: VkDeviceSize(size))
        vkCmdCopyBuffer(sequence.commandBuffer, source.buffer, destination.buffer, 1, &region)
        mark("copy buffer→buffer")
        sequence.retained.append(source)
        sequence.retained.append(destination)
    }
}
