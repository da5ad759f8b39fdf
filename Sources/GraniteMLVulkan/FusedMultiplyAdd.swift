import GraniteGPU
import GraniteSync

/// Whether a device's `fma()` rounds once, found by running it.
///
/// GraniteML's CPU GEMMs (and ONNX Runtime's) sum a float convolution's taps with fused
/// multiply-adds; a sum that rounds after each multiply as well lands an ulp away now and then,
/// and where that ulp decides a quantisation tie the int8 network's output moves a step.
/// GLSL's `fma()` promises no single rounding, and lavapipe (Mesa 22.3) splits it into a
/// multiply and an add even when `precise`; there `conv.comp` computes the single rounding from
/// multiplies and adds alone (`exactFma` in ml.glsl, slower), elsewhere it keeps the device's.
///
/// The probe is `conv.comp` itself on two taps whose exact sum is −2⁻²⁴:
/// (1 + 2⁻¹²)² − (1 + 2⁻¹²)² rounded once after the first product is
/// (1 + 2⁻¹¹) − (1 + 2⁻¹¹ + 2⁻²⁴) = −2⁻²⁴, and 0 when the second product is rounded first.
enum FusedMultiplyAdd {
    private static let known = Locked<[ObjectIdentifier: Bool]>([:])

    /// True when `context`'s `fma()` rounded twice in the probe (then the shaders emulate it).
    static func roundsTwice(on context: GPUContext) throws(GPUError) -> Bool {
        if let answer = known.withLock({ $0[ObjectIdentifier(context)] }) { return answer }
        let answer = try probe(context) != Self.fused
        known.withLock { $0[ObjectIdentifier(context)] = answer }
        return answer
    }

    /// What a single rounding gives.
    static let fused = -Float(1) / Float(1 << 24)

    /// Runs conv.comp's float path with the device's `fma()` on the probe's two taps.
    static func probe(_ context: GPUContext) throws(GPUError) -> Float {
        let one = 1 + Float(1) / Float(1 << 12)
        let pool = BufferPool(context: context)
        let arena = try pool.take(size: 16 * 4, role: .constants)
        let constants = try pool.take(size: 16 * 4, role: .constants)
        try arena.write(values: [one, one, 0, 0, 7])
        try constants.write(values: [one, -one])
        let pipeline = try context.pipeline(named: "ml_conv", spirv: MLDispatch.Kernel.conv.spirv, layout: MLDispatch.layout)
        // in 0, out 4, weights 0, no bias, no epilogue; C 2, 1×1 input and output, 1×1 kernel, M 1,
        // strides and dilations 1, no pads, one group, float, the device's fma().
        let push = [0, 4, 0, -1, 0, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0]
        let sequence = try CommandSequence(context: context)
        try sequence.record { (recorder) throws(GPUError) in
            try recorder.dispatch(pipeline, bindings: MLDispatch.bindings(arena: arena, constants: constants),
                                  push: push.map { UInt32(bitPattern: Int32($0)) }, groups: (1, 1, 1))
            recorder.hostBarrier()
        }
        try sequence.run()
        return try arena.read(Float.self, count: 1, at: 16)[0]
    }
}
