#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "yuv.glsl"
// Camera formats to RGBA8, integer BT.601. FORMAT 0 YUYV, 1 NV12, 2 RGB24.
// RANGE 0 limited (16..235), 1 full (0..255). src holds the raw bytes. BLOCK pixels of a row
// per invocation; YUYV reads whole 32-bit words (rows are word-aligned).
// VEC 1 (YUYV with width % 8 == 0): 16 pixels an invocation, read as 2 quads of words and
// written as 4 quads of pixels.
layout(constant_id = 0) const int FORMAT = 0;
layout(constant_id = 1) const int RANGE = 0;
layout(constant_id = 2) const int VEC = 0;

uint byteAt(int i) { return (src[i >> 2] >> ((i & 3) * 8)) & 255u; }

const int BLOCK = 4;

void main() {
    int w = pc.size.x;
    if (VEC == 1) {
        int x0 = int(gl_GlobalInvocationID.x) * 16, y = int(gl_GlobalInvocationID.y);
        if (x0 >= w || y >= pc.size.y) return;
        int q = (y * w + x0) >> 3;
        uvec4 a = src4[q], b = src4[q + 1];
        uint words[8] = uint[8](a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
        int out0 = (y * w + x0) >> 2;
        [[unroll]] for (int k = 0; k < 4; k++) {
            if (x0 + 4 * k >= w) return;
            dst4[out0 + k] = epilogue4(uvec4(yuyvPixel(words[2 * k], 0, RANGE), yuyvPixel(words[2 * k], 1, RANGE),
                                             yuyvPixel(words[2 * k + 1], 0, RANGE), yuyvPixel(words[2 * k + 1], 1, RANGE)));
        }
        return;
    }
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    if (x0 >= w || y >= pc.size.y) return;
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
    int x = x0 + n;
    if (x >= w) return;
    uint outPixel;
    if (FORMAT == 0) {
        uint word = src[y * ((w + 1) / 2) + x / 2];
        outPixel = yuyvPixel(word, x & 1, RANGE);
    } else if (FORMAT == 1) {
        int uv = w * pc.size.y + (y / 2) * ((w + 1) / 2) * 2 + (x / 2) * 2;
        outPixel = yuvPixel(int(byteAt(y * w + x)), int(byteAt(uv)), int(byteAt(uv + 1)), RANGE);
    } else {
        int i = (y * w + x) * 3;
        outPixel = packPx(uvec4(byteAt(i), byteAt(i + 1), byteAt(i + 2), 255u));
    }
    dst[y * w + x] = epilogue(outPixel);
    }
}
