#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "blur_weights.glsl"
// The column pass of blur_block.comp (DIR 1, one column x BLOCK rows an invocation, same 8-bit
// fixed point), reading its source from the storage image `rows` (binding 4) that the row pass's
// output was copied into: on lavapipe a column of imageLoads costs less than a column of
// storage-buffer loads (6.5 vs 7.6 ms at 1280x720), and the copy far less than the difference.
layout(set = 0, binding = 4, r32ui) uniform readonly uimage2D rows;

const int BLOCK = 16;
const uint M = 0x00ff00ffu;

void main() {
    int w = pc.size.x, h = pc.size.y;
    uint W[25] = uint[25](W0, W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12, W13, W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24);
    int x = int(gl_GlobalInvocationID.x), y0 = int(gl_GlobalInvocationID.y) * BLOCK;
    if (x >= w || y0 >= h) return;
    uint win[BLOCK + 2 * 24];
    [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) win[i] = imageLoad(rows, ivec2(x, clamp(y0 - RADIUS + i, 0, h - 1))).x;
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        int y = y0 + n;
        if (y >= h) return;
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
