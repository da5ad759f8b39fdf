import Foundation
import GraniteGPU

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

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .drive, a: SIMD4(Int32(amplitude), Int32(period), Int32(smear), 0))
    }
}
