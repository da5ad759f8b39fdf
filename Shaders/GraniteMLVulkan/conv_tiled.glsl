// The body of the tiled group-1 convolutions, with bias and epilogue, NCHW: conv_pointwise.comp
// (TAPS 0: 1×1 without padding, any stride — most of a MobileNet's multiply-adds) and
// conv_dense.comp (TAPS 1: any kernel, strides, pads, dilations). DispatchBuilder.conv picks;
// grouped convolutions other than depthwise run conv.comp.
//
// A workgroup computes a tile of 64·PIXELS output pixels × BLOCK output channels
// (gl_WorkGroupID.y: the channel block, z: the batch); each invocation PIXELS pixels (64 apart, so
// neighbouring invocations read neighbouring pixels) of the BLOCK channels, in PIXELS·BLOCK
// accumulators (register blocking). Per input channel and tap an invocation reads each of its
// pixels once and the block's BLOCK weights once, for PIXELS·BLOCK multiply-adds — conv.comp
// reads a weight per multiply-add. The weights are laid out for this at load: block, input
// channel, tap, then the block's BLOCK channels (zeros past M), so a tap's weights for the block
// are BLOCK/4 quads (K4: one read each) at an address the whole workgroup shares. Taps outside the input
// read a clamped address and add zero.
// With 21 set, the int8 form (see conv.comp): centred weights as int32 bits, quantiseInput and
// requantise of ml.glsl, so the sums and outputs are the CPU's to the bit. The float form's sums
// are the CPU's too (see conv.comp: the same tap order, single roundings).
// On lavapipe (2 cores, same run): FastDepth's 19 pointwise convolutions 122 ms (55 of them for
// the 16 int8 ones, the rest for three exactFma ones) where conv.comp took 1.53 s for all 38;
// the MiDaS replica's 21 dense ones 1.03 s of its 1.6 s (conv.comp: 10.7 s for all 97).
// P: as conv.comp (2: the blocked weights; 27: exactFma).
#define PIXELS 4
#define BLOCK 8
#define QUADS (BLOCK / 4)  // quads of weights per input channel and tap
layout(local_size_x = 64) in;

int C, H, W, plane, base, KH, KW, DH, DW;  // base: the batch item's input
int y0[PIXELS], x0[PIXELS];

// The input of each pixel at input channel c, tap (ky, kx); 0 outside the input (read at a clamped
// address, no branch: on CPU drivers both sides of a branch run).
void tap(int c, int ky, int kx, out float v[PIXELS]) {
    int channel = base + c * plane;
    for (int r = 0; r < PIXELS; r++) {
        int iy = y0[r] + ky * DH, ix = x0[r] + kx * DW;
#if TAPS
        bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
        float x = A(channel + clamp(iy, 0, H - 1) * W + clamp(ix, 0, W - 1));
        v[r] = inside ? x : 0.0;
#else
        v[r] = A(channel + iy * W + ix);
#endif
    }
}

void main() {
    C = P(6); H = P(7); W = P(8);
    int M = P(9), OH = P(10), OW = P(11);
    int n = int(gl_WorkGroupID.z), block = int(gl_WorkGroupID.y);
    int pixels = OH * OW;
    plane = H * W;
    base = P(0) + n * C * plane;
    int first = int(gl_WorkGroupID.x) * 64 * PIXELS + int(gl_LocalInvocationID.x);
#if TAPS
    KH = P(12); KW = P(13); DH = P(18); DW = P(19);
#else
    KH = 1; KW = 1; DH = 0; DW = 0;
#endif
    // Pixels past the last compute pixel 0 and write nothing, so the loops stay the same for
    // every invocation.
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        p = p < pixels ? p : 0;
        int oy = p / OW, ox = p - oy * OW;
        y0[r] = oy * P(14) - P(16);
        x0[r] = ox * P(15) - P(17);
    }
    int wquad = P(2) / 4 + block * C * KH * KW * QUADS;
    int m0 = block * BLOCK;
    float results[PIXELS][BLOCK];
    // Two loops, one a form: a branch inside would run both sides on CPU drivers.
    if (P(21) != 0) {
        float inv = PF(23);
        int acc[PIXELS][BLOCK];
        for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = 0;
        for (int c = 0, wq = wquad; c < C; c++) for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++, wq += QUADS) {
            float v[PIXELS];
            tap(c, ky, kx, v);
            ivec4 w[QUADS];
            for (int k = 0; k < QUADS; k++) w[k] = CI4(wq + k);
            for (int r = 0; r < PIXELS; r++) {
                int q = quantiseInput(v[r], inv);
                for (int j = 0; j < BLOCK; j++) acc[r][j] += q * w[j / 4][j % 4];
            }
        }
        for (int j = 0; j < BLOCK; j++) {
            int m = min(m0 + j, M - 1);
            int bias = CI(P(3) + m);
            float scale = K(P(22) + m);
            for (int r = 0; r < PIXELS; r++) results[r][j] = requantise(acc[r][j], bias, scale, PF(24), PF(25), PF(26));
        }
    } else {
        // Each output's taps in the CPU's order (input channel, then tap), one fused multiply-add
        // each, as conv.comp: with 27 set (the device's fma() rounds twice) exactFma's.
        float acc[PIXELS][BLOCK];
        for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = 0.0;
        if (P(27) != 0) {
            for (int c = 0, wq = wquad; c < C; c++) for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++, wq += QUADS) {
                float v[PIXELS];
                tap(c, ky, kx, v);
                vec4 w[QUADS];
                for (int k = 0; k < QUADS; k++) w[k] = K4(wq + k);
                for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = exactFma(v[r], w[j / 4][j % 4], acc[r][j]);
            }
        } else {
            for (int c = 0, wq = wquad; c < C; c++) for (int ky = 0; ky < KH; ky++) for (int kx = 0; kx < KW; kx++, wq += QUADS) {
                float v[PIXELS];
                tap(c, ky, kx, v);
                vec4 w[QUADS];
                for (int k = 0; k < QUADS; k++) w[k] = K4(wq + k);
                for (int r = 0; r < PIXELS; r++) for (int j = 0; j < BLOCK; j++) acc[r][j] = fma(v[r], w[j / 4][j % 4], acc[r][j]);
            }
        }
        for (int j = 0; j < BLOCK; j++) {
            int m = min(m0 + j, M - 1);
            float bias = P(3) >= 0 ? K(P(3) + m) : 0.0;
            for (int r = 0; r < PIXELS; r++) results[r][j] = epilogue(acc[r][j] + bias, P(4), P(5));
        }
    }
    for (int r = 0; r < PIXELS; r++) {
        int p = first + 64 * r;
        if (p >= pixels) break;
        int dst = P(1) + (n * M + m0) * pixels + p;
        for (int j = 0; j < BLOCK; j++) if (m0 + j < M) act[dst + j * pixels] = results[r][j];
    }
}
