#version 450
#include "common.glsl"
// Camera formats to RGBA8, integer BT.601. FORMAT 0 YUYV, 1 NV12, 2 RGB24.
// RANGE 0 limited (16..235), 1 full (0..255). src holds the raw bytes.
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

void main() {
    GRANITE_PIXEL(x, y)
    int w = pc.size.x;
    uint outPixel;
    if (FORMAT == 0) {
        int base = y * ((w + 1) / 2) * 4 + (x / 2) * 4;
        outPixel = yuv(int(byteAt(base + (x & 1) * 2)), int(byteAt(base + 1)), int(byteAt(base + 3)));
    } else if (FORMAT == 1) {
        int uv = w * pc.size.y + (y / 2) * ((w + 1) / 2) * 2 + (x / 2) * 2;
        outPixel = yuv(int(byteAt(y * w + x)), int(byteAt(uv)), int(byteAt(uv + 1)));
    } else {
        int i = (y * w + x) * 3;
        outPixel = packPx(uvec4(byteAt(i), byteAt(i + 1), byteAt(i + 2), 255u));
    }
    dst[y * w + x] = outPixel;
}
