import CVulkan

/// What makes two pipelines the same: the shader and its specialization constants.
struct PipelineKey: Hashable {
    var name: String
    var bindings: [GPUBindingKind]
    var specialization: [UInt32]
}

/// The kind of one descriptor binding of a compute shader.
public enum GPUBindingKind: Hashable, Sendable {
    /// A storage buffer.
    case buffer
    /// A storage image (`GPUImage`).
    case image
    /// A uniform buffer: read-only, small (at most `GPUContext.maxUniformRange` bytes). On CPU
    /// drivers a read every invocation shares is one scalar load, where a storage buffer is read lane by lane.
    case uniform
    /// A uniform texel buffer (`usamplerBuffer`, read with `texelFetch`): a buffer seen as 32-bit
    /// texels. On CPU drivers a fetch at a per-invocation index is one branch-free gather, where a
    /// storage-buffer read loops over the SIMD lanes with a branch each.
    case texels

    var descriptorType: VkDescriptorType {
        switch self {
        case .buffer: return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        case .image: return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
        case .uniform: return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
        case .texels: return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
        }
    }
}

/// A compute pipeline from SPIR-V: shader module, a descriptor-set layout of buffers and images
/// (bindings 0..<n), a push-constant block and specialization constants (ids 0..<m, 4 bytes each).
///
/// Pipelines are made through `GPUContext.pipeline(...)`, which caches them; the context owns
/// them and destroys them when it goes.
public final class ComputePipeline: @unchecked Sendable {
    /// The most push-constant bytes a pipeline takes (the guaranteed minimum limit).
    public static let pushConstantSize = 128
    /// A name for errors and debugging (usually the shader's).
    public let name: String
    /// The kinds of the shader's bindings 0..<n at set 0.
    public let bindingKinds: [GPUBindingKind]
    /// How many bindings the shader declares.
    public var bindingCount: Int { bindingKinds.count }
    let device: VkDevice
    let setLayout: VkDescriptorSetLayout
    let layout: VkPipelineLayout
    let pipeline: VkPipeline

    init(device: VkDevice, name: String, spirv: [UInt32], bindings: [GPUBindingKind], specialization: [UInt32],
         cache: VkPipelineCache? = nil) throws(GPUError) {
        guard spirv.count > 5, spirv[0] == 0x0723_0203 else {
            throw GPUError.invalidPipeline(name: name, reason: "not SPIR-V (bad magic number)")
        }
        self.name = name
        self.bindingKinds = bindings
        self.device = device
        var module: VkShaderModule?
        try spirv.withUnsafeBufferPointer { (code) throws(GPUError) in
            var info = VkShaderModuleCreateInfo()
            info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
            info.codeSize = code.count * 4
            info.pCode = code.baseAddress
            try vk("vkCreateShaderModule") { vkCreateShaderModule(device, &info, nil, &module) }
        }
        defer { vkDestroyShaderModule(device, module, nil) }

        var layoutBindings = bindings.indices.map { index in
            var binding = VkDescriptorSetLayoutBinding()
            binding.binding = UInt32(index)
            binding.descriptorType = bindings[index].descriptorType
            binding.descriptorCount = 1
            binding.stageFlags = VkShaderStageFlags(VK_SHADER_STAGE_COMPUTE_BIT.rawValue)
            return binding
        }
        var setLayout: VkDescriptorSetLayout?
        var setInfo = VkDescriptorSetLayoutCreateInfo()
        setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
        setInfo.bindingCount = UInt32(bindings.count)
        try layoutBindings.withUnsafeMutableBufferPointer { (pointer) throws(GPUError) in
            setInfo.pBindings = UnsafePointer(pointer.baseAddress)
            try vk("vkCreateDescriptorSetLayout") { vkCreateDescriptorSetLayout(device, &setInfo, nil, &setLayout) }
        }
        var range = VkPushConstantRange()
        range.stageFlags = VkShaderStageFlags(VK_SHADER_STAGE_COMPUTE_BIT.rawValue)
        range.size = UInt32(ComputePipeline.pushConstantSize)
        var layoutInfo = VkPipelineLayoutCreateInfo()
        layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        layoutInfo.setLayoutCount = 1
        layoutInfo.pushConstantRangeCount = 1
        var layout: VkPipelineLayout?
        do throws(GPUError) {
            try withUnsafePointer(to: &setLayout) { (setPointer) throws(GPUError) in
                try withUnsafePointer(to: &range) { (rangePointer) throws(GPUError) in
                    layoutInfo.pSetLayouts = setPointer
                    layoutInfo.pPushConstantRanges = rangePointer
                    try vk("vkCreatePipelineLayout") { vkCreatePipelineLayout(device, &layoutInfo, nil, &layout) }
                }
            }
        } catch {
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }

        var entries = specialization.indices.map { index in
            VkSpecializationMapEntry(constantID: UInt32(index), offset: UInt32(index * 4), size: 4)
        }
        var data = specialization
        var pipeline: VkPipeline?
        let result: VkResult = "main".withCString { entryName in
            entries.withUnsafeMutableBufferPointer { entryPointer in
                data.withUnsafeMutableBytes { dataPointer in
                    var special = VkSpecializationInfo()
                    special.mapEntryCount = UInt32(entryPointer.count)
                    special.pMapEntries = UnsafePointer(entryPointer.baseAddress)
                    special.dataSize = dataPointer.count
                    special.pData = UnsafeRawPointer(dataPointer.baseAddress)
                    return withUnsafePointer(to: &special) { specialPointer in
                        var stage = VkPipelineShaderStageCreateInfo()
                        stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
                        stage.stage = VK_SHADER_STAGE_COMPUTE_BIT
                        stage.module = module
                        stage.pName = entryName
                        stage.pSpecializationInfo = specialization.isEmpty ? nil : specialPointer
                        var info = VkComputePipelineCreateInfo()
                        info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
                        info.stage = stage
                        info.layout = layout
                        return vkCreateComputePipelines(device, cache, 1, &info, nil, &pipeline)
                    }
                }
            }
        }
        do throws(GPUError) {
            try vk("vkCreateComputePipelines") { result }
        } catch {
            vkDestroyPipelineLayout(device, layout, nil)
            vkDestroyDescriptorSetLayout(device, setLayout, nil)
            throw error
        }
        self.setLayout = setLayout!
        self.layout = layout!
        self.pipeline = pipeline!
    }

    /// Called by the owning context only, after the device is idle.
    func destroy() {
        vkDestroyPipeline(device, pipeline, nil)
        vkDestroyPipelineLayout(device, layout, nil)
        vkDestroyDescriptorSetLayout(device, setLayout, nil)
    }
}

extension GPUContext {
    /// The pipeline for `spirv` with these specialization constants, made once and cached.
    ///
    /// - Parameters:
    ///   - name: the shader's name (the cache key, with `specialization`).
    ///   - spirv: the compiled shader (SPIR-V words, as the build embeds them).
    ///   - bindings: how many storage buffers the shader binds at set 0, bindings 0..<n.
    ///   - specialization: 4-byte constants for `constant_id` 0, 1, ... (use `Float.bitPattern` for floats).
    public func pipeline(named name: String, spirv: [UInt32], bindings: Int, specialization: [UInt32] = []) throws(GPUError) -> ComputePipeline {
        try pipeline(named: name, spirv: spirv, layout: [GPUBindingKind](repeating: .buffer, count: bindings), specialization: specialization)
    }

    /// The pipeline for `spirv` whose bindings 0..<n at set 0 are of the kinds in `layout`
    /// (storage buffers, storage images, uniform buffers), made once and cached like `pipeline(named:spirv:bindings:)`.
    public func pipeline(named name: String, spirv: [UInt32], layout: [GPUBindingKind], specialization: [UInt32] = []) throws(GPUError) -> ComputePipeline {
        let key = PipelineKey(name: name, bindings: layout, specialization: specialization)
        return try pipelineLock.locked { () throws(GPUError) -> ComputePipeline in
            if let cached = pipelines[key] { return cached }
            let made = try ComputePipeline(device: device, name: name, spirv: spirv, bindings: layout, specialization: specialization,
                                           cache: pipelineCache.handle)
            pipelines[key] = made
            pipelineCache.save()
            return made
        }
    }
}
