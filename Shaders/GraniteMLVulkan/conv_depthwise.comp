#version 450
#include "ml.glsl"
// Depthwise convolution (group = C = M: one input channel per output channel; any kernel size,
// strides, pads, dilations) with bias and epilogue, NCHW. Conv's other shapes run conv.comp;
// DispatchBuilder.conv picks.
//
// A workgroup computes 64·PIXELS output pixels of one channel (gl_WorkGroupID.y: the channel,
// z: the batch), each invocation PIXELS of them (64 apart, so neighbouring invocations read
// neighbouring pixels). The channel's weights are the same for the whole workgroup: each tap's
// weight is read once per invocation for its PIXELS pixels (conv.comp reads it once per
// multiply-add), the inputs one read per tap and pixel, branch-free.
// With 21 set, the int8 form (see conv.comp): centred weights as int32 bits, quantiseInput and
// requantise of ml.glsl, so the sums and outputs are the CPU's to the bit.
// On lavapipe (2 cores, same run): FastDepth's 18 depthwise convolutions 40 ms (conv.comp:
// 1.53 s for all 38 of its convolutions).
// P: as conv.comp.
#define PIXELS 4
layout(local_size_x = 64) in;

void main() {
    int C = P(6), H = P(7), W = P(8), OH = P(10), OW = P(11), KH = P(12), KW = P(13);
    int n = int(gl_WorkGroupID.z), m = int(gl_WorkGroupID.y);
    int pixels = OH * OW;
    int first = int(gl_WorkGroupID.x) * 64 * PIXELS + int(gl_LocalInvocationID.x);
    int DH = P(18), DW = P(19);
    // Each pixel's top-left tap; pixels past the last compute pixel 0 and write nothing.
    int y0[PIXELS], x0[PIXELS];
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        p = p < pixels ? p : 0;
        int oy = p / OW, ox = p - oy * OW;
        y0[r] = oy * P(14) - P(16);
        x0[r] = ox * P(15) - P(17);
    }
    int plane = P(0) + (n * C + m) * H * W;
    int wbase = P(2) + m * KH * KW;
    float result[PIXELS];
    // Two loops, one a form: a branch inside would run both sides on CPU drivers. Taps outside
    // the input read a clamped address and add zero (no branch either).
    if (P(21) != 0) {
        float inv = PF(23);
        int acc[PIXELS];
        for (int r = 0; r < PIXELS; r++) acc[r] = 0;
        for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++) {
            int w = CI(wbase + ky * KW + kx);
            for (int r = 0; r < PIXELS; r++) {
                int iy = y0[r] + ky * DH, ix = x0[r] + kx * DW;
                bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                int q = quantiseInput(A(plane + clamp(iy, 0, H - 1) * W + clamp(ix, 0, W - 1)), inv);
                acc[r] += inside ? q * w : 0;
            }
        }
        for (int r = 0; r < PIXELS; r++) result[r] = requantise(acc[r], CI(P(3) + m), K(P(22) + m), PF(24), PF(25), PF(26));
    } else {
        float acc[PIXELS];
        for (int r = 0; r < PIXELS; r++) acc[r] = 0.0;
        for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++) {
            float w = K(wbase + ky * KW + kx);
            for (int r = 0; r < PIXELS; r++) {
                int iy = y0[r] + ky * DH, ix = x0[r] + kx * DW;
                bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                float v = A(plane + clamp(iy, 0, H - 1) * W + clamp(ix, 0, W - 1));
                acc[r] += inside ? v * w : 0.0;
            }
        }
        float bias = P(3) >= 0 ? K(P(3) + m) : 0.0;
        for (int r = 0; r < PIXELS; r++) result[r] = epilogue(acc[r] + bias, P(4), P(5));
    }
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        if (p >= pixels) break;
        act[P(1) + (n * C + m) * pixels + p] = result[r];
    }
}
