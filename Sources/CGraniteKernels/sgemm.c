// Float C = A·B (row-major, no transposes) for the convolutions' GEMMs. On AVX-512: tiles of
// 6 rows x 64 columns held in 24 registers, B copied per tile and K chunk into a contiguous
// stack buffer (no cache-set aliasing from large row strides), A broadcast from its rows.
// On the small-M, long-N shapes of convolutions this runs about twice as fast as OpenBLAS's
// Haswell kernels here. The AVX2 and portable builds (end of the file) pack the same way and
// sum in the same order with the same fused multiply-adds, so all three give the same bits.
#include "common.h"

#include <math.h>
#include <string.h>

#define GK_SG_KC 256
/* ONNX Runtime's SGEMM (MLAS) sums K in blocks of 128 (MLAS_SGEMM_STRIDEK): each block from zero,
 * one fused multiply-add per product, and the blocks' sums added in order. Every build here does
 * the same (GK_SG_KC is a multiple, so a packed chunk holds whole blocks). MLAS widens the block
 * when N < K and N <= 64, which convolutions (N: output pixels) do not meet. */
#define GK_ORT_KBLOCK 128

/* Copies rows [k0, k0 + kc) of columns [x, x + cols) of B into buf (64 floats a row). */
GK_INLINE void sg_pack_plain(const float *b, int ldb, int k0, int kc, int x, int cols, float *buf) {
    for (int kk = 0; kk < kc; kk++) {
        const float *src = b + (size_t)(k0 + kk) * ldb + x;
        float *dst = buf + (size_t)kk * 64;
        memcpy(dst, src, (size_t)cols * sizeof(float));
        if (cols < 64) memset(dst + cols, 0, (size_t)(64 - cols) * sizeof(float));
    }
}

/* The same from the im2col matrix of a convolution, read straight from the input. The tile's
 * columns are cut into output-row segments once; the k rows step through (channel, ki, kj)
 * without divisions. */
GK_INLINE void sg_pack_conv(const gk_conv_geometry *g, int k0, int kc, int x, int cols, float *buf) {
    int segY[65], segX[65], segLen[65], nseg = 0;
    for (int p = x; p < x + cols;) {
        int y = p / g->ow, xo = p - y * g->ow;
        int seg = g->ow - xo < x + cols - p ? g->ow - xo : x + cols - p;
        segY[nseg] = y;
        segX[nseg] = xo;
        segLen[nseg++] = seg;
        p += seg;
    }
    const int taps = g->kh * g->kw;
    int ch = k0 / taps, t = k0 % taps, ki = t / g->kw, kj = t % g->kw;
    for (int kk = 0; kk < kc; kk++) {
        float *d = buf + (size_t)kk * 64;
        if (cols < 64) memset(d + cols, 0, (size_t)(64 - cols) * sizeof(float));
        const float *plane = g->input + (size_t)ch * g->h * g->w;
        for (int s = 0; s < nseg; s++) {
            int seg = segLen[s];
            int iy = segY[s] * g->sh - g->pt + ki * g->dh;
            if (iy < 0 || iy >= g->h) {
                memset(d, 0, (size_t)seg * sizeof(float));
            } else {
                const float *in = plane + (size_t)iy * g->w;
                int ix0 = segX[s] * g->sw - g->pl + kj * g->dw;
                if (g->sw == 1) {
                    int lo = ix0 < 0 ? -ix0 : 0, hi = g->w - ix0 < seg ? g->w - ix0 : seg;
                    if (lo > seg) lo = seg;
                    if (hi < lo) hi = lo;
                    if (lo > 0) memset(d, 0, (size_t)lo * sizeof(float));
                    if (hi > lo) memcpy(d + lo, in + ix0 + lo, (size_t)(hi - lo) * sizeof(float));
                    if (seg > hi) memset(d + hi, 0, (size_t)(seg - hi) * sizeof(float));
                } else {
                    for (int e = 0; e < seg; e++) {
                        int ix = ix0 + e * g->sw;
                        d[e] = ix >= 0 && ix < g->w ? in[ix] : 0.0f;
                    }
                }
            }
            d += seg;
        }
        if (++kj == g->kw) {
            kj = 0;
            if (++ki == g->kh) { ki = 0; ch++; }
        }
    }
}

#if GK_X86
/* Bias and epilogue on a tile's sums in registers (bias 0 adds nothing, as gk_ep_run). */
GK_TARGET_VNNI GK_INLINE void sg_finish_regs(__m512 acc[6][4], const float *bias, const gk_epilogue *ep, const int mr,
                                             const int nv) {
    if (bias) {
        for (int r = 0; r < mr; r++) {
            if (bias[r] == 0.0f) continue;
            const __m512 add = _mm512_set1_ps(bias[r]);
            for (int j = 0; j < nv; j++) acc[r][j] = _mm512_add_ps(acc[r][j], add);
        }
    }
    if (ep) {
        for (int s = 0; s < ep->count; s++) {
            if (nv == 4) {
                gk_ep512_step(&ep->steps[s], &acc[0][0], mr * 4);
            } else {
                for (int r = 0; r < mr; r++) gk_ep512_step(&ep->steps[s], acc[r], nv);
            }
        }
    }
}

/* Ends a tile: bias and epilogue when given (the last K chunk), then the store (the last
 * vector masked). */
GK_TARGET_VNNI GK_INLINE void sg_store(__m512 acc[6][4], float *c, int ldc, const float *bias, const gk_epilogue *ep,
                                       const int mr, const int nv, __mmask16 last) {
    sg_finish_regs(acc, bias, ep, mr, nv);
    for (int r = 0; r < mr; r++) {
        for (int j = 0; j < nv; j++) {
            float *d = c + (size_t)r * ldc + 16 * j;
            if (j == nv - 1) _mm512_mask_storeu_ps(d, last, acc[r][j]);
            else _mm512_storeu_ps(d, acc[r][j]);
        }
    }
}

/* Where a tile of a 2x2, stride-2 transposed convolution goes: GEMM rows (oc, ki, kj) with kj
 * fastest from row y on, columns input pixels from x on (rows of w pixels, w a multiple of 16). */
typedef struct {
    float *out;
    int h, w, y, x, cols;
} sg_deconv;

/* Ends such a tile: rows kj = 0 and 1 of one (oc, ki) interleave into 32 consecutive outputs of
 * output row 2·iy + ki per vector of 16 input pixels. */
GK_TARGET_VNNI GK_INLINE void sg_store_deconv(__m512 acc[6][4], const sg_deconv *dc, const float *bias,
                                              const gk_epilogue *ep, const int mr, const int nv) {
    sg_finish_regs(acc, bias, ep, mr, nv);
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    const size_t plane = (size_t)4 * dc->h * dc->w;
    for (int r = 0; r + 1 < mr; r += 2) {
        int row = dc->y + r, oc = row >> 2, ki = (row >> 1) & 1;
        for (int j = 0; j < nv; j++) {
            int p = dc->x + 16 * j, iy = p / dc->w, ix = p - iy * dc->w;
            int n = dc->cols - 16 * j < 16 ? dc->cols - 16 * j : 16;
            float *d = dc->out + oc * plane + (size_t)(2 * iy + ki) * 2 * dc->w + 2 * ix;
            __m512 even = _mm512_permutex2var_ps(acc[r][j], lo, acc[r + 1][j]);
            __m512 odd = _mm512_permutex2var_ps(acc[r][j], hi, acc[r + 1][j]);
            if (n == 16) {
                _mm512_storeu_ps(d, even);
                _mm512_storeu_ps(d + 16, odd);
            } else {
                _mm512_mask_storeu_ps(d, (__mmask16)(n >= 8 ? 0xFFFF : (1u << (2 * n)) - 1), even);
                _mm512_mask_storeu_ps(d + 16, (__mmask16)(n > 8 ? (1u << (2 * (n - 8))) - 1 : 0), odd);
            }
        }
    }
}

/* Ends one K block of a tile: its sums go into `tot` (the first block) or are added to it. */
GK_TARGET_VNNI GK_INLINE void sg_fold(__m512 tot[6][4], __m512 acc[6][4], int first, const int mr, const int nv) {
    for (int r = 0; r < mr; r++) {
        for (int j = 0; j < nv; j++) tot[r][j] = first ? acc[r][j] : _mm512_add_ps(tot[r][j], acc[r][j]);
    }
}

/* A tile over B rows of stride ldb: a packed chunk (ldb 64, zero padded), or B itself (the last
 * vector then loaded masked), in ONNX Runtime's K blocks; added to C when `accumulate` (C then
 * holds the sums of whole blocks before); stored as a transposed convolution's output when dc is
 * given (one K chunk only). */
GK_TARGET_VNNI GK_INLINE void sg_tile(const float *a, int lda, const float *b, size_t ldb, float *c, int ldc, int k,
                                      int accumulate, const float *bias, const gk_epilogue *ep, const sg_deconv *dc,
                                      const int mr, const int nv, __mmask16 last) {
    __m512 acc[6][4], tot[6][4];
    if (accumulate) {
        for (int r = 0; r < mr; r++) {
            for (int j = 0; j < nv; j++) {
                const float *d = c + (size_t)r * ldc + 16 * j;
                tot[r][j] = j == nv - 1 ? _mm512_maskz_loadu_ps(last, d) : _mm512_loadu_ps(d);
            }
        }
    }
    for (int k0 = 0; k0 < k; k0 += GK_ORT_KBLOCK) {
        const int k1 = k - k0 < GK_ORT_KBLOCK ? k : k0 + GK_ORT_KBLOCK;
        for (int r = 0; r < mr; r++) {
            for (int j = 0; j < nv; j++) acc[r][j] = _mm512_setzero_ps();
        }
        for (int kk = k0; kk < k1; kk++) {
            const float *br = b + (size_t)kk * ldb;
            __m512 bv[4];
            for (int j = 0; j < nv; j++) bv[j] = j == nv - 1 ? _mm512_maskz_loadu_ps(last, br + 16 * j) : _mm512_loadu_ps(br + 16 * j);
            for (int r = 0; r < mr; r++) {
                __m512 w = _mm512_set1_ps(a[(size_t)r * lda + kk]);
                for (int j = 0; j < nv; j++) acc[r][j] = _mm512_fmadd_ps(w, bv[j], acc[r][j]);
            }
        }
        sg_fold(tot, acc, k0 == 0 && !accumulate, mr, nv);
    }
    if (dc) sg_store_deconv(tot, dc, bias, ep, mr, nv);
    else sg_store(tot, c, ldc, bias, ep, mr, nv, last);
}

/* Where each of a tile's vectors reads one window tap of every input plane: up to two parts
 * (a vector that runs into the next output row), each an offset from the plane's start and
 * the lanes inside the input (the others load as zeros). With stride 2 one part covers 32
 * input columns, of which the even ones are kept. */
#define GK_SG_TAPS 49
enum { GK_SG_ROW = 0, GK_SG_TWO_ROWS = 1, GK_SG_STRIDE2 = 2 };
typedef struct {
    int off[GK_SG_TAPS][4][2];
    uint32_t mask[GK_SG_TAPS][4][2];
} sg_taps;

/* A convolution tile straight from the input, all K at once (in ONNX Runtime's K blocks): for
 * every channel and tap, masked loads per vector as the table says (`mode` a constant), no
 * packing. */
GK_TARGET_VNNI GK_INLINE void sg_tile_direct(const float *a, int lda, const gk_conv_geometry *g, const sg_taps *tp,
                                             float *c, int ldc, const float *bias, const gk_epilogue *ep,
                                             const int mode, const int mr, const int nv, __mmask16 last) {
    __m512 acc[6][4], tot[6][4];
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const int taps = g->kh * g->kw, k = g->channels * taps;
    const size_t plane = (size_t)g->h * g->w;
    const float *in = g->input;
    int t = 0;
    for (int k0 = 0; k0 < k; k0 += GK_ORT_KBLOCK) {
        const int k1 = k - k0 < GK_ORT_KBLOCK ? k : k0 + GK_ORT_KBLOCK;
        for (int r = 0; r < mr; r++) {
            for (int j = 0; j < nv; j++) acc[r][j] = _mm512_setzero_ps();
        }
        for (int kk = k0; kk < k1; kk++) {
            __m512 bv[4];
            for (int j = 0; j < nv; j++) {
                const float *p = in + tp->off[t][j][0];
                const uint32_t m = tp->mask[t][j][0];
                if (mode == GK_SG_STRIDE2) {
                    __m512 lo = _mm512_maskz_loadu_ps((__mmask16)m, p);
                    __m512 hi = _mm512_maskz_loadu_ps((__mmask16)(m >> 16), p + 16);
                    bv[j] = _mm512_permutex2var_ps(lo, even, hi);
                } else {
                    bv[j] = _mm512_maskz_loadu_ps((__mmask16)m, p);
                    if (mode == GK_SG_TWO_ROWS) {
                        bv[j] = _mm512_mask_loadu_ps(bv[j], (__mmask16)tp->mask[t][j][1], in + tp->off[t][j][1]);
                    }
                }
            }
            for (int r = 0; r < mr; r++) {
                __m512 w = _mm512_set1_ps(a[(size_t)r * lda + kk]);
                for (int j = 0; j < nv; j++) acc[r][j] = _mm512_fmadd_ps(w, bv[j], acc[r][j]);
            }
            if (++t == taps) {
                t = 0;
                in += plane;
            }
        }
        sg_fold(tot, acc, k0 == 0, mr, nv);
    }
    sg_store(tot, c, ldc, bias, ep, mr, nv, last);
}

/* Calls TILE(rows, vectors) with both as constants, so each shape gets its own code. */
#define GK_SG_NV(TILE, R)                                                                                       \
    case R:                                                                                                     \
        switch (nv) {                                                                                           \
        case 4: TILE(R, 4); break;                                                                              \
        case 3: TILE(R, 3); break;                                                                              \
        case 2: TILE(R, 2); break;                                                                              \
        default: TILE(R, 1); break;                                                                             \
        }                                                                                                       \
        break;
#define GK_SG_SHAPES(TILE)                                                                                      \
    switch (rows) { GK_SG_NV(TILE, 6) GK_SG_NV(TILE, 5) GK_SG_NV(TILE, 4) GK_SG_NV(TILE, 3) GK_SG_NV(TILE, 2)  \
                    GK_SG_NV(TILE, 1) }

/* The direct mode for this convolution and column range, or -1 to pack: unit or double
 * column stride, a vector spanning at most two output rows (one with stride 2). */
GK_INLINE int sg_direct_mode(const gk_conv_geometry *g, int n0) {
    if (n0 % 16 != 0 || g->kh * g->kw > GK_SG_TAPS) return -1;
    if (g->sw == 1 && g->ow % 16 == 0) return GK_SG_ROW;
    if (g->sw == 1 && g->ow >= 16) return GK_SG_TWO_ROWS;
    if (g->sw == 2 && g->ow % 16 == 0) return GK_SG_STRIDE2;
    return -1;
}

/* One part of vector j's table entries: lanes [first, first + n) read output row y from
 * column xo on. With stride 2 the mask covers the 32 input columns the part spans. */
GK_INLINE void sg_direct_part(const gk_conv_geometry *g, sg_taps *tp, int j, int part, int y, int xo, int first,
                               int n) {
    for (int ki = 0, t = 0; ki < g->kh; ki++) {
        int iy = y * g->sh - g->pt + ki * g->dh;
        for (int kj = 0; kj < g->kw; kj++, t++) {
            int ix0 = xo * g->sw - g->pl + kj * g->dw;
            // Columns ix0 + e for e in [lo, hi) are inside the input row.
            int lo = ix0 < 0 ? -ix0 : 0, hi = g->w - ix0 < n * g->sw ? g->w - ix0 : n * g->sw;
            uint32_t mask = 0;
            if (iy >= 0 && iy < g->h && hi > lo) mask = (uint32_t)((((uint64_t)1 << hi) - ((uint64_t)1 << lo)) << first);
            tp->off[t][j][part] = mask ? iy * g->w + ix0 - first : 0;
            tp->mask[t][j][part] = mask;
        }
    }
}

/* The tap table of the tile at columns [x, x + cols). */
GK_INLINE void sg_direct_taps(const gk_conv_geometry *g, int x, int cols, sg_taps *tp) {
    for (int j = 0; 16 * j < cols; j++) {
        int lanes = cols - 16 * j < 16 ? cols - 16 * j : 16;
        int p = x + 16 * j, y = p / g->ow, xo = p - y * g->ow;
        int n = lanes < g->ow - xo ? lanes : g->ow - xo;
        sg_direct_part(g, tp, j, 0, y, xo, 0, n);
        sg_direct_part(g, tp, j, 1, y + 1, 0, n, lanes - n);
    }
}

/* C = A·B over columns [n0, n1): B plain (b, ldb) or a convolution's im2col (conv); C plain, or
 * (deconv_h > 0, one K chunk) the output of a 2x2 stride-2 transposed convolution whose input
 * planes are deconv_h rows of ldb / deconv_h pixels. */
GK_TARGET_VNNI static void sgemm_avx512(int m, int k, const float *a, int lda, const float *b, int ldb,
                                        const gk_conv_geometry *conv, float *c, int ldc, int n0, int n1,
                                        const float *bias, const gk_epilogue *ep, int deconv_h) {
    float buf[GK_SG_KC * 64];
    const int direct = conv ? sg_direct_mode(conv, n0) : -1;
    if (ep && ep->count == 0) ep = NULL;
    for (int x = n0; x < n1; x += 64) {
        int cols = n1 - x < 64 ? n1 - x : 64;
        int nv = (cols + 15) / 16;
        __mmask16 last = (cols % 16) ? (__mmask16)((1u << (cols % 16)) - 1) : (__mmask16)0xFFFF;
        if (direct >= 0) {
            sg_taps taps;
            sg_direct_taps(conv, x, cols, &taps);
            for (int y = 0; y < m; y += 6) {
                int rows = m - y < 6 ? m - y : 6;
                const float *ap = a + (size_t)y * lda, *bp = bias ? bias + y : NULL;
                float *cp = c + (size_t)y * ldc + x;
#define GK_SG_ROW1(R, NV) sg_tile_direct(ap, lda, conv, &taps, cp, ldc, bp, ep, GK_SG_ROW, R, NV, last)
#define GK_SG_ROW2(R, NV) sg_tile_direct(ap, lda, conv, &taps, cp, ldc, bp, ep, GK_SG_TWO_ROWS, R, NV, last)
#define GK_SG_S2(R, NV) sg_tile_direct(ap, lda, conv, &taps, cp, ldc, bp, ep, GK_SG_STRIDE2, R, NV, last)
                if (direct == GK_SG_ROW) {
                    GK_SG_SHAPES(GK_SG_ROW1)
                } else if (direct == GK_SG_TWO_ROWS) {
                    GK_SG_SHAPES(GK_SG_ROW2)
                } else {
                    GK_SG_SHAPES(GK_SG_S2)
                }
#undef GK_SG_ROW1
#undef GK_SG_ROW2
#undef GK_SG_S2
            }
            continue;
        }
        // With one or two row tiles a packed copy of B would be read once or twice: read B itself.
        const int unpacked = !conv && m <= 12 && (deconv_h == 0 || k <= GK_SG_KC);
        for (int k0 = 0; k0 < k; k0 += unpacked ? k : GK_SG_KC) {
            int kc = unpacked ? k : (k - k0 < GK_SG_KC ? k - k0 : GK_SG_KC);
            if (conv) sg_pack_conv(conv, k0, kc, x, cols, buf);
            else if (!unpacked) sg_pack_plain(b, ldb, k0, kc, x, cols, buf);
            const float *bsrc = unpacked ? b + x : buf;
            const size_t bstride = unpacked ? (size_t)ldb : 64;
            const int final = k0 + kc == k;
            for (int y = 0; y < m; y += 6) {
                int rows = m - y < 6 ? m - y : 6;
                const float *ap = a + (size_t)y * lda + k0;
                const float *bp = final && bias ? bias + y : NULL;
                const gk_epilogue *ep_ = final ? ep : NULL;
                float *cp = c + (size_t)y * ldc + x;
                const sg_deconv dc = {c, deconv_h, deconv_h > 0 ? ldb / deconv_h : 0, y, x, cols};
                const sg_deconv *dcp = deconv_h > 0 ? &dc : NULL;
#define GK_SG_PACKED(R, NV) sg_tile(ap, lda, bsrc, bstride, cp, ldc, kc, k0 > 0, bp, ep_, dcp, R, NV, last)
                GK_SG_SHAPES(GK_SG_PACKED)
#undef GK_SG_PACKED
            }
        }
    }
}
#endif

// MARK: AVX2 and portable builds
//
// The same sums as the AVX-512 build, so every level gives the same bits: each output takes
// A[i][kk]·B[kk][j] for kk in order, one fused multiply-add (one rounding) each, in blocks of
// GK_ORT_KBLOCK summed from zero and then added in order, then bias and epilogue (gk_ep_run, the
// scalar twin of gk_ep512_step). This is the order and rounding of ONNX Runtime's SGEMM kernels.
// B is packed per tile and K chunk as above; a tile is summed in a 6 x 64 block `t` (its partial
// sums kept in C between K chunks, as above).

/* t[r][0, 16·nv) = fma(A[r][kk], buf[kk][·], t[r][·]) for kk in [0, kc), r < mr. */
static void sg_micro_portable(const float *a, int lda, const float *buf, int kc, float *t, int mr, int nv) {
    const int cols = 16 * nv;
    for (int kk = 0; kk < kc; kk++) {
        const float *b = buf + (size_t)kk * 64;
        for (int r = 0; r < mr; r++) {
            const float w = a[(size_t)r * lda + kk];
            float *tr = t + r * 64;
            for (int j = 0; j < cols; j++) tr[j] = fmaf(w, b[j], tr[j]);
        }
    }
}

#if GK_X86
/* The same on AVX2: 16 columns at a time, mr x 2 vectors in registers (mr a constant). */
GK_TARGET_AVX2 GK_INLINE void sg_micro_avx2_rows(const float *a, int lda, const float *buf, int kc, float *t,
                                                 const int mr, int nv) {
    for (int j0 = 0; j0 < 16 * nv; j0 += 16) {
        __m256 acc[6][2];
        for (int r = 0; r < mr; r++) {
            acc[r][0] = _mm256_loadu_ps(t + r * 64 + j0);
            acc[r][1] = _mm256_loadu_ps(t + r * 64 + j0 + 8);
        }
        const float *b = buf + j0;
        for (int kk = 0; kk < kc; kk++, b += 64) {
            const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
            for (int r = 0; r < mr; r++) {
                const __m256 w = _mm256_broadcast_ss(a + (size_t)r * lda + kk);
                acc[r][0] = _mm256_fmadd_ps(w, b0, acc[r][0]);
                acc[r][1] = _mm256_fmadd_ps(w, b1, acc[r][1]);
            }
        }
        for (int r = 0; r < mr; r++) {
            _mm256_storeu_ps(t + r * 64 + j0, acc[r][0]);
            _mm256_storeu_ps(t + r * 64 + j0 + 8, acc[r][1]);
        }
    }
}

GK_TARGET_AVX2 static void sg_micro_avx2(const float *a, int lda, const float *buf, int kc, float *t, int mr, int nv) {
    switch (mr) {
    case 6: sg_micro_avx2_rows(a, lda, buf, kc, t, 6, nv); break;
    case 5: sg_micro_avx2_rows(a, lda, buf, kc, t, 5, nv); break;
    case 4: sg_micro_avx2_rows(a, lda, buf, kc, t, 4, nv); break;
    case 3: sg_micro_avx2_rows(a, lda, buf, kc, t, 3, nv); break;
    case 2: sg_micro_avx2_rows(a, lda, buf, kc, t, 2, nv); break;
    default: sg_micro_avx2_rows(a, lda, buf, kc, t, 1, nv); break;
    }
}
#endif

typedef void (*sg_micro)(const float *a, int lda, const float *buf, int kc, float *t, int mr, int nv);

/* sgemm_avx512's twin for the other levels (B plain or a convolution's im2col; C plain or, with
 * deconv_h > 0 and k <= GK_SG_KC, a 2x2 stride-2 transposed convolution's output). */
static void sgemm_generic(sg_micro micro, int m, int k, const float *a, int lda, const float *b, int ldb,
                          const gk_conv_geometry *conv, float *c, int ldc, int n0, int n1, const float *bias,
                          const gk_epilogue *ep, int deconv_h) {
    float buf[GK_SG_KC * 64];
    float t[6 * 64], tb[6 * 64];
    if (ep && ep->count == 0) ep = NULL;
    const int dw = deconv_h > 0 ? ldb / deconv_h : 0;
    for (int x = n0; x < n1; x += 64) {
        const int cols = n1 - x < 64 ? n1 - x : 64, nv = (cols + 15) / 16;
        for (int k0 = 0; k0 < k; k0 += GK_SG_KC) {
            const int kc = k - k0 < GK_SG_KC ? k - k0 : GK_SG_KC;
            if (conv) sg_pack_conv(conv, k0, kc, x, cols, buf);
            else sg_pack_plain(b, ldb, k0, kc, x, cols, buf);
            const int final = k0 + kc == k;
            for (int y = 0; y < m; y += 6) {
                const int rows = m - y < 6 ? m - y : 6;
                float *cp = c + (size_t)y * ldc + x;
                for (int r = 0; r < rows; r++) {
                    if (k0 > 0) memcpy(t + r * 64, cp + (size_t)r * ldc, sizeof(float) * (size_t)cols);
                }
                // ONNX Runtime's K blocks: each summed from zero in tb, then stored or added.
                for (int b0 = 0; b0 < kc; b0 += GK_ORT_KBLOCK) {
                    const int bc = kc - b0 < GK_ORT_KBLOCK ? kc - b0 : GK_ORT_KBLOCK;
                    memset(tb, 0, sizeof(float) * 64 * (size_t)rows);
                    micro(a + (size_t)y * lda + k0 + b0, lda, buf + (size_t)b0 * 64, bc, tb, rows, nv);
                    for (int r = 0; r < rows; r++) {
                        float *tr = t + r * 64;
                        const float *br = tb + r * 64;
                        if (k0 + b0 == 0) memcpy(tr, br, sizeof(float) * 64);
                        else for (int e = 0; e < cols; e++) tr[e] = tr[e] + br[e];
                    }
                }
                if (final && (bias || ep)) {
                    for (int r = 0; r < rows; r++) gk_ep_run(ep, bias ? bias[y + r] : 0.0f, t + r * 64, (size_t)cols);
                }
                if (deconv_h > 0) {
                    const size_t plane = (size_t)4 * deconv_h * dw;
                    for (int r = 0; r < rows; r++) {
                        const int row = y + r, oc = row >> 2, ki = (row >> 1) & 1, kj = row & 1;
                        for (int e = 0; e < cols; e++) {
                            const int p = x + e, iy = p / dw, ix = p - iy * dw;
                            c[oc * plane + (size_t)(2 * iy + ki) * 2 * dw + 2 * ix + kj] = t[r * 64 + e];
                        }
                    }
                } else {
                    for (int r = 0; r < rows; r++) memcpy(cp + (size_t)r * ldc, t + r * 64, sizeof(float) * (size_t)cols);
                }
            }
        }
    }
}

static sg_micro sg_micro_for(int level) {
#if GK_X86
    if (level >= GK_AVX2) return sg_micro_avx2;
#endif
    (void)level;
    return sg_micro_portable;
}

void gk_sgemm(int level, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc, int n0,
              int n1, const float *bias, const gk_epilogue *ep) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { sgemm_avx512(m, k, a, lda, b, ldb, NULL, c, ldc, n0, n1, bias, ep, 0); return; }
#endif
    sgemm_generic(sg_micro_for(level), m, k, a, lda, b, ldb, NULL, c, ldc, n0, n1, bias, ep, 0);
}

void gk_sgemm_conv(int level, int m, const float *a, int lda, const gk_conv_geometry *g, float *c, int ldc, int n0,
                   int n1, const float *bias, const gk_epilogue *ep) {
    int k = g->channels * g->kh * g->kw;
#if GK_X86
    if (level >= GK_AVX512VNNI) { sgemm_avx512(m, k, a, lda, NULL, 0, g, c, ldc, n0, n1, bias, ep, 0); return; }
#endif
    sgemm_generic(sg_micro_for(level), m, k, a, lda, NULL, 0, g, c, ldc, n0, n1, bias, ep, 0);
}

int gk_deconv2x2_fits(int level, int k, int w) {
    (void)level;
    return k <= GK_SG_KC && w % 16 == 0;
}

void gk_deconv2x2(int level, int m, int k, const float *a, int lda, const float *in, int h, int w, float *out, int p0,
                  int p1, const float *bias, const gk_epilogue *ep) {
    if (!gk_deconv2x2_fits(level, k, w)) {
        // Other shapes: one output at a time, the same sums (ONNX Runtime's K blocks, fmaf).
        for (int row = 0; row < m; row++) {
            const int oc = row >> 2, ki = (row >> 1) & 1, kj = row & 1;
            for (int p = p0; p < p1; p++) {
                float total = 0.0f;
                for (int k0 = 0; k0 < k; k0 += GK_ORT_KBLOCK) {
                    const int k1 = k - k0 < GK_ORT_KBLOCK ? k : k0 + GK_ORT_KBLOCK;
                    float acc = 0.0f;
                    for (int kk = k0; kk < k1; kk++) acc = fmaf(a[(size_t)row * lda + kk], in[(size_t)kk * h * w + p], acc);
                    total = k0 == 0 ? acc : total + acc;
                }
                float *d = out + (size_t)oc * 4 * h * w + (size_t)(2 * (p / w) + ki) * 2 * w + 2 * (p % w) + kj;
                *d = total;
                gk_ep_run(ep, bias ? bias[row] : 0.0f, d, 1);
            }
        }
        return;
    }
#if GK_X86
    if (level >= GK_AVX512VNNI) {
        sgemm_avx512(m, k, a, lda, in, h * w, NULL, out, 0, p0, p1, bias, ep, h);
        return;
    }
#endif
    sgemm_generic(sg_micro_for(level), m, k, a, lda, in, h * w, NULL, out, 0, p0, p1, bias, ep, h);
}
