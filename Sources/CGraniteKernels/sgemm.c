// Float C = A·B (row-major, no transposes) for the convolutions' GEMMs on AVX-512: tiles of
// 6 rows x 64 columns held in 24 registers, B copied per tile and K chunk into a contiguous
// stack buffer (no cache-set aliasing from large row strides), A broadcast from its rows.
// On the small-M, long-N shapes of convolutions this runs about twice as fast as OpenBLAS's
// Haswell kernels here; other CPUs keep using OpenBLAS (the caller checks gk_sgemm_available).
#include "common.h"

#include <string.h>

#define GK_SG_KC 256

int gk_sgemm_available(int level) { return GK_X86 && level >= GK_AVX512VNNI; }

#if GK_X86
GK_TARGET_VNNI GK_INLINE void sg_tile(const float *a, int lda, const float *b, float *c, int ldc, int k, int accumulate,
                                      const float *bias, const gk_epilogue *ep, const int mr, const int nv,
                                      __mmask16 last) {
    __m512 acc[6][4];
    for (int r = 0; r < mr; r++) {
        for (int j = 0; j < nv; j++) {
            const float *d = c + (size_t)r * ldc + 16 * j;
            if (!accumulate) acc[r][j] = _mm512_setzero_ps();
            else acc[r][j] = j == nv - 1 ? _mm512_maskz_loadu_ps(last, d) : _mm512_loadu_ps(d);
        }
    }
    for (int kk = 0; kk < k; kk++) {
        const float *br = b + (size_t)kk * 64;
        __m512 bv[4];
        for (int j = 0; j < nv; j++) bv[j] = _mm512_loadu_ps(br + 16 * j);
        for (int r = 0; r < mr; r++) {
            __m512 w = _mm512_set1_ps(a[(size_t)r * lda + kk]);
            for (int j = 0; j < nv; j++) acc[r][j] = _mm512_fmadd_ps(w, bv[j], acc[r][j]);
        }
    }
    // Last K chunk: bias and epilogue on the sums in registers (bias 0 adds nothing, as gk_ep_run).
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
    for (int r = 0; r < mr; r++) {
        for (int j = 0; j < nv; j++) {
            float *d = c + (size_t)r * ldc + 16 * j;
            if (j == nv - 1) _mm512_mask_storeu_ps(d, last, acc[r][j]);
            else _mm512_storeu_ps(d, acc[r][j]);
        }
    }
}

#define GK_SG_ROWS(R)                                                                                           \
    case R:                                                                                                     \
        switch (nv) {                                                                                           \
        case 4: sg_tile(ap, lda, buf, cp, ldc, kc, k0 > 0, bp, ep_, R, 4, last); break;                         \
        case 3: sg_tile(ap, lda, buf, cp, ldc, kc, k0 > 0, bp, ep_, R, 3, last); break;                         \
        case 2: sg_tile(ap, lda, buf, cp, ldc, kc, k0 > 0, bp, ep_, R, 2, last); break;                         \
        default: sg_tile(ap, lda, buf, cp, ldc, kc, k0 > 0, bp, ep_, R, 1, last); break;                        \
        }                                                                                                       \
        break;

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

GK_TARGET_VNNI static void sgemm_avx512(int m, int k, const float *a, int lda, const float *b, int ldb,
                                        const gk_conv_geometry *conv, float *c, int ldc, int n0, int n1,
                                        const float *bias, const gk_epilogue *ep) {
    float buf[GK_SG_KC * 64];
    for (int x = n0; x < n1; x += 64) {
        int cols = n1 - x < 64 ? n1 - x : 64;
        int nv = (cols + 15) / 16;
        __mmask16 last = (cols % 16) ? (__mmask16)((1u << (cols % 16)) - 1) : (__mmask16)0xFFFF;
        for (int k0 = 0; k0 < k; k0 += GK_SG_KC) {
            int kc = k - k0 < GK_SG_KC ? k - k0 : GK_SG_KC;
            if (conv) sg_pack_conv(conv, k0, kc, x, cols, buf);
            else sg_pack_plain(b, ldb, k0, kc, x, cols, buf);
            for (int y = 0; y < m; y += 6) {
                int rows = m - y < 6 ? m - y : 6;
                const float *ap = a + (size_t)y * lda + k0;
                float *cp = c + (size_t)y * ldc + x;
                const int final = k0 + kc == k;
                const float *bp = final && bias ? bias + y : NULL;
                const gk_epilogue *ep_ = final && ep && ep->count > 0 ? ep : NULL;
                switch (rows) { GK_SG_ROWS(6) GK_SG_ROWS(5) GK_SG_ROWS(4) GK_SG_ROWS(3) GK_SG_ROWS(2) GK_SG_ROWS(1) }
            }
        }
    }
}
#endif

/* The portable builds' bias and epilogue, row by row after the sums. */
static void sg_finish(int m, const float *bias, const gk_epilogue *ep, float *c, int ldc, int n0, int n1) {
    if (!bias && !ep) return;
    for (int i = 0; i < m; i++) gk_ep_run(ep, bias ? bias[i] : 0.0f, c + (size_t)i * ldc + n0, (size_t)(n1 - n0));
}

void gk_sgemm(int level, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc, int n0,
              int n1, const float *bias, const gk_epilogue *ep) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { sgemm_avx512(m, k, a, lda, b, ldb, NULL, c, ldc, n0, n1, bias, ep); return; }
#endif
    // Portable reference (callers use OpenBLAS instead where gk_sgemm_available is false).
    for (int i = 0; i < m; i++) {
        for (int j = n0; j < n1; j++) {
            float s = 0;
            for (int kk = 0; kk < k; kk++) s += a[(size_t)i * lda + kk] * b[(size_t)kk * ldb + j];
            c[(size_t)i * ldc + j] = s;
        }
    }
    sg_finish(m, bias, ep, c, ldc, n0, n1);
}

void gk_sgemm_conv(int level, int m, const float *a, int lda, const gk_conv_geometry *g, float *c, int ldc, int n0,
                   int n1, const float *bias, const gk_epilogue *ep) {
    int k = g->channels * g->kh * g->kw;
#if GK_X86
    if (level >= GK_AVX512VNNI) { sgemm_avx512(m, k, a, lda, NULL, 0, g, c, ldc, n0, n1, bias, ep); return; }
#endif
    // Portable reference (callers use im2col + BLAS instead where gk_sgemm_available is false).
    for (int j = n0; j < n1; j++) {
        int y = j / g->ow, xo = j % g->ow;
        for (int i = 0; i < m; i++) {
            float s = 0;
            for (int r = 0; r < k; r++) {
                int taps = g->kh * g->kw, ch = r / taps, t = r % taps, ki = t / g->kw, kj = t % g->kw;
                int iy = y * g->sh - g->pt + ki * g->dh, ix = xo * g->sw - g->pl + kj * g->dw;
                if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) continue;
                s += a[(size_t)i * lda + r] * g->input[((size_t)ch * g->h + iy) * g->w + ix];
            }
            c[(size_t)i * ldc + j] = s;
        }
    }
    sg_finish(m, bias, ep, c, ldc, n0, n1);
}
