#version 450
#include "ml.glsl"
// MatMul (batched, broadcast batches) and Gemm (transposes, alpha, beta·C broadcast):
// out[b][i][j] = alpha · Σk A[i,k]·B[k,j] + beta · C[i,j], A and B read through strides so a
// transpose costs nothing. Batch b reads A and B at the offsets of table entry b (int pairs).
// One invocation per output value (x: column, y: row, z: batch).
// P: 0 A, 1 B, 2 out, 3 M, 4 N, 5 K, 6 A row stride, 7 A k stride, 8 B k stride, 9 B column stride,
//    10 batch table, 11 A in constants, 12 B in constants, 13 C (-1: none), 14 C in constants,
//    15 C row stride, 16 C column stride, 17 alpha, 18 beta (float bits), 19 epilogue, 20 steps
layout(local_size_x = 8, local_size_y = 8) in;

void main() {
    int j = int(gl_GlobalInvocationID.x), i = int(gl_GlobalInvocationID.y), b = int(gl_GlobalInvocationID.z);
    int M = P(3), N = P(4), K = P(5);
    if (i >= M || j >= N) return;
    int a0 = P(0) + CI(P(10) + 2 * b) + i * P(6), b0 = P(1) + CI(P(10) + 2 * b + 1) + j * P(9);
    float acc = 0.0;
    for (int k = 0; k < K; k++) acc += operand(P(11), a0 + k * P(7)) * operand(P(12), b0 + k * P(8));
    float v = PF(17) * acc;
    if (P(13) >= 0) v += PF(18) * operand(P(14), P(13) + i * P(15) + j * P(16));
    act[P(2) + (b * M + i) * N + j] = epilogue(v, P(19), P(20));
}
