// Shared helpers of the kernel files (not part of the public header).
#ifndef GK_COMMON_H
#define GK_COMMON_H

#include "CGraniteKernels.h"

/* No build may fuse a multiply and an add the others keep apart (the portable one has no FMA):
 * fused multiply-adds are written out as fmaf() where they are meant. */
#pragma STDC FP_CONTRACT OFF

#define GK_INLINE static inline __attribute__((always_inline))
#define GK_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define GK_TARGET_VNNI __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))

#if defined(__x86_64__) || defined(__i386__)
#define GK_X86 1
#include <immintrin.h>
#else
#define GK_X86 0
#endif

/* Rounds half to even for |v| < 2^22 (adding and removing 1.5 * 2^23 leaves no fraction bits). */
GK_INLINE float gk_rint(float v) {
    const float magic = 12582912.0f;
    return (v + magic) - magic;
}

GK_INLINE float gk_clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* The requantised value of one int32 sum for channel m. */
GK_INLINE float gk_requant_one(const gk_requant *rq, int m, int32_t acc) {
    float v = (float)(acc + rq->bias[m]) * rq->scale[m];
    if (rq->requant) return gk_rint(gk_clampf(v, rq->lo, rq->hi)) * rq->out_scale;
    return rq->shift ? v + rq->shift[m] : v;
}

/* Bias and epilogue steps on count values in place, one loop per step (each vectorises).
 * The arithmetic mirrors GraniteML's Swift Epilogue operation by operation: no contraction
 * into fused multiply-adds, and the same comparisons (NaN and signed zero included). */
GK_INLINE void gk_ep_run(const gk_epilogue *ep, float bias, float *p, size_t count) {
#pragma STDC FP_CONTRACT OFF
    if (bias != 0.0f) {
        for (size_t i = 0; i < count; i++) p[i] += bias;
    }
    if (!ep) return;
    for (int s = 0; s < ep->count; s++) {
        const float a = ep->steps[s].a, b = ep->steps[s].b, c = ep->steps[s].c;
        switch (ep->steps[s].op) {
        case GK_EP_RELU:
            for (size_t i = 0; i < count; i++) p[i] = 0.0f >= p[i] ? 0.0f : p[i];
            break;
        case GK_EP_CLIP:
            for (size_t i = 0; i < count; i++) {
                float t = a >= p[i] ? a : p[i];
                p[i] = b < t ? b : t;
            }
            break;
        case GK_EP_LEAKY_RELU:
            for (size_t i = 0; i < count; i++) p[i] = p[i] < 0.0f ? p[i] * a : p[i];
            break;
        case GK_EP_HARD_SIGMOID:
            for (size_t i = 0; i < count; i++) {
                float t = a * p[i];
                t = t + b;
                t = 0.0f >= t ? 0.0f : t;
                p[i] = 1.0f < t ? 1.0f : t;
            }
            break;
        case GK_EP_ADD:
            for (size_t i = 0; i < count; i++) p[i] = p[i] + a;
            break;
        case GK_EP_SUB:
            for (size_t i = 0; i < count; i++) p[i] = p[i] - a;
            break;
        case GK_EP_SUB_FROM:
            for (size_t i = 0; i < count; i++) p[i] = a - p[i];
            break;
        case GK_EP_MUL:
            for (size_t i = 0; i < count; i++) p[i] = p[i] * a;
            break;
        case GK_EP_DIV:
            for (size_t i = 0; i < count; i++) p[i] = p[i] / a;
            break;
        case GK_EP_DIV_INTO:
            for (size_t i = 0; i < count; i++) p[i] = a / p[i];
            break;
        case GK_EP_GATED_CLIP:
            for (size_t i = 0; i < count; i++) {
                float v = p[i], t = v + a;
                t = b >= t ? b : t;
                t = c < t ? c : t;
                p[i] = v * t;
            }
            break;
        case GK_EP_FAKE_QUANT:
            for (size_t i = 0; i < count; i++) p[i] = gk_rint(gk_clampf(p[i] / a, b, c)) * a;
            break;
        default:
            break;
        }
    }
}

#if GK_X86
/* The same steps on `n` AVX-512 vectors (n a constant after inlining, so the vectors stay in
 * registers): one switch per step for all of them. Comparisons and blends spell out the scalar
 * formulation above, so both give the same bits. */
GK_TARGET_VNNI GK_INLINE void gk_ep512_step(const gk_step *st, __m512 *v, const int n) {
    const __m512 a = _mm512_set1_ps(st->a), b = _mm512_set1_ps(st->b), c = _mm512_set1_ps(st->c);
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    switch (st->op) {
    case GK_EP_RELU:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            v[i] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(zero, v[i], _CMP_GE_OQ), v[i], zero);
        }
        break;
    case GK_EP_CLIP:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            __m512 t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, v[i], _CMP_GE_OQ), v[i], a);
            v[i] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, t, _CMP_LT_OQ), t, b);
        }
        break;
    case GK_EP_LEAKY_RELU:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            v[i] = _mm512_mask_mul_ps(v[i], _mm512_cmp_ps_mask(v[i], zero, _CMP_LT_OQ), v[i], a);
        }
        break;
    case GK_EP_HARD_SIGMOID:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            __m512 t = _mm512_add_ps(_mm512_mul_ps(a, v[i]), b);
            t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(zero, t, _CMP_GE_OQ), t, zero);
            v[i] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(one, t, _CMP_LT_OQ), t, one);
        }
        break;
    case GK_EP_ADD:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_add_ps(v[i], a);
        break;
    case GK_EP_SUB:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_sub_ps(v[i], a);
        break;
    case GK_EP_SUB_FROM:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_sub_ps(a, v[i]);
        break;
    case GK_EP_MUL:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_mul_ps(v[i], a);
        break;
    case GK_EP_DIV:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_div_ps(v[i], a);
        break;
    case GK_EP_DIV_INTO:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) v[i] = _mm512_div_ps(a, v[i]);
        break;
    case GK_EP_GATED_CLIP:
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            __m512 t = _mm512_add_ps(v[i], a);
            t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(b, t, _CMP_GE_OQ), t, b);
            t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(c, t, _CMP_LT_OQ), t, c);
            v[i] = _mm512_mul_ps(v[i], t);
        }
        break;
    case GK_EP_FAKE_QUANT: {
        const __m512 magic = _mm512_set1_ps(12582912.0f);
        _Pragma("clang loop unroll(full)") for (int i = 0; i < n; i++) {
            __m512 t = _mm512_div_ps(v[i], a);
            __m512 u = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, c, _CMP_GT_OQ), t, c);
            t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, b, _CMP_LT_OQ), u, b);
            v[i] = _mm512_mul_ps(_mm512_sub_ps(_mm512_add_ps(t, magic), magic), a);
        }
        break;
    }
    default:
        break;
    }
}

/* gk_ep_run's AVX-512 build: blocks of 64 values (masked at the end), every step on a block
 * while it is in registers. Defined in epilogue.c. */
void gk_ep512_run(const gk_epilogue *ep, float bias, float *p, size_t count);
#endif

#endif
