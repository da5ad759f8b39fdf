// Shared by blur_quad_rows.comp and blur_quad_columns.comp: the separable gaussian on rows of
// whole quads (radius up to 24), reading through quad texel views, BLOCK outputs an invocation.
#include "blur_weights.glsl"
const int BLOCK = 16;
const uint M = 0x00ff00ffu;
// The weights as an array (declared inside main; W[k] at an unrolled k folds to the constant).
#define BLUR_WEIGHTS const uint W[25] = uint[25](W0, W1, W2, W3, W4, W5, W6, W7, W8, W9, W10, W11, W12, W13, W14, W15, W16, W17, W18, W19, W20, W21, W22, W23, W24)

#ifdef SOURCE_TEXELS
// The row pass for ROW_OUT = BLOCK + 2 * ROW_MARGIN pixels x0 - ROW_MARGIN ... of row y (a shader
// that includes yuv.glsl and reads its source through the quad texel view): the window read as
// quads (edges replicate through the clamped first/last quad, see srcQuad) and slid over in
// registers. yuyv 0: RGBA8 source; 1/2: the camera's YUYV frame (width % 8 == 0), limited/full
// range, converted while loading. ROW_MARGIN (0 unless the shader defines it before including
// this) adds columns either side: blur_stencil.comp's 3x3 tail needs the blurred x0 - 1 and x0 + 16.
#ifndef ROW_MARGIN
#define ROW_MARGIN 0
#endif
const int ROW_OUT = BLOCK + 2 * ROW_MARGIN;
void blurRow(int y, int x0, int w, int yuyv, out uint res[ROW_OUT]) {
    BLUR_WEIGHTS;
    uint win[ROW_OUT + 2 * 24];
    if (yuyv == 0) {
        const int LQ = (RADIUS + ROW_MARGIN + 3) / 4, NQ = BLOCK / 4 + 2 * LQ;
        uvec4 q[BLOCK / 4 + 2 * 7];
        int rowQuad = y * (w >> 2), q0 = (x0 >> 2) - LQ;
        [[unroll]] for (int k = 0; k < NQ; k++) q[k] = srcQuad(rowQuad, q0 + k, w >> 2);
        uint first = q[0].x, last = q[NQ - 1].w;
        [[unroll]] for (int i = 0; i < ROW_OUT + 2 * RADIUS; i++) {
            int x = x0 - ROW_MARGIN - RADIUS + i, j = i + 4 * LQ - RADIUS - ROW_MARGIN;
            win[i] = x < 0 ? first : (x >= w ? last : q[j >> 2][j & 3]);
        }
    } else {
        const int LQ = (RADIUS + ROW_MARGIN + 7) / 8, NQ = BLOCK / 8 + 2 * LQ;
        uvec4 q[BLOCK / 8 + 2 * 4];
        int rowQuad = y * (w >> 3), q0 = (x0 >> 3) - LQ;
        [[unroll]] for (int k = 0; k < NQ; k++) q[k] = srcQuad(rowQuad, q0 + k, w >> 3);
        uint first = yuyvPixel(q[0].x, 0, yuyv - 1), last = yuyvPixel(q[NQ - 1].w, 1, yuyv - 1);
        [[unroll]] for (int i = 0; i < ROW_OUT + 2 * RADIUS; i++) {
            int x = x0 - ROW_MARGIN - RADIUS + i, j = i + 8 * LQ - RADIUS - ROW_MARGIN;
            win[i] = x < 0 ? first : (x >= w ? last : yuyvPixel(q[j >> 3][(j & 7) >> 1], j & 1, yuyv - 1));
        }
    }
    [[unroll]] for (int n = 0; n < ROW_OUT; n++) {
        uint centre = win[n + RADIUS];
        uint even = (centre & M) * W[0], odd = ((centre >> 8) & M) * W[0];
        [[unroll]] for (int k = 1; k <= RADIUS; k++) {
            uint a = win[n + RADIUS - k], b = win[n + RADIUS + k];
            even += ((a & M) + (b & M)) * W[k];
            odd += (((a >> 8) & M) + ((b >> 8) & M)) * W[k];
        }
        res[n] = (((even + 0x00800080u) >> 8) & M) | ((((odd + 0x00800080u) >> 8) & M) << 8);
    }
}
#endif
