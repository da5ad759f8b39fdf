#version 450
#include "common.glsl"
// One pass of a separable gaussian: weights w[0..RADIUS] as floats in aux, DIR 0 = rows, 1 = columns.
// RADIUS is a specialization constant so the tap loop is fully unrolled on every driver.
layout(constant_id = 0) const int RADIUS = 1;
layout(constant_id = 1) const int DIR = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int w = pc.size.x, h = pc.size.y;
    vec4 acc = vec4(unpackPx(src[y * w + x])) * uintBitsToFloat(aux[0]);
    if (DIR == 0) {
        if (x >= RADIUS && x + RADIUS < w) {
            int row = y * w + x;
            for (int k = 1; k <= RADIUS; k++) {
                acc += (vec4(unpackPx(src[row - k])) + vec4(unpackPx(src[row + k]))) * uintBitsToFloat(aux[k]);
            }
        } else {
            for (int k = 1; k <= RADIUS; k++) {
                acc += (vec4(unpackPx(src[y * w + max(x - k, 0)])) + vec4(unpackPx(src[y * w + min(x + k, w - 1)])))
                    * uintBitsToFloat(aux[k]);
            }
        }
    } else {
        for (int k = 1; k <= RADIUS; k++) {
            acc += (vec4(unpackPx(src[max(y - k, 0) * w + x])) + vec4(unpackPx(src[min(y + k, h - 1) * w + x])))
                * uintBitsToFloat(aux[k]);
        }
    }
    dst[y * pc.size.z + x] = packPx(uvec4(min(acc + 0.5, vec4(255.0))));
}
