#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Analog video: chroma shift, torn rows, scanlines and noise, blended over the original.
// BLEND 0 normal, 1 screen, 2 multiply, 3 overlay. f: intensity, scanline gain, frame seed, shift.
// BLOCK pixels of a row per invocation (the row's tear is hashed once; fewer invocations is
// what lavapipe rewards). VEC 1 (width % 4 == 0): 16 pixels, the shifted reads as windows of
// quads (srcWindow16), the results stored as quads.
layout(constant_id = 0) const int BLEND = 0;
layout(constant_id = 1) const int VEC = 0;

float blendChannel(float o, float e) {
    if (BLEND == 1) return 1.0 - (1.0 - o) * (1.0 - e);
    if (BLEND == 2) return o * e;
    if (BLEND == 3) return o < 0.5 ? 2.0 * o * e : 1.0 - 2.0 * (1.0 - o) * (1.0 - e);
    return e;
}

// One output pixel at (x, y) from the original pixel, the torn one and the chroma-shifted two.
uint analogPixel(int x, int y, uint original, uint torn, uint redFrom, uint blueFrom, uint seed) {
    uvec4 base = unpackPx(torn);
    vec3 e = vec3(float(redFrom & 255u), float(base.g), float((blueFrom >> 16) & 255u)) / 255.0;
    if ((y & 1) == 1) e *= f[1];
    float noise = float(hash32(uint(x) + uint(y) * 65521u + seed * 2654435761u) & 255u) / 255.0 - 0.5;
    e = clamp(e + noise * 0.12, 0.0, 1.0);
    uvec4 oc = unpackPx(original);
    vec3 o = vec3(oc.rgb) / 255.0;
    vec3 b = vec3(blendChannel(o.r, e.r), blendChannel(o.g, e.g), blendChannel(o.b, e.b));
    vec3 r = o + (b - o) * f[0];
    return epilogue((packPxF(vec4(r, 0.0)) & 0x00ffffffu) | (oc.a << 24));
}

void main() {
    int BLOCK = VEC == 1 ? 16 : 8;
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x;
    if (x0 >= w || y >= pc.size.y) return;
    uint seed = uint(f[2]);
    int shift = int(f[3]);
    uint row = hash32(uint(y) * 747796405u + seed);
    int tear = ((row & 255u) < 10u) ? int((row >> 8) & 7u) - 3 : 0;
    int rowBase = y * w;
    if (VEC == 1) {
        int quads = w >> 2, rowQuad = y * quads;
        uint original[16], torn[16], red[16], blue[16];
        srcWindow16(rowQuad, quads, x0, 0, w, original);
        srcWindow16(rowQuad, quads, x0, tear, w, torn);
        srcWindow16(rowQuad, quads, x0, tear + shift, w, red);
        srcWindow16(rowQuad, quads, x0, tear - shift, w, blue);
        [[unroll]] for (int k = 0; k < 4; k++) {
            uint o[4];
            [[unroll]] for (int m = 0; m < 4; m++) {
                int n = 4 * k + m;
                o[m] = analogPixel(x0 + n, y, original[n], torn[n], red[n], blue[n], seed);
            }
            if (x0 + 4 * k < w) dst4[(rowBase + x0) / 4 + k] = uvec4(o[0], o[1], o[2], o[3]);
        }
        return;
    }
    [[unroll]] for (int n = 0; n < 8; n++) {
        int x = x0 + n;
        if (x >= w) return;
        int sx = x + tear;
        uint base = src[rowBase + clamp(sx, 0, w - 1)];
        uint original = tear == 0 ? base : src[rowBase + x];
        dst[rowBase + x] = analogPixel(x, y, original, base, src[rowBase + clamp(sx + shift, 0, w - 1)],
                                       src[rowBase + clamp(sx - shift, 0, w - 1)], seed);
    }
}
