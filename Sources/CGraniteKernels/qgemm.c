// u8 x s8 -> int32 matrix product for quantised pointwise convolutions, with ONNX Runtime's
// requantisation fused into the store.
//
// Packed layouts (k padded to a multiple of 4 with zero weights):
//   A (weights): blocks of 4 rows; in a block, for each group of 4 k: 4 rows x 4 bytes.
//   B (activations): panels of 16 columns; in a panel, for each group of 4 k: 16 columns x 4 bytes.
// One int32 lane of B holds 4 consecutive k of one column, which is what VPDPBUSD multiplies
// with a broadcast int32 of A (4 consecutive k of one row).
#include "common.h"

#include <string.h>

size_t gk_qgemm_packed_b_size(int k, int n) { return (size_t)((k + 3) / 4) * 64 * (size_t)((n + 15) / 16); }

size_t gk_qgemm_packed_a_size(int m, int k) { return (size_t)((k + 3) / 4) * 16 * (size_t)((m + 3) / 4); }

void gk_qgemm_pack_a(const int8_t *w, int m, int k, int8_t *packed, int32_t *wsum) {
    int k4 = (k + 3) / 4;
    memset(packed, 0, gk_qgemm_packed_a_size(m, k));
    for (int r = 0; r < m; r++) {
        int32_t sum = 0;
        int8_t *block = packed + (size_t)(r / 4) * k4 * 16 + (r % 4) * 4;
        for (int j = 0; j < k; j++) {
            block[(j / 4) * 16 + j % 4] = w[(size_t)r * k + j];
            sum += w[(size_t)r * k + j];
        }
        wsum[r] = sum;
    }
}

GK_INLINE uint32_t gk_quant_u8(float x, float inv, float off) {
    return (uint32_t)(int32_t)gk_clampf(gk_rint(x * inv) + off, 0.0f, 255.0f);
}

GK_INLINE void pack_b_body(const float *src, int ld, int k, int n, int p0, int p1, float inv, int offset,
                           uint8_t *packed) {
    int k4 = (k + 3) / 4;
    float off = (float)offset;
    for (int p = p0; p < p1; p++) {
        int x0 = p * 16;
        for (int g = 0; g < k4; g++) {
            uint32_t *d = (uint32_t *)(packed + ((size_t)p * k4 + g) * 64);
            if (x0 + 16 <= n && g * 4 + 4 <= k) {
                const float *s0 = src + (size_t)(g * 4) * ld + x0;
                const float *s1 = s0 + ld, *s2 = s1 + ld, *s3 = s2 + ld;
                for (int i = 0; i < 16; i++) {
                    d[i] = gk_quant_u8(s0[i], inv, off) | gk_quant_u8(s1[i], inv, off) << 8 |
                           gk_quant_u8(s2[i], inv, off) << 16 | gk_quant_u8(s3[i], inv, off) << 24;
                }
            } else {
                for (int i = 0; i < 16; i++) {
                    uint32_t v = 0;
                    for (int c = 0; c < 4; c++) {
                        int ch = g * 4 + c, x = x0 + i;
                        if (ch < k && x < n) v |= gk_quant_u8(src[(size_t)ch * ld + x], inv, off) << (8 * c);
                    }
                    d[i] = v;
                }
            }
        }
    }
}

static void pack_b_portable(const float *src, int ld, int k, int n, int p0, int p1, float inv, int offset, uint8_t *packed) {
    pack_b_body(src, ld, k, n, p0, p1, inv, offset, packed);
}

#if GK_X86
GK_TARGET_AVX2 static void pack_b_avx2(const float *src, int ld, int k, int n, int p0, int p1, float inv, int offset,
                                       uint8_t *packed) {
    pack_b_body(src, ld, k, n, p0, p1, inv, offset, packed);
}

GK_TARGET_VNNI static void pack_b_avx512(const float *src, int ld, int k, int n, int p0, int p1, float inv, int offset,
                                         uint8_t *packed) {
    pack_b_body(src, ld, k, n, p0, p1, inv, offset, packed);
}
#endif

void gk_qgemm_pack_b(int level, const float *src, int ld, int k, int n, int p0, int p1, float inv_scale, int offset,
                     uint8_t *packed) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { pack_b_avx512(src, ld, k, n, p0, p1, inv_scale, offset, packed); return; }
    if (level >= GK_AVX2) { pack_b_avx2(src, ld, k, n, p0, p1, inv_scale, offset, packed); return; }
#endif
    pack_b_portable(src, ld, k, n, p0, p1, inv_scale, offset, packed);
}

// MARK: portable

static void qgemm_portable(const int8_t *packed_a, const uint8_t *packed_b, int k, int m0, int m1, int n0, int n1,
                           const gk_requant *rq, float *out, int ldc) {
    int k4 = (k + 3) / 4;
    for (int x0 = n0; x0 < n1; x0 += 16) {
        const uint8_t *b = packed_b + (size_t)(x0 / 16) * k4 * 64;
        int cols = n1 - x0 < 16 ? n1 - x0 : 16;
        for (int mb = m0; mb < m1; mb += 4) {
            const int8_t *a = packed_a + (size_t)(mb / 4) * k4 * 16;
            int32_t acc[4][16];
            memset(acc, 0, sizeof acc);
            for (int g = 0; g < k4; g++) {
                for (int r = 0; r < 4; r++) {
                    const int8_t *wa = a + g * 16 + r * 4;
                    for (int i = 0; i < 16; i++) {
                        const uint8_t *bb = b + g * 64 + i * 4;
                        acc[r][i] += wa[0] * bb[0] + wa[1] * bb[1] + wa[2] * bb[2] + wa[3] * bb[3];
                    }
                }
            }
            int rows = m1 - mb < 4 ? m1 - mb : 4;
            for (int r = 0; r < rows; r++) {
                float *o = out + (size_t)(mb + r) * ldc + x0;
                for (int i = 0; i < cols; i++) o[i] = gk_requant_one(rq, mb + r, acc[r][i]);
            }
        }
    }
}

#if GK_X86
// MARK: AVX2 (no VNNI): u8 and s8 widened to int16 halves, VPMADDWD, exact.

GK_TARGET_AVX2 GK_INLINE void avx2_store(const gk_requant *rq, int m, __m256i acc, float *dst, int count) {
    __m256 v = _mm256_cvtepi32_ps(_mm256_add_epi32(acc, _mm256_set1_epi32(rq->bias[m])));
    v = _mm256_mul_ps(v, _mm256_set1_ps(rq->scale[m]));
    if (rq->requant) {
        v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(rq->lo)), _mm256_set1_ps(rq->hi));
        v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm256_mul_ps(v, _mm256_set1_ps(rq->out_scale));
    } else if (rq->shift) {
        v = _mm256_add_ps(v, _mm256_set1_ps(rq->shift[m]));
    }
    if (count >= 8) {
        _mm256_storeu_ps(dst, v);
    } else if (count > 0) {
        float tmp[8];
        _mm256_storeu_ps(tmp, v);
        memcpy(dst, tmp, (size_t)count * sizeof(float));
    }
}

GK_TARGET_AVX2 static void qgemm_avx2(const int8_t *packed_a, const uint8_t *packed_b, int k, int m0, int m1, int n0,
                                      int n1, const gk_requant *rq, float *out, int ldc) {
    int k4 = (k + 3) / 4;
    const __m256i lowBytes = _mm256_set1_epi16(0x00FF);
    for (int x0 = n0; x0 < n1; x0 += 16) {
        const uint8_t *b = packed_b + (size_t)(x0 / 16) * k4 * 64;
        for (int mb = m0; mb < m1; mb += 4) {
            const int32_t *a = (const int32_t *)(packed_a + (size_t)(mb / 4) * k4 * 16);
            __m256i acc[4][2];
            for (int r = 0; r < 4; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
            for (int g = 0; g < k4; g++) {
                __m256i b0 = _mm256_loadu_si256((const __m256i *)(b + g * 64));
                __m256i b1 = _mm256_loadu_si256((const __m256i *)(b + g * 64 + 32));
                __m256i b0e = _mm256_and_si256(b0, lowBytes), b0o = _mm256_srli_epi16(b0, 8);
                __m256i b1e = _mm256_and_si256(b1, lowBytes), b1o = _mm256_srli_epi16(b1, 8);
                for (int r = 0; r < 4; r++) {
                    __m256i w = _mm256_set1_epi32(a[g * 4 + r]);
                    __m256i we = _mm256_srai_epi16(_mm256_slli_epi16(w, 8), 8), wo = _mm256_srai_epi16(w, 8);
                    acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_add_epi32(_mm256_madd_epi16(b0e, we), _mm256_madd_epi16(b0o, wo)));
                    acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_add_epi32(_mm256_madd_epi16(b1e, we), _mm256_madd_epi16(b1o, wo)));
                }
            }
            int rows = m1 - mb < 4 ? m1 - mb : 4;
            for (int r = 0; r < rows; r++) {
                float *o = out + (size_t)(mb + r) * ldc + x0;
                avx2_store(rq, mb + r, acc[r][0], o, n1 - x0);
                avx2_store(rq, mb + r, acc[r][1], o + 8, n1 - x0 - 8);
            }
        }
    }
}

// MARK: AVX-512 VNNI: VPDPBUSD, 4 rows x up to 64 columns per tile.

GK_TARGET_VNNI GK_INLINE void vnni_store(const gk_requant *rq, int m, __m512i acc, float *dst, int count) {
    __m512 v = _mm512_cvtepi32_ps(_mm512_add_epi32(acc, _mm512_set1_epi32(rq->bias[m])));
    v = _mm512_mul_ps(v, _mm512_set1_ps(rq->scale[m]));
    if (rq->requant) {
        v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(rq->lo)), _mm512_set1_ps(rq->hi));
        v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm512_mul_ps(v, _mm512_set1_ps(rq->out_scale));
    } else if (rq->shift) {
        v = _mm512_add_ps(v, _mm512_set1_ps(rq->shift[m]));
    }
    if (count >= 16) _mm512_storeu_ps(dst, v);
    else if (count > 0) _mm512_mask_storeu_ps(dst, (__mmask16)((1u << count) - 1), v);
}

GK_TARGET_VNNI GK_INLINE void vnni_tile(const int32_t *a, const uint8_t *b, size_t panel, int k4, const int np,
                                        const gk_requant *rq, int m, int rows, float *out, int ldc, int x, int n1) {
    __m512i acc[4][4];
    for (int r = 0; r < 4; r++) for (int j = 0; j < np; j++) acc[r][j] = _mm512_setzero_si512();
    for (int g = 0; g < k4; g++) {
        __m512i bv[4];
        for (int j = 0; j < np; j++) bv[j] = _mm512_loadu_si512((const void *)(b + j * panel + (size_t)g * 64));
        for (int r = 0; r < 4; r++) {
            __m512i w = _mm512_set1_epi32(a[g * 4 + r]);
            for (int j = 0; j < np; j++) acc[r][j] = _mm512_dpbusd_epi32(acc[r][j], bv[j], w);
        }
    }
    for (int r = 0; r < rows; r++) {
        for (int j = 0; j < np; j++) {
            int px = x + 16 * j;
            vnni_store(rq, m + r, acc[r][j], out + (size_t)(m + r) * ldc + px, n1 - px);
        }
    }
}

GK_TARGET_VNNI static void qgemm_vnni(const int8_t *packed_a, const uint8_t *packed_b, int k, int m0, int m1, int n0,
                                      int n1, const gk_requant *rq, float *out, int ldc) {
    int k4 = (k + 3) / 4;
    size_t panel = (size_t)k4 * 64;
    for (int x = n0; x < n1; x += 64) {
        int np = ((n1 < x + 64 ? n1 : x + 64) - x + 15) / 16;
        const uint8_t *b = packed_b + (size_t)(x / 16) * panel;
        for (int mb = m0; mb < m1; mb += 4) {
            const int32_t *a = (const int32_t *)(packed_a + (size_t)(mb / 4) * k4 * 16);
            int rows = m1 - mb < 4 ? m1 - mb : 4;
            switch (np) {
            case 4: vnni_tile(a, b, panel, k4, 4, rq, mb, rows, out, ldc, x, n1); break;
            case 3: vnni_tile(a, b, panel, k4, 3, rq, mb, rows, out, ldc, x, n1); break;
            case 2: vnni_tile(a, b, panel, k4, 2, rq, mb, rows, out, ldc, x, n1); break;
            default: vnni_tile(a, b, panel, k4, 1, rq, mb, rows, out, ldc, x, n1); break;
            }
        }
    }
}
#endif

void gk_qgemm(int level, const int8_t *packed_a, const uint8_t *packed_b, int m, int k, int n, int m0, int m1, int n0,
              int n1, const gk_requant *rq, float *out, int ldc) {
    (void)m;
    (void)n;
#if GK_X86
    if (level >= GK_AVX512VNNI) { qgemm_vnni(packed_a, packed_b, k, m0, m1, n0, n1, rq, out, ldc); return; }
    if (level >= GK_AVX2) { qgemm_avx2(packed_a, packed_b, k, m0, m1, n0, n1, rq, out, ldc); return; }
#endif
    qgemm_portable(packed_a, packed_b, k, m0, m1, n0, n1, rq, out, ldc);
}
