// Shared layout of every Marble filter shader.
//
// Images are tightly packed RGBA8, one uint per pixel (R in the low byte). Workgroups are 64x1:
// rows map to x, which on lavapipe keeps a SIMD batch on consecutive pixels of one row.
//   binding 0: source pixels          binding 1: destination pixels
//   binding 2: float parameters (UBO)  binding 3: auxiliary data (weights, depth, original)
//   push: size = (srcW, srcH, dstW, dstH), a and b = filter-specific integers
// The workgroup is 64x1 unless the chain specialises ids 60/61 (StepIO.dispatch(local:)).
#ifndef GRANITE_CUSTOM_LOCAL_SIZE
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 60, local_size_y_id = 61) in;
#endif

layout(std430, set = 0, binding = 0) readonly buffer Source { uint src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Destination { uint dst[]; };
// The same two buffers seen as quads of 4 pixels. On lavapipe every buffer access is a loop over
// the SIMD lanes, whatever its width, so one uvec4 access costs about what one uint access does:
// shaders whose rows are whole quads (width % 4 == 0, their VEC constant) move 4 pixels at a time.
layout(std430, set = 0, binding = 0) readonly buffer SourceQuads { uvec4 src4[]; };
layout(std430, set = 0, binding = 1) writeonly buffer DestinationQuads { uvec4 dst4[]; };
#include "params.glsl"
layout(std430, set = 0, binding = 3) buffer Aux { uint aux[]; };
layout(std430, set = 0, binding = 3) buffer AuxQuads { uvec4 aux4[]; };
layout(push_constant) uniform Push { ivec4 size; ivec4 a; ivec4 b; } pc;

#include "pixels.glsl"

// An optional affine color epilogue (a following brightness/exposure/colormatrix filter fused
// into this pass by the chain): ids 40..52, off unless EPILOGUE = 1. Same math as color.comp.
layout(constant_id = 40) const int EPILOGUE = 0;
layout(constant_id = 41) const float E0 = 1.0;
layout(constant_id = 42) const float E1 = 0.0;
layout(constant_id = 43) const float E2 = 0.0;
layout(constant_id = 44) const float E3 = 0.0;
layout(constant_id = 45) const float E4 = 1.0;
layout(constant_id = 46) const float E5 = 0.0;
layout(constant_id = 47) const float E6 = 0.0;
layout(constant_id = 48) const float E7 = 0.0;
layout(constant_id = 49) const float E8 = 1.0;
layout(constant_id = 50) const float E9 = 0.0;
layout(constant_id = 51) const float E10 = 0.0;
layout(constant_id = 52) const float E11 = 0.0;

uint epilogue(uint p) {
    if (EPILOGUE == 0) return p;
    vec3 v = vec3(unpackPx(p).rgb) / 255.0;
    vec3 o;
    o.r = E0 * v.r + E1 * v.g + E2 * v.b + E9;
    o.g = E3 * v.r + E4 * v.g + E5 * v.b + E10;
    o.b = E6 * v.r + E7 * v.g + E8 * v.b + E11;
    return (packPxF(vec4(o, 0.0)) & 0x00ffffffu) | (p & 0xff000000u);
}


// epilogue() for a gray pixel (m, m, m, a): the matrix rows fold into one gain per channel.
uint epilogueGray(uint m, uint a) {
    if (EPILOGUE == 0) return packPx(uvec4(m, m, m, a));
    vec3 o = vec3(E0 + E1 + E2, E3 + E4 + E5, E6 + E7 + E8) * (float(m) / 255.0) + vec3(E9, E10, E11);
    return (packPxF(vec4(o, 0.0)) & 0x00ffffffu) | (a << 24);
}

uvec4 epilogue4(uvec4 p) { return uvec4(epilogue(p.x), epilogue(p.y), epilogue(p.z), epilogue(p.w)); }

// Quad q of a row starting at quad rowQuad, clamped into the row (quadsPerRow quads). A window
// of pixels x0 - R ... read as quads floor((x0 - R) / 4) ... this way replicates the edges for free:
// a position left of the row falls in a clamped first quad whose .x is pixel 0, one right of it
// in a clamped last quad whose .w is pixel w - 1.
//
// A shader compiled with SOURCE_TEXELS defined reads its quads through a quad texel view of the
// source (binding 4, `GPUBinding.quadTexels`): on lavapipe a texelFetch is one branch-free gather
// of the SIMD lanes, where a storage-buffer load loops over them with a bounds check each.
#ifdef SOURCE_TEXELS
layout(set = 0, binding = 4) uniform usamplerBuffer srcTexels;
uvec4 srcQuad(int rowQuad, int q, int quadsPerRow) { return texelFetch(srcTexels, rowQuad + clamp(q, 0, quadsPerRow - 1)); }
#else
uvec4 srcQuad(int rowQuad, int q, int quadsPerRow) { return src4[rowQuad + clamp(q, 0, quadsPerRow - 1)]; }
#endif

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
