// Element-wise helpers: fake quantisation (QuantizeLinear then DequantizeLinear), nearest
// upsampling by whole factors, and global pooling.
#include "common.h"

#include <string.h>

// MARK: fake quantisation

GK_INLINE void fq_body(float *p, size_t count, float scale, float qlo, float qhi) {
    for (size_t i = 0; i < count; i++) p[i] = gk_rint(gk_clampf(p[i] / scale, qlo, qhi)) * scale;
}

static void fq_portable(float *p, size_t count, float scale, float qlo, float qhi) { fq_body(p, count, scale, qlo, qhi); }

#if GK_X86
GK_TARGET_AVX2 static void fq_avx2(float *p, size_t count, float scale, float qlo, float qhi) {
    fq_body(p, count, scale, qlo, qhi);
}

GK_TARGET_VNNI static void fq_avx512(float *p, size_t count, float scale, float qlo, float qhi) {
    fq_body(p, count, scale, qlo, qhi);
}
#endif

void gk_fake_quant(int level, float *p, size_t count, float scale, float qlo, float qhi) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { fq_avx512(p, count, scale, qlo, qhi); return; }
    if (level >= GK_AVX2) { fq_avx2(p, count, scale, qlo, qhi); return; }
#endif
    fq_portable(p, count, scale, qlo, qhi);
}

// MARK: quantisation (QuantizeLinear values, as floats)

GK_INLINE void q_body(const float *src, float *dst, size_t count, float scale, float qlo, float qhi, float zero) {
    for (size_t i = 0; i < count; i++) dst[i] = gk_rint(gk_clampf(src[i] / scale, qlo, qhi)) + zero;
}

static void q_portable(const float *src, float *dst, size_t count, float scale, float qlo, float qhi, float zero) {
    q_body(src, dst, count, scale, qlo, qhi, zero);
}

#if GK_X86
GK_TARGET_AVX2 static void q_avx2(const float *src, float *dst, size_t count, float scale, float qlo, float qhi,
                                  float zero) {
    q_body(src, dst, count, scale, qlo, qhi, zero);
}
#endif

void gk_quantize(int level, const float *src, float *dst, size_t count, float scale, float qlo, float qhi, float zero) {
#if GK_X86
    if (level >= GK_AVX2) { q_avx2(src, dst, count, scale, qlo, qhi, zero); return; }
#endif
    q_portable(src, dst, count, scale, qlo, qhi, zero);
}

// MARK: nearest upsampling by integer factors

GK_INLINE void up_body(const float *src, int planes, int h, int w, int fy, int fx, float *dst) {
    int ow = w * fx;
    for (int p = 0; p < planes; p++) {
        const float *s = src + (size_t)p * h * w;
        float *d = dst + (size_t)p * h * fy * ow;
        for (int y = 0; y < h; y++) {
            float *row = d + (size_t)y * fy * ow;
            const float *in = s + (size_t)y * w;
            if (fx == 2) {
                for (int x = 0; x < w; x++) { row[2 * x] = in[x]; row[2 * x + 1] = in[x]; }
            } else {
                for (int x = 0; x < ow; x++) row[x] = in[x / fx];
            }
            for (int r = 1; r < fy; r++) memcpy(row + (size_t)r * ow, row, (size_t)ow * sizeof(float));
        }
    }
}

static void up_portable(const float *src, int planes, int h, int w, int fy, int fx, float *dst) {
    up_body(src, planes, h, w, fy, fx, dst);
}

#if GK_X86
GK_TARGET_AVX2 static void up_avx2(const float *src, int planes, int h, int w, int fy, int fx, float *dst) {
    up_body(src, planes, h, w, fy, fx, dst);
}
#endif

void gk_upsample_nearest(int level, const float *src, int planes, int h, int w, int fy, int fx, float *dst) {
#if GK_X86
    if (level >= GK_AVX2) { up_avx2(src, planes, h, w, fy, fx, dst); return; }
#endif
    up_portable(src, planes, h, w, fy, fx, dst);
}

// MARK: global pooling

/* 16 running sums (maxima) over each plane, lane i taking every 16th value from i, then
 * combined: every build adds in the same order, so they agree bit for bit. */
GK_INLINE void gp_body(const float *src, size_t planes, size_t area, int average, float *out) {
    for (size_t p = 0; p < planes; p++) {
        const float *s = src + p * area;
        float acc[16];
        for (int l = 0; l < 16; l++) acc[l] = average ? 0.0f : -__builtin_inff();
        size_t i = 0;
        for (; i + 16 <= area; i += 16) {
            if (average) {
                for (int l = 0; l < 16; l++) acc[l] += s[i + l];
            } else {
                for (int l = 0; l < 16; l++) acc[l] = s[i + l] > acc[l] ? s[i + l] : acc[l];
            }
        }
        for (int l = 0; i + l < area; l++) {
            if (average) acc[l] += s[i + l];
            else acc[l] = s[i + l] > acc[l] ? s[i + l] : acc[l];
        }
        for (int w = 8; w >= 1; w /= 2) {
            for (int l = 0; l < w; l++) acc[l] = average ? acc[l] + acc[l + w] : (acc[l + w] > acc[l] ? acc[l + w] : acc[l]);
        }
        out[p] = average ? acc[0] / (float)area : acc[0];
    }
}

static void gp_portable(const float *src, size_t planes, size_t area, int average, float *out) {
    gp_body(src, planes, area, average, out);
}

#if GK_X86
GK_TARGET_AVX2 static void gp_avx2(const float *src, size_t planes, size_t area, int average, float *out) {
    gp_body(src, planes, area, average, out);
}

GK_TARGET_VNNI static void gp_avx512(const float *src, size_t planes, size_t area, int average, float *out) {
    gp_body(src, planes, area, average, out);
}
#endif

void gk_global_pool(int level, const float *src, size_t planes, size_t area, int average, float *out) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { gp_avx512(src, planes, area, average, out); return; }
    if (level >= GK_AVX2) { gp_avx2(src, planes, area, average, out); return; }
#endif
    gp_portable(src, planes, area, average, out);
}
