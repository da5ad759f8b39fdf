#version 450
#include "common.glsl"
// Alpha mask by depth: pixels with depth in [near, far] are kept, all others are written as
// transparent black explicitly. f: near, far.
void main() {
    GRANITE_PIXEL(x, y)
    float d = depthAt(x, y);
    dst[y * pc.size.x + x] = (d >= f[0] && d <= f[1]) ? src[y * pc.size.x + x] : 0u;
}
