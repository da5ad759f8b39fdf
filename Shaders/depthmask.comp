#version 450
#include "common.glsl"
// Alpha mask by depth: pixels with depth in [near, far] are kept, all others are written as
// transparent black explicitly. f: near, far.
void main() {
    GRANITE_PIXEL(x, y)
    float d = depthAt(x, y);
    dst[y * pc.size.x + x] = epilogue((d >= F(0) && d <= F(1)) ? src[y * pc.size.x + x] : 0u);
}
