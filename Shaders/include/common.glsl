// Shared layout of every Marble filter shader.
//
// Images are tightly packed RGBA8, one uint per pixel (R in the low byte). Workgroups are 64x1:
// rows map to x, which on lavapipe keeps a SIMD batch on consecutive pixels of one row.
//   binding 0: source pixels          binding 1: destination pixels
//   binding 2: float parameters       binding 3: auxiliary data (weights, depth, original)
//   push: size = (srcW, srcH, dstW, dstH), a and b = filter-specific integers
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer Source { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Destination { uint dst[]; };
layout(std430, set = 0, binding = 2) readonly buffer Params { float f[]; };
layout(std430, set = 0, binding = 3) buffer Aux { uint aux[]; };
layout(push_constant) uniform Push { ivec4 size; ivec4 a; ivec4 b; } pc;

#include "pixels.glsl"


uint srcAt(int x, int y) {
    return src[clamp(y, 0, pc.size.y - 1) * pc.size.x + clamp(x, 0, pc.size.x - 1)];
}


#define GRANITE_PIXEL(x, y) \
    int x = int(gl_GlobalInvocationID.x); int y = int(gl_GlobalInvocationID.y); \
    if (x >= pc.size.z || y >= pc.size.w) return;

// The depth at output pixel (x, y): the depth map (floats in aux, pc.b.z x pc.b.w, nearest
// sample) or, with no map (pc.b.z == 0), the source's luma / 255.
float depthAt(int x, int y) {
    if (pc.b.z == 0) return float(luma8(unpackPx(src[y * pc.size.x + x]))) / 255.0;
    return uintBitsToFloat(aux[((y * pc.b.w) / pc.size.y) * pc.b.z + (x * pc.b.z) / pc.size.x]);
}
