import GraniteMedia
import Marble

/// A stage that can hand its result over already converted to YUV (a GPU filter chain converts
/// on the device what is there anyway), so the live sinks (Y4M pipe, V4L2 output) write those
/// bytes instead of converting on the CPU. ``CaptureParts`` asks the last stage for the layouts
/// the sinks take (``FrameSink/gpuLayout``).
public protocol YUVOutputStage: FrameStage {
    /// Processes `image` as ``FrameStage/process(_:depth:)`` does and returns the result with its
    /// bytes in each of `layouts` it could make (none: the sinks convert on the CPU).
    func process(_ image: Image, depth: Image?, yuv layouts: [YUVLayout]) throws -> (image: Image, yuv: [YUVLayout: [UInt8]])
    /// The result of the stage's latest process call (however it was made: with a depth map made
    /// from the frame, or the newest resident map) in each of `layouts` it can make (none: the
    /// sinks convert on the CPU). Called right after that process call, by the same caller.
    func resultYUV(_ layouts: [YUVLayout]) throws -> [YUVLayout: [UInt8]]
}

extension MarbleStage: YUVOutputStage {
    /// On a GPU, one more dispatch per layout over the chain's result; the CPU reference, and a
    /// CPU device (lavapipe, ``FilterChain/convertsYUVOnDevice``), make none.
    public func process(_ image: Image, depth: Image?, yuv layouts: [YUVLayout]) throws -> (image: Image, yuv: [YUVLayout: [UInt8]]) {
        guard gpu, !layouts.isEmpty, chain.convertsYUVOnDevice else { return (try process(image, depth: depth), [:]) }
        let out = try chain.apply(image, depth: depth, yuv: layouts, rgba: true)
        guard let rgba = out.image else { preconditionFailure("rgba was asked for") }
        return (rgba, out.yuv)
    }

    /// On a GPU, the chain's latest result converted on the device (``FilterChain/resultYUV(_:)``).
    public func resultYUV(_ layouts: [YUVLayout]) throws -> [YUVLayout: [UInt8]] {
        guard gpu, !layouts.isEmpty, chain.convertsYUVOnDevice else { return [:] }
        return try chain.resultYUV(layouts)
    }
}

extension LiveChainStage: YUVOutputStage {
    /// The stage in use now, when it makes YUV itself.
    public func process(_ image: Image, depth: Image?, yuv layouts: [YUVLayout]) throws -> (image: Image, yuv: [YUVLayout: [UInt8]]) {
        let stage = self.stage
        let depth = stage.usesDepth ? depth : nil
        if let yuvStage = stage as? any YUVOutputStage { return try yuvStage.process(image, depth: depth, yuv: layouts) }
        return (try stage.process(image, depth: depth), [:])
    }

    /// The stage in use now, when it makes YUV itself. A chain swapped in since the latest process
    /// call has not run yet and gives none (the sinks then convert the frame on the CPU).
    public func resultYUV(_ layouts: [YUVLayout]) throws -> [YUVLayout: [UInt8]] {
        guard let yuvStage = self.stage as? any YUVOutputStage else { return [:] }
        return try yuvStage.resultYUV(layouts)
    }
}
