#version 450
#include "common.glsl"
// Stars: a twinkling star field over the image. Star placement is an integer hash of the cell;
// pc.a: cell size, seed, density (0..255). f: time, twinkle rate, brightness.
void main() {
    GRANITE_PIXEL(x, y)
    int cell = pc.a.x;
    int gx = x / cell, gy = y / cell;
    uint h = hash32((uint(gx) * 73856093u) ^ (uint(gy) * 19349663u) ^ uint(pc.a.y));
    uvec4 oc = unpackPx(src[y * pc.size.x + x]);
    vec3 o = vec3(oc.rgb) / 255.0;
    if ((h & 255u) < uint(pc.a.z)) {
        int sx = gx * cell + 1 + int((h >> 8) % uint(cell - 2));
        int sy = gy * cell + 1 + int((h >> 16) % uint(cell - 2));
        float phase = float((h >> 24) & 255u) / 256.0;
        float twinkle = abs(fract(F(0) * F(1) + phase) * 2.0 - 1.0);
        float b = F(2) * (0.35 + 0.65 * twinkle);
        int d = abs(x - sx) + abs(y - sy);
        if (d == 0) o += vec3(b);
        else if (d == 1) o += vec3(b * 0.45);
    }
    dst[y * pc.size.x + x] = epilogue((packPxF(vec4(o, 0.0)) & 0x00ffffffu) | (oc.a << 24));
}
