import GraniteGPU
import GraniteMedia

/// A filter chain recorded for one input size and format: buffers, descriptor sets and one
/// command buffer, reused for every frame of that shape.
///
/// ```
///  bytes ─► input ─convert─► ping ─f1─► pong ─f2─► ping … ─► output (read back once)
///                 (skipped for rgba8: the bytes go straight into ping)
/// ```
final class ChainPlan {
    struct Key: Hashable {
        var width: Int
        var height: Int
        var format: PixelFormat
        var depthWidth: Int
        var depthHeight: Int
    }

    let key: Key
    let sequence: CommandSequence
    let input: GPUBuffer
    let params: GPUBuffer
    let depth: GPUBuffer
    let slot: Int
    let output: GPUBuffer
    let outputSize: (width: Int, height: Int)
    let sizes: [(width: Int, height: Int)]
    var scratch: [GPUBuffer] = []

    init(key: Key, kernels: [any FilterKernel], range: ColourRange, context: GPUContext) throws {
        self.key = key
        var sizes = [(width: key.width, height: key.height)]
        for kernel in kernels { sizes.append(try kernel.outputSize(width: sizes.last!.width, height: sizes.last!.height)) }
        let largest = sizes.map { $0.width * $0.height * 4 }.max()!
        let ping = try GPUBuffer(context: context, size: largest)
        let pong = try GPUBuffer(context: context, size: largest)
        let shaderFormat = try ColourConversion.shaderFormat(key.format)
        input = shaderFormat == nil ? ping : try GPUBuffer(context: context, size: key.format.byteCount(width: key.width, height: key.height))
        slot = (StepIO.floatCapacity * 4 + context.storageAlignment - 1) / context.storageAlignment * context.storageAlignment
        params = try GPUBuffer(context: context, size: slot * max(1, kernels.count + 1))
        depth = try GPUBuffer(context: context, size: max(4, key.depthWidth * key.depthHeight * 4))
        sequence = try CommandSequence(context: context)
        outputSize = sizes.last!
        self.sizes = sizes
        output = kernels.count % 2 == 0 ? ping : pong

        var made: [GPUBuffer] = []
        let params = self.params, depth = self.depth, input = self.input
        let depthSize = (width: key.depthWidth, height: key.depthHeight)
        let slot = self.slot
        try sequence.record { recorder in
            var io = StepIO(context: context, source: BufferSlice(input), destination: BufferSlice(ping),
                            sourceSize: sizes[0], destinationSize: sizes[0],
                            params: BufferSlice(params, offset: 0, size: slot), depth: BufferSlice(depth),
                            depthSize: depthSize, scratch: { size in
                                let buffer = try GPUBuffer(context: context, size: size)
                                made.append(buffer)
                                return buffer
                            })
            if let shaderFormat {
                try io.dispatch(&recorder, .convert, spec: [shaderFormat, range == .limited ? 0 : 1])
            }
            var buffers = (ping, pong)
            for (index, kernel) in kernels.enumerated() {
                recorder.barrier()
                io.source = BufferSlice(buffers.0)
                io.destination = BufferSlice(buffers.1)
                io.sourceSize = sizes[index]
                io.destinationSize = sizes[index + 1]
                io.params = BufferSlice(params, offset: slot * (index + 1), size: slot)
                try kernel.record(&recorder, io)
                buffers = (buffers.1, buffers.0)
            }
        }
        scratch = made
    }

    /// Runs the recorded chain on `image` (already checked to match `key`) and reads the result.
    func run(_ image: Image, depth depthMap: DepthPlane?, kernels: [any FilterKernel], time: Float) throws -> Image {
        try input.write(image.bytes)
        if let depthMap { try depth.write(values: depthMap.values) }
        for (index, kernel) in kernels.enumerated() {
            let floats = kernel.floats(time: time, size: sizes[index])
            precondition(floats.count <= StepIO.floatCapacity, "too many float parameters")
            try params.write(values: floats, at: slot * (index + 1))
        }
        try sequence.run()
        let bytes = try output.read(count: outputSize.width * outputSize.height * 4)
        return try Image(width: outputSize.width, height: outputSize.height, format: .rgba8, bytes: bytes)
    }
}
