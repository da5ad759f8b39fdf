#ifndef CGRANITEKERNELS_H
#define CGRANITEKERNELS_H

/* Integer and vector kernels for GraniteML's quantised (QDQ) convolutions.
 *
 * Every kernel exists in three builds chosen at run time: AVX-512 VNNI, AVX2 (+FMA) and
 * portable C, and the three agree bit for bit; only speed differs. The integer arithmetic is
 * exact (u8 x s8 products summed in int32, no int16 saturation); float sums run in one order
 * with fused multiply-adds (fmaf in the portable build) wherever one build uses them, and
 * nowhere else (no contraction left to the compiler).
 *
 * Requantisation follows ONNX Runtime's QLinearConv:
 *   v = float(acc + bias) * scale;  q = rint(clamp(v, lo, hi))   (half to even)
 * and the kernels write q * out_scale (the dequantised value the float graph carries). */

#include <stddef.h>
#include <stdint.h>

/* Instruction-set levels. */
enum { GK_PORTABLE = 0, GK_AVX2 = 1, GK_AVX512VNNI = 2 };

/* The best level this CPU supports, capped by the environment variable GRANITE_ML_ISA
 * ("portable", "avx2", "avx512vnni") when it is set. Detected once. */
int gk_detect_level(void);

/* The best level this CPU supports, ignoring the environment. */
int gk_cpu_level(void);

/* Per output channel requantisation. With requant == 0 the kernel writes
 * float(acc + bias) * scale + shift and does no clamping or rounding. */
typedef struct {
    const int32_t *bias;   /* per channel, added to the int32 sum (zero-point corrections folded in) */
    const float *scale;    /* per channel multiplier */
    const float *shift;    /* per channel, float mode only; may be NULL */
    float lo, hi;          /* clamp of the scaled value, integers (requant mode) */
    float out_scale;       /* the rounded value times this is written (requant mode) */
    int requant;
} gk_requant;

/* Element-wise steps a kernel applies to its outputs while they are still in registers or L1
 * (GraniteML's Epilogue, less sigmoid): each step keeps the arithmetic of the Swift original,
 * operation by operation (no fused multiply-adds), so results do not depend on who applies it. */
enum {
    GK_EP_RELU = 1,         /* 0 >= v ? 0 : v */
    GK_EP_CLIP,             /* min(max(v, a), b) */
    GK_EP_LEAKY_RELU,       /* v < 0 ? v * a : v */
    GK_EP_HARD_SIGMOID,     /* min(max(a * v + b, 0), 1) */
    GK_EP_ADD,              /* v + a */
    GK_EP_SUB,              /* v - a */
    GK_EP_SUB_FROM,         /* a - v */
    GK_EP_MUL,              /* v * a */
    GK_EP_DIV,              /* v / a */
    GK_EP_DIV_INTO,         /* a / v */
    GK_EP_GATED_CLIP,       /* v * min(max(v + a, b), c) (HardSwish's body) */
    GK_EP_FAKE_QUANT,       /* rint(clamp(v / a, b, c)) * a (b, c centred integers) */
};

#define GK_EPILOGUE_MAX 12

typedef struct {
    int op;
    float a, b, c;
} gk_step;

typedef struct {
    int count;
    gk_step steps[GK_EPILOGUE_MAX];
} gk_epilogue;

/* Appends a step; returns 0 (and changes nothing) when the epilogue is full. */
int gk_epilogue_push(gk_epilogue *ep, int op, float a, float b, float c);

/* p[i] = steps(p[i] + bias) for count values (bias 0 adds nothing; ep may be NULL). */
void gk_epilogue_apply(int level, const gk_epilogue *ep, float bias, float *p, size_t count);

/* Worker threads for parallel loops (Linux; elsewhere gk_pool_shared returns NULL). */
typedef struct gk_pool gk_pool;
typedef void (*gk_task)(void *context, int chunk);

/* The process's pool, grown to at least threads - 1 workers; NULL when threads < 2 or no
 * threads can be made. Idle workers spin for a fraction of a millisecond, then sleep. */
gk_pool *gk_pool_shared(int threads);

/* Runs task(context, i) for every i in [0, count) on the workers and the calling thread and
 * returns 1 when all have finished; returns 0 at once, running nothing, when another caller
 * has the pool (or count is outside 1...65535). */
int gk_pool_run(gk_pool *p, int count, gk_task task, void *context);

/* on = 1: a run of many jobs starts; until the matching on = 0, idle workers spin instead of
 * sleeping (sleeping ones are woken now). Holds nest. */
void gk_pool_hold(gk_pool *p, int on);

/* Float C[:, n0:n1] = A (m x k, row stride lda) * B (k x n, row stride ldb), row-major,
 * C overwritten (row stride ldc), then row i gets bias[i] (bias may be NULL) and the
 * epilogue (may be NULL) while the tile is in cache. Every level gives the same bits, ONNX
 * Runtime's SGEMM's: each output sums its k products in order, one fused multiply-add (one
 * rounding) each, in blocks of 128 from zero whose sums are added in order; then bias and
 * epilogue. */
void gk_sgemm(int level, int m, int k, const float *a, int lda, const float *b, int ldb, float *c, int ldc, int n0,
              int n1, const float *bias, const gk_epilogue *ep);

/* A 2-D convolution's input and window, for gk_sgemm_conv. */
typedef struct {
    const float *input;          /* channels x h x w */
    int channels, h, w;
    int kh, kw, sh, sw, dh, dw;  /* kernel, strides, dilations */
    int pt, pl;                  /* pads top / left */
    int ow;                      /* output width (column j is output pixel (j / ow, j % ow)) */
} gk_conv_geometry;

/* C[:, n0:n1] = A (m x channels*kh*kw) * im2col(input)[:, n0:n1], the im2col matrix never
 * stored: GEMM tiles are filled straight from the input. Bias and epilogue as gk_sgemm. */
void gk_sgemm_conv(int level, int m, const float *a, int lda, const gk_conv_geometry *g, float *c, int ldc, int n0,
                   int n1, const float *bias, const gk_epilogue *ep);

/* True when gk_deconv2x2 takes k input channels and rows of w pixels (k <= 256, w a
 * multiple of 16; the same at every level). */
int gk_deconv2x2_fits(int level, int k, int w);

/* A 2-D transposed convolution with a 2x2 kernel, stride 2 and no padding (windows do not
 * overlap), for input pixels [p0, p1) (p0 a multiple of 16): with GEMM rows (oc, ki, kj), kj
 * fastest, out[oc][2y + ki][2x + kj] = ep(bias[row] + sum_c A[row][c] * in[c][y][x]).
 * A is (4 * channels out) x k with row stride lda; in is k x h x w, out channels x 2h x 2w. */
void gk_deconv2x2(int level, int m, int k, const float *a, int lda, const float *in, int h, int w, float *out, int p0,
                  int p1, const float *bias, const gk_epilogue *ep);

/* Bytes of packed activations for a k x n operand (panels of 16 columns, k in groups of 4). */
size_t gk_qgemm_packed_b_size(int k, int n);

/* Bytes of packed weights for an m x k operand (blocks of 4 rows, k in groups of 4). */
size_t gk_qgemm_packed_a_size(int m, int k);

/* Packs s8 weights (row-major m x k) and writes each row's sum to wsum. */
void gk_qgemm_pack_a(const int8_t *w, int m, int k, int8_t *packed, int32_t *wsum);

/* Quantises columns [p0*16, p1*16) of a float k x n operand (row stride ld) to u8 with
 * u = clamp(rint(x * inv_scale) + offset, 0, 255) and packs them. */
void gk_qgemm_pack_b(int level, const float *src, int ld, int k, int n, int p0, int p1,
                     float inv_scale, int offset, uint8_t *packed);

/* out[m][n] = requant(sum_k A[m][k] * B[k][n]) for rows [m0, m1) (m0 a multiple of 4) and
 * columns [n0, n1) (n0 a multiple of 16); out has row stride ldc. */
void gk_qgemm(int level, const int8_t *packed_a, const uint8_t *packed_b, int m, int k, int n,
              int m0, int m1, int n0, int n1, const gk_requant *rq, float *out, int ldc);

/* Floats of scratch gk_dw_prepare needs for one plane. */
size_t gk_dw_scratch(int h, int w, int kh, int kw, int sh, int sw, int pt, int pl, int oh, int ow);

/* One depthwise plane: quantises src (h x w) to centred integers rint(x * inv_scale) held as
 * floats, pads it (zero = the zero point) and convolves with the integer kernel k (kh x kw,
 * strides sh/sw, pads top/left pt/pl), then requantises channel `channel` of rq into out
 * (oh x ow). Sums are exact: |products| < 2^16 and at most 64 of them per output
 * (kh * kw <= 64; larger kernels are the caller's to refuse).
 * With inv_scale <= 0 the plane is used as it is (a float depthwise convolution; use a
 * float-mode rq with scale 1 and the bias as shift); then ep (may be NULL) follows. */
void gk_depthwise(int level, const float *src, int h, int w, float inv_scale, const float *k, int kh, int kw,
                  int sh, int sw, int pt, int pl, int oh, int ow, const gk_requant *rq, int channel,
                  const gk_epilogue *ep, float *scratch, float *out);

/* In place: p = rint(clamp(p / scale, qlo, qhi)) * scale (QuantizeLinear then DequantizeLinear
 * in centred units; qlo, qhi integers within +-2^22). */
void gk_fake_quant(int level, float *p, size_t count, float scale, float qlo, float qhi);

/* dst = rint(clamp(src / scale, qlo, qhi)) + zero: QuantizeLinear (qlo, qhi = range - zero,
 * integers within +-2^22), results held as floats. */
void gk_quantize(int level, const float *src, float *dst, size_t count, float scale, float qlo, float qhi, float zero);

/* Nearest upsampling of `planes` planes (h x w) by integer factors fy, fx (output pixel
 * (y, x) reads input (y / fy, x / fx)). */
void gk_upsample_nearest(int level, const float *src, int planes, int h, int w, int fy, int fx, float *dst);

/* GlobalAveragePool (average != 0) or GlobalMaxPool: out[p] = mean or max of plane p
 * (area values) for `planes` planes. */
void gk_global_pool(int level, const float *src, size_t planes, size_t area, int average, float *out);

#endif
