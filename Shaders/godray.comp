#version 450
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// God rays at half resolution (the shafts are smooth), in three passes:
// MODE 2: the light map, each half-res pixel's colour times its luma squared (bright areas shine),
//         stored in the storage image `light` (binding 4);
// MODE 0: march SAMPLES steps over the light map towards the light, in fixed point (1/256 px, so
//         every device samples the same pixels), summing the decaying light, stored as RGB8
//         (imageLoad: on lavapipe a gather from an image costs less than one from a storage
//         buffer, 6.0 vs 8.4 ms for this pass at 1280x720);
// MODE 1: add the rays to the full-resolution image (nearest ray pixel). Every mode binds the image.
// f: decay, weight, exposure, light x*256, light y*256 (full-res pixels), density*256.
layout(constant_id = 0) const int SAMPLES = 24;
layout(constant_id = 1) const int MODE = 0;
// VEC 1 (MODE 1, width % 8 == 0, so half-resolution rows are whole quads too): 16 pixels an
// invocation, 4 quads of image and 2 of rays in, 4 quads out.
layout(constant_id = 2) const int VEC = 0;
layout(set = 0, binding = 4, r32ui) uniform uimage2D light;

uint addRay(uint p, uint ray) {
    uvec4 o = unpackPx(p);
    return epilogue(packPx(uvec4(min(o.rgb + unpackPx(ray).rgb, uvec3(255u)), o.a)));
}

void main() {
    if (MODE == 1 && VEC == 1) {
        int w = pc.size.x, x0 = int(gl_GlobalInvocationID.x) * 16, y = int(gl_GlobalInvocationID.y);
        if (x0 >= w || y >= pc.size.y) return;
        int out0 = (y * w + x0) >> 2, ray0 = ((y >> 1) * (w >> 1) + (x0 >> 1)) >> 2;
        uvec4 ra = aux4[ray0], rb = aux4[ray0 + 1];
        uint rays[8] = uint[8](ra.x, ra.y, ra.z, ra.w, rb.x, rb.y, rb.z, rb.w);
        [[unroll]] for (int k = 0; k < 4; k++) {
            if (x0 + 4 * k >= w) return;
            uvec4 o = src4[out0 + k];
            dst4[out0 + k] = uvec4(addRay(o.x, rays[2 * k]), addRay(o.y, rays[2 * k]),
                                   addRay(o.z, rays[2 * k + 1]), addRay(o.w, rays[2 * k + 1]));
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
        acc += vec3(unpackPx(imageLoad(light, ivec2(clamp(px >> 8, 0, w1), clamp(py >> 8, 0, h1))).x).rgb) * (illumination * weight);
        illumination *= decay;
    }
    vec3 r = acc * (f[2] / float(SAMPLES));
    dst[y * pc.size.z + x] = epilogue(packPx(uvec4(uvec3(clamp(r, 0.0, 255.0) + 0.5), 255u)));
}
