// Shared by blur_quad_rows.comp and blur_quad_columns.comp: the separable gaussian on rows of
// whole quads for radii up to QUAD_TAPS, every loop run to a compile-time bound with the radius
// (a specialization constant) as a guard. glslc then unrolls them and the windows live in
// registers; a loop bounded by RADIUS itself stays a loop in the SPIR-V and keeps its arrays in
// memory, which on lavapipe cost about 3x the arithmetic (blur sigma 2 at 1280x720: 22 -> ? ms CPU).
#include "blur_weights.glsl"
const int QUAD_TAPS = 12;
const int BLOCK = 16;
const uint M = 0x00ff00ffu;
// The weights as an array (declared inside main: W[k] at an unrolled k folds to the constant).
#define BLUR_WEIGHTS const uint W[25] = uint[25](W0, W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12, W13, W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24)
