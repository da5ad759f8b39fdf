#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// God rays at half resolution (the shafts are smooth), in two passes (three for rows of odd quads):
// MODE 2: the light map, each half-res pixel's color times its luma squared (bright areas shine),
//         stored in the storage image `light` (binding 4);
// MODE 0: march SAMPLES steps over the light map towards the light, in fixed point (1/256 px, so
//         every device samples the same pixels), summing the decaying light, stored as RGB8
//         (imageLoad: on lavapipe a gather from an image costs less than one from a storage
//         buffer, 6.0 vs 8.4 ms for this pass at 1280x720);
// MODE 1: add the rays to the full-resolution image (nearest ray pixel). Every mode binds the image.
// MODE 3 (width % 4 == 0): MODE 0 and MODE 1 in one pass: an invocation marches two neighbouring
//         half-resolution pixels and adds them straight to the 4x2 full-resolution block they
//         cover (two quads in, two out), so the rays never go through memory.
// f: decay, weight, exposure, light x*256, light y*256 (full-res pixels), density*256.
layout(constant_id = 0) const int SAMPLES = 24;
layout(constant_id = 1) const int MODE = 0;
layout(set = 0, binding = 4, r32ui) uniform uimage2D light;

uint addRay(uint p, uint ray) {
    uvec4 o = unpackPx(p);
    return epilogue(packPx(uvec4(min(o.rgb + unpackPx(ray).rgb, uvec3(255u)), o.a)));
}

// The rays at half-resolution pixel (x, y) of a w1 + 1 by h1 + 1 light map, as a packed pixel.
uint march(int x, int y, int w1, int h1) {
    int px = x << 8, py = y << 8;
    int density = int(F(5));
    int stepX = ((px - int(F(3)) / 2) / 256 * density) / SAMPLES;
    int stepY = ((py - int(F(4)) / 2) / 256 * density) / SAMPLES;
    vec3 acc = vec3(0.0);
    float illumination = 1.0, decay = F(0), weight = F(1);
    [[unroll]] for (int i = 0; i < SAMPLES; i++) {
        px -= stepX;
        py -= stepY;
        acc += vec3(unpackPx(imageLoad(light, ivec2(clamp(px >> 8, 0, w1), clamp(py >> 8, 0, h1))).x).rgb) * (illumination * weight);
        illumination *= decay;
    }
    vec3 r = acc * (F(2) / float(SAMPLES));
    return packPx(uvec4(uvec3(clamp(r, 0.0, 255.0) + 0.5), 255u));
}

void main() {
    if (MODE == 3) {
        int w = pc.size.x, h = pc.size.y, i = int(gl_GlobalInvocationID.x), hy = int(gl_GlobalInvocationID.y);
        int hw = w >> 1, hh = (h + 1) >> 1;
        if (4 * i >= w || hy >= hh) return;
        uint left = march(2 * i, hy, hw - 1, hh - 1), right = march(2 * i + 1, hy, hw - 1, hh - 1);
        int quads = w >> 2;
        [[unroll]] for (int r = 0; r < 2; r++) {
            int y = 2 * hy + r;
            if (y < h) {
                uvec4 o = src4[y * quads + i];
                dst4[y * quads + i] = uvec4(addRay(o.x, left), addRay(o.y, left), addRay(o.z, right), addRay(o.w, right));
            }
        }
        return;
    }
    GRANITE_PIXEL(x, y)
    if (MODE == 2) {
        uvec4 c = unpackPx(src[min(2 * y, pc.size.y - 1) * pc.size.x + min(2 * x, pc.size.x - 1)]);
        float l = float(luma8(c)) / 255.0;
        imageStore(light, ivec2(x, y), uvec4(packPx(uvec4(uvec3(vec3(c.rgb) * (l * l) + 0.5), 255u))));
        return;
    }
    if (MODE == 1) {
        dst[y * pc.size.x + x] = addRay(src[y * pc.size.x + x], aux[(y / 2) * ((pc.size.x + 1) / 2) + x / 2]);
        return;
    }
    // MODE 0: pc.size.xy is the half-resolution light map's size.
    dst[y * pc.size.z + x] = march(x, y, pc.size.x - 1, pc.size.y - 1);
}
