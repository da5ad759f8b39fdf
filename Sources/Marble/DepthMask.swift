import Foundation
import GraniteGPU

/// Alpha mask by depth (`depthmask.comp`): keeps pixels whose depth lies in [near, far] and
/// writes every other pixel as transparent black. Without a depth map, luma / 255 is the depth.
struct DepthMask: FilterKernel {
    let near, far: Float

    static let description = FilterDescription(
        name: "depthmask", summary: "Keeps pixels with depth in [near, far]; the rest become transparent black.",
        parameters: [
            .init("near", .float(min: 0, max: 10000, default: 0), "smallest depth kept"),
            .init("far", .float(min: 0, max: 10000, default: 0.5), "largest depth kept"),
        ])

    init(_ spec: FilterSpec) throws(MarbleError) {
        (near, far) = (spec.float("near"), spec.float("far"))
        guard near <= far else {
            throw MarbleError.invalidValue(filter: "depthmask", parameter: "near", value: "\(near)", valid: "a number <= far (\(far))")
        }
    }

    func floats(time: Float, size: (width: Int, height: Int)) -> [Float] { [near, far] }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        input.map { x, y, p in
            let d = DepthMask.depth(input, env.depth, x, y)
            return d >= env.floats[0] && d <= env.floats[1] ? p : 0
        }
    }

    /// The depth the shaders' `depthAt` reads.
    static func depth(_ input: RGBAPlane, _ map: DepthPlane?, _ x: Int, _ y: Int) -> Float {
        guard let map else { return Float(Px.luma(input.pixels[y * input.width + x])) / 255 }
        return map.sample(x, y, input.width, input.height)
    }

    var readsDepth: Bool { true }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        try io.dispatch(&recorder, .depthMask, b: SIMD4(0, 0, Int32(io.depthSize.width), Int32(io.depthSize.height)))
    }
}
