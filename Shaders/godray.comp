#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// God rays, in two passes. MODE 0, at half resolution (the shafts are smooth, so a quarter of the
// work): march SAMPLES steps from the pixel towards the light in fixed point (1/256 px, so every
// device samples the same pixels), sum the decaying light that bright pixels let through, and
// store it as RGB8. MODE 1: add the rays to the full-resolution image (nearest ray pixel).
// f: decay, weight, exposure, light x*256, light y*256, density*256.
layout(constant_id = 0) const int SAMPLES = 24;
layout(constant_id = 1) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    if (MODE == 1) {
        uvec4 o = unpackPx(src[y * pc.size.x + x]);
        uvec4 ray = unpackPx(aux[(y / 2) * ((pc.size.x + 1) / 2) + x / 2]);
        dst[y * pc.size.x + x] = packPx(uvec4(min(o.rgb + ray.rgb, uvec3(255u)), o.a));
        return;
    }
    int px = (2 * x) << 8, py = (2 * y) << 8;
    int density = int(f[5]);
    int stepX = ((px - int(f[3])) / 256 * density) / SAMPLES;
    int stepY = ((py - int(f[4])) / 256 * density) / SAMPLES;
    vec3 acc = vec3(0.0);
    float illumination = 1.0, decay = f[0], weight = f[1];
    int w1 = pc.size.x - 1, h1 = pc.size.y - 1;
    [[unroll]] for (int i = 0; i < SAMPLES; i++) {
        px -= stepX;
        py -= stepY;
        uvec4 c = unpackPx(src[clamp(py >> 8, 0, h1) * pc.size.x + clamp(px >> 8, 0, w1)]);
        float l = float(luma8(c)) / 255.0;
        acc += vec3(c.rgb) * (l * l * illumination * weight);
        illumination *= decay;
    }
    vec3 r = acc * (f[2] / float(SAMPLES));
    dst[y * pc.size.z + x] = packPx(uvec4(uvec3(clamp(r, 0.0, 255.0) + 0.5), 255u));
}
