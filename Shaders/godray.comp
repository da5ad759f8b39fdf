#version 450
#include "common.glsl"
// God rays: march SAMPLES steps from the pixel towards the light (fixed point, 1/256 px, so
// every device samples the same pixels) and add the decaying light that bright pixels let through.
// f: decay, weight, exposure, light x*256, light y*256, density*256.
layout(constant_id = 0) const int SAMPLES = 24;

void main() {
    GRANITE_PIXEL(x, y)
    int px = x << 8, py = y << 8;
    int density = int(f[5]);
    int stepX = ((px - int(f[3])) / 256 * density) / SAMPLES;
    int stepY = ((py - int(f[4])) / 256 * density) / SAMPLES;
    vec3 acc = vec3(0.0);
    float illumination = 1.0;
    for (int i = 0; i < SAMPLES; i++) {
        px -= stepX;
        py -= stepY;
        uvec4 c = unpackPx(srcAt(px >> 8, py >> 8));
        float l = float(luma8(c)) / 255.0;
        acc += vec3(c.rgb) * (l * l * illumination * f[1]);
        illumination *= f[0];
    }
    uvec4 o = unpackPx(src[y * pc.size.x + x]);
    vec3 r = vec3(o.rgb) + acc * (f[2] / float(SAMPLES));
    dst[y * pc.size.x + x] = packPx(uvec4(uvec3(clamp(r, 0.0, 255.0) + 0.5), o.a));
}
