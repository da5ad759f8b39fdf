#version 450
#include "ml.glsl"
// MaxPool / AveragePool (and the global ones: the whole plane as the window), with the CPU
// kernel's window rules (end padding, count_include_pad). One invocation per output value.
// P: 0 in, 1 out, 2 planes, 3 H, 4 W, 5 OH, 6 OW, 7 KH, 8 KW, 9 SH, 10 SW, 11 PT, 12 PL,
//    13 DH, 14 DW, 15 pad end H, 16 pad end W, 17 max, 18 count padding, 19 epilogue, 20 steps
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    int H = P(3), W = P(4), OH = P(5), OW = P(6);
    if (i >= P(2) * OH * OW) return;
    int p = i / (OH * OW), r = i - p * OH * OW, oy = r / OW, ox = r - oy * OW;
    bool isMax = P(17) != 0;
    float acc = isMax ? -1.0 / 0.0 : 0.0;
    int count = 0;
    int y0 = oy * P(9) - P(11), x0 = ox * P(10) - P(12);
    int base = P(0) + p * H * W;
    for (int ky = 0; ky < P(7); ky++) {
        int iy = y0 + ky * P(13);
        if (iy >= H + P(15)) break;
        for (int kx = 0; kx < P(8); kx++) {
            int ix = x0 + kx * P(14);
            if (ix >= W + P(16)) break;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) { count += P(18); continue; }
            float v = A(base + iy * W + ix);
            acc = isMax ? max(acc, v) : acc + v;
            count += 1;
        }
    }
    float v = isMax ? acc : (count > 0 ? acc / float(count) : 0.0);
    act[P(1) + i] = epilogue(v, P(19), P(20));
}
