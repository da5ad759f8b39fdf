#version 450
#include "ml.glsl"
// Conv (grouped, depthwise, strides, pads, dilations) with bias and epilogue, NCHW.
// One invocation computes one output pixel of up to 4 output channels of one group
// (gl_GlobalInvocationID: x = pixel, y = channel quad, z = batch), reusing each input read.
// With 21 set, the quantised form GraniteML's int8 kernels compute (GraniteML's IntegerConv), in
// 32-bit integers, which every device has (no shaderInt8 needed): inputs rint(x · inv), centred
// weights, exact int sums, then rint(clamp(float(acc + bias[m]) · scale[m], lo, hi)) · outScale —
// the same integers as the CPU, so the outputs agree bit for bit (quantiseInput and requantise of
// ml.glsl). GraniteML's int8 form exists for depthwise and stride-1 pointwise convolutions only,
// which conv_depthwise.comp and conv_pointwise.comp run: this kernel is the general case (grouped
// convolutions, and float ones whose output is quantised), one weight fetch per multiply-add.
// The float form sums the taps in the CPU's (and ONNX Runtime's im2col + SGEMM's) order, each
// one fused multiply-add rounded once, then adds the bias: the very float sums, so a value that
// lands on a quantisation tie rounds the same way (a sum rounded twice a tap is an ulp off there,
// and the step spreads through the network). With 27 set the device's fma() rounds twice and
// exactFma (ml.glsl) stands in.
// P: 0 in, 1 out, 2 weights, 3 bias (-1: none; int32 bits when quantised), 4 epilogue, 5 steps,
//    6 C, 7 H, 8 W, 9 M, 10 OH, 11 OW, 12 KH, 13 KW, 14 SH, 15 SW, 16 PT, 17 PL, 18 DH, 19 DW,
//    20 group, 21 quantised, 22 scales, 23 inv, 24 lo, 25 hi, 26 outScale (float bits), 27 exactFma
layout(local_size_x = 64) in;

void main() {
    int pix = int(gl_GlobalInvocationID.x), quad = int(gl_GlobalInvocationID.y), n = int(gl_GlobalInvocationID.z);
    int C = P(6), H = P(7), W = P(8), M = P(9), OH = P(10), OW = P(11), KH = P(12), KW = P(13);
    if (pix >= OH * OW) return;
    int G = P(20), cg = C / G, mg = M / G;
    int quadsPerGroup = (mg + 3) / 4;
    int g = quad / quadsPerGroup, m0 = g * mg + (quad % quadsPerGroup) * 4;
    int mcount = min(4, (g + 1) * mg - m0);
    if (g >= G || mcount <= 0) return;
    int oy = pix / OW, ox = pix - oy * OW;
    int y0 = oy * P(14) - P(16), x0 = ox * P(15) - P(17), DH = P(18), DW = P(19);
    vec4 acc = vec4(0.0);
    bool emulate = P(27) != 0;
    ivec4 iacc = ivec4(0);
    bool quantised = P(21) != 0;
    float inv = PF(23);
    int taps = cg * KH * KW;
    int wbase = P(2) + m0 * taps;
    int ibase = P(0) + (n * C + g * cg) * H * W;
    for (int ci = 0; ci < cg; ci++) {
        int plane = ibase + ci * H * W;
        for (int ky = 0; ky < KH; ky++) {
            int iy = y0 + ky * DH;
            if (iy < 0 || iy >= H) continue;
            for (int kx = 0; kx < KW; kx++) {
                int ix = x0 + kx * DW;
                if (ix < 0 || ix >= W) continue;
                float v = A(plane + iy * W + ix);
                int t = wbase + (ci * KH + ky) * KW + kx;
                if (quantised) {
                    int q = quantiseInput(v, inv);
                    iacc.x += q * int(K(t));
                    if (mcount > 1) iacc.y += q * int(K(t + taps));
                    if (mcount > 2) iacc.z += q * int(K(t + 2 * taps));
                    if (mcount > 3) iacc.w += q * int(K(t + 3 * taps));
                    continue;
                }
                if (emulate) {
                    acc.x = exactFma(v, K(t), acc.x);
                    if (mcount > 1) acc.y = exactFma(v, K(t + taps), acc.y);
                    if (mcount > 2) acc.z = exactFma(v, K(t + 2 * taps), acc.z);
                    if (mcount > 3) acc.w = exactFma(v, K(t + 3 * taps), acc.w);
                    continue;
                }
                acc.x = fma(v, K(t), acc.x);
                if (mcount > 1) acc.y = fma(v, K(t + taps), acc.y);
                if (mcount > 2) acc.z = fma(v, K(t + 2 * taps), acc.z);
                if (mcount > 3) acc.w = fma(v, K(t + 3 * taps), acc.w);
            }
        }
    }
    int plane = OH * OW;
    for (int k = 0; k < mcount; k++) {
        int m = m0 + k;
        if (quantised) {
            act[P(1) + (n * M + m) * plane + pix] = requantise(iacc[k], CI(P(3) + m), K(P(22) + m), PF(24), PF(25), PF(26));
            continue;
        }
        float v = acc[k] + (P(3) >= 0 ? K(P(3) + m) : 0.0);
        act[P(1) + (n * M + m) * plane + pix] = epilogue(v, P(4), P(5));
    }
}
