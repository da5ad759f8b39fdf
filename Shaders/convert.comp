#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Camera formats to RGBA8, integer BT.601. FORMAT 0 YUYV, 1 NV12, 2 RGB24.
// RANGE 0 limited (16..235), 1 full (0..255). src holds the raw bytes. BLOCK pixels of a row
// per invocation; YUYV reads whole 32-bit words (rows are word-aligned).
layout(constant_id = 0) const int FORMAT = 0;
layout(constant_id = 1) const int RANGE = 0;

uint byteAt(int i) { return (src[i >> 2] >> ((i & 3) * 8)) & 255u; }

uint yuv(int Y, int U, int V) {
    int d = U - 128, e = V - 128;
    int r, g, b;
    if (RANGE == 0) {
        int c = 298 * (Y - 16);
        r = (c + 409 * e + 128) >> 8;
        g = (c - 100 * d - 208 * e + 128) >> 8;
        b = (c + 516 * d + 128) >> 8;
    } else {
        int c = 256 * Y;
        r = (c + 359 * e + 128) >> 8;
        g = (c - 88 * d - 183 * e + 128) >> 8;
        b = (c + 454 * d + 128) >> 8;
    }
    return packPx(uvec4(clamp(ivec3(r, g, b), 0, 255), 255));
}

const int BLOCK = 4;

void main() {
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x;
    if (x0 >= w || y >= pc.size.y) return;
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
    int x = x0 + n;
    if (x >= w) return;
    uint outPixel;
    if (FORMAT == 0) {
        uint word = src[y * ((w + 1) / 2) + x / 2];
        outPixel = yuv(int((word >> ((x & 1) * 16)) & 255u), int((word >> 8) & 255u), int(word >> 24));
    } else if (FORMAT == 1) {
        int uv = w * pc.size.y + (y / 2) * ((w + 1) / 2) * 2 + (x / 2) * 2;
        outPixel = yuv(int(byteAt(y * w + x)), int(byteAt(uv)), int(byteAt(uv + 1)));
    } else {
        int i = (y * w + x) * 3;
        outPixel = packPx(uvec4(byteAt(i), byteAt(i + 1), byteAt(i + 2), 255u));
    }
    dst[y * w + x] = epilogue(outPixel);
    }
}
