#version 450
#include "common.glsl"
// The shared resampler (GraniteMedia's Resampler: box, bilinear or Lanczos-3, antialiased when
// shrinking) in the very same integers, so GPU and CPU agree exactly. Two passes:
// MODE 0, horizontal: source pixels (pc.size.xy) -> 4 ints a pixel with 7 fractional bits,
//   clamp((sum of pixel * 14-bit weight + 64) >> 7, 0, 255 << 7), into a dw x sh scratch buffer (pc.size.zw).
// MODE 1, vertical: those ints (dw x sh) -> pixels (dw x dh): (sum of int * weight + 2^20) >> 21,
//   clamped to 0...255.
// aux holds the two ResampleAxis tables as ints: x starts (dw) from 0, x weights (dw * pc.a.x)
// from dw, y starts (dh) from pc.a.z, y weights (dh * pc.a.y) from pc.a.w.
// MODE 2, one pass: an area reduction whose every window is a whole block of 2^a x 2^b pixels
// (pc.a.x = a, pc.a.y = b; Resize.blockShift checks the tables): with weights 2^(14-a) and
// 2^(14-b) the two passes' integers are exactly (sum of the block + 2^(a+b-1)) >> (a+b), summed here
// straight from the source (no scratch, one read of the frame).
layout(constant_id = 0) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int dw = pc.size.z;
    if (MODE == 2) {
        int a = pc.a.x, b = pc.a.y, fx = 1 << a, fy = 1 << b;
        uvec4 sum = uvec4(1u << (a + b - 1));
        for (int j = 0; j < fy; j++) {
            int row = ((y << b) + j) * pc.size.x + (x << a);
            for (int k = 0; k < fx; k++) sum += unpackPx(src[row + k]);
        }
        dst[y * dw + x] = epilogue(packPx(sum >> uint(a + b)));
        return;
    }
    if (MODE == 0) {
        int taps = pc.a.x;
        int start = int(aux[x]);
        int base = dw + x * taps;
        ivec4 sum = ivec4(64);
        for (int k = 0; k < taps; k++) {
            sum += ivec4(unpackPx(src[y * pc.size.x + start + k])) * int(aux[base + k]);
        }
        ivec4 v = clamp(sum >> 7, ivec4(0), ivec4(255 << 7));
        int o = (y * dw + x) * 4;
        dst[o] = uint(v.x); dst[o + 1] = uint(v.y); dst[o + 2] = uint(v.z); dst[o + 3] = uint(v.w);
    } else {
        int taps = pc.a.y;
        int start = int(aux[pc.a.z + y]);
        int base = pc.a.w + y * taps;
        ivec4 sum = ivec4(1 << 20);
        for (int k = 0; k < taps; k++) {
            int i = ((start + k) * dw + x) * 4;
            ivec4 v = ivec4(int(src[i]), int(src[i + 1]), int(src[i + 2]), int(src[i + 3]));
            sum += v * int(aux[base + k]);
        }
        uvec4 p = uvec4(clamp(sum >> 21, ivec4(0), ivec4(255)));
        dst[y * dw + x] = epilogue(packPx(p));
    }
}
