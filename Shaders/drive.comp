#version 450
#include "common.glsl"
// Drive: rows sway on a triangle wave and smear backwards as if the camera moved fast.
// Integer only. pc.a: amplitude, period, smear length. F(0): phase (whole rows).
void main() {
    GRANITE_PIXEL(x, y)
    int amp = pc.a.x, period = pc.a.y, len = pc.a.z;
    int t = (y + int(F(0))) % period;
    int offset = (amp * 2 * abs(2 * t - period)) / period - amp;
    uvec4 sum = uvec4(0);
    for (int k = 0; k < len; k++) { sum += unpackPx(srcAt(x + offset - k, y)); }
    dst[y * pc.size.x + x] = epilogue(packPx((sum + uint(len / 2)) / uint(len)));
}
