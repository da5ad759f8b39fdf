import Foundation
import GraniteGPU

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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .bokeh, spec: [UInt32(radius)])
    }
}
