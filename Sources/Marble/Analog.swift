import Foundation
import GraniteGPU

/// Analog video (`analog.comp`): chroma shift, torn rows, scanlines and noise, blended four ways.
struct Analog: FilterKernel {
    static let blends = ["normal", "screen", "multiply", "overlay"]
    let blend: Int
    let intensity, scanlines, time: Float
    let shift: Int

    static let description = FilterDescription(
        name: "analog", summary: "Analog video look: chroma shift, torn rows, scanlines and noise.",
        parameters: [
            .init("intensity", .float(min: 0, max: 1, default: 0.6), "mix of the effect"),
            .init("blend", .choice(blends, default: "screen"), "how the effect is blended over the image"),
            .init("scanlines", .float(min: 0, max: 1, default: 0.25), "darkening of every other row"),
            .init("shift", .int(min: 0, max: 32, default: 3), "chroma shift in pixels"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        blend = Analog.blends.firstIndex(of: spec.choice("blend"))!
        (intensity, scanlines, time, shift) = (spec.float("intensity"), spec.float("scanlines"), spec.float("time"), spec.int("shift"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(max(0, time + now))
        let frame = (t * 30).rounded(.down).truncatingRemainder(dividingBy: 16_777_216)
        let wobble = (Double(shift) * (0.6 + 0.4 * sin(t * 2))).rounded()
        return [intensity, 1 - scanlines, Float(frame), Float(wobble)]
    }

    private func blendChannel(_ o: Float, _ e: Float) -> Float {
        switch blend {
        case 1: return 1 - (1 - o) * (1 - e)
        case 2: return o * e
        case 3: return o < 0.5 ? 2 * o * e : 1 - 2 * (1 - o) * (1 - e)
        default: return e
        }
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let seed = UInt32(f[2]), shift = Int(f[3])
        return input.map { x, y, p in
            let row = Px.hash(UInt32(y) &* 747_796_405 &+ seed)
            let sx = x + ((row & 255) < 10 ? Int((row >> 8) & 7) - 3 : 0)
            let base = input.at(sx, y)
            var e = SIMD3(Float(Px.r(input.at(sx + shift, y))), Float(Px.g(base)), Float(Px.b(input.at(sx - shift, y)))) / 255
            if y & 1 == 1 { e *= f[1] }
            let n = Float(Px.hash(UInt32(x) &+ UInt32(y) &* 65521 &+ seed &* 2_654_435_761) & 255) / 255 - 0.5
            e = (e + n * 0.12).clamped(lowerBound: .zero, upperBound: .one)
            let o = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) / 255
            let b = SIMD3(blendChannel(o.x, e.x), blendChannel(o.y, e.y), blendChannel(o.z, e.z))
            let r = o + (b - o) * f[0]
            return Px.pack(Px.unit(r.x), Px.unit(r.y), Px.unit(r.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let quads = StepIO.quadRows(io.sourceSize.width)
        let pixels = BufferSlice(io.source.buffer, offset: io.source.offset, size: io.sourceSize.width * io.sourceSize.height * 4)
        try io.dispatch(&recorder, .analog, spec: [UInt32(blend), quads ? 1 : 0],
                        tile: quads ? (16 * 16, 4) : (64 * 8, 1), local: quads ? (16, 4) : (64, 1), texels: [pixels])
    }
}
