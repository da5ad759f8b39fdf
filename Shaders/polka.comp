#version 450
#include "common.glsl"
// Polka (halftone): one dot per cell in the cell-centre color, its area following brightness
// (darkness on a white background). Integer only. pc.a: cell size, background (0 black, 1 white).
void main() {
    GRANITE_PIXEL(x, y)
    int s = pc.a.x;
    int cx = (x / s) * s + s / 2, cy = (y / s) * s + s / 2;
    uvec4 c = unpackPx(src[min(cy, pc.size.y - 1) * pc.size.x + min(cx, pc.size.x - 1)]);
    int l = luma8(c);
    if (pc.a.y == 1) l = 255 - l;
    int dx = x - cx, dy = y - cy;
    uint a = unpackPx(src[y * pc.size.x + x]).a;
    if ((dx * dx + dy * dy) * 4 * 255 <= l * s * s) {
        dst[y * pc.size.x + x] = epilogue(packPx(uvec4(c.rgb, a)));
    } else {
        uint bg = pc.a.y == 1 ? 255u : 0u;
        dst[y * pc.size.x + x] = epilogue(packPx(uvec4(bg, bg, bg, a)));
    }
}
