import Foundation
import GraniteGPU

/// Affine color filters (`color.comp` MODE 0): brightness/contrast/saturation, exposure, color matrix.
///
/// The matrix is fixed per chain, so it travels as specialization constants (folded into the
/// shader); `floats` still returns it for the CPU reference.
struct AffineColor: FilterKernel {
    /// Row-major 3×3 matrix then the offset, on the 0...1 scale.
    let matrix: [Float]
    /// The matrix that changes nothing (the epilogue's defaults in `common.glsl`).
    static let identity: [Float] = [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]

    static let brightness = FilterDescription(
        name: "brightness", summary: "Brightness, contrast and saturation in one color matrix.",
        parameters: [
            .init("amount", .float(min: -1, max: 1, default: 0), "added brightness"),
            .init("contrast", .float(min: 0, max: 4, default: 1), "contrast around mid-grey"),
            .init("saturation", .float(min: 0, max: 4, default: 1), "0 = grey, 1 = unchanged"),
        ])
    static let exposure = FilterDescription(
        name: "exposure", summary: "Exposure in stops (multiplies by 2^ev).",
        parameters: [.init("ev", .float(min: -8, max: 8, default: 0), "stops")])
    static let colorMatrix = FilterDescription(
        name: "colormatrix", summary: "Mixes channels: out.r = rr*r + rg*g + rb*b (like ffmpeg colorchannelmixer).",
        parameters: ["rr", "rg", "rb", "gr", "gg", "gb", "br", "bg", "bb"].map { name in
            .init(name, .float(min: -2, max: 2, default: name.first == name.last ? 1 : 0), "weight of \(name.last!) in \(name.first!)")
        })

    init(brightness spec: FilterSpec) {
        let s = spec.float("saturation"), c = spec.float("contrast"), amount = spec.float("amount")
        let weights: [Float] = [0.299, 0.587, 0.114]
        var m = [Float](repeating: 0, count: 12)
        for row in 0..<3 {
            for column in 0..<3 {
                let saturated = (row == column ? s : 0) + (1 - s) * weights[column]
                m[row * 3 + column] = c * saturated
            }
            m[9 + row] = 0.5 * (1 - c) + amount
        }
        matrix = m
    }

    init(exposure spec: FilterSpec) {
        let gain = Float(pow(2.0, Double(spec.float("ev"))))
        matrix = [gain, 0, 0, 0, gain, 0, 0, 0, gain, 0, 0, 0]
    }

    init(colorMatrix spec: FilterSpec) {
        matrix = ["rr", "rg", "rb", "gr", "gg", "gb", "br", "bg", "bb"].map { spec.float($0) } + [0, 0, 0]
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { matrix }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        return input.map { _, _, p in
            let r = Float(Px.r(p)) / 255, g = Float(Px.g(p)) / 255, b = Float(Px.b(p)) / 255
            let outR = f[0] * r + f[1] * g + f[2] * b + f[9]
            let outG = f[3] * r + f[4] * g + f[5] * b + f[10]
            let outB = f[6] * r + f[7] * g + f[8] * b + f[11]
            return Px.pack(Px.unit(outR), Px.unit(outG), Px.unit(outB), Px.a(p))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .color, spec: [0] + matrix.map(\.bitPattern), tile: (64 * 4, 1))
    }
}
