#version 450
#include "ml.glsl"
// 1×1 convolution (group 1, no padding, any stride) — most of a MobileNet's multiply-adds — with
// bias and epilogue, NCHW. Conv's other shapes run conv.comp; DispatchBuilder.conv picks.
//
// A workgroup computes a tile of 64·PIXELS output pixels × BLOCK output channels
// (gl_WorkGroupID.y: the channel block, z: the batch); each invocation PIXELS pixels (64 apart, so
// neighbouring invocations read neighbouring pixels) of the BLOCK channels, in PIXELS·BLOCK
// accumulators (register blocking). Per input channel an invocation reads each of its pixels
// once and the block's BLOCK weights once, for PIXELS·BLOCK multiply-adds — against one weight
// and one input read per multiply-add in conv.comp. The weights are laid out for this at load:
// block, input channel, then the block's BLOCK channels (zeros past M), so one input channel's
// weights of a block are one quad (one read) at an address the whole workgroup shares.
// With 21 set, the int8 form (see conv.comp): centred weights as int32 bits, quantiseInput and
// requantise of ml.glsl, so the sums and outputs are the CPU's to the bit.
// P: as conv.comp (2: the blocked weights).
#define PIXELS 4
#define BLOCK 4  // one quad (K4) of weights per input channel
layout(local_size_x = 64) in;

void main() {
    int C = P(6), H = P(7), W = P(8), M = P(9), OH = P(10), OW = P(11);
    int n = int(gl_WorkGroupID.z), block = int(gl_WorkGroupID.y);
    int pixels = OH * OW, plane = H * W;
    int first = int(gl_WorkGroupID.x) * 64 * PIXELS + int(gl_LocalInvocationID.x);
    // Each pixel's input offset; pixels past the last compute pixel 0 and write nothing, so the
    // loops stay the same for every invocation.
    int src[PIXELS];
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        p = p < pixels ? p : 0;
        int oy = p / OW, ox = p - oy * OW;
        src[r] = P(0) + n * C * plane + oy * P(14) * W + ox * P(15);
    }
    int wquad = P(2) / 4 + block * C;  // one quad of weights per input channel
    int m0 = block * BLOCK;
    float results[PIXELS][BLOCK];
    if (P(21) != 0) {
        float inv = PF(23);
        int acc[PIXELS][BLOCK];
        for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = 0;
        for (int c = 0; c < C; c++) {
            ivec4 w = CI4(wquad + c);
            for (int r = 0; r < PIXELS; r++) {
                int q = quantiseInput(A(src[r] + c * plane), inv);
                for (int j = 0; j < BLOCK; j++) acc[r][j] += q * w[j];
            }
        }
        for (int j = 0; j < BLOCK; j++) {
            int m = min(m0 + j, M - 1);
            int bias = CI(P(3) + m);
            float scale = K(P(22) + m);
            for (int r = 0; r < PIXELS; r++) results[r][j] = requantise(acc[r][j], bias, scale, PF(24), PF(25), PF(26));
        }
    } else {
        float acc[PIXELS][BLOCK];
        for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = 0.0;
        for (int c = 0; c < C; c++) {
            vec4 w = K4(wquad + c);
            for (int r = 0; r < PIXELS; r++) {
                float v = A(src[r] + c * plane);
                for (int j = 0; j < BLOCK; j++) acc[r][j] += v * w[j];
            }
        }
        for (int j = 0; j < BLOCK; j++) {
            int m = min(m0 + j, M - 1);
            float bias = P(3) >= 0 ? K(P(3) + m) : 0.0;
            for (int r = 0; r < PIXELS; r++) results[r][j] = epilogue(acc[r][j] + bias, P(4), P(5));
        }
    }
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        if (p >= pixels) break;
        int dst = P(1) + (n * M + m0) * pixels + p;
        for (int j = 0; j < BLOCK; j++) if (m0 + j < M) act[dst + j * pixels] = results[r][j];
    }
}
