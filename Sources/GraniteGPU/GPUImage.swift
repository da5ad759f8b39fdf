import CVulkan

/// A 2-D storage image of 32-bit texels (`VK_FORMAT_R32_UINT`: one packed RGBA8 pixel each),
/// optimally tiled in device memory, kept in `VK_IMAGE_LAYOUT_GENERAL` for its whole life.
///
/// ```
///  init: create ─ bind memory ─ view ─ one submission UNDEFINED → GENERAL
///  then: CommandRecorder.copy(buffer ⇄ image), dispatch(... .image(i) ...) (imageLoad/imageStore)
/// ```
/// Shaders see it as `layout(r32ui) uimage2D`; the host reaches it only through buffer copies.
public final class GPUImage: @unchecked Sendable {
    /// The context the image lives in.
    public let context: GPUContext
    /// Width in texels.
    public let width: Int
    /// Height in texels.
    public let height: Int
    let image: VkImage
    let memory: VkDeviceMemory
    let view: VkImageView

    /// A `width`×`height` image, ready in the general layout (contents undefined until written).
    public init(context: GPUContext, width: Int, height: Int) throws(GPUError) {
        guard width > 0, height > 0 else {
            throw GPUError.outOfBounds(what: "GPUImage size", offset: 0, count: width * height, size: 0)
        }
        self.context = context
        self.width = width
        self.height = height
        let device = context.device
        var info = VkImageCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO
        info.imageType = VK_IMAGE_TYPE_2D
        info.format = VK_FORMAT_R32_UINT
        info.extent = VkExtent3D(width: UInt32(width), height: UInt32(height), depth: 1)
        info.mipLevels = 1
        info.arrayLayers = 1
        info.samples = VK_SAMPLE_COUNT_1_BIT
        info.tiling = VK_IMAGE_TILING_OPTIMAL
        info.usage = VkImageUsageFlags(VK_IMAGE_USAGE_STORAGE_BIT.rawValue | VK_IMAGE_USAGE_TRANSFER_SRC_BIT.rawValue
            | VK_IMAGE_USAGE_TRANSFER_DST_BIT.rawValue)
        info.sharingMode = VK_SHARING_MODE_EXCLUSIVE
        info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        var image: VkImage?
        try vk("vkCreateImage") { vkCreateImage(device, &info, nil, &image) }
        var requirements = VkMemoryRequirements()
        vkGetImageMemoryRequirements(device, image, &requirements)
        var memory: VkDeviceMemory?
        var view: VkImageView?
        do throws(GPUError) {
            var allocate = VkMemoryAllocateInfo()
            allocate.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
            allocate.allocationSize = requirements.size
            guard let type = context.memoryPolicy.memoryType(for: .device, allowed: requirements.memoryTypeBits)
                    ?? context.memoryPolicy.table.types.indices.first(where: { requirements.memoryTypeBits & (1 << UInt32($0)) != 0 }) else {
                throw GPUError.noMemoryType(bits: requirements.memoryTypeBits, needs: "memory for images")
            }
            allocate.memoryTypeIndex = UInt32(type)
            try vk("vkAllocateMemory") { vkAllocateMemory(device, &allocate, nil, &memory) }
            try vk("vkBindImageMemory") { vkBindImageMemory(device, image, memory, 0) }
            var viewInfo = VkImageViewCreateInfo()
            viewInfo.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
            viewInfo.image = image
            viewInfo.viewType = VK_IMAGE_VIEW_TYPE_2D
            viewInfo.format = VK_FORMAT_R32_UINT
            viewInfo.subresourceRange = GPUImage.wholeColor
            try vk("vkCreateImageView") { vkCreateImageView(device, &viewInfo, nil, &view) }
        } catch {
            if let memory { vkFreeMemory(device, memory, nil) }
            vkDestroyImage(device, image, nil)
            throw error
        }
        self.image = image!
        self.memory = memory!
        self.view = view!
        // Once, UNDEFINED → GENERAL; every later use (copies, shader access) stays in GENERAL.
        let setup = try CommandSequence(context: context)
        try setup.record { recorder in recorder.transitionToGeneral(self) }
        try setup.run()
    }

    deinit {
        vkDestroyImageView(context.device, view, nil)
        vkDestroyImage(context.device, image, nil)
        vkFreeMemory(context.device, memory, nil)
    }

    /// Bytes a tightly packed copy of the image takes in a buffer.
    public var byteCount: Int { width * height * 4 }

    /// The whole image as one buffer-copy region starting at `offset` in the buffer.
    static func region(_ image: GPUImage, offset: Int) -> VkBufferImageCopy {
        var region = VkBufferImageCopy()
        region.bufferOffset = VkDeviceSize(offset)
        region.imageSubresource = VkImageSubresourceLayers(aspectMask: VkImageAspectFlags(VK_IMAGE_ASPECT_COLOR_BIT.rawValue),
                                                           mipLevel: 0, baseArrayLayer: 0, layerCount: 1)
        region.imageExtent = VkExtent3D(width: UInt32(image.width), height: UInt32(image.height), depth: 1)
        return region
    }

    static let wholeColor = VkImageSubresourceRange(aspectMask: VkImageAspectFlags(VK_IMAGE_ASPECT_COLOR_BIT.rawValue),
                                                     baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1)
}
