import Foundation
import GraniteGPU

/// God rays (`godray.comp`): light shafts from a (gently moving) light point.
///
/// ```
///  src ─half-res light map (color · luma²)─► light (storage image) ─march 24 steps to the light─► rays ─add─► dst
/// ```
/// Rows of whole quads march and add in one pass (the rays stay in registers).
///
/// What it computes, for a W×H image at time t (the definition `scripts/marble/oracle.py` follows):
/// - the light sits at (x + wobble·sin t, y + wobble·cos 0.7t) in fractions of W and H;
/// - a half-resolution light map, ⌈W/2⌉×⌈H/2⌉: texel (i, j) is the colour of source pixel
///   (2i, 2j) (clamped to the image) times its BT.601 luma², luma in 0…1, rounded;
/// - for each texel p the rays march N = 24 steps from p towards the light (in half-resolution
///   pixels), each step (p − light) · density / N long; step k (1…N) reads the light map texel the
///   point falls in (clamped to the map) weighted by weight · decay^(k−1); the sum times exposure / N,
///   rounded and clamped to 255, is the ray colour;
/// - each output pixel is its source pixel plus the ray of the texel it falls in, clamped to 255,
///   alpha kept.
/// Positions are fixed point (1/256 pixel; the step's offset from the light in whole pixels) so
/// that every device samples the same texels.
struct GodRay: FilterKernel {
    static let samples = 24
    let x, y, decay, weight, exposure, density, wobble, time: Float

    static let description = FilterDescription(
        name: "godRay", summary: "Light shafts streaming from a light point through bright areas.",
        parameters: [
            .init("x", .float(min: 0, max: 1, default: 0.5), "light position, fraction of width"),
            .init("y", .float(min: 0, max: 1, default: 0.25), "light position, fraction of height"),
            .init("decay", .float(min: 0.5, max: 1, default: 0.95), "light falloff per step"),
            .init("weight", .float(min: 0, max: 4, default: 0.6), "strength of each step"),
            .init("exposure", .float(min: 0, max: 4, default: 1), "overall gain of the rays"),
            .init("density", .float(min: 0, max: 1, default: 0.6), "how far towards the light the rays reach"),
            .init("wobble", .float(min: 0, max: 0.2, default: 0.03), "how far the light sways with time"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (x, y, decay, weight) = (spec.float("x"), spec.float("y"), spec.float("decay"), spec.float("weight"))
        (exposure, density, wobble, time) = (spec.float("exposure"), spec.float("density"), spec.float("wobble"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(time + now)
        let lx = (Double(x) + Double(wobble) * sin(t)) * Double(size.width) * 256
        let ly = (Double(y) + Double(wobble) * cos(t * 0.7)) * Double(size.height) * 256
        return [decay, weight, exposure, Float(lx.rounded(.down)), Float(ly.rounded(.down)), Float((Double(density) * 256).rounded(.down))]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let samples = GodRay.samples
        let hw = (input.width + 1) / 2, hh = (input.height + 1) / 2
        let light = RGBAPlane.generate(width: hw, height: hh) { x, y in
            let c = input.pixels[min(2 * y, input.height - 1) * input.width + min(2 * x, input.width - 1)]
            let l = Float(Px.luma(c)) / 255
            let v = SIMD3(Float(Px.r(c)), Float(Px.g(c)), Float(Px.b(c))) * (l * l) + 0.5
            return Px.pack(UInt32(v.x), UInt32(v.y), UInt32(v.z), 255)
        }
        let rays = RGBAPlane.generate(width: hw, height: hh) { x, y in
            var px = x << 8, py = y << 8
            let density = Int(f[5])
            let stepX = ((px - Int(f[3]) / 2) / 256 * density) / samples
            let stepY = ((py - Int(f[4]) / 2) / 256 * density) / samples
            var acc = SIMD3<Float>.zero
            var illumination: Float = 1
            for _ in 0..<samples {
                px -= stepX
                py -= stepY
                let c = light.at(px >> 8, py >> 8)
                acc += SIMD3(Float(Px.r(c)), Float(Px.g(c)), Float(Px.b(c))) * (illumination * f[1])
                illumination *= f[0]
            }
            let r = acc * (f[2] / Float(samples))
            return Px.pack(Px.byte(r.x), Px.byte(r.y), Px.byte(r.z), 255)
        }
        return input.map { x, y, p in
            let ray = rays.pixels[(y / 2) * hw + x / 2]
            return Px.pack(min(Px.r(p) + Px.r(ray), 255), min(Px.g(p) + Px.g(ray), 255), min(Px.b(p) + Px.b(ray), 255), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let half = (width: (io.sourceSize.width + 1) / 2, height: (io.sourceSize.height + 1) / 2)
        let light = try io.scratchImage(half.width, half.height)
        let samples = UInt32(GodRay.samples)
        try io.dispatch(&recorder, .godRay, spec: [samples, 2], destinationSize: half, images: [light])
        recorder.barrier()
        if StepIO.quadRows(io.sourceSize.width) {
            // March and add in one pass: each invocation covers a 4x2 block (two half-resolution pixels).
            try io.dispatch(&recorder, .godRay, spec: [samples, 3], tile: (4 * 64, 2), images: [light])
            return
        }
        let rays = BufferSlice(try io.scratch(half.width * half.height * 4))
        try io.dispatch(&recorder, .godRay, spec: [samples, 0], destination: rays, sourceSize: half, destinationSize: half,
                        images: [light])
        recorder.barrier()
        try io.dispatch(&recorder, .godRay, spec: [samples, 1], aux: rays, images: [light])
    }
}
