#version 450
#include "common.glsl"
// Analog video: chroma shift, torn rows, scanlines and noise, blended over the original.
// BLEND 0 normal, 1 screen, 2 multiply, 3 overlay. f: intensity, scanline gain, frame seed, shift.
layout(constant_id = 0) const int BLEND = 0;

float blendChannel(float o, float e) {
    if (BLEND == 1) return 1.0 - (1.0 - o) * (1.0 - e);
    if (BLEND == 2) return o * e;
    if (BLEND == 3) return o < 0.5 ? 2.0 * o * e : 1.0 - 2.0 * (1.0 - o) * (1.0 - e);
    return e;
}

void main() {
    GRANITE_PIXEL(x, y)
    uint seed = uint(f[2]);
    int shift = int(f[3]);
    uint row = hash32(uint(y) * 747796405u + seed);
    int sx = x + (((row & 255u) < 10u) ? int((row >> 8) & 7u) - 3 : 0);
    uvec4 base = unpackPx(srcAt(sx, y));
    vec3 e = vec3(float(unpackPx(srcAt(sx + shift, y)).r), float(base.g), float(unpackPx(srcAt(sx - shift, y)).b)) / 255.0;
    if ((y & 1) == 1) e *= f[1];
    float n = float(hash32(uint(x) + uint(y) * 65521u + seed * 2654435761u) & 255u) / 255.0 - 0.5;
    e = clamp(e + n * 0.12, 0.0, 1.0);
    uvec4 oc = unpackPx(src[y * pc.size.x + x]);
    vec3 o = vec3(oc.rgb) / 255.0;
    vec3 b = vec3(blendChannel(o.r, e.r), blendChannel(o.g, e.g), blendChannel(o.b, e.b));
    vec3 r = o + (b - o) * f[0];
    dst[y * pc.size.x + x] = (packPxF(vec4(r, 0.0)) & 0x00ffffffu) | (oc.a << 24);
}
