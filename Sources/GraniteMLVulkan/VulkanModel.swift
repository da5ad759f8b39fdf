import Foundation
import GraniteGPU
import GraniteML

/// A loaded ``Model`` run on a Vulkan device: the same optimised graph (fused epilogues, folded
/// constants) as recorded compute dispatches, one submission per inference.
///
/// ```
///  feeds ─write─► arena (device; via an upload staging copy where memory is not unified)
///        ─► conv ─► binary ─► gather ─► … (one command buffer, recorded once, a barrier between steps)
///        ─► arena ─read─► outputs (via a read-back staging copy where memory is not unified)
///  constants (weights, biases, index tables, epilogues): uploaded once at load, device-local
/// ```
///
/// Activations share one device-local arena placed by liveness, as the CPU plan's arena is
/// (``Lowering/place(_:)``). Int8 models: the convolutions GraniteML's CPU runtime runs on its
/// int8 kernels run here on the same integers, accumulated in 32-bit and requantised the same way
/// (`conv_pointwise.comp`, `conv_depthwise.comp`), so they agree with the CPU bit for bit without needing `shaderInt8` or integer
/// dot products (which lavapipe, the test device, does not promise); every other step is fp32.
///
/// Runs are serialised (the arena is one); the model's inputs must have fixed shapes, or
/// the shapes are given at creation.
public final class VulkanModel: ModelRunner, @unchecked Sendable {
    /// The CPU model this one runs.
    public let model: Model
    /// The device it runs on.
    public let context: GPUContext
    /// The input shapes the dispatches were recorded for.
    public let inputShapes: [String: [Int]]
    /// How many dispatches one inference submits.
    public let dispatchCount: Int
    /// Bytes of constants uploaded at load and of the activation arena.
    public let constantBytes: Int, arenaBytes: Int

    let lock = NSLock()
    private let sequence: CommandSequence
    let arena: GPUBuffer
    let constants: GPUBuffer
    private let upload: GPUBuffer?
    private let readback: GPUBuffer?
    let inputs: [(name: String, offset: Int, count: Int, staged: Int)]
    let outputs: [(name: String, shape: [Int], type: Tensor.ElementType, source: Source)]
    /// The inference's dispatches and their pipelines (recorded again, between the bridge
    /// kernels, for runs inside another user's frame: `VulkanModel+Frame.swift`).
    let dispatches: [MLDispatch]
    let pipelines: [MLDispatch.Kernel: ComputePipeline]
    /// The runs inside other users' frames recorded so far (see `VulkanModel+Frame.swift`).
    var bridges: [FrameBridge] = []

    enum Source {
        case constant(Tensor)
        /// Offset in the arena (floats) and in the read-back buffer (bytes).
        case arena(offset: Int, staged: Int)
    }

    /// Lowers `model` for `inputShapes` (default: its declared fixed shapes), uploads its
    /// constants and records the inference. An op the backend lacks fails here with
    /// ``MLError/unsupportedOp(node:op:reason:)`` naming the node.
    public convenience init(model: Model, context: GPUContext, inputShapes: [String: [Int]]? = nil) throws(MLError) {
        try self.init(model: model, context: context, inputShapes: inputShapes, keepingActivations: false)
    }

    /// Every activation of the last run, by the lowering's activation id (only with
    /// `keepingActivations`, which gives each its own place in the arena: for finding which step
    /// departs from the CPU's).
    package private(set) var lowering: Lowering?

    package func activation(_ id: Int) throws(MLError) -> [Float] {
        guard let lowering else { return [] }
        let a = lowering.activations[id]
        do { return try arena.read(Float.self, count: a.shape.reduce(1, *), at: a.offset * 4) } catch {
            throw .deviceFailed(device: context.deviceName, reason: error.description)
        }
    }

    package init(model: Model, context: GPUContext, inputShapes: [String: [Int]]? = nil, keepingActivations: Bool) throws(MLError) {
        guard let shapes = inputShapes ?? model.fixedInputShapes else {
            throw .unsupportedOp(node: model.inputs.map(\.name).joined(separator: ", "), op: "input",
                                 reason: "the Vulkan backend needs fixed input shapes; give inputShapes")
        }
        var lowering = try model.lowered(inputShapes: shapes)
        var arenaFloats = 0
        if keepingActivations {
            for id in lowering.activations.indices { lowering.activations[id].offset = arenaFloats; arenaFloats += lowering.activations[id].size }
        } else {
            arenaFloats = Lowering.place(&lowering.activations)
        }
        let device = "Vulkan device \(context.deviceName)"
        func failed(_ error: GPUError) -> MLError { .deviceFailed(device: device, reason: error.description) }
        let emulateFMA: Bool
        do throws(GPUError) { emulateFMA = try FusedMultiplyAdd.roundsTwice(on: context) } catch { throw failed(error) }
        var builder = DispatchBuilder(lowering: lowering, emulateFMA: emulateFMA)
        try builder.build()
        self.model = model
        self.context = context
        self.lowering = keepingActivations ? lowering : nil
        self.inputShapes = shapes
        dispatchCount = builder.dispatches.count
        do throws(GPUError) {
            let pool = BufferPool(context: context)
            arena = try pool.take(size: max(arenaFloats, 1) * 4, role: .device)
            let uploaded = builder.constants.uploaded
            let staged = try pool.takeStaged(size: uploaded.count * 4, .upload)
            try staged.uploadNow(uploaded)
            constants = staged.device
            constantBytes = builder.constants.values.count * 4
            arenaBytes = arenaFloats * 4
            var uploadBytes = 0
            inputs = lowering.inputs.sorted { $0.key < $1.key }.map { name, id in
                let a = lowering.activations[id]
                defer { uploadBytes += a.shape.reduce(1, *) * 4 }
                return (name, a.offset, a.shape.reduce(1, *), uploadBytes)
            }
            var readBytes = 0
            outputs = lowering.outputs.map { name, value in
                switch value {
                case let .constant(t): return (name, t.shape, t.elementType, .constant(t))
                case let .activation(id):
                    let a = lowering.activations[id]
                    defer { readBytes += a.shape.reduce(1, *) * 4 }
                    return (name, a.shape, a.type, .arena(offset: a.offset, staged: readBytes))
                }
            }
            let staging = !arena.isHostVisible
            upload = staging && uploadBytes > 0 ? try pool.take(size: uploadBytes, role: .upload) : nil
            readback = staging && readBytes > 0 ? try pool.take(size: readBytes, role: .readback) : nil
            for (what, buffer) in [("activations", arena), ("constants", constants)] where buffer.size / 4 > context.maxTexelCount {
                throw GPUError.outOfBounds(what: "the model's \(what) as one texel buffer (at most \(context.maxTexelCount) values)",
                                           offset: 0, count: buffer.size, size: context.maxTexelCount * 4)
            }
            let pipelines = try Dictionary(uniqueKeysWithValues: MLDispatch.Kernel.allCases.map { (kernel) throws(GPUError) in
                (kernel, try context.pipeline(named: "ml_\(kernel.rawValue)", spirv: kernel.spirv, layout: MLDispatch.layout))
            })
            self.pipelines = pipelines
            sequence = try CommandSequence(context: context)
            self.dispatches = builder.dispatches
        } catch {
            throw failed(error)
        }
        do throws(GPUError) {
            try sequence.record { (recorder) throws(GPUError) in try self.recordRun(&recorder) }
        } catch {
            throw failed(error)
        }
    }

    /// One inference as `run` submits it: the inputs copied in from the upload buffer (where
    /// memory is not unified), every dispatch, the outputs copied out.
    private func recordRun(_ recorder: inout CommandRecorder) throws(GPUError) {
        if let upload {
            for input in inputs {
                try recorder.copy(from: upload, to: arena, size: input.count * 4, sourceOffset: input.staged, destinationOffset: input.offset * 4)
            }
            recorder.barrier()
        }
        try Self.recordInference(&recorder, dispatches: dispatches, pipelines: pipelines, arena: arena, constants: constants)
        if let readback {
            for case let (_, shape, _, .arena(offset, staged)) in outputs {
                try recorder.copy(from: arena, to: readback, size: shape.reduce(1, *) * 4, sourceOffset: offset * 4, destinationOffset: staged)
            }
        }
        recorder.hostBarrier()
    }

    /// What each dispatch of one inference costs on the device, in dispatch order: its kernel
    /// (the shader's name), node, and the median of `runs` timed submissions of the same
    /// commands as `run` (a sequence that writes a timestamp after every command). Empty where
    /// the device writes no timestamps; past `CommandSequence`'s timestamp capacity, dispatches
    /// go untimed and are left out.
    package func profile(_ feeds: [String: Tensor], runs: Int = 3) throws(MLError) -> [(kernel: String, node: String, seconds: Double)] {
        _ = try run(feeds)  // checks the feeds; leaves the upload buffer (or the arena's inputs) written
        let device = "Vulkan device \(context.deviceName)"
        return try lock.locked { () throws(MLError) -> [(kernel: String, node: String, seconds: Double)] in
            do throws(GPUError) {
                let timed = try CommandSequence(context: context, timed: true)
                try timed.record { (recorder) throws(GPUError) in try self.recordRun(&recorder) }
                // The input copies come first in the timings, then one per dispatch.
                let first = upload == nil ? 0 : inputs.count
                var samples: [[Double]] = []
                for _ in 0..<max(1, runs) {
                    if upload == nil { for input in inputs { try arena.write(values: feeds[input.name]!.values, at: input.offset * 4) } }
                    try timed.run()
                    let t = try timed.timings()
                    samples.append(t.count > first ? Array(t[first..<min(t.count, first + dispatches.count)].map(\.seconds)) : [])
                }
                let timedCount = samples.map(\.count).min() ?? 0
                return (0..<timedCount).map { i in
                    let values = samples.map { $0[i] }.sorted()
                    return (dispatches[i].kernel.rawValue, dispatches[i].node, values[values.count / 2])
                }
            } catch {
                throw MLError.deviceFailed(device: device, reason: error.description)
            }
        }
    }

    /// Every dispatch of one inference, a barrier after each.
    static func recordInference(_ recorder: inout CommandRecorder, dispatches: [MLDispatch], pipelines: [MLDispatch.Kernel: ComputePipeline],
                                arena: GPUBuffer, constants: GPUBuffer) throws(GPUError) {
        let bindings = MLDispatch.bindings(arena: arena, constants: constants)
        for dispatch in dispatches {
            try recorder.dispatch(pipelines[dispatch.kernel]!, bindings: bindings, push: dispatch.push, groups: dispatch.groups)
            recorder.barrier()
        }
    }

    /// Runs one inference: inputs written, one submission, outputs read.
    public func run(_ feeds: [String: Tensor]) throws(MLError) -> [String: Tensor] {
        let shapes = try model.checkFeeds(feeds)
        guard shapes == inputShapes else {
            let name = shapes.first { inputShapes[$0.key] != $0.value }?.key ?? ""
            throw .inputShapeMismatch(name: name, expected: "\(inputShapes[name] ?? []) (the shape the Vulkan backend was recorded for)",
                                      actual: shapes[name] ?? [])
        }
        let device = "Vulkan device \(context.deviceName)"
        return try lock.locked { () throws(MLError) -> [String: Tensor] in
            do throws(GPUError) {
                for input in inputs {
                    let values = feeds[input.name]!.values
                    if let upload { try upload.write(values: values, at: input.staged) } else { try arena.write(values: values, at: input.offset * 4) }
                }
                try sequence.run()
                var results: [String: Tensor] = [:]
                for output in outputs {
                    switch output.source {
                    case let .constant(t): results[output.name] = t
                    case let .arena(offset, staged):
                        let count = output.shape.reduce(1, *)
                        let values = if let readback { try readback.read(Float.self, count: count, at: staged) }
                            else { try arena.read(Float.self, count: count, at: offset * 4) }
                        do throws(MLError) {
                            results[output.name] = output.type.isInteger
                                ? try Tensor(shape: output.shape, integers: values.map { Int64($0) }, elementType: output.type)
                                : try Tensor(shape: output.shape, values: values)
                        } catch {
                            throw GPUError.invalidPipeline(name: output.name, reason: error.description)
                        }
                    }
                }
                return results
            } catch {
                throw MLError.deviceFailed(device: device, reason: error.description)
            }
        }
    }
}
