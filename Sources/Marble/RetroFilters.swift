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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .analog, spec: [UInt32(blend)])
    }
}

/// Drive (`drive.comp`): rows sway on a triangle wave and smear as if moving fast. Integer only.
struct Drive: FilterKernel {
    let amplitude, period, smear: Int
    let speed, time: Float

    static let description = FilterDescription(
        name: "drive", summary: "Speed: rows sway and smear backwards as if the camera rushed forward.",
        parameters: [
            .init("amplitude", .int(min: 0, max: 128, default: 6), "sway in pixels"),
            .init("period", .int(min: 2, max: 4096, default: 48), "rows per sway"),
            .init("smear", .int(min: 1, max: 64, default: 6), "motion smear in pixels"),
            .init("speed", .float(min: 0, max: 2000, default: 60), "rows the sway moves per second"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (amplitude, period, smear) = (spec.int("amplitude"), spec.int("period"), spec.int("smear"))
        (speed, time) = (spec.float("speed"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let rows = (Double(max(0, time + now)) * Double(speed)).rounded(.down)
        return [Float(rows.truncatingRemainder(dividingBy: Double(period)))]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let phase = Int(env.floats[0])
        return input.map { x, y, _ in
            let t = (y + phase) % period
            let offset = (amplitude * 2 * abs(2 * t - period)) / period - amplitude
            var sum = SIMD4<UInt32>.zero
            for k in 0..<smear { sum &+= Resize.split(input.at(x + offset - k, y)) }
            return Resize.join((sum &+ UInt32(smear / 2)) / UInt32(smear))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .drive, a: SIMD4(Int32(amplitude), Int32(period), Int32(smear), 0))
    }
}

/// Vibes (`vibes.comp`): vibrance, a pulsing warm/cool push and a vignette.
struct Vibes: FilterKernel {
    let warmth, vignette, saturation, pulse, time: Float

    static let description = FilterDescription(
        name: "vibes", summary: "Mood grading: vibrance, a warm/cool push pulsing in time, vignette.",
        parameters: [
            .init("warmth", .float(min: -1, max: 1, default: 0.5), "warm (positive) or cool (negative)"),
            .init("vignette", .float(min: 0, max: 1, default: 0.4), "darkening towards the corners"),
            .init("saturation", .float(min: 0, max: 3, default: 1.3), "colour intensity"),
            .init("pulse", .float(min: 0, max: 10, default: 1), "warmth pulses per second"),
            .time,
        ])

    init(_ spec: FilterSpec) {
        (warmth, vignette, saturation) = (spec.float("warmth"), spec.float("vignette"), spec.float("saturation"))
        (pulse, time) = (spec.float("pulse"), spec.float("time"))
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let t = Double(time + now)
        return [Float(Double(warmth) * (0.75 + 0.25 * sin(2 * Double.pi * Double(pulse) * t))), vignette, saturation]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let w = Float(input.width), h = Float(input.height)
        return input.map { x, y, p in
            let o = SIMD3(Float(Px.r(p)), Float(Px.g(p)), Float(Px.b(p))) / 255
            let l = 0.299 * o.x + 0.587 * o.y + 0.114 * o.z
            var s = l + (o - l) * f[2]
            s.x += f[0] * 0.1
            s.z -= f[0] * 0.1
            let dx = (Float(x) + 0.5) / w - 0.5, dy = (Float(y) + 0.5) / h - 0.5
            s *= 1 - f[1] * (dx * dx + dy * dy) * 2
            return Px.pack(Px.unit(s.x), Px.unit(s.y), Px.unit(s.z), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .vibes)
    }
}

/// Polka (`polka.comp`): halftone dots whose area follows brightness. Integer only.
struct Polka: FilterKernel {
    let size: Int
    let white: Bool

    static let description = FilterDescription(
        name: "polka", summary: "Halftone polka dots in each cell's colour, sized by brightness.",
        parameters: [
            .init("size", .int(min: 2, max: 256, default: 12), "cell size in pixels"),
            .init("background", .choice(["white", "black"], default: "white"), "paper colour"),
        ])

    init(_ spec: FilterSpec) {
        size = spec.int("size")
        white = spec.choice("background") == "white"
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        input.map { x, y, p in
            let s = size
            let cx = (x / s) * s + s / 2, cy = (y / s) * s + s / 2
            let c = input.pixels[min(cy, input.height - 1) * input.width + min(cx, input.width - 1)]
            let l = white ? 255 - Px.luma(c) : Px.luma(c)
            let dx = x - cx, dy = y - cy
            if (dx * dx + dy * dy) * 4 * 255 <= l * s * s { return (c & 0x00ff_ffff) | (p & 0xff00_0000) }
            let bg: UInt32 = white ? 255 : 0
            return Px.pack(bg, bg, bg, Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .polka, a: SIMD4(Int32(size), white ? 1 : 0, 0, 0))
    }
}
