import GraniteGPU

/// Sobel edges on integer luma (`sobel.comp` MODE 0) and the ink drawing built on them (MODE 1).
struct Sobel: FilterKernel {
    let ink: Bool
    let scale: Float
    let levels: Int
    let inkThreshold: Int
    static let inkColor: SIMD3<Int32> = [28, 22, 40]
    static let paper: UInt32 = Px.pack(246, 238, 220, 0)
    /// Rows an invocation walks down on rows of whole quads (`ROWS` in `sobel.comp`).
    static let rows = 4

    static let sobel = FilterDescription(
        name: "sobel", summary: "Sobel edge magnitude of the luma, as grey.",
        parameters: [.init("scale", .float(min: 0, max: 8, default: 1), "gain on the magnitude")])
    static let ink = FilterDescription(
        name: "ink", summary: "Ink drawing: posterised color on paper with dark lines on edges.",
        parameters: [
            .init("threshold", .float(min: 0, max: 1, default: 0.2), "edge strength that draws a line"),
            .init("levels", .int(min: 2, max: 16, default: 4), "color levels per channel"),
        ])

    init(sobel spec: FilterSpec) {
        ink = false
        scale = spec.float("scale")
        levels = 2
        inkThreshold = 0
    }

    init(ink spec: FilterSpec) {
        ink = true
        scale = 1
        levels = spec.int("levels")
        let t = Int((spec.float("threshold") * 1020).rounded())
        inkThreshold = t * t
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [scale] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let scale = env.floats[0]
        return input.map { x, y, p in
            let l = { (dx: Int, dy: Int) in Px.luma(input.at(x + dx, y + dy)) }
            let gx = (l(1, -1) + 2 * l(1, 0) + l(1, 1)) - (l(-1, -1) + 2 * l(-1, 0) + l(-1, 1))
            let gy = (l(-1, 1) + 2 * l(0, 1) + l(1, 1)) - (l(-1, -1) + 2 * l(0, -1) + l(1, -1))
            let m2 = gx * gx + gy * gy
            if !ink {
                let m = UInt32(min(Float(m2).squareRoot() * scale + 0.5, 255))
                return Px.pack(m, m, m, Px.a(p))
            }
            if m2 > inkThreshold {
                return Px.pack(UInt32(Sobel.inkColor.x), UInt32(Sobel.inkColor.y), UInt32(Sobel.inkColor.z), Px.a(p))
            }
            let posterise = { (c: UInt32, paper: UInt32) -> UInt32 in
                let q = (c * UInt32(levels)) >> 8
                return ((q * 255) / UInt32(levels - 1) * 3 + paper) >> 2
            }
            return Px.pack(posterise(Px.r(p), Px.r(Sobel.paper)), posterise(Px.g(p), Px.g(Sobel.paper)),
                           posterise(Px.b(p), Px.b(Sobel.paper)), Px.a(p))
        }
    }

    /// On rows of whole YUYV quads (8 pixels) it converts while loading.
    func readsYUYV(width: Int) -> Bool { width % 8 == 0 }

    /// Sobel and ink are 3×3 on the luma (and the centre pixel): a blur before them may compute
    /// them on its blurred rows (`blur_stencil.comp`, `edge.glsl` shared with `sobel.glsl`).
    var stencilTail: StencilTail? { StencilTail(mode: ink ? 2 : 1, a: pushA, b: pushB) }

    private var pushA: SIMD4<Int32> { SIMD4(Int32(levels), Int32(inkThreshold), 0, 0) }
    private var pushB: SIMD4<Int32> { SIMD4(Sobel.inkColor.x, Sobel.inkColor.y, Sobel.inkColor.z, Int32(bitPattern: Sobel.paper)) }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let quads = StepIO.quadRows(io.sourceSize.width)
        // Quad rows read through a quad texel view (branch-free gathers on lavapipe: 4× less CPU).
        let texels = quads ? io.quadTexels(io.source, bytes: io.sourceBytes) : nil
        try io.dispatch(&recorder, texels != nil ? .sobelTexels : .sobel, spec: [ink ? 1 : 0, quads ? 1 : 0, io.yuyvSource],
                        a: pushA, b: pushB,
                        tile: quads ? (16 * 16, 4 * Sobel.rows) : (64 * 8, 1), local: quads ? (16, 4) : (64, 1),
                        quadTexels: texels.map { [$0] } ?? [])
    }
}
