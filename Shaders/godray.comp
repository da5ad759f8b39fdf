#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// God rays at half resolution (the shafts are smooth), in three passes:
// MODE 2: the light map, each half-res pixel's colour times its luma squared (bright areas shine);
// MODE 0: march SAMPLES steps over the light map towards the light, in fixed point (1/256 px, so
//         every device samples the same pixels), summing the decaying light, stored as RGB8;
// MODE 1: add the rays to the full-resolution image (nearest ray pixel).
// f: decay, weight, exposure, light x*256, light y*256 (full-res pixels), density*256.
layout(constant_id = 0) const int SAMPLES = 24;
layout(constant_id = 1) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    if (MODE == 2) {
        uvec4 c = unpackPx(src[min(2 * y, pc.size.y - 1) * pc.size.x + min(2 * x, pc.size.x - 1)]);
        float l = float(luma8(c)) / 255.0;
        dst[y * pc.size.z + x] = epilogue(packPx(uvec4(uvec3(vec3(c.rgb) * (l * l) + 0.5), 255u)));
        return;
    }
    if (MODE == 1) {
        uvec4 o = unpackPx(src[y * pc.size.x + x]);
        uvec4 ray = unpackPx(aux[(y / 2) * ((pc.size.x + 1) / 2) + x / 2]);
        dst[y * pc.size.x + x] = epilogue(packPx(uvec4(min(o.rgb + ray.rgb, uvec3(255u)), o.a)));
        return;
    }
    // MODE 0: src is the half-resolution light map (pc.size.xy = its size).
    int px = x << 8, py = y << 8;
    int density = int(f[5]);
    int stepX = ((px - int(f[3]) / 2) / 256 * density) / SAMPLES;
    int stepY = ((py - int(f[4]) / 2) / 256 * density) / SAMPLES;
    vec3 acc = vec3(0.0);
    float illumination = 1.0, decay = f[0], weight = f[1];
    int w1 = pc.size.x - 1, h1 = pc.size.y - 1;
    [[unroll]] for (int i = 0; i < SAMPLES; i++) {
        px -= stepX;
        py -= stepY;
        acc += vec3(unpackPx(src[clamp(py >> 8, 0, h1) * pc.size.x + clamp(px >> 8, 0, w1)]).rgb) * (illumination * weight);
        illumination *= decay;
    }
    vec3 r = acc * (f[2] / float(SAMPLES));
    dst[y * pc.size.z + x] = epilogue(packPx(uvec4(uvec3(clamp(r, 0.0, 255.0) + 0.5), 255u)));
}
