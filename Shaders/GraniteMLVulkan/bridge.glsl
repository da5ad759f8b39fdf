// Shared by the bridge kernels that let a model run inside another GraniteGPU user's frame (a
// Marble chain's): its picture in, its plane out, both left on the device.
//   binding 0: the activation arena (floats)
//   binding 1: the other user's buffer: a packed rgba8 picture (image_in) or a float plane (plane_out)
//   binding 2: the resize tables of plane_out (the shared resampler's, made on the host)
layout(std430, set = 0, binding = 0) buffer Arena { float act[]; };
layout(std430, set = 0, binding = 1) buffer External { uint ext[]; };
layout(std430, set = 0, binding = 2) readonly buffer Tables { float tab[]; };
layout(push_constant) uniform Push { int p[32]; } pc;
#define P(i) pc.p[i]
#define PF(i) intBitsToFloat(pc.p[i])
#define TI(i) floatBitsToInt(tab[i])
