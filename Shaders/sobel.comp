#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Sobel on integer luma, BLOCK pixels of a row per invocation: the three rows' lumas are read
// once into registers (3 x (BLOCK + 2) reads instead of 9 x BLOCK).
// MODE 0 (edges): gray magnitude * f[0], alpha kept.
// MODE 1 (ink): posterise to pc.a.x levels and draw ink (pc.b.rgb) where |g|^2 > pc.a.y, on paper pc.b.w.
// VEC 1 (width % 4 == 0): each row's BLOCK + 2 pixels come as 6 clamped quads (srcQuad), the
// results leave as 4 quads.
layout(constant_id = 0) const int MODE = 0;
layout(constant_id = 1) const int VEC = 0;
const int BLOCK = VEC == 1 ? 16 : 8;

uint sobelPixel(int top[18], int mid[18], int bottom[18], uint centre, int n, uvec3 paper) {
    int gx = (top[n + 2] + 2 * mid[n + 2] + bottom[n + 2]) - (top[n] + 2 * mid[n] + bottom[n]);
    int gy = (bottom[n] + 2 * bottom[n + 1] + bottom[n + 2]) - (top[n] + 2 * top[n + 1] + top[n + 2]);
    int m2 = gx * gx + gy * gy;
    uvec4 c = unpackPx(centre);
    if (MODE == 0) {
        uint m = uint(min(sqrt(float(m2)) * f[0] + 0.5, 255.0));
        return epilogue(packPx(uvec4(m, m, m, c.a)));
    }
    if (m2 > pc.a.y) return epilogue(packPx(uvec4(uvec3(pc.b.xyz), c.a)));
    // q * 255 / (levels - 1) without an integer division (scalar on CPU drivers): the
    // true quotient is an integer or at least 1/15 above one, so +0.01 then truncating is exact.
    uvec3 q = (c.rgb * uint(pc.a.x)) >> 8;
    uvec3 p = uvec3(vec3(q * 255u) * (1.0 / float(pc.a.x - 1)) + 0.01);
    return epilogue(packPx(uvec4((p * 3u + paper) >> 2, c.a)));
}

void main() {
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x, h = pc.size.y;
    if (x0 >= w || y >= h) return;
    int rows[3] = int[3](max(y - 1, 0), y, min(y + 1, h - 1));
    int top[18], mid[18], bottom[18];
    uint centre[18];
    if (VEC == 1) {
        int quads = w >> 2, q0 = (x0 >> 2) - 1;
        [[unroll]] for (int r = 0; r < 3; r++) {
            uvec4 q[6];
            [[unroll]] for (int k = 0; k < 6; k++) q[k] = srcQuad(rows[r] * quads, q0 + k, quads);
            [[unroll]] for (int i = 0; i < BLOCK + 2; i++) {
                int x = x0 - 1 + i, j = i + 3;
                uint p = x < 0 ? q[0].x : (x >= w ? q[5].w : q[j >> 2][j & 3]);
                int l = luma8(unpackPx(p));
                if (r == 0) top[i] = l;
                if (r == 1) { mid[i] = l; centre[i] = p; }
                if (r == 2) bottom[i] = l;
            }
        }
    } else {
        [[unroll]] for (int i = 0; i < BLOCK + 2; i++) {
            int xi = clamp(x0 - 1 + i, 0, w - 1);
            top[i] = luma8(unpackPx(src[rows[0] * w + xi]));
            centre[i] = src[rows[1] * w + xi];
            mid[i] = luma8(unpackPx(centre[i]));
            bottom[i] = luma8(unpackPx(src[rows[2] * w + xi]));
        }
    }
    uvec3 paper = uvec3(pc.b.w & 255, (pc.b.w >> 8) & 255, (pc.b.w >> 16) & 255);
    if (VEC == 1) {
        int out0 = (y * w + x0) >> 2;
        [[unroll]] for (int k = 0; k < BLOCK / 4; k++) {
            if (x0 + 4 * k < w) {
                dst4[out0 + k] = uvec4(sobelPixel(top, mid, bottom, centre[4 * k + 1], 4 * k, paper),
                                       sobelPixel(top, mid, bottom, centre[4 * k + 2], 4 * k + 1, paper),
                                       sobelPixel(top, mid, bottom, centre[4 * k + 3], 4 * k + 2, paper),
                                       sobelPixel(top, mid, bottom, centre[4 * k + 4], 4 * k + 3, paper));
            }
        }
        return;
    }
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        if (x0 + n >= w) return;
        dst[y * w + x0 + n] = sobelPixel(top, mid, bottom, centre[n + 1], n, paper);
    }
}
