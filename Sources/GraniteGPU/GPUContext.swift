import CVulkan
import Foundation
import GraniteMedia

/// One Vulkan device and its compute queue: the root every GPU resource holds on to.
///
/// The device is chosen at run time: a discrete or integrated GPU first, then a CPU driver (Mesa's
/// lavapipe). `GRANITE_VULKAN_DEVICE=<substring>` picks a device by name instead. Resources keep
/// a strong reference to their context, so the device outlives everything made from it.
public final class GPUContext: @unchecked Sendable {
    let instance: VkInstance
    let physicalDevice: VkPhysicalDevice
    let device: VkDevice
    let queue: VkQueue
    let queueFamily: UInt32
    let memoryProperties: VkPhysicalDeviceMemoryProperties
    /// Where each role's buffers live on this device (its memory table and kind).
    public let memoryPolicy: MemoryPolicy
    /// Bytes allocated per buffer role right now (`granite-bench`).
    package let memoryUse = MemoryUse()
    /// The device's minimum alignment for storage-buffer descriptor offsets.
    package let storageAlignment: Int
    /// The alignment of a uniform-buffer binding's offset.
    package let uniformAlignment: Int
    /// The most bytes one uniform-buffer binding may span.
    package let maxUniformRange: Int
    /// The alignment of a texel-buffer view's offset.
    package let texelAlignment: Int
    /// The most texels one texel-buffer view may span.
    package let maxTexelCount: Int
    /// The device's name as the driver reports it (e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`).
    public let deviceName: String
    /// What kind of device it is.
    public let deviceKind: GPUDeviceKind
    /// Nanoseconds per timestamp tick on the compute queue, or nil when it writes no timestamps.
    let timestampPeriod: Double?
    /// Serialises queue submission (a `VkQueue` is externally synchronised).
    let queueLock = NSLock()
    let pipelineLock = NSLock()
    var pipelines: [PipelineKey: ComputePipeline] = [:]
    /// Compiled pipelines kept on disk between runs.
    let pipelineCache: PipelineCache
    /// The file compiled pipelines are kept in between runs (nil: not kept).
    public var pipelineCacheFile: String? { pipelineCache.path }

    nonisolated(unsafe) private static var sharedContext: GPUContext?
    private static let sharedLock = NSLock()

    /// The process-wide context, created on first use.
    public static func shared() throws(GPUError) -> GPUContext {
        try sharedLock.locked { () throws(GPUError) -> GPUContext in
            if let sharedContext { return sharedContext }
            let made = try GPUContext()
            sharedContext = made
            return made
        }
    }

    /// Names and kinds of the Vulkan devices present, in the loader's order.
    public static func availableDevices() throws(GPUError) -> [(name: String, kind: GPUDeviceKind)] {
        let instance = try makeInstance()
        defer { vkDestroyInstance(instance, nil) }
        return try physicalDevices(instance).map { (name($0), kind($0)) }
    }

    /// Opens a device; `requested` (default: `GRANITE_VULKAN_DEVICE`) picks one by name substring.
    /// `forceStaging` (default: `GRANITE_DEBUG=staging`, or the old `GRANITE_GPU_STAGING=1`) moves every upload and read-back through
    /// staging buffers and copy commands even on unified memory, as on a discrete GPU.
    /// `cacheDirectory` keeps compiled pipelines between runs (default: `~/.cache/granite`, see
    /// ``pipelineCacheFile``; nil: none).
    public init(requested: String? = ProcessInfo.processInfo.environment["GRANITE_VULKAN_DEVICE"],
                forceStaging: Bool = GraniteDebug.current.contains(.staging),
                cacheDirectory: String? = PipelineCache.defaultDirectory) throws(GPUError) {
        let instance = try GPUContext.makeInstance()
        do throws(GPUError) {
            let devices = try GPUContext.physicalDevices(instance)
            let families = devices.map { GPUContext.computeFamily($0) }
            let candidates = devices.indices.map {
                DeviceCandidate(name: GPUContext.name(devices[$0]), kind: GPUContext.kind(devices[$0]),
                                hasComputeQueue: families[$0] != nil)
            }
            let index = try DeviceChoice.pick(candidates, requested: requested)
            let physical = devices[index]
            let family = families[index]!
            var priority: Float = 1
            var device: VkDevice?
            try withUnsafePointer(to: &priority) { (priorityPointer) throws(GPUError) in
                var queueInfo = VkDeviceQueueCreateInfo()
                queueInfo.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO
                queueInfo.queueFamilyIndex = family
                queueInfo.queueCount = 1
                queueInfo.pQueuePriorities = priorityPointer
                try withUnsafePointer(to: &queueInfo) { (queuePointer) throws(GPUError) in
                    var info = VkDeviceCreateInfo()
                    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO
                    info.queueCreateInfoCount = 1
                    info.pQueueCreateInfos = queuePointer
                    try vk("vkCreateDevice") { vkCreateDevice(physical, &info, nil, &device) }
                }
            }
            var queue: VkQueue?
            vkGetDeviceQueue(device!, family, 0, &queue)
            var memory = VkPhysicalDeviceMemoryProperties()
            vkGetPhysicalDeviceMemoryProperties(physical, &memory)
            var properties = VkPhysicalDeviceProperties()
            vkGetPhysicalDeviceProperties(physical, &properties)
            self.instance = instance
            self.physicalDevice = physical
            self.device = device!
            self.queue = queue!
            self.queueFamily = family
            self.memoryProperties = memory
            self.pipelineCache = PipelineCache(device: device!, properties: properties, directory: cacheDirectory)
            self.memoryPolicy = MemoryPolicy(table: GPUContext.table(memory), kind: candidates[index].kind, forceStaging: forceStaging)
            self.storageAlignment = max(4, Int(properties.limits.minStorageBufferOffsetAlignment))
            self.uniformAlignment = max(4, Int(properties.limits.minUniformBufferOffsetAlignment))
            self.maxUniformRange = Int(properties.limits.maxUniformBufferRange)
            self.texelAlignment = max(4, Int(properties.limits.minTexelBufferOffsetAlignment))
            self.maxTexelCount = Int(properties.limits.maxTexelBufferElements)
            self.deviceName = candidates[index].name
            self.deviceKind = candidates[index].kind
            let validBits = GPUContext.timestampBits(physical, family: family)
            self.timestampPeriod = validBits > 0 && properties.limits.timestampPeriod > 0 ? Double(properties.limits.timestampPeriod) : nil
        } catch {
            vkDestroyInstance(instance, nil)
            throw error
        }
    }

    deinit {
        vkDeviceWaitIdle(device)
        for pipeline in pipelines.values { pipeline.destroy() }
        pipelineCache.destroy()
        vkDestroyDevice(device, nil)
        vkDestroyInstance(instance, nil)
    }

    private static func makeInstance() throws(GPUError) -> VkInstance {
        var instance: VkInstance?
        let result: VkResult = "granite".withCString { appName in
            var app = VkApplicationInfo()
            app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO
            app.pApplicationName = appName
            app.applicationVersion = granite_vk_make_api_version(0, 0, 1, 0)
            app.pEngineName = appName
            app.apiVersion = granite_vk_api_version_1_1()
            return withUnsafePointer(to: &app) { appPointer in
                var info = VkInstanceCreateInfo()
                info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO
                info.pApplicationInfo = appPointer
                return vkCreateInstance(&info, nil, &instance)
            }
        }
        if result == VK_ERROR_INCOMPATIBLE_DRIVER || result == VK_ERROR_INITIALIZATION_FAILED {
            throw GPUError.noDriver(detail: "vkCreateInstance returned \(GPUError.resultName(result.rawValue))")
        }
        try vk("vkCreateInstance") { result }
        return instance!
    }

    private static func physicalDevices(_ instance: VkInstance) throws(GPUError) -> [VkPhysicalDevice] {
        var count: UInt32 = 0
        try vk("vkEnumeratePhysicalDevices") { vkEnumeratePhysicalDevices(instance, &count, nil) }
        guard count > 0 else { throw GPUError.noDevice(detail: "the Vulkan loader lists no physical device") }
        var devices = [VkPhysicalDevice?](repeating: nil, count: Int(count))
        try vk("vkEnumeratePhysicalDevices") { vkEnumeratePhysicalDevices(instance, &count, &devices) }
        return devices.prefix(Int(count)).compactMap { $0 }
    }

    private static func name(_ device: VkPhysicalDevice) -> String {
        var properties = VkPhysicalDeviceProperties()
        vkGetPhysicalDeviceProperties(device, &properties)
        return withUnsafeBytes(of: properties.deviceName) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
    }

    private static func kind(_ device: VkPhysicalDevice) -> GPUDeviceKind {
        var properties = VkPhysicalDeviceProperties()
        vkGetPhysicalDeviceProperties(device, &properties)
        switch properties.deviceType {
        case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return .discrete
        case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return .integrated
        case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return .virtual
        case VK_PHYSICAL_DEVICE_TYPE_CPU: return .cpu
        default: return .other
        }
    }

    private static func computeFamily(_ device: VkPhysicalDevice) -> UInt32? {
        var count: UInt32 = 0
        vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nil)
        var families = [VkQueueFamilyProperties](repeating: VkQueueFamilyProperties(), count: Int(count))
        vkGetPhysicalDeviceQueueFamilyProperties(device, &count, &families)
        let compute = UInt32(VK_QUEUE_COMPUTE_BIT.rawValue)
        return families.firstIndex { $0.queueFlags & compute != 0 }.map(UInt32.init)
    }

    private static func timestampBits(_ device: VkPhysicalDevice, family: UInt32) -> UInt32 {
        var count: UInt32 = 0
        vkGetPhysicalDeviceQueueFamilyProperties(device, &count, nil)
        var families = [VkQueueFamilyProperties](repeating: VkQueueFamilyProperties(), count: Int(count))
        vkGetPhysicalDeviceQueueFamilyProperties(device, &count, &families)
        return Int(family) < families.count ? families[Int(family)].timestampValidBits : 0
    }

    /// The device's memory table as plain values.
    static func table(_ properties: VkPhysicalDeviceMemoryProperties) -> MemoryTable {
        let types = withUnsafeBytes(of: properties.memoryTypes) { Array($0.bindMemory(to: VkMemoryType.self)) }
        let heaps = withUnsafeBytes(of: properties.memoryHeaps) { Array($0.bindMemory(to: VkMemoryHeap.self)) }
        let deviceLocalHeap = UInt32(VK_MEMORY_HEAP_DEVICE_LOCAL_BIT.rawValue)
        return MemoryTable(
            types: types.prefix(Int(properties.memoryTypeCount)).map {
                MemoryTable.MemoryType(MemoryTypeFlags(rawValue: $0.propertyFlags), heap: Int($0.heapIndex))
            },
            heaps: heaps.prefix(Int(properties.memoryHeapCount)).map {
                MemoryTable.Heap(size: $0.size, deviceLocal: $0.flags & deviceLocalHeap != 0)
            })
    }
}

/// Bytes allocated per buffer role (any thread).
package final class MemoryUse: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [GPUMemoryRole: Int] = [:]

    func add(role: GPUMemoryRole, bytes delta: Int) { lock.withLock { bytes[role, default: 0] += delta } }

    /// Bytes now allocated for each role.
    package var current: [GPUMemoryRole: Int] { lock.withLock { bytes } }
}

extension NSLock {
    /// `withLock` that keeps the body's error type (Foundation's is untyped `rethrows`).
    package func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
