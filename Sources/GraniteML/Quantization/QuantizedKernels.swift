import CGraniteKernels
import Synchronization

/// The instruction set the C kernels use: the best this CPU has, capped by `GRANITE_ML_ISA`
/// (`portable`, `avx2`, `avx512vnni`, read once) and by ``cap`` (tests). Kernels read it when
/// they are built, so a cap applies to models loaded after it is set.
enum KernelLevel {
    static let portable = Int(GK_PORTABLE), avx2 = Int(GK_AVX2), avx512vnni = Int(GK_AVX512VNNI)
    static let detected = Int(gk_detect_level())
    /// A further cap; -1 for none.
    static let cap = Atomic<Int>(-1)

    static var current: Int {
        let limit = cap.load(ordering: .relaxed)
        return limit < 0 ? detected : min(limit, detected)
    }
}

/// Requantisation tables a quantised kernel hands to C, allocated once per built kernel.
final class RequantTables: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<gk_requant>
    private let bias: UnsafeMutablePointer<Int32>
    private let scale: UnsafeMutablePointer<Float>
    private let shift: UnsafeMutablePointer<Float>?

    /// `requant` nil: float output `(acc + bias) * scale + shift`.
    init(bias: [Int32], scale: [Float], shift: [Float]?, requant: Conv.Requant?) {
        self.bias = .allocate(capacity: bias.count)
        self.bias.initialize(from: bias, count: bias.count)
        self.scale = .allocate(capacity: scale.count)
        self.scale.initialize(from: scale, count: scale.count)
        if let shift {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: shift.count)
            p.initialize(from: shift, count: shift.count)
            self.shift = p
        } else {
            self.shift = nil
        }
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: gk_requant(
            bias: self.bias, scale: self.scale, shift: self.shift, lo: requant?.lo ?? 0, hi: requant?.hi ?? 0,
            out_scale: requant?.outScale ?? 1, requant: requant == nil ? 0 : 1))
    }

    deinit {
        bias.deallocate()
        scale.deallocate()
        shift?.deallocate()
        pointer.deallocate()
    }
}

/// Weights of a kernel kept in C-friendly memory for the kernel's lifetime.
final class KernelWeights<T>: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<T>

    init(_ values: [T]) {
        pointer = .allocate(capacity: max(values.count, 1))
        pointer.initialize(from: values, count: values.count)
    }

    init(count: Int, fill: (UnsafeMutablePointer<T>) -> Void) {
        pointer = .allocate(capacity: max(count, 1))
        fill(pointer)
    }

    deinit { pointer.deallocate() }
}

extension Conv {
    /// The integer side of the epilogue: relu/clip steps and the closing fake-quantisation as
    /// clamp bounds in units of the output scale.
    struct Requant: Equatable {
        var lo: Float
        var hi: Float
        var outScale: Float

        init(lo: Float, hi: Float, outScale: Float) {
            (self.lo, self.hi, self.outScale) = (lo, hi, outScale)
        }

        /// Nil unless the steps are relu/clip ones that the closing fake-quantisation makes
        /// redundant (its range lies inside theirs), which is when ONNX Runtime fuses the
        /// pattern into QLinearConv; otherwise it runs a float Conv, and so do we, to agree.
        init?(_ epilogue: [Epilogue]) {
            guard case let .fakeQuant(sy, zy, qlo, qhi)? = epilogue.last, sy > 0 else { return nil }
            let (lo, hi) = (qlo - zy, qhi - zy)
            for step in epilogue.dropLast() {
                switch step {
                case .relu: guard lo >= 0 else { return nil }
                case let .clip(a, b): guard a <= lo * sy, b >= hi * sy else { return nil }
                default: return nil
                }
            }
            (self.lo, self.hi, outScale) = (lo, hi, sy)
        }
    }

    /// The int8 kernel for a quantised pointwise or depthwise Conv whose epilogue requantises,
    /// or nil when this one does not fit (then the float kernels run it, emulating the QDQ
    /// arithmetic in float as ONNX Runtime does where it does not fuse).
    static func quantized(_ c: BuildContext, _ q: QuantizedConv, input: [Int], weights: [Int], bias: Tensor?,
                          g: ConvGeometry, group: Int, outShape: [Int]) -> Prepared? {
        let (n, ch, h, wd) = (input[0], input[1], input[2], input[3])
        let m = outShape[1]
        guard let form = integerForm(c, q, input: input, weights: weights, bias: bias, g: g, group: group, outShape: outShape) else { return nil }
        let requant = Requant(lo: form.lo, hi: form.hi, outScale: form.outScale)
        let scales = form.scales
        let level = KernelLevel.current
        let inv = form.inverseInputScale
        if form.depthwise {
            let tables = RequantTables(bias: q.bias ?? [Int32](repeating: 0, count: m), scale: scales, shift: nil, requant: requant)
            return depthwise(c, input: input, kernels: KernelWeights(q.weights.map { Float($0) }), kernel: [weights[2], weights[3]],
                             tables: tables, inverseScale: inv, g: g, outShape: outShape, epilogue: KernelEpilogue([], level: level),
                             level: level)
        }
        let k = ch, plane = h * wd
        let packed = KernelWeights<Int8>(count: gk_qgemm_packed_a_size(Int32(m), Int32(k))) { _ in }
        var sums = [Int32](repeating: 0, count: m)
        q.weights.map { Int8($0) }.withUnsafeBufferPointer { w in
            sums.withUnsafeMutableBufferPointer { gk_qgemm_pack_a(w.baseAddress!, Int32(m), Int32(k), packed.pointer, $0.baseAddress!) }
        }
        // Σ (u − offset)·w = Σ u·w − offset·Σ w: the offset's share goes into the bias.
        let biasAdjusted = (0..<m).map { (q.bias?[$0] ?? 0) &- Int32(q.inputOffset) &* sums[$0] }
        let tables = RequantTables(bias: biasAdjusted, scale: scales, shift: nil, requant: requant)
        let panels = (plane + 15) / 16
        let scratch = (gk_qgemm_packed_b_size(Int32(k), Int32(plane)) + 3) / 4 + 16
        let offset = Int32(q.inputOffset)
        return .single(outShape, scratch: scratch) { io in
            let packedB = UnsafeMutableRawPointer(io.scratch).assumingMemoryBound(to: UInt8.self)
            let threads = m * k * plane >= 1 << 18 ? io.threads : 1
            for b in 0..<n {
                let src = io.input(0) + b * ch * plane, dst = io.outputs[0] + b * m * plane
                parallelFor(panels, threads: threads) { r in
                    gk_qgemm_pack_b(Int32(level), src, Int32(plane), Int32(k), Int32(plane), Int32(r.lowerBound),
                                    Int32(r.upperBound), inv, offset, packedB)
                }
                if panels >= 4 * threads {
                    parallelFor(panels, threads: threads) { r in
                        gk_qgemm(Int32(level), packed.pointer, packedB, Int32(m), Int32(k), Int32(plane), 0, Int32(m),
                                 Int32(r.lowerBound * 16), Int32(min(r.upperBound * 16, plane)), tables.pointer, dst, Int32(plane))
                    }
                } else {
                    parallelFor((m + 3) / 4, threads: threads) { r in
                        gk_qgemm(Int32(level), packed.pointer, packedB, Int32(m), Int32(k), Int32(plane),
                                 Int32(r.lowerBound * 4), Int32(min(r.upperBound * 4, m)), 0, Int32(plane), tables.pointer, dst,
                                 Int32(plane))
                    }
                }
            }
        }
    }

    /// The integer arithmetic of a quantised Conv that the int8 kernels run: pointwise and
    /// depthwise ones whose epilogue requantises (see ``Requant``); nil when a float Conv runs it.
    /// Shared with GPU backends, so that they compute the very same integers.
    package static func integerForm(_ c: BuildContext) -> IntegerConv? {
        guard let q = c.node.quantized, let x = c.optional(0), let w = c.optional(1)?.constant, x.shape.count == 4, w.shape.count == 4,
              let g = try? ConvGeometry(c, input: [x.shape[2], x.shape[3]], kernel: [w.shape[2], w.shape[3]]) else { return nil }
        let bias = c.optional(2)?.constant
        return integerForm(c, q, input: x.shape, weights: w.shape, bias: bias, g: g, group: c.node.int("group", 1),
                           outShape: [x.shape[0], w.shape[0]])
    }

    static func integerForm(_ c: BuildContext, _ q: QuantizedConv, input: [Int], weights: [Int], bias: Tensor?,
                            g: ConvGeometry, group: Int, outShape: [Int]) -> IntegerConv? {
        let ch = input[1], m = outShape[1]
        guard g.dilations == [1, 1], q.weights.count == m * weights[1] * weights[2] * weights[3],
              q.weightScales.count == m, q.inputScale > 0 else { return nil }
        guard q.bias != nil || bias == nil, let requant = Requant(c.node.epilogue) else { return nil }
        // ONNX Runtime's multiplier: (x_scale · w_scale[m]) / y_scale in single precision.
        let scales = (0..<m).map { (q.inputScale * q.weightScales[$0]) / requant.outScale }
        let depthwise = group == ch && m == ch && weights[1] == 1
        if depthwise {
            guard weights[2] * weights[3] <= 64 else { return nil }
        } else {
            let pointwise = group == 1 && weights[2] == 1 && weights[3] == 1 && g.strides == [1, 1]
                && g.padBegin == [0, 0] && g.padEnd == [0, 0]
            guard pointwise, q.weights.allSatisfy({ $0 >= -128 && $0 <= 127 }) else { return nil }
        }
        return IntegerConv(weights: q.weights, bias: q.bias ?? [Int32](repeating: 0, count: m), scales: scales,
                           inverseInputScale: 1 / q.inputScale, lo: requant.lo, hi: requant.hi, outScale: requant.outScale,
                           depthwise: depthwise)
    }

    /// Depthwise convolution through the C kernel: quantised (`inverseScale` > 0, exact integer
    /// sums, requantised by `tables`) or plain float (`inverseScale` 0, bias as the shift).
    static func depthwise(_ c: BuildContext, input: [Int], kernels: KernelWeights<Float>, kernel: [Int], tables: RequantTables,
                          inverseScale: Float, g: ConvGeometry, outShape: [Int], epilogue: KernelEpilogue,
                          level: Int) -> Prepared {
        let (n, ch, h, wd) = (input[0], input[1], input[2], input[3])
        let (oh, ow) = (outShape[2], outShape[3])
        let (kh, kw) = (Int32(kernel[0]), Int32(kernel[1]))
        let (sh, sw) = (Int32(g.strides[0]), Int32(g.strides[1]))
        let (pt, pl) = (Int32(g.padBegin[0]), Int32(g.padBegin[1]))
        let per = gk_dw_scratch(Int32(h), Int32(wd), kh, kw, sh, sw, pt, pl, Int32(oh), Int32(ow))
        let threads = max(c.threads, 1)
        return .single(outShape, scratch: per * threads) { io in
            let src = io.input(0), out = io.outputs[0]
            parallelChunks(n * ch, threads: ch * oh * ow >= 16384 ? min(io.threads, threads) : 1) { chunk, planes in
                let scratch = io.scratch + chunk * per
                for p in planes {
                    let k = p % ch
                    gk_depthwise(Int32(level), src + p * h * wd, Int32(h), Int32(wd), inverseScale, kernels.pointer + k * Int(kh * kw),
                                 kh, kw, sh, sw, pt, pl, Int32(oh), Int32(ow), tables.pointer, Int32(k), epilogue.pointer, scratch,
                                 out + p * oh * ow)
                    Epilogue.apply(epilogue.rest, out + p * oh * ow, oh * ow)
                }
            }
        }
    }
}

/// A quantised Conv in integers: input values become `rint(x · inverseInputScale)` (centred),
/// sums `acc = Σ input · weights` are exact, and the output is
/// `rint(clamp(Float(acc + bias[m]) · scales[m], lo, hi)) · outScale` (QLinearConv's requantisation).
package struct IntegerConv: Sendable {
    /// Centred weights (q − zero point), in the weight tensor's layout.
    package let weights: [Int32]
    package let bias: [Int32]
    package let scales: [Float]
    package let inverseInputScale: Float
    package let lo: Float, hi: Float, outScale: Float
    /// Depthwise (else pointwise).
    package let depthwise: Bool
}
