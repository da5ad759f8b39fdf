import Foundation
import GraniteGPU

/// Polka (`polka.comp`): halftone dots whose area follows brightness. Integer only.
struct Polka: FilterKernel {
    let size: Int
    let white: Bool

    static let description = FilterDescription(
        name: "polka", summary: "Halftone polka dots in each cell's color, sized by brightness.",
        parameters: [
            .init("size", .int(min: 2, max: 256, default: 12), "cell size in pixels"),
            .init("background", .choice(["white", "black"], default: "white"), "paper color"),
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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .polka, a: SIMD4(Int32(size), white ? 1 : 0, 0, 0))
    }
}
