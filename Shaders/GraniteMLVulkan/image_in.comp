#version 450
#include "bridge.glsl"
// The model's input tensor from a picture already at its size (rgba8, R in the low byte), the
// arithmetic of GraniteML's ImageTensor.input: (value * pixelScale - mean[c]) / std[c], rounded
// half to even and clamped for integer inputs; NHWC or NCHW. One invocation per pixel.
// P: 0 input's offset in the arena (floats), 1 width, 2 height, 3 NCHW (1) or NHWC (0),
//    4 pixelScale, 5-7 mean, 8-10 std (float bits), 11 integer input (1: round and clamp to 12..13), 12 lo, 13 hi
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    int n = P(1) * P(2);
    if (i >= n) return;
    uint px = ext[i];
    for (int c = 0; c < 3; c++) {
        precise float scaled = float((px >> (8 * c)) & 255u) * PF(4);
        precise float v = (scaled - PF(5 + c)) / PF(8 + c);
        if (P(11) != 0) v = clamp(roundEven(v), PF(12), PF(13));
        act[P(0) + (P(3) != 0 ? c * n + i : i * 3 + c)] = v;
    }
}
