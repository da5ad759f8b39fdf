import Foundation
import GraniteGPU

/// Depth point cloud (`pointcloud.comp`): every pixel lifted to 3-D by its depth and drawn from
/// an orbit camera, nearest point winning; pixels no point reaches are transparent black.
///
/// ```
///  fill z=∞, index=0 ─► pass 0: project each point once (kept), atomicMin depth
///                    ─► pass 1: from the kept projections, atomicMax index of the winners ─► pass 2: resolve colors
/// ```
/// Ties between points that land on one pixel at one depth go to the larger source index on every
/// device: the nearest depth and the largest index do not depend on the order threads run in, and
/// pass 1 compares the very depths pass 0 wrote (no second projection a compiler could round
/// differently).
struct PointCloud: FilterKernel {
    let yaw, pitch, distance, fov, depthScale, spin, time: Float
    let pointSize: Int

    static let description = FilterDescription(
        name: "depth", summary: "Point cloud from the depth map and the image, seen from an orbit camera.",
        parameters: [
            .init("yaw", .float(min: -180, max: 180, default: 25), "orbit angle around the vertical axis, degrees"),
            .init("pitch", .float(min: -89, max: 89, default: 15), "orbit elevation, degrees"),
            .init("distance", .float(min: 0.5, max: 20, default: 3), "camera distance from the centre"),
            .init("fov", .float(min: 10, max: 150, default: 50), "vertical field of view, degrees"),
            .init("depthScale", .float(min: 0, max: 8, default: 1), "depth relief"),
            .init("pointSize", .int(min: 1, max: 8, default: 2), "point size in pixels"),
            .init("spin", .float(min: -360, max: 360, default: 0), "yaw change per second, degrees"),
            .time,
        ])

    /// The point cloud has its own shader layout, with no epilogue.
    var acceptsEpilogue: Bool { false }

    init(_ spec: FilterSpec) {
        (yaw, pitch, distance, fov) = (spec.float("yaw"), spec.float("pitch"), spec.float("distance"), spec.float("fov"))
        (depthScale, spin, time) = (spec.float("depthScale"), spec.float("spin"), spec.float("time"))
        pointSize = spec.int("pointSize")
    }

    func floats(time now: Float, size: (width: Int, height: Int)) -> [Float] {
        let yawR = (Double(yaw) + Double(spin) * Double(time + now)) * .pi / 180, pitchR = Double(pitch) * .pi / 180
        let (cy, sy, cp, sp) = (cos(yawR), sin(yawR), cos(pitchR), sin(pitchR))
        // R = Rx(pitch) · Ry(yaw)
        let rotation = [cy, 0, sy, sp * sy, cp, -sp * cy, -cp * sy, sp, cp * cy]
        let focal = 1 / tan(Double(fov) * .pi / 360)
        return rotation.map(Float.init) + [distance, Float(focal), depthScale, Float(pointSize)]
    }

    func cpu(_ input: RGBAPlane, _ env: CPUEnvironment) -> RGBAPlane {
        let f = env.floats
        let w = input.width, h = input.height
        var z = [UInt32](repeating: .max, count: w * h)
        var winner = [UInt32](repeating: 0, count: w * h)
        for pass in 0..<2 {
            for y in 0..<h {
                for x in 0..<w {
                    guard let (ix, iy, zq) = project(x, y, input, env) else { continue }
                    for oy in 0..<Int(f[12]) {
                        for ox in 0..<Int(f[12]) where ix + ox < w && iy + oy < h {
                            let t = (iy + oy) * w + ix + ox
                            if pass == 0 { z[t] = min(z[t], zq) } else if z[t] == zq { winner[t] = max(winner[t], UInt32(y * w + x + 1)) }
                        }
                    }
                }
            }
        }
        return RGBAPlane(width: w, height: h, pixels: winner.map { $0 == 0 ? 0 : input.pixels[Int($0) - 1] | 0xff00_0000 })
    }

    /// The pixel a source pixel lands on and its quantised depth, operation for operation as the shader.
    private func project(_ x: Int, _ y: Int, _ input: RGBAPlane, _ env: CPUEnvironment) -> (Int, Int, UInt32)? {
        let f = env.floats
        let w = input.width, h = input.height
        let d = DepthMask.depth(input, env.depth, x, y)
        let halfH = Float(h) * 0.5
        let px = (Float(x) + 0.5 - Float(w) * 0.5) / halfH
        let py = (Float(y) + 0.5 - halfH) / halfH
        let pz = (d - 0.5) * f[11]
        let rx = f[0] * px + f[1] * py + f[2] * pz
        let ry = f[3] * px + f[4] * py + f[5] * pz
        let rz = f[6] * px + f[7] * py + f[8] * pz + f[9]
        guard rz >= 0.05 else { return nil }
        let sx = rx * f[10] / rz * halfH + Float(w) * 0.5
        let sy = ry * f[10] / rz * halfH + halfH
        guard sx >= 0, sy >= 0, sx < Float(w), sy < Float(h) else { return nil }
        return (Int(sx), Int(sy), UInt32(min(rz * 4096, 4.0e9)))
    }

    var readsDepth: Bool { true }

    func record(_ recorder: inout CommandRecorder, _ io: StepIO) throws(GPUError) {
        let w = io.sourceSize.width, h = io.sourceSize.height
        // Four planes: nearest depth, winning index, each point's target pixel, each point's depth.
        let zbuffer = try io.scratch(w * h * 16)
        recorder.fill(BufferSlice(zbuffer, offset: 0, size: w * h * 4), value: .max)
        recorder.fill(BufferSlice(zbuffer, offset: w * h * 4, size: w * h * 4), value: 0)
        recorder.barrier()
        let push = [UInt32(w), UInt32(h), UInt32(w), UInt32(h), 0, 0, 0, 0,
                    0, 0, UInt32(io.depthSize.width), UInt32(io.depthSize.height)]
        for mode: UInt32 in 0...2 {
            let pipeline = try io.context.pipeline(named: Shader.pointCloud.name, spirv: Shader.pointCloud.words,
                                                   layout: [.buffer, .buffer, .uniform, .buffer, .buffer], specialization: [mode])
            try recorder.dispatch(pipeline, bindings: [.buffer(io.source), .buffer(io.destination), .uniform(io.params), .buffer(io.depth),
                                                       .buffer(BufferSlice(zbuffer))], push: push, groups: ((w + 63) / 64, h, 1))
            if mode < 2 { recorder.barrier() }
        }
    }
}
