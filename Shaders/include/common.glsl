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

uvec4 unpackPx(uint p) { return uvec4(p & 255u, (p >> 8) & 255u, (p >> 16) & 255u, p >> 24); }
uint packPx(uvec4 c) { return c.r | (c.g << 8) | (c.b << 16) | (c.a << 24); }
vec4 unpackPxF(uint p) { return vec4(unpackPx(p)) / 255.0; }
uint packPxF(vec4 c) { return packPx(uvec4(clamp(c, 0.0, 1.0) * 255.0 + 0.5)); }

// Integer BT.601 luma, the same everywhere a filter needs brightness.
int luma8(uvec4 c) { return int((77u * c.r + 150u * c.g + 29u * c.b + 128u) >> 8); }

uint srcAt(int x, int y) {
    return src[clamp(y, 0, pc.size.y - 1) * pc.size.x + clamp(x, 0, pc.size.x - 1)];
}

uint hash32(uint x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}

#define GRANITE_PIXEL(x, y) \
    int x = int(gl_GlobalInvocationID.x); int y = int(gl_GlobalInvocationID.y); \
    if (x >= pc.size.z || y >= pc.size.w) return;
