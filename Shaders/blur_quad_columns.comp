#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "blur_quad.glsl"
// The column pass of the quad-row gaussian: one quad column (4 pixels) x BLOCK rows an
// invocation, read through a quad texel view of the row pass's output (binding 4,
// `GPUBinding.quadTexels`: one branch-free gather a quad on lavapipe, no copy into an image) and
// written as quads. Same 8-bit fixed point as blur_block.comp: (R,B) and (G,A) in 16-bit lanes.
layout(set = 0, binding = 4) uniform usamplerBuffer rows;

void main() {
    BLUR_WEIGHTS;
    int quads = pc.size.x >> 2, h = pc.size.y;
    int qx = int(gl_GlobalInvocationID.x), y0 = int(gl_GlobalInvocationID.y) * BLOCK;
    if (qx >= quads || y0 >= h) return;
    uvec4 win[BLOCK + 2 * 24];
    [[unroll]] for (int i = 0; i < BLOCK + 2 * RADIUS; i++) win[i] = texelFetch(rows, clamp(y0 - RADIUS + i, 0, h - 1) * quads + qx);
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        uvec4 centre = win[n + RADIUS];
        uvec4 even = (centre & M) * W[0], odd = ((centre >> 8) & M) * W[0];
        [[unroll]] for (int k = 1; k <= RADIUS; k++) {
            uvec4 a = win[n + RADIUS - k], b = win[n + RADIUS + k];
            even += ((a & M) + (b & M)) * W[k];
            odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k];
        }
        if (y0 + n < h) dst4[(y0 + n) * quads + qx] = epilogue4((((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8));
    }
}
