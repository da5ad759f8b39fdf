import Foundation
import GraniteGPU

/// Separable gaussian blur (any sigma) and the unsharp-mask sharpen built on it.
///
/// ```
///  src ─blur rows─► tmp ─blur columns─► dst                    (blur)
///  src ─blur rows─► tmp ─blur columns─► blurred ─unsharp(src)─► dst   (sharpen)
/// ```
/// Each 1-D pass rounds to 8 bits, in the CPU reference too.
struct GaussianBlur: FilterKernel {
    let weights: [Float]
    let amount: Float?

    static let blur = FilterDescription(
        name: "blur", summary: "Separable gaussian blur of any sigma (radius 3 sigma).",
        parameters: [.init("sigma", .float(min: 0.1, max: 32, default: 2), "standard deviation in pixels")])
    static let sharpen = FilterDescription(
        name: "sharpen", summary: "Unsharp mask: adds amount times the difference from a gaussian blur.",
        parameters: [
            .init("amount", .float(min: 0, max: 5, default: 1), "strength"),
            .init("sigma", .float(min: 0.1, max: 16, default: 1), "blur sigma of the mask"),
        ])

    init(sigma: Float, amount: Float? = nil) {
        let radius = max(1, Int((3 * Double(sigma)).rounded(.up)))
        let raw = (0...radius).map { exp(-Double($0 * $0) / (2 * Double(sigma) * Double(sigma))) }
        let total = raw[0] + 2 * raw.dropFirst().reduce(0, +)
        weights = raw.map { Float($0 / total) }
        self.amount = amount
    }

    var radius: Int { weights.count - 1 }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [amount ?? 0] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let blurred = pass(pass(input, vertical: false), vertical: true)
        guard let amount else { return blurred }
        return input.map { x, y, p in
            let o = Px.channels(p), b = Px.channels(blurred.pixels[y * input.width + x])
            let r = o + amount * (o - b)
            return Px.pack(Px.byte(r.x), Px.byte(r.y), Px.byte(r.z), Px.a(p))
        }
    }

    private func pass(_ input: RGBAPlane, vertical: Bool) -> RGBAPlane {
        input.map { x, y, p in
            var acc = Px.channels(p) * weights[0]
            for k in 1..<weights.count {
                let a = vertical ? input.at(x, y - k) : input.at(x - k, y)
                let b = vertical ? input.at(x, y + k) : input.at(x + k, y)
                acc += (Px.channels(a) + Px.channels(b)) * weights[k]
            }
            let c = (acc + 0.5).replacing(with: 255, where: acc + 0.5 .> 255)
            return Px.pack(UInt32(c.x), UInt32(c.y), UInt32(c.z), UInt32(c.w))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        let bytes = io.sourceSize.width * io.sourceSize.height * 4
        let weightBuffer = try io.scratch(weights.count * 4)
        try weightBuffer.write(values: weights)
        let tmp = BufferSlice(try io.scratch(bytes))
        let radius = UInt32(radius)
        let blurred = amount == nil ? io.destination : BufferSlice(try io.scratch(bytes))
        try io.dispatch(&recorder, .blur, spec: [radius, 0], destination: tmp, aux: BufferSlice(weightBuffer))
        recorder.barrier()
        try io.dispatch(&recorder, .blur, spec: [radius, 1], source: tmp, destination: blurred, aux: BufferSlice(weightBuffer))
        if amount != nil {
            recorder.barrier()
            try io.dispatch(&recorder, .unsharp, source: blurred, aux: io.source)
        }
    }
}

/// Bokeh: a disc blur where highlights weigh more.
struct Bokeh: FilterKernel {
    let radius: Int
    let boost: Float

    static let description = FilterDescription(
        name: "bokeh", summary: "Lens bokeh: disc-shaped blur in which highlights bloom.",
        parameters: [
            .init("radius", .int(min: 1, max: 12, default: 4), "disc radius in pixels"),
            .init("boost", .float(min: 0, max: 20, default: 6), "extra weight of bright pixels"),
        ])

    init(_ spec: FilterSpec) {
        radius = spec.int("radius")
        boost = spec.float("boost")
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [boost] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let boost = env.floats[0]
        return input.map { x, y, _ in
            var acc = SIMD4<Float>.zero
            var total: Float = 0
            for dy in -radius...radius {
                for dx in -radius...radius where dx * dx + dy * dy <= radius * radius {
                    let c = input.at(x + dx, y + dy)
                    let l = Float(Px.luma(c)) / 255
                    let l2 = l * l
                    let weight = 1 + boost * (l2 * l2)
                    acc += Px.channels(c) * weight
                    total += weight
                }
            }
            let r = acc / total
            return Px.pack(Px.byte(r.x), Px.byte(r.y), Px.byte(r.z), Px.byte(r.w))
        }
    }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws {
        try io.dispatch(&recorder, .bokeh, spec: [UInt32(radius)])
    }
}
