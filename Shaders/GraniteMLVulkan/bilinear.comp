#version 450
#include "ml.glsl"
// Linear Resize of the last two axes with taps made at load (GraniteML's Resize.geometry: every
// coordinate mode), the same arithmetic as the CPU kernel. One invocation per output value.
// P: 0 in, 1 out, 2 planes, 3 H, 4 W, 5 OH, 6 OW, 7 tables: row lo, row hi, row t (OH each),
//    then column lo, hi, t (OW each), 8 epilogue, 9 steps
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    int H = P(3), W = P(4), OH = P(5), OW = P(6), T = P(7);
    if (i >= P(2) * OH * OW) return;
    int p = i / (OH * OW), r = i - p * OH * OW, y = r / OW, x = r - y * OW;
    int base = P(0) + p * H * W;
    int r0 = base + CI(T + y) * W, r1 = base + CI(T + OH + y) * W;
    float ty = K(T + 2 * OH + y);
    int c = T + 3 * OH;
    int x0 = CI(c + x), x1 = CI(c + OW + x);
    float tx = K(c + 2 * OW + x);
    float top = A(r0 + x0) * (1.0 - tx) + A(r0 + x1) * tx;
    float bottom = A(r1 + x0) * (1.0 - tx) + A(r1 + x1) * tx;
    act[P(1) + i] = epilogue(top * (1.0 - ty) + bottom * ty, P(8), P(9));
}
