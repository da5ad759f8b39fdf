import Foundation
import GraniteGPU

/// Non-linear per-pixel color filters (`color.comp` MODE 1...4): gamma, grayscale, invert, threshold.
struct PointColor: FilterKernel {
    enum Mode: UInt32 { case gamma = 1, grayscale, invert, threshold }
    let mode: Mode
    let value: Float
    let level: Int

    static let gamma = FilterDescription(
        name: "gamma", summary: "Gamma correction: out = in^(1/gamma).",
        parameters: [.init("gamma", .float(min: 0.1, max: 10, default: 1), "gamma; above 1 brightens")])
    static let grayscale = FilterDescription(name: "grayscale", summary: "BT.601 luma to grey (integer).", parameters: [])
    static let invert = FilterDescription(name: "invert", summary: "Inverts red, green and blue; keeps alpha.", parameters: [])
    static let threshold = FilterDescription(
        name: "threshold", summary: "White where luma >= level, black elsewhere.",
        parameters: [.init("level", .float(min: 0, max: 1, default: 0.5), "luma threshold")])

    init(mode: Mode, spec: FilterSpec) {
        self.mode = mode
        value = mode == .gamma ? 1 / spec.float("gamma") : 0
        level = mode == .threshold ? Int((spec.float("level") * 255).rounded()) : 0
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [value] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let exponent = env.floats[0]
        return input.map { _, _, p in
            switch mode {
            case .gamma:
                let channel = { (c: UInt32) in Px.unit(powf(Float(c) / 255, exponent)) }
                return Px.pack(channel(Px.r(p)), channel(Px.g(p)), channel(Px.b(p)), Px.a(p))
            case .grayscale:
                let l = UInt32(Px.luma(p))
                return Px.pack(l, l, l, Px.a(p))
            case .invert:
                return (~p & 0x00ff_ffff) | (p & 0xff00_0000)
            case .threshold:
                let l: UInt32 = Px.luma(p) >= level ? 255 : 0
                return Px.pack(l, l, l, Px.a(p))
            }
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .color, spec: [mode.rawValue], a: SIMD4(Int32(level), 0, 0, 0), tile: (64 * 4, 1))
    }
}
