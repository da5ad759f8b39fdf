#version 450
#include "common.glsl"
// Disco: tiles of colored light cycling through a palette, and a round spotlight sweeping.
// pc.a.x tile size. f: strength, step, spot x, spot y, spot radius (whole pixels).
const vec3 palette[6] = vec3[6](vec3(1.0, 0.25, 0.35), vec3(1.0, 0.8, 0.2), vec3(0.3, 1.0, 0.4),
                                vec3(0.2, 0.8, 1.0), vec3(0.45, 0.3, 1.0), vec3(1.0, 0.35, 0.95));

void main() {
    GRANITE_PIXEL(x, y)
    int tile = pc.a.x;
    int index = ((x / tile) + (y / tile) + int(F(1))) % 6;
    uvec4 oc = unpackPx(src[y * pc.size.x + x]);
    vec3 o = vec3(oc.rgb) / 255.0;
    vec3 e = o * palette[index] * 1.6;
    int dx = x - int(F(2)), dy = y - int(F(3)), radius = int(F(4));
    if (dx * dx + dy * dy < radius * radius) e *= 1.35;
    vec3 r = o + (e - o) * F(0);
    dst[y * pc.size.x + x] = epilogue((packPxF(vec4(r, 0.0)) & 0x00ffffffu) | (oc.a << 24));
}
