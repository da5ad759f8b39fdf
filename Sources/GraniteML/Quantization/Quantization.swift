import CGraniteKernels

/// QuantizeLinear and DequantizeLinear, per tensor or per axis, with ONNX Runtime's
/// arithmetic: `q = saturate(rint(x / scale) + zp)` rounding half to even, and
/// `x = (q - zp) * scale` in single precision.
package enum Quantization {
    /// Scale and zero point broadcast along `axis` (or one of each for per-tensor).
    package struct Parameters {
        package let scales: [Float]
        package let zeroPoints: [Float]
        /// Values per scale step along the axis (the product of the dimensions after it).
        package let inner: Int
        package let channels: Int

        package init(_ c: BuildContext, shape: [Int]) throws(MLError) {
            let scale = try c.constant(1)
            let zero = try c.optionalConstant(2)
            scales = scale.values
            zeroPoints = zero?.values ?? [Float](repeating: 0, count: scale.count)
            guard zeroPoints.count == scales.count else { throw c.invalid("scale and zero point sizes differ") }
            if scale.count == 1 {
                inner = max(shape.reduce(1, *), 1)
                channels = 1
            } else {
                guard c.node.int("block_size", 0) == 0 else { throw c.unsupported("blocked quantisation") }
                let axis = ShapeOps.normalise(c.node.int("axis", 1), shape.count, clampTo: false)
                guard axis >= 0, axis < shape.count, shape[axis] == scale.count else {
                    throw c.invalid("\(scale.count) scales do not fit axis \(c.node.int("axis", 1)) of \(shape)")
                }
                inner = shape[(axis + 1)...].reduce(1, *)
                channels = scale.count
            }
        }
    }

    static func quantize(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let p = try Parameters(c, shape: x.shape)
        let type = c.optional(2)?.type ?? (c.node.int("output_dtype", 0) != 0
            ? (Tensor.ElementType(onnxCode: c.node.int("output_dtype", 0)) ?? .uint8) : .uint8)
        guard let range = type.range, type == .uint8 || type == .int8 || type == .uint16 || type == .int16 else {
            throw c.unsupported("quantising to \(type)")
        }
        let n = x.count
        return .single(x.shape, type) { io in
            let s = io.input(0), d = io.outputs[0]
            for start in stride(from: 0, to: n, by: p.inner) {
                let ch = (start / p.inner) % p.channels
                let scale = p.scales[ch], zero = p.zeroPoints[ch]
                // rint(clamp(x / scale, lo − zp, hi − zp)) + zp, vectorised in C.
                gk_quantize(Int32(KernelLevel.current), s + start, d + start, min(p.inner, n - start), scale,
                            range.lowerBound - zero, range.upperBound - zero, zero)
            }
        }
    }

    static func dequantize(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let p = try Parameters(c, shape: x.shape)
        if let constant = x.constant {
            // Folded once at load: exact integer arithmetic, then one rounding to float, as ORT does.
            let raw = constant.integers ?? constant.values.map { Int64($0) }
            var values = [Float](repeating: 0, count: raw.count)
            for i in 0..<raw.count {
                let ch = (i / p.inner) % p.channels
                values[i] = Float(raw[i] - Int64(p.zeroPoints[ch])) * p.scales[ch]
            }
            return .constant([try Tensor(shape: x.shape, values: values)])
        }
        let n = x.count
        return .single(x.shape) { io in
            let s = io.input(0), d = io.outputs[0]
            for start in stride(from: 0, to: n, by: p.inner) {
                let ch = (start / p.inner) % p.channels
                let scale = p.scales[ch], zero = p.zeroPoints[ch]
                for i in start..<min(start + p.inner, n) { d[i] = (s[i] - zero) * scale }
            }
        }
    }
}
