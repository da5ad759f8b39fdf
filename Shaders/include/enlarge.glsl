// The blur's large-σ path enlarged back to full size as the shared resampler's bilinear resize
// does (resize.comp's two passes' integers, for one pixel's 2x2 window), read from texels:
// enlargeSource holds the reduced image (pc.b.x x pc.b.y pixels), enlargeTables each output
// column's, then each output row's (from pc.size.x), first source index << 15 | its 14-bit weight
// (the second tap weighs 16384 minus that; a window of one tap weighs 16384 alone).
// GaussianBlur.enlargementTable writes the tables; blur_enlarge.comp and background.comp read them.
layout(set = 0, binding = 4) uniform usamplerBuffer enlargeSource;
layout(set = 0, binding = 5) uniform usamplerBuffer enlargeTables;

ivec4 reducedAt(int x, int y) { return ivec4(unpackPx(texelFetch(enlargeSource, y * pc.b.x + x).r)); }

// One row of the 2x2 window with resize.comp's horizontal rounding (7 fractional bits kept).
ivec4 enlargedRow(int y, int x0, int x1, int wx) {
    ivec4 row = ivec4(64) + reducedAt(x0, y) * wx + reducedAt(x1, y) * (16384 - wx);
    return clamp(row >> 7, ivec4(0), ivec4(255 << 7));
}

// Pixel (x, y) of the enlarged image, all four channels.
uvec4 enlarged(int x, int y) {
    uint tx = texelFetch(enlargeTables, x).r, ty = texelFetch(enlargeTables, pc.size.x + y).r;
    int x0 = int(tx >> 15), wx = int(tx & 0x7fffu), x1 = min(x0 + 1, pc.b.x - 1);
    int y0 = int(ty >> 15), wy = int(ty & 0x7fffu), y1 = min(y0 + 1, pc.b.y - 1);
    ivec4 sum = ivec4(1 << 20) + enlargedRow(y0, x0, x1, wx) * wy + enlargedRow(y1, x0, x1, wx) * (16384 - wy);
    return uvec4(clamp(sum >> 21, ivec4(0), ivec4(255)));
}
