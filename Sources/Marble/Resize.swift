import GraniteGPU
import GraniteMedia

/// Resize with the shared resampler (GraniteMedia `Resampler`): the CPU reference calls it, the
/// shader (`resize.comp`) reads the same ``ResampleAxis`` tables and repeats its integer arithmetic.
struct Resize: FilterKernel {
    let width: Int
    let height: Int
    let filter: ResizeFilter

    static let description = FilterDescription(
        name: "resize", summary: "Scales to width x height: antialiased bilinear, area (box) or Lanczos-3.",
        parameters: [
            .init("width", .int(min: 1, max: 16384, default: 640), "output width"),
            .init("height", .int(min: 1, max: 16384, default: 360), "output height"),
            .init("mode", .choice(["bilinear", "area", "lanczos3"], default: "bilinear"), "resampling kernel"),
        ])

    init(width: Int, height: Int, filter: ResizeFilter) {
        self.width = width
        self.height = height
        self.filter = filter
    }

    init(_ spec: FilterSpec) {
        width = spec.int("width")
        height = spec.int("height")
        filter = ResizeFilter(name: spec.choice("mode")) ?? .bilinear
    }

    func outputSize(width: Int, height: Int) throws(MarbleError) -> (width: Int, height: Int) { (self.width, self.height) }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        if input.width == width && input.height == height { return input }
        let xs = ResampleAxis(source: input.width, target: width, filter: filter)
        let ys = ResampleAxis(source: input.height, target: height, filter: filter)
        let bytes = input.pixels.withUnsafeBytes { Array($0) }
        let out = Resampler.resize8(bytes, channels: 4, xs: xs, ys: ys)
        let pixels = out.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }
        return RGBAPlane(width: width, height: height, pixels: pixels)
    }

    /// k where every output of `axis` averages its own block of 2^k source pixels (starts i·2^k,
    /// 2^k taps of weight 2^(14 − k), k ≤ 7: the area reduction by a power of two that divides
    /// the length; 0 for the same length), else nil.
    static func blockShift(_ axis: ResampleAxis) -> Int? {
        if axis.source == axis.target { return 0 }
        let f = axis.taps
        guard f > 1, f & (f - 1) == 0, f <= 1 << 7, axis.source == axis.target * f else { return nil }
        let weight = Int32((1 << ResampleAxis.fractionBits) / f)
        for i in 0..<axis.target where axis.starts[i] != Int32(i * f) { return nil }
        return axis.weights.allSatisfy { $0 == weight } ? f.trailingZeroBitCount : nil
    }

    static func split(_ p: UInt32) -> SIMD4<UInt32> { [Px.r(p), Px.g(p), Px.b(p), Px.a(p)] }
    static func join(_ c: SIMD4<UInt32>) -> UInt32 { Px.pack(c.x, c.y, c.z, c.w) }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let (sw, sh) = io.sourceSize
        let xs = ResampleAxis(source: sw, target: width, filter: filter)
        let ys = ResampleAxis(source: sh, target: height, filter: filter)
        if let a = Self.blockShift(xs), let b = Self.blockShift(ys), a + b > 0 {
            // Whole blocks of 2^a × 2^b pixels: one pass, the same integers (resize.comp's MODE 2).
            try io.dispatch(&recorder, .resize, spec: [2], a: SIMD4(Int32(a), Int32(b), 0, 0))
            return
        }
        let table: [Int32] = xs.starts + xs.weights + ys.starts + ys.weights
        let tables = try io.constants(table.count * 4)
        try tables.write(values: table)
        let yStarts = Int32(xs.starts.count + xs.weights.count)
        let a = SIMD4<Int32>(Int32(xs.taps), Int32(ys.taps), yStarts, yStarts + Int32(ys.starts.count))
        let columns = BufferSlice(try io.scratch(width * sh * 16))
        try io.dispatch(&recorder, .resize, spec: [0], destination: columns, aux: BufferSlice(tables),
                        destinationSize: (width, sh), a: a)
        recorder.barrier()
        try io.dispatch(&recorder, .resize, spec: [1], source: columns, aux: BufferSlice(tables),
                        sourceSize: (width, sh), a: a)
    }
}
