#version 450
#include "common.glsl"
// Resize in integer arithmetic (exact on every device). MODE 0: bilinear with 8-bit weights,
// pixel centres aligned. MODE 1: area (box average of the source pixels each output covers).
layout(constant_id = 0) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int sw = pc.size.x, sh = pc.size.y, dw = pc.size.z, dh = pc.size.w;
    if (MODE == 0) {
        int nx = ((2 * x + 1) * sw * 128) / dw - 128;
        int ny = ((2 * y + 1) * sh * 128) / dh - 128;
        int x0 = nx >> 8, y0 = ny >> 8;
        uint fx = uint(nx & 255), fy = uint(ny & 255);
        uvec4 p00 = unpackPx(srcAt(x0, y0)), p10 = unpackPx(srcAt(x0 + 1, y0));
        uvec4 p01 = unpackPx(srcAt(x0, y0 + 1)), p11 = unpackPx(srcAt(x0 + 1, y0 + 1));
        uvec4 top = p00 * (256u - fx) + p10 * fx;
        uvec4 bottom = p01 * (256u - fx) + p11 * fx;
        dst[y * dw + x] = packPx((top * (256u - fy) + bottom * fy + 32768u) >> 16);
    } else {
        int x0 = (x * sw) / dw, x1 = max(((x + 1) * sw) / dw, x0 + 1);
        int y0 = (y * sh) / dh, y1 = max(((y + 1) * sh) / dh, y0 + 1);
        uvec4 sum = uvec4(0);
        for (int yy = y0; yy < y1; yy++) {
            for (int xx = x0; xx < x1; xx++) { sum += unpackPx(src[yy * sw + xx]); }
        }
        uint n = uint((x1 - x0) * (y1 - y0));
        dst[y * dw + x] = packPx((sum + n / 2u) / n);
    }
}
