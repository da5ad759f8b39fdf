// Shared by blur_quad_rows.comp and blur_quad_columns.comp: the separable gaussian on rows of
// whole quads (radius up to 24), reading through quad texel views, BLOCK outputs an invocation.
#include "blur_weights.glsl"
const int BLOCK = 16;
const uint M = 0x00ff00ffu;
// The weights as an array (declared inside main; W[k] at an unrolled k folds to the constant).
#define BLUR_WEIGHTS const uint W[25] = uint[25](W0, W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12, W13, W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24)
