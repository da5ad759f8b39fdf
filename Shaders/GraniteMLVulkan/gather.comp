#version 450
#include "ml.glsl"
// Data movement through an index map made at load (Transpose, Pad, Concat, Slice, Gather,
// nearest Resize, Reshape...): out[i] = src[map[i]]; a negative entry writes `fill` (Pad's
// constant) or, with `skip`, nothing (Concat: another input's dispatch writes it). Then the epilogue.
// P: 0 src, 1 out, 2 map, 3 total, 4 fill (float bits), 5 skip, 6 epilogue, 7 steps, 8 src in constants
layout(local_size_x = 64) in;

void main() {
    int i = int(gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 65535u * 64u);
    if (i >= P(3)) return;
    int j = CI(P(2) + i);
    if (j < 0 && P(5) != 0) return;
    float v = j >= 0 ? operand(P(8), P(0) + j) : PF(4);
    act[P(1) + i] = epilogue(v, P(6), P(7));
}
