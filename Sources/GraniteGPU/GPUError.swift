import CVulkan

/// Errors from the Vulkan layer: setting up the device, making resources, running work.
public enum GPUError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A Vulkan call failed; `result` is its `VkResult`.
    case vulkan(call: String, result: Int32)
    /// The Vulkan loader found no driver (ICD) at all.
    case noDriver(detail: String)
    /// No Vulkan device offers what the layer needs.
    case noDevice(detail: String)
    /// `GRANITE_VULKAN_DEVICE` (or the requested name) matched none of the devices present.
    case deviceNotFound(requested: String, available: [String])
    /// No memory type fits a buffer's needs.
    case noMemoryType(bits: UInt32, needs: String)
    /// A SPIR-V blob is malformed or a pipeline was described inconsistently.
    case invalidPipeline(name: String, reason: String)
    /// A buffer access or copy was outside the buffer.
    case outOfBounds(what: String, offset: Int, count: Int, size: Int)
    /// The host read or wrote a buffer whose memory it cannot see (a device-local buffer on a
    /// discrete GPU: go through a staging buffer, ``StagedBuffer``).
    case notHostVisible(what: String, role: String)

    /// The message, naming the call, device or package involved.
    public var description: String {
        switch self {
        case let .vulkan(call, result):
            return "\(call) failed: \(GPUError.resultName(result)) (\(result))"
        case let .noDriver(detail):
            return "no Vulkan driver found (\(detail)); install a driver, e.g. `apt-get install mesa-vulkan-drivers` "
                + "(lavapipe, CPU) or your GPU vendor's, and the loader `libvulkan1`"
        case let .noDevice(detail):
            return "no usable Vulkan device: \(detail); `apt-get install mesa-vulkan-drivers` provides lavapipe (CPU)"
        case let .deviceNotFound(requested, available):
            return "no Vulkan device matches \"\(requested)\" (GRANITE_VULKAN_DEVICE); available: "
                + (available.isEmpty ? "none" : available.joined(separator: ", "))
        case let .noMemoryType(bits, needs):
            return "no Vulkan memory type among 0x\(String(bits, radix: 16)) is \(needs)"
        case let .invalidPipeline(name, reason):
            return "compute pipeline \(name): \(reason)"
        case let .outOfBounds(what, offset, count, size):
            return "\(what): \(count) bytes at offset \(offset) do not fit in \(size) bytes"
        case let .notHostVisible(what, role):
            return "\(what): a \(role) buffer is not host-visible on this device; copy through a staging buffer"
        }
    }

    /// The spec's name for a `VkResult` code.
    static func resultName(_ code: Int32) -> String {
        switch code {
        case 0: return "VK_SUCCESS"
        case 1: return "VK_NOT_READY"
        case 2: return "VK_TIMEOUT"
        case -1: return "VK_ERROR_OUT_OF_HOST_MEMORY"
        case -2: return "VK_ERROR_OUT_OF_DEVICE_MEMORY"
        case -3: return "VK_ERROR_INITIALIZATION_FAILED"
        case -4: return "VK_ERROR_DEVICE_LOST"
        case -5: return "VK_ERROR_MEMORY_MAP_FAILED"
        case -6: return "VK_ERROR_LAYER_NOT_PRESENT"
        case -7: return "VK_ERROR_EXTENSION_NOT_PRESENT"
        case -8: return "VK_ERROR_FEATURE_NOT_PRESENT"
        case -9: return "VK_ERROR_INCOMPATIBLE_DRIVER"
        case -10: return "VK_ERROR_TOO_MANY_OBJECTS"
        case -11: return "VK_ERROR_FORMAT_NOT_SUPPORTED"
        case -12: return "VK_ERROR_FRAGMENTED_POOL"
        case -1000069000: return "VK_ERROR_OUT_OF_POOL_MEMORY"
        default: return "VkResult"
        }
    }
}

/// Runs one Vulkan call and turns a failing `VkResult` into `GPUError.vulkan`, keeping the call's name.
///
/// Every Vulkan call that returns a `VkResult` goes through here.
@inline(__always)
package func vk(_ call: StaticString, _ body: () -> VkResult) throws(GPUError) {
    let result = body()
    guard result == VK_SUCCESS else {
        throw GPUError.vulkan(call: "\(call)", result: result.rawValue)
    }
}
