#version 450
#extension GL_EXT_control_flow_attributes : require
#define SOURCE_TEXELS
#include "common.glsl"
#include "yuv.glsl"
#include "blur_quad.glsl"
// The row pass of the quad-row gaussian: BLOCK pixels of a row an invocation, the window read as
// quads through a quad texel view of the source (binding 4; edges replicate through the clamped
// first/last quad, see srcQuad) and slid over in registers, results written as quads.
// YUYV (width % 8 == 0): the source is the camera's YUYV frame, converted while loading
// (1 limited range, 2 full), so the chain needs no conversion pass.
layout(constant_id = 28) const int YUYV = 0;

void main() {
    BLUR_WEIGHTS;
    int w = pc.size.x, h = pc.size.y;
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
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        uint centre = win[n + RADIUS];
        uint even = (centre & M) * W[0], odd = ((centre >> 8) & M) * W[0];
        [[unroll]] for (int k = 1; k <= RADIUS; k++) {
            uint a = win[n + RADIUS - k], b = win[n + RADIUS + k];
            even += ((a & M) + (b & M)) * W[k];
            odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k];
        }
        res[n] = (((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8);
    }
    int out0 = (y * w + x0) >> 2;
    [[unroll]] for (int k = 0; k < BLOCK / 4; k++) {
        if (x0 + 4 * k < w) dst4[out0 + k] = epilogue4(uvec4(res[4 * k], res[4 * k + 1], res[4 * k + 2], res[4 * k + 3]));
    }
}
