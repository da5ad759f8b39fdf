import CVulkan

/// A recorded command buffer: record once, submit many times, wait on its fence.
///
/// ```
///  record { dispatch ─ barrier ─ dispatch ─ … }   (descriptor sets made here, kept)
///      └─► submit() ─► fence ─► wait()   (again and again, same commands, new buffer contents)
/// ```
/// The sequence keeps every buffer and pipeline it recorded alive until it is re-recorded or
/// freed, and waits for its own work before either, so nothing is freed while the GPU uses it.
/// A `timed` sequence also writes a device timestamp after every dispatch and copy, so
/// `timings()` says what each command of the last submission cost on the device.
/// Not thread-safe: one owner drives it (the queue itself is locked by the context).
public final class CommandSequence {
    /// The context the commands run in.
    public let context: GPUContext
    let commandPool: VkCommandPool
    let commandBuffer: VkCommandBuffer
    let fence: VkFence
    var descriptorPools: [VkDescriptorPool] = []
    /// Texel views made for the recorded dispatches (destroyed with the recording).
    var texelViews: [VkBufferView] = []
    var retained: [AnyObject] = []
    var inFlight = false
    /// Timestamp queries of a timed sequence (nil when untimed or the queue writes no timestamps).
    let queryPool: VkQueryPool?
    /// The label of each timestamp after the first (which marks the start).
    var timestampLabels: [String] = []
    /// The most commands a timed sequence times; later ones go untimed.
    static let timestampCapacity = 512
    /// Whether `record` has completed at least once.
    public private(set) var isRecorded = false

    /// A sequence with an empty command buffer; `timed` also records a timestamp after every
    /// command where the device's compute queue can write them (`timings()`).
    public init(context: GPUContext, timed: Bool = false) throws(GPUError) {
        self.context = context
        let device = context.device
        var poolInfo = VkCommandPoolCreateInfo()
        poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
        poolInfo.flags = VkCommandPoolCreateFlags(VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT.rawValue)
        poolInfo.queueFamilyIndex = context.queueFamily
        var pool: VkCommandPool?
        try vk("vkCreateCommandPool") { vkCreateCommandPool(device, &poolInfo, nil, &pool) }
        var allocate = VkCommandBufferAllocateInfo()
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
        allocate.commandPool = pool
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY
        allocate.commandBufferCount = 1
        var commandBuffer: VkCommandBuffer?
        var fenceInfo = VkFenceCreateInfo()
        fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
        var fence: VkFence?
        var queries: VkQueryPool?
        do throws(GPUError) {
            try vk("vkAllocateCommandBuffers") { vkAllocateCommandBuffers(device, &allocate, &commandBuffer) }
            try vk("vkCreateFence") { vkCreateFence(device, &fenceInfo, nil, &fence) }
            if timed && context.timestampPeriod != nil {
                var queryInfo = VkQueryPoolCreateInfo()
                queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO
                queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP
                queryInfo.queryCount = UInt32(CommandSequence.timestampCapacity + 1)
                try vk("vkCreateQueryPool") { vkCreateQueryPool(device, &queryInfo, nil, &queries) }
            }
        } catch {
            if let fence { vkDestroyFence(device, fence, nil) }
            vkDestroyCommandPool(device, pool, nil)
            throw error
        }
        self.queryPool = queries
        self.commandPool = pool!
        self.commandBuffer = commandBuffer!
        self.fence = fence!
    }

    deinit {
        if inFlight { vkWaitForFences(context.device, 1, [fence], VkBool32(VK_TRUE), UInt64.max) }
        for pool in descriptorPools { vkDestroyDescriptorPool(context.device, pool, nil) }
        for view in texelViews { vkDestroyBufferView(context.device, view, nil) }
        if let queryPool { vkDestroyQueryPool(context.device, queryPool, nil) }
        vkDestroyFence(context.device, fence, nil)
        vkDestroyCommandPool(context.device, commandPool, nil)
    }

    /// Records the command buffer anew (waiting first for any submission still running).
    public func record(_ body: (inout CommandRecorder) throws(GPUError) -> Void) throws(GPUError) {
        try wait()
        let device = context.device
        for pool in descriptorPools { vkDestroyDescriptorPool(device, pool, nil) }
        descriptorPools = []
        for view in texelViews { vkDestroyBufferView(device, view, nil) }
        texelViews = []
        retained = []
        isRecorded = false
        try vk("vkResetCommandBuffer") { vkResetCommandBuffer(commandBuffer, 0) }
        var begin = VkCommandBufferBeginInfo()
        begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        try vk("vkBeginCommandBuffer") { vkBeginCommandBuffer(commandBuffer, &begin) }
        timestampLabels = []
        if let queryPool {
            vkCmdResetQueryPool(commandBuffer, queryPool, 0, UInt32(CommandSequence.timestampCapacity + 1))
            vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, 0)
        }
        var recorder = CommandRecorder(sequence: self)
        do throws(GPUError) {
            try body(&recorder)
        } catch {
            vkEndCommandBuffer(commandBuffer)
            throw error
        }
        try vk("vkEndCommandBuffer") { vkEndCommandBuffer(commandBuffer) }
        isRecorded = true
    }

    /// Submits the recorded commands; `wait()` blocks until they are done.
    public func submit() throws(GPUError) {
        precondition(isRecorded, "submit() before record()")
        try wait()
        let device = context.device
        try vk("vkResetFences") { vkResetFences(device, 1, [fence]) }
        var buffer: VkCommandBuffer? = commandBuffer
        try withUnsafePointer(to: &buffer) { (pointer) throws(GPUError) in
            var info = VkSubmitInfo()
            info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
            info.commandBufferCount = 1
            info.pCommandBuffers = pointer
            try context.queueLock.locked { () throws(GPUError) in
                try vk("vkQueueSubmit") { vkQueueSubmit(context.queue, 1, &info, fence) }
            }
        }
        inFlight = true
    }

    /// Blocks until the last submission finished (returns at once when none is running).
    public func wait() throws(GPUError) {
        guard inFlight else { return }
        let device = context.device
        try vk("vkWaitForFences") { vkWaitForFences(device, 1, [fence], VkBool32(VK_TRUE), UInt64.max) }
        inFlight = false
    }

    /// Submits and waits: one synchronous run of the recorded commands.
    public func run() throws(GPUError) {
        try submit()
        try wait()
    }

    /// Whether `timings()` has anything to say (a timed sequence on a device with timestamps).
    public var isTimed: Bool { queryPool != nil }

    /// What each timed command of the last submission took on the device, in recording order
    /// (waits for the submission first). Empty for an untimed sequence.
    public func timings() throws(GPUError) -> [(label: String, seconds: Double)] {
        try wait()
        guard let queryPool, let period = context.timestampPeriod, !timestampLabels.isEmpty else { return [] }
        var ticks = [UInt64](repeating: 0, count: timestampLabels.count + 1)
        let flags = VkQueryResultFlags(VK_QUERY_RESULT_64_BIT.rawValue | VK_QUERY_RESULT_WAIT_BIT.rawValue)
        let device = context.device
        let result = ticks.withUnsafeMutableBytes { raw in
            vkGetQueryPoolResults(device, queryPool, 0, UInt32(raw.count / 8), raw.count, raw.baseAddress, 8, flags)
        }
        try vk("vkGetQueryPoolResults") { result }
        return timestampLabels.indices.map { index in
            (timestampLabels[index], Double(ticks[index + 1] &- ticks[index]) * period / 1e9)
        }
    }

    /// Writes a timestamp labelled `label` after the commands recorded so far (timed sequences only).
    func markTimestamp(_ label: String) {
        guard let queryPool, timestampLabels.count < CommandSequence.timestampCapacity else { return }
        timestampLabels.append(label)
        vkCmdWriteTimestamp(commandBuffer, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, UInt32(timestampLabels.count))
    }

    /// A `format` view of `slice`, kept until the sequence is re-recorded or freed.
    func makeTexelView(_ slice: BufferSlice, format: VkFormat) throws(GPUError) -> VkBufferView {
        var info = VkBufferViewCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO
        info.buffer = slice.buffer.buffer
        info.format = format
        info.offset = VkDeviceSize(slice.offset)
        info.range = VkDeviceSize(slice.size)
        var view: VkBufferView?
        let device = context.device
        try vk("vkCreateBufferView") { vkCreateBufferView(device, &info, nil, &view) }
        texelViews.append(view!)
        return view!
    }

    func allocateSet(_ pipeline: ComputePipeline) throws(GPUError) -> VkDescriptorSet {
        if let pool = descriptorPools.last, let set = try? allocate(from: pool, pipeline) { return set }
        var sizes = [VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount: 256),
                     VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, descriptorCount: 64),
                     VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount: 64),
                     VkDescriptorPoolSize(type: VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, descriptorCount: 64)]
        var info = VkDescriptorPoolCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
        info.maxSets = 64
        info.poolSizeCount = UInt32(sizes.count)
        var pool: VkDescriptorPool?
        let device = context.device
        try sizes.withUnsafeMutableBufferPointer { (sizePointer) throws(GPUError) in
            info.pPoolSizes = UnsafePointer(sizePointer.baseAddress)
            try vk("vkCreateDescriptorPool") { vkCreateDescriptorPool(device, &info, nil, &pool) }
        }
        descriptorPools.append(pool!)
        return try allocate(from: pool!, pipeline)
    }

    private func allocate(from pool: VkDescriptorPool, _ pipeline: ComputePipeline) throws(GPUError) -> VkDescriptorSet {
        var layout: VkDescriptorSetLayout? = pipeline.setLayout
        var set: VkDescriptorSet?
        let device = context.device
        try withUnsafePointer(to: &layout) { (layoutPointer) throws(GPUError) in
            var info = VkDescriptorSetAllocateInfo()
            info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
            info.descriptorPool = pool
            info.descriptorSetCount = 1
            info.pSetLayouts = layoutPointer
            try vk("vkAllocateDescriptorSets") { vkAllocateDescriptorSets(device, &info, &set) }
        }
        return set!
    }
}
