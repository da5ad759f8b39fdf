#version 450
#include "ml.glsl"
// Per-channel steps: an affine y = x·a[c] + b[c] (mode 0, BatchNormalization), QuantizeLinear's
// rint(clamp(x / s[c], lo − zp[c], hi − zp[c])) + zp[c], half to even (mode 1), or
// DequantizeLinear's (x − zp[c])·s[c] (mode 2), the CPU kernels' arithmetic.
// c = (i / inner) % channels. Then the epilogue.
// P: 0 in, 1 out, 2 table a (scale), 3 table b (shift / zero point), 4 total, 5 inner,
//    6 channels, 7 mode (0 affine, 1 quantise, 2 dequantise), 8 lo, 9 hi (float bits), 10 epilogue, 11 steps
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    if (i >= P(4)) return;
    int c = (i / P(5)) % P(6);
    float x = A(P(0) + i), a = K(P(2) + c), b = K(P(3) + c);
    int mode = P(7);
    float v = mode == 0 ? x * a + b : mode == 1 ? roundEven(clamp(x / a, PF(8) - b, PF(9) - b)) + b : (x - b) * a;
    act[P(1) + i] = epilogue(v, P(10), P(11));
}
