import CVulkan
import Foundation
import GraniteMedia

/// The driver's compiled pipelines kept on disk between runs (`VkPipelineCache`), so a second run
/// starts with its shaders already compiled and the first frames are not late.
///
/// ```
///  open: $GRANITE_CACHE_DIR or $XDG_CACHE_HOME/granite or ~/.cache/granite / vulkan-VENDOR-DEVICE-DRIVER.cache
///        ─► vkCreatePipelineCache(initial data)   (the driver checks the header; stale data is ignored)
///  every new pipeline ─► vkGetPipelineCacheData ─► AtomicWriter (temporary + rename: never half a file)
/// ```
/// A cache that cannot be read or written only costs compile time: it never fails a run.
/// `GRANITE_PIPELINE_CACHE=0` turns it off.
public final class PipelineCache: @unchecked Sendable {
    let device: VkDevice
    let handle: VkPipelineCache?
    /// Where the cache is kept (nil: not kept on disk).
    let path: String?
    /// Bytes of earlier runs' data the driver accepted at start (0: a cold cache).
    let loadedBytes: Int
    private let lock = NSLock()

    /// The folder caches go in: `$GRANITE_CACHE_DIR`, `$XDG_CACHE_HOME/granite` or
    /// `~/.cache/granite`; nil when `GRANITE_PIPELINE_CACHE=0` or no home is known.
    public static var defaultDirectory: String? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GRANITE_PIPELINE_CACHE"] != "0" else { return nil }
        return environment["GRANITE_CACHE_DIR"]
            ?? environment["XDG_CACHE_HOME"].map { $0 + "/granite" }
            ?? environment["HOME"].map { $0 + "/.cache/granite" }
    }

    init(device: VkDevice, properties: VkPhysicalDeviceProperties, directory: String?) {
        self.device = device
        // One file per device and driver version (the driver checks its own header as well).
        let path = directory.map { base in
            base + "/vulkan-\(String(properties.vendorID, radix: 16))-\(String(properties.deviceID, radix: 16))-\(properties.driverVersion).cache"
        }
        var initial = path.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
        var cache: VkPipelineCache?
        var info = VkPipelineCacheCreateInfo()
        info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO
        let result = initial.withUnsafeBytes { raw in
            info.initialDataSize = raw.count
            info.pInitialData = raw.baseAddress
            return vkCreatePipelineCache(device, &info, nil, &cache)
        }
        if result != VK_SUCCESS {
            // Data the driver rejects: start empty.
            initial = Data()
            info.initialDataSize = 0
            info.pInitialData = nil
            if vkCreatePipelineCache(device, &info, nil, &cache) != VK_SUCCESS { cache = nil }
        }
        handle = cache
        self.path = handle == nil ? nil : path
        loadedBytes = handle == nil ? 0 : initial.count
    }

    /// Called by the owning context only, before it destroys the device.
    func destroy() {
        if let handle { vkDestroyPipelineCache(device, handle, nil) }
    }

    /// Writes the cache's data to disk (after new pipelines were made); failures are ignored.
    func save() {
        guard let handle, let path else { return }
        lock.withLock {
            var size = 0
            guard vkGetPipelineCacheData(device, handle, &size, nil) == VK_SUCCESS, size > 0 else { return }
            var bytes = [UInt8](repeating: 0, count: size)
            guard bytes.withUnsafeMutableBytes({ vkGetPipelineCacheData(device, handle, &size, $0.baseAddress) }) == VK_SUCCESS else { return }
            let folder = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try? AtomicWriter<CacheWriteError>.write(Array(bytes.prefix(size)), to: path) { _, _, _ in CacheWriteError() }
        }
    }

    struct CacheWriteError: Error {}
}
