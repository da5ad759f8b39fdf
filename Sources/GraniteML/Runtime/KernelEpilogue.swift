import CGraniteKernels

/// A node's epilogue compiled for the C kernels: the leading steps C can run (all but sigmoid)
/// as a `gk_epilogue` that the GEMM and depthwise kernels apply to each block right after
/// computing it (still in registers' reach, in L1), and the steps from the first one C lacks
/// on, which stay in Swift.
///
/// ```
///  sums ─► + bias ─► C steps (gk_ep_run, same arithmetic as Epilogue) ─► Swift rest ─► output
/// ```
/// Allocated once per built kernel and never mutated after init, which makes the unchecked
/// conformance sound.
final class KernelEpilogue: @unchecked Sendable {
    /// The C part; nil when no step runs in C (then kernels add only the bias).
    let pointer: UnsafePointer<gk_epilogue>?
    /// Steps after the C part, applied by ``finish(_:rows:ldc:columns:)`` or ``apply(_:_:bias:)``.
    let rest: [Epilogue]
    private let storage: UnsafeMutablePointer<gk_epilogue>
    private let level: Int32

    /// Splits `steps` at the first step C cannot run.
    init(_ steps: [Epilogue], level: Int = KernelLevel.current) {
        self.level = Int32(level)
        storage = .allocate(capacity: 1)
        storage.initialize(to: gk_epilogue())
        var taken = 0
        for step in steps {
            guard let (op, a, b, c) = Self.kernelStep(step) else { break }
            if op != 0, gk_epilogue_push(storage, Int32(op), a, b, c) == 0 { break }
            taken += 1
        }
        rest = Array(steps[taken...])
        pointer = storage.pointee.count > 0 ? UnsafePointer(storage) : nil
    }

    deinit { storage.deallocate() }

    /// Adds `bias` and applies every step to `count` values in place.
    func apply(_ p: UnsafeMutablePointer<Float>, _ count: Int, bias: Float = 0) {
        if pointer != nil || bias != 0 { gk_epilogue_apply(level, pointer, bias, p, count) }
        Epilogue.apply(rest, p, count)
    }

    /// Applies the Swift rest to `count` values that a C kernel already gave the bias and the C
    /// steps, split across threads.
    func applyRest(_ p: UnsafeMutablePointer<Float>, _ count: Int, threads: Int) {
        guard !rest.isEmpty else { return }
        let chunks = count >= 65536 ? threads : 1
        parallelFor(chunks, threads: chunks) { parts in
            for part in parts {
                let lo = count * part / chunks, hi = count * (part + 1) / chunks
                Epilogue.apply(rest, p + lo, hi - lo)
            }
        }
    }

    /// Finishes `columns` of `rows` rows of a GEMM result (row stride `ldc`) that the C kernel
    /// already gave the bias and its steps: the Swift rest.
    func finish(_ c: UnsafeMutablePointer<Float>, rows: Int, ldc: Int, columns: Range<Int>) {
        if rest.isEmpty { return }
        for i in 0..<rows { Epilogue.apply(rest, c + i * ldc + columns.lowerBound, columns.count) }
    }

    /// The C form of one step: op code (0 for a step that does nothing) and operands, or nil
    /// when C has no such step.
    private static func kernelStep(_ step: Epilogue) -> (Int, Float, Float, Float)? {
        switch step {
        case .relu: (Int(GK_EP_RELU), 0, 0, 0)
        case let .clip(lo, hi): (Int(GK_EP_CLIP), lo, hi, 0)
        case let .leakyRelu(alpha): (Int(GK_EP_LEAKY_RELU), alpha, 0, 0)
        case let .hardSigmoid(alpha, beta): (Int(GK_EP_HARD_SIGMOID), alpha, beta, 0)
        case .sigmoid: nil
        case let .fakeQuant(scale, zeroPoint, lo, hi): (Int(GK_EP_FAKE_QUANT), scale, lo - zeroPoint, hi - zeroPoint)
        case .onGrid: (0, 0, 0, 0)
        case let .gatedClip(add, lo, hi): (Int(GK_EP_GATED_CLIP), add, lo, hi)
        case let .scalar(op, value, constantFirst):
            switch (op, constantFirst) {
            case (.add, _): (Int(GK_EP_ADD), value, 0, 0)
            case (.mul, _): (Int(GK_EP_MUL), value, 0, 0)
            case (.sub, false): (Int(GK_EP_SUB), value, 0, 0)
            case (.sub, true): (Int(GK_EP_SUB_FROM), value, 0, 0)
            case (.div, false): (Int(GK_EP_DIV), value, 0, 0)
            case (.div, true): (Int(GK_EP_DIV_INTO), value, 0, 0)
            }
        }
    }
}
