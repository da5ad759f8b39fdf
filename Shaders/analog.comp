#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Analog video: chroma shift, torn rows, scanlines and noise, blended over the original.
// BLEND 0 normal, 1 screen, 2 multiply, 3 overlay. f: intensity, scanline gain, frame seed, shift.
// BLOCK pixels of a row per invocation (the row's tear is hashed once; fewer invocations is
// what lavapipe rewards).
layout(constant_id = 0) const int BLEND = 0;

float blendChannel(float o, float e) {
    if (BLEND == 1) return 1.0 - (1.0 - o) * (1.0 - e);
    if (BLEND == 2) return o * e;
    if (BLEND == 3) return o < 0.5 ? 2.0 * o * e : 1.0 - 2.0 * (1.0 - o) * (1.0 - e);
    return e;
}

const int BLOCK = 8;

void main() {
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x;
    if (x0 >= w || y >= pc.size.y) return;
    uint seed = uint(f[2]);
    int shift = int(f[3]);
    float intensity = f[0], scanline = f[1];
    uint row = hash32(uint(y) * 747796405u + seed);
    int tear = ((row & 255u) < 10u) ? int((row >> 8) & 7u) - 3 : 0;
    int rowBase = y * w;
    [[unroll]] for (int n = 0; n < BLOCK; n++) {
        int x = x0 + n;
        if (x >= w) return;
        int sx = x + tear;
        uvec4 base = unpackPx(src[rowBase + clamp(sx, 0, w - 1)]);
        vec3 e = vec3(float(unpackPx(src[rowBase + clamp(sx + shift, 0, w - 1)]).r), float(base.g),
                      float(unpackPx(src[rowBase + clamp(sx - shift, 0, w - 1)]).b)) / 255.0;
        if ((y & 1) == 1) e *= scanline;
        float noise = float(hash32(uint(x) + uint(y) * 65521u + seed * 2654435761u) & 255u) / 255.0 - 0.5;
        e = clamp(e + noise * 0.12, 0.0, 1.0);
        uvec4 oc = tear == 0 ? base : unpackPx(src[rowBase + x]);
        vec3 o = vec3(oc.rgb) / 255.0;
        vec3 b = vec3(blendChannel(o.r, e.r), blendChannel(o.g, e.g), blendChannel(o.b, e.b));
        vec3 r = o + (b - o) * intensity;
        dst[rowBase + x] = epilogue((packPxF(vec4(r, 0.0)) & 0x00ffffffu) | (oc.a << 24));
    }
}
