// The body of sobel.comp and sobel_texels.comp (SOURCE_TEXELS: quads read through a texel view).
#include "common.glsl"
#include "yuv.glsl"
// Sobel on integer luma, BLOCK pixels of a row per invocation: the three rows' lumas are read
// once into registers (3 x (BLOCK + 2) reads instead of 9 x BLOCK).
// MODE 0 (edges): gray magnitude * F(0), alpha kept.
// MODE 1 (ink): posterise to pc.a.x levels and draw ink (pc.b.rgb) where |g|^2 > pc.a.y, on paper pc.b.w.
// VEC 1 (width % 4 == 0): 16 pixels x ROWS rows an invocation, walking down: each source row's
// 18 pixels come as 6 clamped quads (srcQuad) and have their lumas taken once, for the three
// output rows that need them (2 + 2/ROWS lumas a pixel instead of 3.4); results leave as quads.
// Separable form: v = top + 2 mid + bottom and d = bottom - top per column, then
// gx = v[n + 2] - v[n] and gy = d[n] + 2 d[n + 1] + d[n + 2].
layout(constant_id = 0) const int MODE = 0;
layout(constant_id = 1) const int VEC = 0;
// YUYV (VEC 1, width % 8 == 0): the source is the camera's YUYV frame, converted while loading
// (1 limited range, 2 full), so the chain needs no conversion pass.
layout(constant_id = 2) const int YUYV = 0;
const int BLOCK = 8;  // VEC 0; the VEC path takes 16 (a literal, so its loops unroll in the SPIR-V)
const int ROWS = 4;
#define EDGE_MODE MODE
#include "edge.glsl"

uint sobelPixel(int top[18], int mid[18], int bottom[18], uint centre, int n, uvec3 paper) {
    int gx = (top[n + 2] + 2 * mid[n + 2] + bottom[n + 2]) - (top[n] + 2 * mid[n] + bottom[n]);
    int gy = (bottom[n] + 2 * bottom[n + 1] + bottom[n + 2]) - (top[n] + 2 * top[n + 1] + top[n + 2]);
    return edgePixel(gx, gy, centre, paper);
}

// Row y's 18 pixels x0 - 1 ... x0 + 16 (clamped into the row) and their lumas.
void loadRow(int y, int x0, int w, out uint pixels[18], out int lumas[18]) {
    if (YUYV != 0) {
        // 4 quads of YUYV words (8 pixels each) cover x0 - 8 ... x0 + 23.
        int quads = w >> 3, q0 = (x0 >> 3) - 1;
        uvec4 q[4];
        [[unroll]] for (int k = 0; k < 4; k++) q[k] = srcQuad(y * quads, q0 + k, quads);
        uint first = yuyvPixel(q[0].x, 0, YUYV - 1), last = yuyvPixel(q[3].w, 1, YUYV - 1);
        [[unroll]] for (int i = 0; i < 18; i++) {
            int x = x0 - 1 + i, j = i + 7;
            pixels[i] = x < 0 ? first : (x >= w ? last : yuyvPixel(q[j >> 3][(j & 7) >> 1], j & 1, YUYV - 1));
            lumas[i] = luma8(unpackPx(pixels[i]));
        }
        return;
    }
    int quads = w >> 2, q0 = (x0 >> 2) - 1;
    uvec4 q[6];
    [[unroll]] for (int k = 0; k < 6; k++) q[k] = srcQuad(y * quads, q0 + k, quads);
    [[unroll]] for (int i = 0; i < 18; i++) {
        int x = x0 - 1 + i, j = i + 3;
        pixels[i] = x < 0 ? q[0].x : (x >= w ? q[5].w : q[j >> 2][j & 3]);
        lumas[i] = luma8(unpackPx(pixels[i]));
    }
}

void main() {
    int w = pc.size.x, h = pc.size.y;
    uvec3 paper = uvec3(pc.b.w & 255, (pc.b.w >> 8) & 255, (pc.b.w >> 16) & 255);
    if (VEC == 1) {
        int x0 = int(gl_GlobalInvocationID.x) * 16, y0 = int(gl_GlobalInvocationID.y) * ROWS;
        if (x0 >= w || y0 >= h) return;
        uint above[18], here[18], below[18];
        int top[18], mid[18], bottom[18];
        loadRow(max(y0 - 1, 0), x0, w, above, top);
        loadRow(y0, x0, w, here, mid);
        // No early exit inside the unrolled loops (a return keeps a loop and its arrays in memory).
        [[unroll]] for (int r = 0; r < ROWS; r++) {
            int y = min(y0 + r, h - 1);
            loadRow(min(y + 1, h - 1), x0, w, below, bottom);
            int v[18], d[18];
            [[unroll]] for (int i = 0; i < 18; i++) { v[i] = top[i] + 2 * mid[i] + bottom[i]; d[i] = bottom[i] - top[i]; }
            int out0 = (y * w + x0) >> 2;
            uint o[16];
            [[unroll]] for (int n = 0; n < 16; n++) o[n] = edgePixel(v[n + 2] - v[n], d[n] + 2 * d[n + 1] + d[n + 2], here[n + 1], paper);
            [[unroll]] for (int k = 0; k < 4; k++) {
                if (x0 + 4 * k < w && y0 + r < h) dst4[out0 + k] = uvec4(o[4 * k], o[4 * k + 1], o[4 * k + 2], o[4 * k + 3]);
            }
            top = mid;
            mid = bottom;
            here = below;
        }
        return;
    }
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    if (x0 >= w || y >= h) return;
    int rows[3] = int[3](max(y - 1, 0), y, min(y + 1, h - 1));
    int top[18], mid[18], bottom[18];
    uint centre[18];
    [[unroll]] for (int i = 0; i < BLOCK + 2; i++) {
        int xi = clamp(x0 - 1 + i, 0, w - 1);
        top[i] = luma8(unpackPx(src[rows[0] * w + xi]));
        centre[i] = src[rows[1] * w + xi];
        mid[i] = luma8(unpackPx(centre[i]));
        bottom[i] = luma8(unpackPx(src[rows[2] * w + xi]));
    }
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        if (x0 + n < w) dst[y * w + x0 + n] = sobelPixel(top, mid, bottom, centre[n + 1], n, paper);
    }
}
