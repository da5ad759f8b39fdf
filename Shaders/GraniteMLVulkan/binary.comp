#version 450
#include "ml.glsl"
// Element-wise Add/Sub/Mul/Div with NumPy broadcasting (rank <= 6), or a copy (op 0: an
// activation node on its own), then the epilogue. One invocation per output value.
// P: 0 a, 1 b, 2 out, 3 epilogue, 4 steps, 5 op, 6 total, 7 a in constants, 8 b in constants,
//    9..14 output dims, 15..20 a strides, 21..26 b strides (0 where broadcast)
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    if (i >= P(6)) return;
    int rest = i, ia = 0, ib = 0;
    for (int d = 5; d >= 0; d--) {
        int extent = P(9 + d);
        int k = rest % extent;
        rest /= extent;
        ia += k * P(15 + d);
        ib += k * P(21 + d);
    }
    float a = operand(P(7), P(0) + ia);
    float v = a;
    int op = P(5);
    if (op != 0) {
        float b = operand(P(8), P(1) + ib);
        if (op == 1) v = a + b;
        else if (op == 2) v = a - b;
        else if (op == 3) v = a * b;
        else v = a / b;
    }
    act[P(2) + i] = epilogue(v, P(3), P(4));
}
