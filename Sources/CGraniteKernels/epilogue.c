// Epilogue steps (bias, activations, scalar arithmetic, fake quantisation) as a standalone
// pass, for kernels that cannot apply them inside their own loops; the AVX-512 GEMM applies
// the same steps (gk_ep512_step, common.h) to its tiles in registers.
#include "common.h"

int gk_epilogue_push(gk_epilogue *ep, int op, float a, float b, float c) {
    if (ep->count >= GK_EPILOGUE_MAX) return 0;
    gk_step step = {op, a, b, c};
    ep->steps[ep->count++] = step;
    return 1;
}

static void ep_portable(const gk_epilogue *ep, float bias, float *p, size_t count) { gk_ep_run(ep, bias, p, count); }

#if GK_X86
GK_TARGET_AVX2 static void ep_avx2(const gk_epilogue *ep, float bias, float *p, size_t count) {
    gk_ep_run(ep, bias, p, count);
}

GK_TARGET_VNNI void gk_ep512_run(const gk_epilogue *ep, float bias, float *p, size_t count) {
    const __m512 add = _mm512_set1_ps(bias);
    for (size_t i = 0; i < count; i += 64) {
        size_t left = count - i;
        __mmask16 mask[4];
        __m512 v[4];
        for (int j = 0; j < 4; j++) {
            size_t lanes = left > 16 * (size_t)j ? left - 16 * (size_t)j : 0;
            mask[j] = lanes >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << lanes) - 1);
            v[j] = _mm512_maskz_loadu_ps(mask[j], p + i + 16 * j);
            if (bias != 0.0f) v[j] = _mm512_add_ps(v[j], add);
        }
        if (ep) {
            for (int s = 0; s < ep->count; s++) gk_ep512_step(&ep->steps[s], v, 4);
        }
        for (int j = 0; j < 4; j++) _mm512_mask_storeu_ps(p + i + 16 * j, mask[j], v[j]);
    }
}
#endif

void gk_epilogue_apply(int level, const gk_epilogue *ep, float bias, float *p, size_t count) {
#if GK_X86
    if (level >= GK_AVX512VNNI) { gk_ep512_run(ep, bias, p, count); return; }
    if (level >= GK_AVX2) { ep_avx2(ep, bias, p, count); return; }
#endif
    ep_portable(ep, bias, p, count);
}
