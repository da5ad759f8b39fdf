// Shared helpers of the kernel files (not part of the public header).
#ifndef GK_COMMON_H
#define GK_COMMON_H

#include "CGraniteKernels.h"

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

#endif
