#version 450
#include "common.glsl"
// Sobel on integer luma. MODE 0 (edges): gray magnitude * f[0], alpha kept.
// MODE 1 (ink): posterise to pc.a.x levels and draw ink where |g|^2 > pc.a.y.
layout(constant_id = 0) const int MODE = 0;

void main() {
    GRANITE_PIXEL(x, y)
    int l00 = luma8(unpackPx(srcAt(x - 1, y - 1))), l10 = luma8(unpackPx(srcAt(x, y - 1))), l20 = luma8(unpackPx(srcAt(x + 1, y - 1)));
    int l01 = luma8(unpackPx(srcAt(x - 1, y))), l21 = luma8(unpackPx(srcAt(x + 1, y)));
    int l02 = luma8(unpackPx(srcAt(x - 1, y + 1))), l12 = luma8(unpackPx(srcAt(x, y + 1))), l22 = luma8(unpackPx(srcAt(x + 1, y + 1)));
    int gx = (l20 + 2 * l21 + l22) - (l00 + 2 * l01 + l02);
    int gy = (l02 + 2 * l12 + l22) - (l00 + 2 * l10 + l20);
    int m2 = gx * gx + gy * gy;
    uvec4 c = unpackPx(src[y * pc.size.x + x]);
    if (MODE == 0) {
        uint m = uint(min(sqrt(float(m2)) * f[0] + 0.5, 255.0));
        dst[y * pc.size.x + x] = packPx(uvec4(m, m, m, c.a));
    } else if (m2 > pc.a.y) {
        dst[y * pc.size.x + x] = packPx(uvec4(uvec3(pc.b.xyz), c.a));
    } else {
        uint levels = uint(pc.a.x);
        uvec3 q = (c.rgb * levels) >> 8;
        uvec3 p = (q * 255u) / (levels - 1u);
        // Paper: lift the shadows a little towards the paper tone.
        uvec3 paper = uvec3(pc.b.w & 255, (pc.b.w >> 8) & 255, (pc.b.w >> 16) & 255);
        dst[y * pc.size.x + x] = packPx(uvec4((p * 3u + paper) >> 2, c.a));
    }
}
