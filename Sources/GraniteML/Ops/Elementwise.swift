import Foundation

/// Element-wise ops: the four broadcasting arithmetic ops and the activations.
package enum Elementwise {
    /// Add, Sub, Mul, Div with NumPy broadcasting.
    static func binary(_ c: BuildContext) throws(MLError) -> Prepared {
        let a = try c.input(0), b = try c.input(1)
        guard let bc = Broadcast(a.shape, b.shape) else {
            throw c.invalid("shapes \(a.shape) and \(b.shape) do not broadcast")
        }
        let type = a.type
        let integer = type.isInteger
        let f: (Float, Float) -> Float
        switch c.node.op {
        case "Add": f = { $0 + $1 }
        case "Sub": f = { $0 - $1 }
        case "Mul": f = { $0 * $1 }
        default: f = integer ? { $1 == 0 ? 0 : ($0 / $1).rounded(.towardZero) } : { $0 / $1 }
        }
        let op = c.node.op
        let total = bc.shape.reduce(1, *)
        let perChannel = a.shape.count == 4 && bc.shape == a.shape && b.shape == [1, a.shape[1], 1, 1]
        let plane = perChannel ? a.shape[2] * a.shape[3] : 1
        return .single(bc.shape, type) { io in
            let x = io.input(0), y = io.input(1), out = io.outputs[0]
            if a.shape == b.shape {
                binarySame(op, x, y, out, total, threads: io.threads, f)
                return
            }
            if perChannel {
                // [N, C, H, W] with a [1, C, 1, 1] second operand: one scalar per plane, planes split across threads.
                let planes = plane > 0 ? total / plane : 0, cs = a.shape[1]
                parallelFor(planes, threads: total >= 65536 ? io.threads : 1) { r in
                    for pi in r {
                        let v = y[pi % cs], base = pi * plane
                        switch op {
                        case "Add": for i in base..<base + plane { out[i] = x[i] + v }
                        case "Mul": for i in base..<base + plane { out[i] = x[i] * v }
                        default: for i in base..<base + plane { out[i] = f(x[i], v) }
                        }
                    }
                }
                return
            }
            bc.forEachRun { o, ai, bi, n, sa, sb in
                if sa == 1 && sb == 1 {
                    for i in 0..<n { out[o + i] = f(x[ai + i], y[bi + i]) }
                } else if sb == 0 {
                    let v = y[bi]
                    switch op {
                    case "Add": for i in 0..<n { out[o + i] = x[ai + i * sa] + v }
                    case "Mul": for i in 0..<n { out[o + i] = x[ai + i * sa] * v }
                    default: for i in 0..<n { out[o + i] = f(x[ai + i * sa], v) }
                    }
                } else {
                    for i in 0..<n { out[o + i] = f(x[ai + i * sa], y[bi + i * sb]) }
                }
            }
        }
    }

    private static func binarySame(_ op: String, _ x: UnsafePointer<Float>, _ y: UnsafePointer<Float>,
                                   _ out: UnsafeMutablePointer<Float>, _ n: Int, threads: Int,
                                   _ f: (Float, Float) -> Float) {
        parallelFor(n, threads: n >= 65536 ? threads : 1) { r in
            switch op {
            case "Add": for i in r { out[i] = x[i] + y[i] }
            case "Mul": for i in r { out[i] = x[i] * y[i] }
            case "Sub": for i in r { out[i] = x[i] - y[i] }
            default: for i in r { out[i] = f(x[i], y[i]) }
            }
        }
    }

    /// The activation an activation node computes, with constant Clip bounds read.
    package static func activation(_ c: BuildContext) throws(MLError) -> Epilogue {
        let node = c.node
        switch node.op {
        case "Relu": return .relu
        case "Sigmoid": return .sigmoid
        case "LeakyRelu": return .leakyRelu(alpha: node.float("alpha", 0.01))
        case "HardSigmoid": return .hardSigmoid(alpha: node.float("alpha", 0.2), beta: node.float("beta", 0.5))
        case "Clip":
            if c.opset < 11 || c.inputs.count == 1 {
                return .clip(lo: node.float("min", -Float.greatestFiniteMagnitude), hi: node.float("max", Float.greatestFiniteMagnitude))
            }
            let lo = try c.optionalConstant(1)?.values.first ?? -Float.greatestFiniteMagnitude
            let hi = try c.optionalConstant(2)?.values.first ?? Float.greatestFiniteMagnitude
            return .clip(lo: lo, hi: hi)
        default: throw c.unsupported("not an activation")
        }
    }

    /// Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid.
    static func unary(_ c: BuildContext) throws(MLError) -> Prepared {
        let x = try c.input(0)
        let step = try activation(c)
        let n = x.count
        return .single(x.shape, x.type) { io in
            io.outputs[0].update(from: io.input(0), count: n)
            step.apply(io.outputs[0], n)
        }
    }
}
