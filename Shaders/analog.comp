#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Analog video: chroma shift, torn rows, scanlines and noise, blended over the original.
// BLEND 0 normal, 1 screen, 2 multiply, 3 overlay. f: intensity, scanline gain, frame seed, shift.
// BLOCK pixels of a row per invocation (the row's tear is hashed once; fewer invocations is
// what lavapipe rewards). The torn and chroma-shifted pixels are fetched through a texel view of
// the source (binding 4): per-invocation addresses are branch-free gathers there, where selecting
// them out of quads cost more than the rest of the filter (2.8 -> 2.1 ms at 1280x720 on lavapipe).
// VEC 1 (width % 4 == 0): 16 pixels, the original read and the results stored as quads.
layout(constant_id = 0) const int BLEND = 0;
layout(constant_id = 1) const int VEC = 0;
layout(set = 0, binding = 4) uniform usamplerBuffer srcTexels;

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
    if ((y & 1) == 1) e *= F(1);
    float noise = float(hash32(uint(x) + uint(y) * 65521u + seed * 2654435761u) & 255u) / 255.0 - 0.5;
    e = clamp(e + noise * 0.12, 0.0, 1.0);
    uvec4 oc = unpackPx(original);
    vec3 o = vec3(oc.rgb) / 255.0;
    vec3 b = vec3(blendChannel(o.r, e.r), blendChannel(o.g, e.g), blendChannel(o.b, e.b));
    vec3 r = o + (b - o) * F(0);
    return epilogue((packPxF(vec4(r, 0.0)) & 0x00ffffffu) | (oc.a << 24));
}

void main() {
    int BLOCK = VEC == 1 ? 16 : 8;
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x;
    if (x0 >= w || y >= pc.size.y) return;
    uint seed = uint(F(2));
    int shift = int(F(3));
    uint row = hash32(uint(y) * 747796405u + seed);
    int tear = ((row & 255u) < 10u) ? int((row >> 8) & 7u) - 3 : 0;
    int rowBase = y * w;
    if (VEC == 1) {
        int quads = w >> 2, rowQuad = y * quads;
        uint original[16], torn[16], red[16], blue[16];
        [[unroll]] for (int k = 0; k < 4; k++) {
            uvec4 q = srcQuad(rowQuad, (x0 >> 2) + k, quads);
            original[4 * k] = q.x; original[4 * k + 1] = q.y; original[4 * k + 2] = q.z; original[4 * k + 3] = q.w;
        }
        [[unroll]] for (int n = 0; n < 16; n++) {
            int sx = x0 + n + tear;
            torn[n] = texelFetch(srcTexels, rowBase + clamp(sx, 0, w - 1)).x;
            red[n] = texelFetch(srcTexels, rowBase + clamp(sx + shift, 0, w - 1)).x;
            blue[n] = texelFetch(srcTexels, rowBase + clamp(sx - shift, 0, w - 1)).x;
        }
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
        uint base = texelFetch(srcTexels, rowBase + clamp(sx, 0, w - 1)).x;
        uint original = tear == 0 ? base : texelFetch(srcTexels, rowBase + x).x;
        dst[rowBase + x] = analogPixel(x, y, original, base, texelFetch(srcTexels, rowBase + clamp(sx + shift, 0, w - 1)).x,
                                       texelFetch(srcTexels, rowBase + clamp(sx - shift, 0, w - 1)).x, seed);
    }
}
