#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Per-pixel color operations, chosen by MODE, BLOCK pixels of a row per invocation:
// 0 affine (3x3 matrix M0..M8 row-major + offset M9..M11, specialization constants so the
// matrix folds into the code), 1 gamma (exponent F(0)), 2 grayscale, 3 invert,
// 4 threshold (level pc.a.x on integer luma). Alpha is kept.
layout(constant_id = 0) const int MODE = 0;
layout(constant_id = 1) const float M0 = 1.0;
layout(constant_id = 2) const float M1 = 0.0;
layout(constant_id = 3) const float M2 = 0.0;
layout(constant_id = 4) const float M3 = 0.0;
layout(constant_id = 5) const float M4 = 1.0;
layout(constant_id = 6) const float M5 = 0.0;
layout(constant_id = 7) const float M6 = 0.0;
layout(constant_id = 8) const float M7 = 0.0;
layout(constant_id = 9) const float M8 = 1.0;
layout(constant_id = 10) const float M9 = 0.0;
layout(constant_id = 11) const float M10 = 0.0;
layout(constant_id = 12) const float M11 = 0.0;
const int BLOCK = 4;

uint color(uint p) {
    uvec4 c = unpackPx(p);
    if (MODE == 0) {
        vec3 v = vec3(c.rgb) / 255.0;
        vec3 o;
        o.r = M0 * v.r + M1 * v.g + M2 * v.b + M9;
        o.g = M3 * v.r + M4 * v.g + M5 * v.b + M10;
        o.b = M6 * v.r + M7 * v.g + M8 * v.b + M11;
        return (packPxF(vec4(o, 0.0)) & 0x00ffffffu) | (p & 0xff000000u);
    } else if (MODE == 1) {
        vec3 v = pow(vec3(c.rgb) / 255.0, vec3(F(0)));
        return (packPxF(vec4(v, 0.0)) & 0x00ffffffu) | (p & 0xff000000u);
    } else if (MODE == 2) {
        uint l = uint(luma8(c));
        return packPx(uvec4(l, l, l, c.a));
    } else if (MODE == 3) {
        return (~p & 0x00ffffffu) | (p & 0xff000000u);
    }
    uint l = luma8(c) >= pc.a.x ? 255u : 0u;
    return packPx(uvec4(l, l, l, c.a));
}

void main() {
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    if (x0 >= pc.size.x || y >= pc.size.y) return;
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        int x = x0 + n;
        if (x >= pc.size.x) return;
        dst[y * pc.size.x + x] = epilogue(color(src[y * pc.size.x + x]));
    }
}
