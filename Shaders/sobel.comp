#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Sobel on integer luma, BLOCK pixels of a row per invocation: the three rows' lumas are read
// once into registers (3 x (BLOCK + 2) reads instead of 9 x BLOCK).
// MODE 0 (edges): gray magnitude * f[0], alpha kept.
// MODE 1 (ink): posterise to pc.a.x levels and draw ink (pc.b.rgb) where |g|^2 > pc.a.y, on paper pc.b.w.
layout(constant_id = 0) const int MODE = 0;
const int BLOCK = 8;

void main() {
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x, h = pc.size.y;
    if (x0 >= w || y >= h) return;
    int above = max(y - 1, 0) * w, row = y * w, below = min(y + 1, h - 1) * w;
    int top[BLOCK + 2], mid[BLOCK + 2], bottom[BLOCK + 2];
    uint centre[BLOCK + 2];
    [[unroll]] for (int i = 0; i < BLOCK + 2; i++) {
        int xi = clamp(x0 - 1 + i, 0, w - 1);
        top[i] = luma8(unpackPx(src[above + xi]));
        centre[i] = src[row + xi];
        mid[i] = luma8(unpackPx(centre[i]));
        bottom[i] = luma8(unpackPx(src[below + xi]));
    }
    uvec3 paper = uvec3(pc.b.w & 255, (pc.b.w >> 8) & 255, (pc.b.w >> 16) & 255);
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        int x = x0 + n;
        if (x >= w) return;
        int gx = (top[n + 2] + 2 * mid[n + 2] + bottom[n + 2]) - (top[n] + 2 * mid[n] + bottom[n]);
        int gy = (bottom[n] + 2 * bottom[n + 1] + bottom[n + 2]) - (top[n] + 2 * top[n + 1] + top[n + 2]);
        int m2 = gx * gx + gy * gy;
        uvec4 c = unpackPx(centre[n + 1]);
        if (MODE == 0) {
            uint m = uint(min(sqrt(float(m2)) * f[0] + 0.5, 255.0));
            dst[row + x] = epilogue(packPx(uvec4(m, m, m, c.a)));
        } else if (m2 > pc.a.y) {
            dst[row + x] = epilogue(packPx(uvec4(uvec3(pc.b.xyz), c.a)));
        } else {
            // q * 255 / (levels - 1) without an integer division (scalar on CPU drivers): the
            // true quotient is an integer or at least 1/15 above one, so +0.01 then truncating is exact.
            uvec3 q = (c.rgb * uint(pc.a.x)) >> 8;
            uvec3 p = uvec3(vec3(q * 255u) * (1.0 / float(pc.a.x - 1)) + 0.01);
            dst[row + x] = epilogue(packPx(uvec4((p * 3u + paper) >> 2, c.a)));
        }
    }
}
