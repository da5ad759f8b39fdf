#version 450
#include "common.glsl"
// The scene-cut measure of the `background` filter's moving average (issue 38): how much the
// frame's luma changed since the last frame of this size. Each pixel adds |luma - last luma| to
// a 64-bit sum in the filter's resident state (binding 4, see background.comp), and stores its
// luma for the next frame; a pixel with no last luma (a fresh state, 0xffffffff) sets the
// "no history" flag instead. background.comp reads the sum after a barrier; the chain zeroes the
// header before this pass. MaskRefinement.swift is the CPU reference.
//   state: [0] sum low, [1] sum high, [2] no history, [3] unused,
//          [4 ..< 4 + n] the averaged alpha (floats), [4 + n ..< 4 + 2n] each pixel's last luma.
layout(std430, set = 0, binding = 4) buffer State { uint state[]; };

// Each workgroup sums its 64 pixels first (at most 64 x 255, so the flag fits above bit 16),
// then one invocation adds the group's sum: one atomic per 64 pixels, not per pixel.
shared uint partial[64];

void main() {
    int x = int(gl_GlobalInvocationID.x), y = int(gl_GlobalInvocationID.y);
    int w = pc.size.x, h = pc.size.y, n = w * h;
    uint mine = 0u;
    if (x < w && y < h) {
        int i = y * w + x;
        uint l = uint(luma8(unpackPx(src[i])));
        uint last = state[4 + n + i];
        mine = last > 255u ? 0x10000u : uint(abs(int(l) - int(last)));
        state[4 + n + i] = l;
    }
    partial[gl_LocalInvocationIndex] = mine;
    barrier();
    if (gl_LocalInvocationIndex != 0u) return;
    uint sum = 0u, fresh = 0u;
    for (int k = 0; k < 64; k++) {
        sum += partial[k] & 0xffffu;
        fresh |= partial[k] >> 16;
    }
    if (sum != 0u) {
        // A 64-bit sum from 32-bit atomics: the add that wraps carries into the high word.
        uint before = atomicAdd(state[0], sum);
        if (before > 0xffffffffu - sum) atomicAdd(state[1], 1u);
    }
    if (fresh != 0u) atomicOr(state[2], 1u);
}
