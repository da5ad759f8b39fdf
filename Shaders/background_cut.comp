#version 450
#include "common.glsl"
// The scene-cut measure of the `background` filter's moving average (issue 38): how much the
// frame's luma changed since the last frame of this size. Each invocation takes a run of 32
// pixels of one row, adds their |luma - last luma| to a 64-bit sum in the filter's resident state
// (binding 4, see background.comp) with one atomic, and stores their luma for the next frame.
// Invocation 0 also turns the "fresh" word (the buffer is made all ones) into the "no history"
// flag for this frame only. background.comp reads them after a barrier; the chain zeroes words
// 0-2 before this pass. MaskRefinement.swift is the CPU reference (the same integer sum).
//   state: [0] sum low, [1] sum high, [2] no history, [3] fresh (all ones until the first frame),
//          [4 ..< 4 + n] the averaged alpha (floats), [4 + n ..< 4 + 2n] each pixel's last luma.
// No shared memory, no barrier: on lavapipe a workgroup barrier and a one-lane reduction cost
// more than the whole pass; a loop per invocation keeps every SIMD lane busy.
// VEC 1 (rows of whole quads): the pixels and lumas move as uvec4s.
layout(constant_id = 1) const int VEC = 0;
layout(std430, set = 0, binding = 4) buffer State { uint state[]; };
layout(std430, set = 0, binding = 4) buffer StateQuads { uvec4 state4[]; };

const int RUN = 32;

void main() {
    int w = pc.size.x, h = pc.size.y, n = w * h;
    int runs = (w + RUN - 1) / RUN;
    int g = int(gl_GlobalInvocationID.x);
    if (g == 0 && state[3] != 0u) {
        state[2] = 1u;
        state[3] = 0u;
    }
    if (g >= runs * h) return;
    int y = g / runs, x0 = (g % runs) * RUN, end = min(x0 + RUN, w);
    uint sum = 0u;
    if (VEC == 1) {
        // n is a multiple of 4, so the luma area (from 4 + n) starts on a quad: quad 1 + n / 4.
        for (int x = x0; x < end; x += 4) {
            int q = (y * w + x) / 4;
            uvec4 p = src4[q];
            uvec4 l = uvec4(luma8(unpackPx(p.x)), luma8(unpackPx(p.y)), luma8(unpackPx(p.z)), luma8(unpackPx(p.w)));
            uvec4 last = state4[1 + n / 4 + q];
            uvec4 d = uvec4(abs(ivec4(l) - ivec4(last)));
            sum += d.x + d.y + d.z + d.w;
            state4[1 + n / 4 + q] = l;
        }
    } else {
        for (int x = x0; x < end; x++) {
            int i = y * w + x;
            uint l = uint(luma8(unpackPx(src[i])));
            sum += uint(abs(int(l) - int(state[4 + n + i])));
            state[4 + n + i] = l;
        }
    }
    if (sum != 0u) {
        // A 64-bit sum from 32-bit atomics: the add that wraps carries into the high word.
        uint before = atomicAdd(state[0], sum);
        if (before > 0xffffffffu - sum) atomicAdd(state[1], 1u);
    }
}
