#version 450
#extension GL_EXT_control_flow_attributes : require
#define SOURCE_TEXELS
#include "common.glsl"
#include "yuv.glsl"
#include "blur_quad.glsl"
// The whole separable gaussian in one dispatch, for CPU drivers (lavapipe): an invocation owns a
// strip 16 pixels wide and STRIP rows tall and walks down it. Each source row is blurred along x
// once (blurRow, quads through the quad texel view of binding 4, YUYV converted on the way in)
// and kept, split into its (R,B) and (G,A) lanes, in a window of the last 2*RADIUS+1 rows held in
// registers; the column pass then reads the window, so there is no intermediate image, no second
// dispatch and no barrier. Only the 2*RADIUS halo rows of each strip are blurred along x twice.
// Same 8-bit fixed point, same rounding after each direction as the two-pass shaders: exact.
// (GPUs keep the two-pass shaders: one invocation walking a strip suits a CPU's few threads.)
layout(constant_id = 28) const int YUYV = 0;
layout(constant_id = 29) const int STRIP = 64;

void main() {
    BLUR_WEIGHTS;
    int w = pc.size.x, h = pc.size.y;
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y0 = int(gl_GlobalInvocationID.y) * STRIP;
    if (x0 >= w || y0 >= h) return;
    const int TAPS = 2 * RADIUS + 1;
    // Row i of the window, quad q: even[i * 4 + q] = (R,B) lanes, odd = (G,A) lanes.
    uvec4 even[4 * (2 * 24 + 1)], odd[4 * (2 * 24 + 1)];
    uint row[BLOCK];
    [[unroll]] for (int i = 0; i < TAPS - 1; i++) {
        blurRow(clamp(y0 - RADIUS + i, 0, h - 1), x0, w, YUYV, row);
        [[unroll]] for (int q = 0; q < 4; q++) {
            uvec4 p = uvec4(row[4 * q], row[4 * q + 1], row[4 * q + 2], row[4 * q + 3]);
            even[4 * i + q] = p & M;
            odd[4 * i + q] = (p >> 8) & M;
        }
    }
    int rows = min(STRIP, h - y0), quads = w >> 2;
    for (int n = 0; n < rows; n++) {
        blurRow(min(y0 + n + RADIUS, h - 1), x0, w, YUYV, row);
        [[unroll]] for (int q = 0; q < 4; q++) {
            uvec4 p = uvec4(row[4 * q], row[4 * q + 1], row[4 * q + 2], row[4 * q + 3]);
            even[4 * (TAPS - 1) + q] = p & M;
            odd[4 * (TAPS - 1) + q] = (p >> 8) & M;
        }
        int out0 = (y0 + n) * quads + (x0 >> 2);
        [[unroll]] for (int q = 0; q < 4; q++) {
            uvec4 e = even[4 * RADIUS + q] * W[0], o = odd[4 * RADIUS + q] * W[0];
            [[unroll]] for (int k = 1; k <= RADIUS; k++) {
                e += (even[4 * (RADIUS - k) + q] + even[4 * (RADIUS + k) + q]) * W[k];
                o += (odd[4 * (RADIUS - k) + q] + odd[4 * (RADIUS + k) + q]) * W[k];
            }
            if (x0 + 4 * q < w) dst4[out0 + q] = epilogue4((((e + 0x00800080u) >> 8) & M) | ((((o + 0x00800080u) >> 8) & M) << 8));
        }
        // Slide the window down a row (register renames once the loop body is unrolled).
        [[unroll]] for (int i = 0; i < 4 * (TAPS - 1); i++) {
            even[i] = even[i + 4];
            odd[i] = odd[i + 4];
        }
    }
}
