#version 450
#include "ml.glsl"
// Softmax over rows of `length` values `inner` apart (GraniteML's Linear.softmaxExtent: the
// opset's axis rules), max-subtracted as the CPU kernel. One invocation per row.
// P: 0 in, 1 out, 2 rows (outer · inner), 3 length, 4 inner, 5 epilogue, 6 steps
layout(local_size_x = 64) in;

void main() {
    int r = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    if (r >= P(2)) return;
    int length = P(3), inner = P(4);
    int base = (r / inner) * length * inner + r % inner;
    float peak = -1.0 / 0.0;
    for (int j = 0; j < length; j++) peak = max(peak, A(P(0) + base + j * inner));
    float sum = 0.0;
    for (int j = 0; j < length; j++) sum += exp(A(P(0) + base + j * inner) - peak);
    for (int j = 0; j < length; j++) {
        act[P(1) + base + j * inner] = epilogue(exp(A(P(0) + base + j * inner) - peak) / sum, P(5), P(6));
    }
}
