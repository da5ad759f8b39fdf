#version 450
#include "common.glsl"
// Vibes: vibrance, a warm/cool push that pulses in time, and a soft vignette.
// f: warmth (already pulsed), vignette, saturation.
void main() {
    GRANITE_PIXEL(x, y)
    uvec4 oc = unpackPx(src[y * pc.size.x + x]);
    vec3 o = vec3(oc.rgb) / 255.0;
    float l = 0.299 * o.r + 0.587 * o.g + 0.114 * o.b;
    vec3 s = l + (o - l) * F(2);
    s.r += F(0) * 0.1;
    s.b -= F(0) * 0.1;
    float dx = (float(x) + 0.5) / float(pc.size.x) - 0.5;
    float dy = (float(y) + 0.5) / float(pc.size.y) - 0.5;
    s *= 1.0 - F(1) * (dx * dx + dy * dy) * 2.0;
    dst[y * pc.size.x + x] = epilogue((packPxF(vec4(s, 0.0)) & 0x00ffffffu) | (oc.a << 24));
}
