// The sobel family's output pixel from the gradient (gx, gy) of the luma and the centre pixel,
// shared by sobel.glsl and blur_stencil.comp (which defines EDGE_MODE from its own constant).
// EDGE_MODE 0 (edges): gray magnitude * F(0), alpha kept.
// EDGE_MODE 1 (ink): posterise to pc.a.x levels and draw ink (pc.b.rgb) where |g|^2 > pc.a.y, on paper.
uint edgePixel(int gx, int gy, uint centre, uvec3 paper) {
    int m2 = gx * gx + gy * gy;
    uvec4 c = unpackPx(centre);
    if (EDGE_MODE == 0) {
        uint m = uint(min(sqrt(float(m2)) * F(0) + 0.5, 255.0));
        return epilogueGray(m, c.a);
    }
    if (m2 > pc.a.y) return epilogue(packPx(uvec4(uvec3(pc.b.xyz), c.a)));
    // q * 255 / (levels - 1) without an integer division (scalar on CPU drivers): the
    // true quotient is an integer or at least 1/15 above one, so +0.01 then truncating is exact.
    uvec3 q = (c.rgb * uint(pc.a.x)) >> 8;
    uvec3 p = uvec3(vec3(q * 255u) * (1.0 / float(pc.a.x - 1)) + 0.01);
    return epilogue(packPx(uvec4((p * 3u + paper) >> 2, c.a)));
}
