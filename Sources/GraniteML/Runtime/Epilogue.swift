import CGraniteKernels
import Foundation

/// An element-wise step fused onto the end of a kernel: an activation, or a QuantizeLinear →
/// DequantizeLinear pair ("fake quantisation", rounding half to even and saturating as ONNX
/// Runtime does).
package enum Epilogue: Sendable, Equatable {
    case relu
    case clip(lo: Float, hi: Float)
    case leakyRelu(alpha: Float)
    case hardSigmoid(alpha: Float, beta: Float)
    case sigmoid
    case fakeQuant(scale: Float, zeroPoint: Float, lo: Float, hi: Float)
    /// A fake-quantisation step proven to be a no-op (the values are already on its grid);
    /// kept so later passes still know the grid. Does nothing.
    case onGrid(scale: Float, zeroPoint: Float, lo: Float, hi: Float)
    /// `x op c`, or `c op x` when `constantFirst` (Add, Sub, Mul, Div with a constant scalar).
    case scalar(op: ScalarOp, value: Float, constantFirst: Bool)
    /// `x * clamp(x + add, lo, hi)`: the body of HardSwish as exporters spell it (then `/ 6`).
    case gatedClip(add: Float, lo: Float, hi: Float)

    /// The arithmetic of a scalar step.
    package enum ScalarOp: Sendable, Equatable {
        case add, sub, mul, div

        init?(_ op: String) {
            switch op {
            case "Add": self = .add
            case "Sub": self = .sub
            case "Mul": self = .mul
            case "Div": self = .div
            default: return nil
            }
        }
    }

    /// The quantisation grid (scale, zero point, integer range) of a fake-quantisation step.
    var grid: (scale: Float, zeroPoint: Float, lo: Float, hi: Float)? {
        switch self {
        case let .fakeQuant(scale, zeroPoint, lo, hi), let .onGrid(scale, zeroPoint, lo, hi): (scale, zeroPoint, lo, hi)
        default: nil
        }
    }

    /// Applies the steps to `count` values in place.
    static func apply(_ steps: [Epilogue], _ p: UnsafeMutablePointer<Float>, _ count: Int) {
        for step in steps { step.apply(p, count) }
    }

    /// Applies this step to `count` values in place.
    func apply(_ p: UnsafeMutablePointer<Float>, _ count: Int) {
        switch self {
        case .relu:
            for i in 0..<count { p[i] = max(p[i], 0) }
        case let .clip(lo, hi):
            for i in 0..<count { p[i] = min(max(p[i], lo), hi) }
        case let .leakyRelu(alpha):
            for i in 0..<count { let v = p[i]; p[i] = v < 0 ? v * alpha : v }
        case let .hardSigmoid(alpha, beta):
            for i in 0..<count { p[i] = min(max(alpha * p[i] + beta, 0), 1) }
        case .sigmoid:
            for i in 0..<count { p[i] = Self.sigmoid(p[i]) }
        case let .scalar(op, c, constantFirst):
            switch (op, constantFirst) {
            case (.add, _): for i in 0..<count { p[i] = p[i] + c }
            case (.mul, _): for i in 0..<count { p[i] = p[i] * c }
            case (.sub, false): for i in 0..<count { p[i] = p[i] - c }
            case (.sub, true): for i in 0..<count { p[i] = c - p[i] }
            case (.div, false): for i in 0..<count { p[i] = p[i] / c }
            case (.div, true): for i in 0..<count { p[i] = c / p[i] }
            }
        case let .gatedClip(add, lo, hi):
            for i in 0..<count { let v = p[i]; p[i] = v * min(max(v + add, lo), hi) }
        case .onGrid:
            break
        case let .fakeQuant(scale, zeroPoint, lo, hi):
            // rint(clamp(p / scale, lo − zp, hi − zp)) · scale, vectorised in C.
            gk_fake_quant(Int32(KernelLevel.current), p, count, scale, lo - zeroPoint, hi - zeroPoint)
        }
    }

    @inline(__always)
    static func sigmoid(_ x: Float) -> Float {
        x >= 0 ? 1 / (1 + expf(-x)) : { let e = expf(x); return e / (1 + e) }()
    }
}
