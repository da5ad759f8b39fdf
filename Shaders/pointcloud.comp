#version 450
// Depth point cloud, drawn from an orbit camera with an integer z-buffer, in three passes:
// MODE 0 projects every point once (kept in the z-buffer's second half) and takes the nearest
// depth per pixel (atomicMin); MODE 1 reads those very projections back, so a point's depth
// compares equal to itself whatever the compiler does with the float arithmetic, and the winning
// source index per pixel is the largest among the nearest (atomicMax: independent of scheduling);
// MODE 2 resolves (no point: transparent black, written).
// f: rotation (9, row-major), distance, focal, depth scale, point size.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const int MODE = 0;
layout(std430, set = 0, binding = 0) readonly buffer Source { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Destination { uint dst[]; };
#include "params.glsl"
layout(std430, set = 0, binding = 3) readonly buffer Depth { float depthMap[]; };
layout(std430, set = 0, binding = 4) buffer ZBuffer { uint zbuf[]; };
layout(push_constant) uniform Push { ivec4 size; ivec4 a; ivec4 b; } pc;
#include "pixels.glsl"

void main() {
    int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x, h = pc.size.y;
    if (x >= w || y >= h) return;
    int i = y * w + x;
    int n = w * h;
    if (MODE == 2) {
        uint winner = zbuf[n + i];
        dst[i] = winner == 0u ? 0u : (src[winner - 1u] | 0xff000000u);
        return;
    }
    int size = int(F(12));
    if (MODE == 1) {
        uint target = zbuf[2 * n + i];
        if (target == 0xffffffffu) return;
        uint zq = zbuf[3 * n + i];
        int ix = int(target % uint(w)), iy = int(target / uint(w));
        for (int oy = 0; oy < size; oy++) {
            for (int ox = 0; ox < size; ox++) {
                int tx = ix + ox, ty = iy + oy;
                if (tx >= w || ty >= h) continue;
                int t = ty * w + tx;
                if (zbuf[t] == zq) atomicMax(zbuf[n + t], uint(i + 1));
            }
        }
        return;
    }
    zbuf[2 * n + i] = 0xffffffffu;  // culled unless projected below
    precise float d = pc.b.z == 0 ? float(luma8(unpackPx(src[i]))) / 255.0
                                  : depthMap[((y * pc.b.w) / h) * pc.b.z + (x * pc.b.z) / w];
    precise float half_h = float(h) * 0.5;
    precise float px = (float(x) + 0.5 - float(w) * 0.5) / half_h;
    precise float py = (float(y) + 0.5 - half_h) / half_h;
    precise float pz = (d - 0.5) * F(11);
    precise float rx = F(0) * px + F(1) * py + F(2) * pz;
    precise float ry = F(3) * px + F(4) * py + F(5) * pz;
    precise float rz = F(6) * px + F(7) * py + F(8) * pz + F(9);
    if (rz < 0.05) return;
    precise float sx = rx * F(10) / rz * half_h + float(w) * 0.5;
    precise float sy = ry * F(10) / rz * half_h + half_h;
    if (!(sx >= 0.0 && sy >= 0.0 && sx < float(w) && sy < float(h))) return;
    int ix = int(sx), iy = int(sy);
    uint zq = uint(min(rz * 4096.0, 4.0e9));
    zbuf[2 * n + i] = uint(iy * w + ix);
    zbuf[3 * n + i] = zq;
    for (int oy = 0; oy < size; oy++) {
        for (int ox = 0; ox < size; ox++) {
            int tx = ix + ox, ty = iy + oy;
            if (tx >= w || ty >= h) continue;
            atomicMin(zbuf[ty * w + tx], zq);
        }
    }
}
