#version 450
#include "common.glsl"
// Integer pixel remaps. MODE 0 (crop/flip/rotate): src = (a.x*x + a.y*y + a.z, b.x*x + b.y*y + b.z).
// MODE 1 (pixellate): the centre of each a.x-sized block.
layout(constant_id = 0) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int sx, sy;
    if (MODE == 0) {
        sx = pc.a.x * x + pc.a.y * y + pc.a.z;
        sy = pc.b.x * x + pc.b.y * y + pc.b.z;
    } else {
        int s = pc.a.x;
        sx = min((x / s) * s + s / 2, pc.size.x - 1);
        sy = min((y / s) * s + s / 2, pc.size.y - 1);
    }
    dst[y * pc.size.z + x] = src[sy * pc.size.x + sx];
}
