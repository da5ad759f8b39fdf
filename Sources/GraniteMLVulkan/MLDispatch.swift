import GraniteGPU
import GraniteML

/// One recorded compute dispatch of a lowered model: which kernel, its push-constant words and
/// its workgroup counts. Every kernel binds the same two buffers (arena, constants; see
/// `Shaders/GraniteMLVulkan/ml.glsl`, ``layout``), so a dispatch is fully described by these.
struct MLDispatch {
    /// The kernel: a shader of `Shaders/GraniteMLVulkan` (`conv`, `binary`, `gather`, ...).
    let kernel: Kernel
    let push: [UInt32]
    let groups: (x: Int, y: Int, z: Int)
    /// The node it runs (for errors and timings).
    let node: String

    /// What every kernel binds (ml.glsl): the arena and the constants as storage buffers (written,
    /// and the layout's anchor), then both again as texel buffers (read), then the constants as a
    /// texel buffer of quads (four floats a read: the tiled convolutions' weights).
    static let layout: [GPUBindingKind] = [.buffer, .buffer, .texels, .texels, .texels]

    /// `layout`'s bindings of an arena and a constants buffer (its size whole quads).
    static func bindings(arena: GPUBuffer, constants: GPUBuffer) -> [GPUBinding] {
        [.buffer(BufferSlice(arena)), .buffer(BufferSlice(constants)),
         .texels(BufferSlice(arena)), .texels(BufferSlice(constants)), .quadTexels(BufferSlice(constants))]
    }

    enum Kernel: String, CaseIterable {
        case conv, convPointwise = "conv_pointwise", convDense = "conv_dense", convDepthwise = "conv_depthwise"
        case convtranspose, binary, gather, channel, bilinear, pool, matmul, softmax

        var spirv: [UInt32] {
            switch self {
            case .conv: SPIRV.conv
            case .convPointwise: SPIRV.conv_pointwise
            case .convDense: SPIRV.conv_dense
            case .convDepthwise: SPIRV.conv_depthwise
            case .convtranspose: SPIRV.convtranspose
            case .softmax: SPIRV.softmax
            case .binary: SPIRV.binary
            case .gather: SPIRV.gather
            case .channel: SPIRV.channel
            case .bilinear: SPIRV.bilinear
            case .pool: SPIRV.pool
            case .matmul: SPIRV.matmul
            }
        }
    }

    /// A dispatch of one invocation per value, `count` values, 64 an invocation group
    /// (wrapping into y past the 65535-group limit of x, as the shaders index).
    init(_ kernel: Kernel, node: String, push: [Int], count: Int) {
        self.init(kernel, node: node, push: push, groups: Self.groups(count: count))
    }

    /// The workgroups of one invocation per value, `count` values, 64 an invocation group.
    static func groups(count: Int) -> (x: Int, y: Int, z: Int) {
        let groups = (count + 63) / 64
        return groups <= 65535 ? (max(groups, 1), 1, 1) : (65535, (groups + 65534) / 65535, 1)
    }

    init(_ kernel: Kernel, node: String, push: [Int], groups: (x: Int, y: Int, z: Int)) {
        self.kernel = kernel
        self.node = node
        self.push = push.map { UInt32(bitPattern: Int32(truncatingIfNeeded: $0)) }
        self.groups = groups
    }
}

/// The float bits of `value` as a push-constant word.
func bits(_ value: Float) -> Int { Int(Int32(bitPattern: value.bitPattern)) }

/// The model's constants as they go to the device once: weights, biases, index tables and
/// epilogues in one float array, each at an offset (in floats) the dispatches name.
struct ConstantPool {
    private(set) var values: [Float] = []

    /// The values as they go to the device: whole quads (the quad texel view's), at least one.
    var uploaded: [Float] { values + [Float](repeating: 0, count: values.isEmpty ? 4 : (4 - values.count % 4) % 4) }
    private var named: [String: Int] = [:]

    /// Appends `floats` (16-float aligned) and returns their offset.
    mutating func add(_ floats: [Float]) -> Int {
        values += [Float](repeating: 0, count: (16 - values.count % 16) % 16)
        let offset = values.count
        values += floats
        return offset
    }

    /// Appends int32 values as their bit patterns (the shaders read them with `CI`).
    mutating func add(ints: [Int]) -> Int {
        add(ints.map { Float(bitPattern: UInt32(bitPattern: Int32(truncatingIfNeeded: $0))) })
    }

    /// A graph constant, added once however many nodes read it.
    mutating func add(_ tensor: Tensor, name: String) -> Int {
        if let known = named[name] { return known }
        let offset = add(tensor.values)
        named[name] = offset
        return offset
    }

    /// A node's epilogue: four floats a step (op code, a, b, c) in the shaders' codes
    /// (`epilogue` in ml.glsl). Returns (offset, steps).
    mutating func add(epilogue steps: [Epilogue]) -> (offset: Int, count: Int) {
        let encoded = steps.compactMap(Self.encode)
        guard !encoded.isEmpty else { return (0, 0) }
        return (add(encoded.flatMap { $0 }), encoded.count)
    }

    private static func encode(_ step: Epilogue) -> [Float]? {
        switch step {
        case .relu: [1, 0, 0, 0]
        case let .clip(lo, hi): [2, lo, hi, 0]
        case let .leakyRelu(alpha): [3, alpha, 0, 0]
        case let .hardSigmoid(alpha, beta): [4, alpha, beta, 0]
        case .sigmoid: [5, 0, 0, 0]
        case let .fakeQuant(scale, zeroPoint, lo, hi): [6, scale, lo - zeroPoint, hi - zeroPoint]
        case .onGrid: nil
        case let .gatedClip(add, lo, hi): [13, add, lo, hi]
        case let .scalar(op, value, constantFirst):
            switch (op, constantFirst) {
            case (.add, _): [7, value, 0, 0]
            case (.mul, _): [8, value, 0, 0]
            case (.sub, false): [9, value, 0, 0]
            case (.sub, true): [10, value, 0, 0]
            case (.div, false): [11, value, 0, 0]
            case (.div, true): [12, value, 0, 0]
            }
        }
    }
}
