import GraniteGPU
import GraniteML

/// Where a model runs: `--depth-device auto|gpu|cpu` on `granite depth` and granite-cam.
///
/// `auto` picks the Vulkan backend on discrete and integrated GPUs and GraniteML's CPU runtime
/// on CPU devices (lavapipe), where OpenBLAS and the int8 kernels are faster than a
/// rasteriser's compute emulation; it also falls back to the CPU when the device cannot be
/// opened or the model has an op the Vulkan backend lacks. `gpu` insists (those are errors).
public enum InferenceDevice: String, CaseIterable, Sendable, CustomStringConvertible {
    case auto, gpu, cpu

    public var description: String { rawValue }

    /// Whether `auto` runs on a device of `kind`.
    public static func autoUsesGPU(_ kind: GPUDeviceKind) -> Bool { kind == .discrete || kind == .integrated }

    /// The backend for this choice (nil: the CPU runtime). `context` opens the device
    /// (default: the process-wide one).
    public func backend(context: @Sendable () throws(GPUError) -> GPUContext = { () throws(GPUError) in try GPUContext.shared() }) throws(MLError) -> Backend? {
        switch self {
        case .cpu:
            return nil
        case .gpu:
            let gpu: GPUContext
            do { gpu = try context() } catch { throw .deviceFailed(device: "Vulkan", reason: error.description) }
            return { (model) throws(MLError) -> any ModelRunner in try VulkanModel(model: model, context: gpu) }
        case .auto:
            guard let gpu = try? context(), Self.autoUsesGPU(gpu.deviceKind) else { return nil }
            return { (model) throws(MLError) -> any ModelRunner in
                do { return try VulkanModel(model: model, context: gpu) } catch { return model }
            }
        }
    }

    /// A line saying where `runner` runs ("GPU (NVIDIA H100)" or "CPU").
    public static func describe(_ runner: any ModelRunner) -> String {
        if let gpu = runner as? VulkanModel { return "GPU (\(gpu.context.deviceName), Vulkan)" }
        return "CPU"
    }
}
