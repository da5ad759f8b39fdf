#version 450
#include "common.glsl"
// Per-pixel colour operations, chosen by MODE:
// 0 affine (3x3 matrix f[0..8] row-major + offset f[9..11]), 1 gamma (exponent f[0]),
// 2 grayscale, 3 invert, 4 threshold (level pc.a.x on integer luma). Alpha is kept.
layout(constant_id = 0) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int i = y * pc.size.x + x;
    uint p = src[i];
    uvec4 c = unpackPx(p);
    if (MODE == 0) {
        vec3 v = vec3(c.rgb) / 255.0;
        vec3 o;
        o.r = f[0] * v.r + f[1] * v.g + f[2] * v.b + f[9];
        o.g = f[3] * v.r + f[4] * v.g + f[5] * v.b + f[10];
        o.b = f[6] * v.r + f[7] * v.g + f[8] * v.b + f[11];
        dst[i] = (packPxF(vec4(o, 0.0)) & 0x00ffffffu) | (p & 0xff000000u);
    } else if (MODE == 1) {
        vec3 v = pow(vec3(c.rgb) / 255.0, vec3(f[0]));
        dst[i] = (packPxF(vec4(v, 0.0)) & 0x00ffffffu) | (p & 0xff000000u);
    } else if (MODE == 2) {
        uint l = uint(luma8(c));
        dst[i] = packPx(uvec4(l, l, l, c.a));
    } else if (MODE == 3) {
        dst[i] = (~p & 0x00ffffffu) | (p & 0xff000000u);
    } else {
        uint l = luma8(c) >= pc.a.x ? 255u : 0u;
        dst[i] = packPx(uvec4(l, l, l, c.a));
    }
}
