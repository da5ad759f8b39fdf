// Quantised depthwise convolution on exact integers held in floats, and float depthwise ones.
//
// The input plane is turned into centred integers (q - zero point) once, padded with zeros
// and split into `sw` column phases so that every tap of a strided row is a unit-stride read:
// padded column x*sw + kj lives in phase kj % sw at index x + kj / sw. Products of 8-bit
// integers and their sums over a kernel stay far below 2^24, so the float sums are exact and
// equal to ONNX Runtime's int32 ones; requantisation then follows QLinearConv. The float
// mode (plane used as it is) runs the same loops and then the epilogue over the plane.
#include "common.h"

#include <math.h>
#include <string.h>

#define GK_DW_CHUNK 64
#define GK_DW_MAX_TAPS 64

typedef struct {
    int hp, pw;   /* padded rows, columns per phase */
} dw_geometry;

GK_INLINE dw_geometry dw_geo(int h, int w, int kh, int kw, int sh, int sw, int pt, int pl, int oh, int ow) {
    int hp = h + pt, need = (oh - 1) * sh + kh;
    if (need > hp) hp = need;
    int wp = w + pl, needw = (ow - 1) * sw + kw;
    if (needw > wp) wp = needw;
    dw_geometry g = {hp, (wp + sw - 1) / sw};
    return g;
}

size_t gk_dw_scratch(int h, int w, int kh, int kw, int sh, int sw, int pt, int pl, int oh, int ow) {
    dw_geometry g = dw_geo(h, w, kh, kw, sh, sw, pt, pl, oh, ow);
    return (size_t)sw * g.hp * g.pw + GK_DW_CHUNK + kw;
}

/* Output rows in chunks of `chunk` columns (a constant after inlining, so the sums stay in
 * registers); each tap is one broadcast weight times a unit-stride row at a fixed offset.
 * Taps in order from zero; a float plane (`fused`) takes one fused multiply-add per tap, as ONNX
 * Runtime's convolutions (and every build here, fmaf in the portable one); integer sums are exact,
 * so they multiply and add. */
GK_INLINE void dw_rows(const float *scratch, int pw, size_t phase, const float *k, int kh, int kw, int sh, int sw,
                       int oh, int ow, const gk_requant *rq, int ch, float *out, const int chunk, const int fused) {
    const float bias = (float)rq->bias[ch], scale = rq->scale[ch];
    const float shift = rq->shift ? rq->shift[ch] : 0.0f;
    size_t offsets[GK_DW_MAX_TAPS];
    int taps = kh * kw;
    for (int ki = 0; ki < kh; ki++) {
        for (int kj = 0; kj < kw; kj++) offsets[ki * kw + kj] = (size_t)ki * pw + (size_t)(kj % sw) * phase + kj / sw;
    }
    for (int y = 0; y < oh; y++) {
        float *o = out + (size_t)y * ow;
        const float *base = scratch + (size_t)y * sh * pw;
        for (int x0 = 0; x0 < ow; x0 += chunk) {
            float acc[GK_DW_CHUNK];
            for (int i = 0; i < chunk; i++) acc[i] = 0.0f;
            for (int t = 0; t < taps; t++) {
                const float wv = k[t];
                const float *s = base + x0 + offsets[t];
                if (fused) {
                    for (int i = 0; i < chunk; i++) acc[i] = fmaf(wv, s[i], acc[i]);
                } else {
                    for (int i = 0; i < chunk; i++) acc[i] += wv * s[i];
                }
            }
            int cnt = ow - x0 < chunk ? ow - x0 : chunk;
            if (rq->requant) {
                for (int i = 0; i < chunk; i++) {
                    acc[i] = gk_rint(gk_clampf((acc[i] + bias) * scale, rq->lo, rq->hi)) * rq->out_scale;
                }
            } else {
                for (int i = 0; i < chunk; i++) {
                    float v = (acc[i] + bias) * scale;
                    acc[i] = v + shift;
                }
            }
            memcpy(o + x0, acc, (size_t)cnt * sizeof(float));
        }
    }
}

/* hw_fma: the build has fused multiply-adds in hardware, so integer sums take them too (exact
 * either way, and one instruction); the portable build multiplies and adds them. */
GK_INLINE void dw_body(const float *src, int h, int w, float inv, const float *k, int kh, int kw, int sh, int sw,
                       int pt, int pl, int oh, int ow, const gk_requant *rq, int ch, float *scratch, float *out,
                       const int hw_fma) {
    dw_geometry g = dw_geo(h, w, kh, kw, sh, sw, pt, pl, oh, ow);
    size_t phase = (size_t)g.hp * g.pw;
    memset(scratch, 0, (sw * phase + GK_DW_CHUNK + kw) * sizeof(float));
    for (int y = 0; y < h; y++) {
        const float *s = src + (size_t)y * w;
        float *row = scratch + (size_t)(y + pt) * g.pw;
        if (sw == 1 && inv > 0) {
            float *d = row + pl;
            for (int x = 0; x < w; x++) d[x] = gk_rint(s[x] * inv);
        } else if (sw == 1) {
            memcpy(row + pl, s, (size_t)w * sizeof(float));
        } else if (sw == 2) {
            // Even padded columns to phase 0, odd ones to phase 1 (no division in the loop).
            int first = pl & 1;
            float *even = row + (pl + first) / 2, *odd = row + phase + (pl + 1 - first) / 2;
            const float *se = s + first, *so = s + (1 - first);
            int ne = (w - first + 1) / 2, no = (w - (1 - first) + 1) / 2;
            if (inv > 0) {
                for (int i = 0; i < ne; i++) even[i] = gk_rint(se[2 * i] * inv);
                for (int i = 0; i < no; i++) odd[i] = gk_rint(so[2 * i] * inv);
            } else {
                for (int i = 0; i < ne; i++) even[i] = se[2 * i];
                for (int i = 0; i < no; i++) odd[i] = so[2 * i];
            }
        } else {
            for (int x = 0; x < w; x++) {
                int px = x + pl;
                row[(size_t)(px % sw) * phase + px / sw] = inv > 0 ? gk_rint(s[x] * inv) : s[x];
            }
        }
    }
    if (inv > 0 && !hw_fma) {
        if (ow <= 16) dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, 16, 0);
        else if (ow <= 32) dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, 32, 0);
        else dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, GK_DW_CHUNK, 0);
    } else {
        if (ow <= 16) dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, 16, 1);
        else if (ow <= 32) dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, 32, 1);
        else dw_rows(scratch, g.pw, phase, k, kh, kw, sh, sw, oh, ow, rq, ch, out, GK_DW_CHUNK, 1);
    }
}

static void dw_portable(const float *src, int h, int w, float inv, const float *k, int kh, int kw, int sh, int sw,
                        int pt, int pl, int oh, int ow, const gk_requant *rq, const gk_epilogue *ep, int ch,
                        float *scratch, float *out) {
    dw_body(src, h, w, inv, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ch, scratch, out, 0);
    if (ep && !rq->requant) gk_ep_run(ep, 0.0f, out, (size_t)oh * ow);
}

#if GK_X86
GK_TARGET_AVX2 static void dw_avx2(const float *src, int h, int w, float inv, const float *k, int kh, int kw, int sh,
                                   int sw, int pt, int pl, int oh, int ow, const gk_requant *rq,
                                   const gk_epilogue *ep, int ch, float *scratch, float *out) {
    dw_body(src, h, w, inv, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ch, scratch, out, 1);
    if (ep && !rq->requant) gk_ep_run(ep, 0.0f, out, (size_t)oh * ow);
}

GK_TARGET_VNNI static void dw_avx512(const float *src, int h, int w, float inv, const float *k, int kh, int kw, int sh,
                                     int sw, int pt, int pl, int oh, int ow, const gk_requant *rq,
                                     const gk_epilogue *ep, int ch, float *scratch, float *out) {
    dw_body(src, h, w, inv, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ch, scratch, out, 1);
    if (ep && !rq->requant) gk_ep512_run(ep, 0.0f, out, (size_t)oh * ow);
}
#endif

void gk_depthwise(int level, const float *src, int h, int w, float inv_scale, const float *k, int kh, int kw, int sh,
                  int sw, int pt, int pl, int oh, int ow, const gk_requant *rq, int channel, const gk_epilogue *ep,
                  float *scratch, float *out) {
#if GK_X86
    if (level >= GK_AVX512VNNI) {
        dw_avx512(src, h, w, inv_scale, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ep, channel, scratch, out);
        return;
    }
    if (level >= GK_AVX2) {
        dw_avx2(src, h, w, inv_scale, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ep, channel, scratch, out);
        return;
    }
#endif
    dw_portable(src, h, w, inv_scale, k, kh, kw, sh, sw, pt, pl, oh, ow, rq, ep, channel, scratch, out);
}
