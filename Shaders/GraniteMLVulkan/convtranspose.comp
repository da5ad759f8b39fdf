#version 450
#include "ml.glsl"
// ConvTranspose (groups, strides, pads, dilations, output padding / output_shape as GraniteML's
// ConvTranspose.geometry resolves them), bias and epilogue, NCHW, gathered: output (oy, ox) sums
// the inputs (iy, ix) with oy = iy·SH − PT + ky·DH (and likewise x). One invocation per value.
// Weights [C, M / group, KH, KW].
// P: 0 in, 1 out, 2 weights, 3 bias (-1: none), 4 epilogue, 5 steps, 6 C, 7 H, 8 W, 9 M, 10 OH, 11 OW,
//    12 KH, 13 KW, 14 SH, 15 SW, 16 PT, 17 PL, 18 DH, 19 DW, 20 group, 21 batch
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    int C = P(6), H = P(7), W = P(8), M = P(9), OH = P(10), OW = P(11), KH = P(12), KW = P(13);
    if (i >= P(21) * M * OH * OW) return;
    int ox = i % OW, oy = (i / OW) % OH, m = (i / (OW * OH)) % M, n = i / (OW * OH * M);
    int G = P(20), cg = C / G, mg = M / G, g = m / mg, mo = m - g * mg;
    float acc = P(3) >= 0 ? K(P(3) + m) : 0.0;
    for (int ky = 0; ky < KH; ky++) {
        int ty = oy + P(16) - ky * P(18);
        if (ty < 0 || ty % P(14) != 0) continue;
        int iy = ty / P(14);
        if (iy >= H) continue;
        for (int kx = 0; kx < KW; kx++) {
            int tx = ox + P(17) - kx * P(19);
            if (tx < 0 || tx % P(15) != 0) continue;
            int ix = tx / P(15);
            if (ix >= W) continue;
            for (int ci = g * cg; ci < (g + 1) * cg; ci++) {
                acc += A(P(0) + ((n * C + ci) * H + iy) * W + ix) * K(P(2) + ((ci * mg + mo) * KH + ky) * KW + kx);
            }
        }
    }
    act[P(1) + i] = epilogue(acc, P(4), P(5));
}
