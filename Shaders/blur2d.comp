#version 450
// Gaussian blur as one looped 2-D pass in 16x16 workgroups, weights w[|dx|] * w[|dy|] from a
// buffer (Q8 integers, used as floats here). Kept only to measure shader styles
// (granite-bench filters --styles); the filters use
// the separable blur.comp.
#define GRANITE_CUSTOM_LOCAL_SIZE
layout(local_size_x = 16, local_size_y = 16, local_size_z = 1) in;
#include "common.glsl"
layout(constant_id = 0) const int RADIUS = 1;

void main() {
    GRANITE_PIXEL(x, y)
    vec4 acc = vec4(0.0);
    for (int dy = -RADIUS; dy <= RADIUS; dy++) {
        float wy = float(aux[abs(dy)]) / 256.0;
        for (int dx = -RADIUS; dx <= RADIUS; dx++) {
            acc += vec4(unpackPx(srcAt(x + dx, y + dy))) * (wy * float(aux[abs(dx)]) / 256.0);
        }
    }
    dst[y * pc.size.x + x] = epilogue(packPx(uvec4(min(acc + 0.5, vec4(255.0)))));
}
