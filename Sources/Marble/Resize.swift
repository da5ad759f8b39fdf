import GraniteGPU

/// Resize in integer arithmetic (`resize.comp`): bilinear or area.
struct Resize: FilterKernel {
    let width: Int
    let height: Int
    let area: Bool

    static let description = FilterDescription(
        name: "resize", summary: "Scales to width x height, bilinear or area (box) sampling.",
        parameters: [
            .init("width", .int(min: 1, max: 16384, default: 640), "output width"),
            .init("height", .int(min: 1, max: 16384, default: 360), "output height"),
            .init("mode", .choice(["bilinear", "area"], default: "bilinear"), "sampling"),
        ])

    init(_ spec: FilterSpec) {
        width = spec.int("width")
        height = spec.int("height")
        area = spec.choice("mode") == "area"
    }

    func outputSize(width: Int, height: Int) throws -> (width: Int, height: Int) { (self.width, self.height) }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let sw = input.width, sh = input.height, dw = width, dh = height
        return RGBAPlane.generate(width: dw, height: dh) { x, y in
            if area {
                let x0 = (x * sw) / dw, x1 = max(((x + 1) * sw) / dw, x0 + 1)
                let y0 = (y * sh) / dh, y1 = max(((y + 1) * sh) / dh, y0 + 1)
                var sum = SIMD4<UInt32>.zero
                for yy in y0..<y1 { for xx in x0..<x1 { sum &+= Resize.split(input.pixels[yy * sw + xx]) } }
                let n = UInt32((x1 - x0) * (y1 - y0))
                return Resize.join((sum &+ n / 2) / n)
            }
            let nx = Resize.centre(x, sw, dw), ny = Resize.centre(y, sh, dh)
            let x0 = nx >> 8, y0 = ny >> 8
            let fx = SIMD4<UInt32>(repeating: UInt32(nx & 255)), fy = SIMD4<UInt32>(repeating: UInt32(ny & 255))
            let one = SIMD4<UInt32>(repeating: 256), half = SIMD4<UInt32>(repeating: 32768)
            let p00 = Resize.split(input.at(x0, y0)), p10 = Resize.split(input.at(x0 + 1, y0))
            let p01 = Resize.split(input.at(x0, y0 + 1)), p11 = Resize.split(input.at(x0 + 1, y0 + 1))
            let top: SIMD4<UInt32> = p00 &* (one &- fx) &+ p10 &* fx
            let bottom: SIMD4<UInt32> = p01 &* (one &- fx) &+ p11 &* fx
            let sum: SIMD4<UInt32> = top &* (one &- fy) &+ bottom &* fy &+ half
            return Resize.join(sum &>> 16)
        }
    }

    /// `((2x + 1) * s * 128) / d - 128`: the source position in 1/256 pixels, as the shader computes it.
    static func centre(_ x: Int, _ s: Int, _ d: Int) -> Int {
        let numerator: Int = (2 * x + 1) * s * 128
        return numerator / d - 128
    }

    static func split(_ p: UInt32) -> SIMD4<UInt32> { [Px.r(p), Px.g(p), Px.b(p), Px.a(p)] }
    static func join(_ c: SIMD4<UInt32>) -> UInt32 { Px.pack(c.x, c.y, c.z, c.w) }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .resize, spec: [area ? 1 : 0])
    }
}
