#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "yuv.glsl"
// One pass of a separable gaussian, BLOCK outputs per invocation along the pass: the
// invocation loads BLOCK + 2*RADIUS pixels once into registers and slides the kernel over them,
// so each source pixel is read about once instead of 2*RADIUS+1 times (buffer reads dominate on
// lavapipe). Same 8-bit fixed point as blur.comp: (R,B) and (G,A) in 16-bit lanes, Q8 weights
// as specialization constants. DIR 0 rows (blocks along x), 1 columns (blocks along y).
#include "blur_weights.glsl"

// VEC 1 (width % 4 == 0): rows move as uvec4 quads. DIR 0 then loads its window as quads (the
// edges replicate through the clamped first/last quad, see srcQuad), DIR 1 blurs one quad column
// (4 pixels) over BLOCK rows. YUYV (DIR 0, VEC 1, width % 8 == 0): the source is the camera's
// YUYV frame, converted while loading (1 limited range, 2 full), so no separate conversion pass.
layout(constant_id = 27) const int VEC = 0;
layout(constant_id = 28) const int YUYV = 0;

const int BLOCK = 16;
const uint M = 0x00ff00ffu;

// One gaussian output from the window around win[c] (2-channel SWAR, Q8 weights).
#define BLUR_AT(win, c, result) { \
        uint centre = win[c]; \
        uint even = (centre & M) * W[0], odd = ((centre >> 8) & M) * W[0]; \
        [[unroll]] for (int k = 1; k <= RADIUS; k++) { \
            uint a = win[c - k], b = win[c + k]; \
            even += ((a & M) + (b & M)) * W[k]; \
            odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k]; \
        } \
        result = (((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8); }

void main() {
    int w = pc.size.x, h = pc.size.y;
    uint W[25] = uint[25](W0, W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12, W13, W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24);
    if (VEC == 1 && DIR == 0) {
        int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
        if (x0 >= w || y >= h) return;
        uint win[BLOCK + 2 * 24];
        if (YUYV == 0) {
            const int LQ = (RADIUS + 3) / 4, NQ = BLOCK / 4 + 2 * LQ;
            uvec4 q[BLOCK / 4 + 2 * 6];
            int rowQuad = y * (w >> 2), q0 = (x0 >> 2) - LQ;
            [[unroll]] for (int k = 0; k < NQ; k++) q[k] = srcQuad(rowQuad, q0 + k, w >> 2);
            uint first = q[0].x, last = q[NQ - 1].w;
            [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) {
                int x = x0 - RADIUS + i, j = i + 4 * LQ - RADIUS;
                win[i] = x < 0 ? first : (x >= w ? last : q[j >> 2][j & 3]);
            }
        } else {
            const int LQ = (RADIUS + 7) / 8, NQ = BLOCK / 8 + 2 * LQ;
            uvec4 q[BLOCK / 8 + 2 * 3];
            int rowQuad = y * (w >> 3), q0 = (x0 >> 3) - LQ;
            [[unroll]] for (int k = 0; k < NQ; k++) q[k] = srcQuad(rowQuad, q0 + k, w >> 3);
            uint first = yuyvPixel(q[0].x, 0, YUYV - 1), last = yuyvPixel(q[NQ - 1].w, 1, YUYV - 1);
            [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) {
                int x = x0 - RADIUS + i, j = i + 8 * LQ - RADIUS;
                win[i] = x < 0 ? first : (x >= w ? last : yuyvPixel(q[j >> 3][(j & 7) >> 1], j & 1, YUYV - 1));
            }
        }
        uint res[BLOCK];
        [[unroll]] for (int n = 0; n < BLOCK; n++) BLUR_AT(win, n + RADIUS, res[n])
        int out0 = (y * w + x0) >> 2;
        [[unroll]] for (int k = 0; k < BLOCK / 4; k++) {
            if (x0 + 4 * k < w) dst4[out0 + k] = epilogue4(uvec4(res[4 * k], res[4 * k + 1], res[4 * k + 2], res[4 * k + 3]));
        }
        return;
    }
    if (VEC == 1) {
        // DIR 1: quad column qx, rows y0 ... y0 + BLOCK - 1.
        int quads = w >> 2, qx = int(gl_GlobalInvocationID.x), y0 = int(gl_GlobalInvocationID.y) * BLOCK;
        if (qx >= quads || y0 >= h) return;
        uvec4 win4[BLOCK + 2 * 24];
        [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) win4[i] = src4[clamp(y0 - RADIUS + i, 0, h - 1) * quads + qx];
        [[unroll]] for (int n = 0; n < BLOCK; n++) {
            if (y0 + n >= h) return;
            uvec4 centre = win4[n + RADIUS];
            uvec4 even = (centre & M) * W[0], odd = ((centre >> 8) & M) * W[0];
            [[unroll]] for (int k = 1; k <= RADIUS; k++) {
                uvec4 a = win4[n + RADIUS - k], b = win4[n + RADIUS + k];
                even += ((a & M) + (b & M)) * W[k];
                odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k];
            }
            dst4[(y0 + n) * quads + qx] = epilogue4((((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8));
        }
        return;
    }
    int x0 = int(gl_GlobalInvocationID.x) * (DIR == 0 ? BLOCK : 1);
    int y0 = int(gl_GlobalInvocationID.y) * (DIR == 0 ? 1 : BLOCK);
    if (x0 >= w || y0 >= h) return;
    uint win[BLOCK + 2 * 24];
    [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) {
        win[i] = DIR == 0 ? src[y0 * w + clamp(x0 - RADIUS + i, 0, w - 1)]
                          : src[clamp(y0 - RADIUS + i, 0, h - 1) * w + x0];
    }
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        int x = DIR == 0 ? x0 + n : x0, y = DIR == 0 ? y0 : y0 + n;
        if (x >= w || y >= h) return;
        uint c = win[n + RADIUS];
        uint even = (c & M) * W[0], odd = ((c >> 8) & M) * W[0];
        [[unroll]] for (int k = 1; k <= RADIUS; k++) {
            uint a = win[n + RADIUS - k], b = win[n + RADIUS + k];
            even += ((a & M) + (b & M)) * W[k];
            odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k];
        }
        dst[y * w + x] = epilogue((((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8));
    }
}
