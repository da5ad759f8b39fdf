import GraniteGPU
import GraniteMedia
import GraniteML

/// One recorded run of a model inside another GraniteGPU user's frame: its picture in, its plane
/// out (``VulkanModel/run(picture:feed:output:scale:into:width:height:)``), kept for the next
/// frame that brings the same two buffers (a Marble chain reuses its plans' buffers).
final class FrameBridge {
    let picture: GPUBuffer, plane: GPUBuffer
    let width: Int, height: Int
    let feed: ModelDescription.Input
    let output: String
    let scale: Float?
    let sequence: CommandSequence
    /// The resize tables (kept alive with the recording that binds them).
    let tables: GPUBuffer

    init(picture: GPUBuffer, plane: GPUBuffer, width: Int, height: Int, feed: ModelDescription.Input, output: String,
         scale: Float?, sequence: CommandSequence, tables: GPUBuffer) {
        (self.picture, self.plane, self.width, self.height) = (picture, plane, width, height)
        (self.feed, self.output, self.scale, self.sequence, self.tables) = (feed, output, scale, sequence, tables)
    }

    func serves(_ picture: GPUBuffer, _ plane: GPUBuffer, _ width: Int, _ height: Int, _ feed: ModelDescription.Input,
                _ output: String, _ scale: Float?) -> Bool {
        self.picture === picture && self.plane === plane && self.width == width && self.height == height
            && self.feed == feed && self.output == output && self.scale == scale
    }
}

extension VulkanModel {
    /// The recordings kept at most (a chain keeps up to four plans, each with its own buffers).
    static let maxBridges = 8

    /// Runs the model inside another GraniteGPU user's frame on the same device — a Marble chain's
    /// — with nothing crossing to the host:
    ///
    /// ```
    ///  picture (rgba8, the model's input size) ─image_in─► input tensor ─► the inference ─►
    ///    output plane ─plane_out (× scale, resized with the shared resampler)─► plane (floats, width×height)
    /// ```
    ///
    /// The input is made as GraniteML's `ImageTensor.input` makes it from a picture of that size
    /// (`feed`: layout, pixel scale, mean, std; integer inputs rounded and clamped), and the output
    /// scaled and resized as GraniteML's `DepthMap` does on the host (bilinear, the map's
    /// ``DepthMap/scaleFilter``), so the plane holds the values `DepthEstimator.estimate` returns.
    /// One submission, waited for; the other user's writes before it are seen (the recording starts
    /// with a barrier) and its own next submission must start with one (Marble's does).
    ///
    /// - Parameters:
    ///   - picture: packed `rgba8` pixels (R in the low byte) at `feed`'s size.
    ///   - output: the model output to write (one image plane: [1, H, W], [1, 1, H, W] or [1, H, W, 1]).
    ///   - scale: a factor for every output value (a metric model's metres per step), nil for none.
    ///   - plane: where the `width`×`height` floats go, row by row.
    public func run(picture: GPUBuffer, feed: ModelDescription.Input, output: String, scale: Float?,
                    into plane: GPUBuffer, width: Int, height: Int) throws(MLError) {
        let device = "Vulkan device \(context.deviceName)"
        guard picture.context === context, plane.context === context else {
            throw .deviceFailed(device: device, reason: "the frame's buffers belong to another Vulkan device than the model's")
        }
        guard width > 0, height > 0, plane.size >= width * height * 4 else {
            throw .unsupportedImage(reason: "a \(width)x\(height) plane needs \(width * height * 4) bytes, the buffer has \(plane.size)")
        }
        guard picture.size >= feed.width * feed.height * 4 else {
            throw .unsupportedImage(reason: "a \(feed.width)x\(feed.height) rgba8 picture needs \(feed.width * feed.height * 4) bytes, the buffer has \(picture.size)")
        }
        try lock.locked { () throws(MLError) in
            let bridge: FrameBridge
            if let index = bridges.firstIndex(where: { $0.serves(picture, plane, width, height, feed, output, scale) }) {
                bridge = bridges.remove(at: index)
            } else {
                bridge = try makeBridge(picture: picture, feed: feed, output: output, scale: scale, plane: plane, width: width, height: height)
                if bridges.count >= Self.maxBridges { bridges.removeFirst() }
            }
            bridges.append(bridge)
            do throws(GPUError) { try bridge.sequence.run() } catch {
                throw MLError.deviceFailed(device: device, reason: error.description)
            }
        }
    }

    /// Records a bridge (call under `lock`).
    private func makeBridge(picture: GPUBuffer, feed: ModelDescription.Input, output: String, scale: Float?,
                            plane: GPUBuffer, width: Int, height: Int) throws(MLError) -> FrameBridge {
        guard inputs.count == 1, let input = inputs.first else {
            throw .unsupportedOp(node: inputs.map(\.name).joined(separator: ", "), op: "input",
                                 reason: "a model run on a frame's picture takes one input, this one takes \(inputs.count)")
        }
        guard input.count == feed.width * feed.height * 3, inputShapes[input.name]?.reduce(1, *) == input.count else {
            throw .inputShapeMismatch(name: input.name, expected: "\(inputShapes[input.name] ?? []) (the shape recorded)",
                                      actual: feed.layout == .nhwc ? [1, feed.height, feed.width, 3] : [1, 3, feed.height, feed.width])
        }
        guard let made = outputs.first(where: { $0.name == output }) else { throw .unexpectedOutput(reason: "no output '\(output)'") }
        guard case let .arena(offset, _) = made.source else {
            throw .unexpectedOutput(reason: "output '\(output)' is a constant; nothing to run on the device")
        }
        let (w, h) = try ImageTensor.planeSize(made.shape)
        // The tables: column starts (int bits), column weights, row starts, row weights.
        let xs = w == width ? nil : ResampleAxis(source: w, target: width, filter: DepthMap.scaleFilter)
        let ys = h == height ? nil : ResampleAxis(source: h, target: height, filter: DepthMap.scaleFilter)
        var table: [Float] = (xs?.starts ?? []).map { Float(bitPattern: UInt32(bitPattern: $0)) }
        let columnWeights = table.count
        table += xs?.realWeights ?? []
        let rowStarts = table.count
        table += (ys?.starts ?? []).map { Float(bitPattern: UInt32(bitPattern: $0)) }
        let rowWeights = table.count
        table += ys?.realWeights ?? []
        if table.isEmpty { table = [0] }
        let range = feed.dtype.range
        let imagePush = [input.offset, feed.width, feed.height, feed.layout == .nhwc ? 0 : 1, bits(feed.pixelScale)]
            + feed.mean.prefix(3).map(bits) + feed.std.prefix(3).map(bits)
            + [range == nil ? 0 : 1, bits(range?.lowerBound ?? 0), bits(range?.upperBound ?? 0)]
        let planePush = [offset, w, h, width, height, xs?.taps ?? 0, ys?.taps ?? 0, bits(scale ?? 1),
                         columnWeights, rowStarts, rowWeights]
        let (arena, constants, dispatches, pipelines) = (arena, constants, dispatches, pipelines)
        do throws(GPUError) {
            let staged = try BufferPool(context: context).takeStaged(size: table.count * 4, .upload)
            try staged.uploadNow(table)
            let tables = staged.device
            let layout: [GPUBindingKind] = [.buffer, .buffer, .buffer]
            let imageIn = try context.pipeline(named: "ml_image_in", spirv: SPIRV.image_in, layout: layout)
            let planeOut = try context.pipeline(named: "ml_plane_out", spirv: SPIRV.plane_out, layout: layout)
            let sequence = try CommandSequence(context: context)
            try sequence.record { (recorder) throws(GPUError) in
                recorder.barrier()
                try recorder.dispatch(imageIn, bindings: [.buffer(BufferSlice(arena)), .buffer(BufferSlice(picture)), .buffer(BufferSlice(tables))],
                                      push: imagePush.map(Self.word), groups: MLDispatch.groups(count: feed.width * feed.height))
                recorder.barrier()
                try Self.recordInference(&recorder, dispatches: dispatches, pipelines: pipelines, arena: arena, constants: constants)
                try recorder.dispatch(planeOut, bindings: [.buffer(BufferSlice(arena)), .buffer(BufferSlice(plane)), .buffer(BufferSlice(tables))],
                                      push: planePush.map(Self.word), groups: MLDispatch.groups(count: width * height))
                recorder.barrier()
            }
            return FrameBridge(picture: picture, plane: plane, width: width, height: height, feed: feed, output: output,
                               scale: scale, sequence: sequence, tables: tables)
        } catch {
            throw .deviceFailed(device: "Vulkan device \(context.deviceName)", reason: error.description)
        }
    }

    private static func word(_ value: Int) -> UInt32 { UInt32(bitPattern: Int32(truncatingIfNeeded: value)) }
}
