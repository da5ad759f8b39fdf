#version 450
#include "common.glsl"
// One pass of a separable gaussian, looped: the same 8-bit fixed-point arithmetic as blur.comp
// but the Q8 weights come from a buffer (aux), for radii above blur.comp's 24 unrolled taps.
// DIR 0 = rows, 1 = columns.
layout(constant_id = 0) const int RADIUS = 1;
layout(constant_id = 1) const int DIR = 0;

const uint M = 0x00ff00ffu;

void main() {
    GRANITE_PIXEL(x, y)
    int w = pc.size.x, h = pc.size.y, row = y * w;
    uint c = src[row + x];
    uint even = (c & M) * aux[0], odd = ((c >> 8) & M) * aux[0];
    for (int k = 1; k <= RADIUS; k++) {
        uint a = DIR == 0 ? src[row + max(x - k, 0)] : src[max(y - k, 0) * w + x];
        uint b = DIR == 0 ? src[row + min(x + k, w - 1)] : src[min(y + k, h - 1) * w + x];
        even += ((a & M) + (b & M)) * aux[k];
        odd += (((a >> 8) & M) + ((b >> 8) & M)) * aux[k];
    }
    dst[row + x] = epilogue((((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8));
}
