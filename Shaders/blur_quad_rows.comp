#version 450
#extension GL_EXT_control_flow_attributes : require
#define SOURCE_TEXELS
#include "common.glsl"
#include "yuv.glsl"
#include "blur_quad.glsl"
// The row pass of the quad-row gaussian: BLOCK pixels of a row an invocation (blurRow: the
// window read as quads through a quad texel view of the source, binding 4, and slid over in
// registers), results written as quads.
// YUYV (width % 8 == 0): the source is the camera's YUYV frame, converted while loading
// (1 limited range, 2 full), so the chain needs no conversion pass.
layout(constant_id = 28) const int YUYV = 0;

void main() {
    int w = pc.size.x, y = int(gl_GlobalInvocationID.y), x0 = int(gl_GlobalInvocationID.x) * BLOCK;
    if (x0 >= w || y >= pc.size.y) return;
    uint res[BLOCK];
    blurRow(y, x0, w, YUYV, res);
    int out0 = (y * w + x0) >> 2;
    [[unroll]] for (int k = 0; k < BLOCK / 4; k++) {
        if (x0 + 4 * k < w) dst4[out0 + k] = epilogue4(uvec4(res[4 * k], res[4 * k + 1], res[4 * k + 2], res[4 * k + 3]));
    }
}
