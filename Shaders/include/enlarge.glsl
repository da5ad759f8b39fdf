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

// Output row y's window: its first reduced row, the second, and the first's weight.
ivec3 enlargedWindow(int y) {
    uint ty = texelFetch(enlargeTables, pc.size.x + y).r;
    return ivec3(int(ty >> 15), min(int(ty >> 15) + 1, pc.b.y - 1), int(ty & 0x7fffu));
}

// Pixel x of the enlarged image's row whose window is `row` (enlargedWindow), all four channels.
uvec4 enlargedWith(int x, ivec3 row) {
    uint tx = texelFetch(enlargeTables, x).r;
    int x0 = int(tx >> 15), wx = int(tx & 0x7fffu), x1 = min(x0 + 1, pc.b.x - 1);
    ivec4 sum = ivec4(1 << 20) + enlargedRow(row.x, x0, x1, wx) * row.z + enlargedRow(row.y, x0, x1, wx) * (16384 - row.z);
    return uvec4(clamp(sum >> 21, ivec4(0), ivec4(255)));
}

// Pixel (x, y) of the enlarged image, all four channels.
uvec4 enlarged(int x, int y) { return enlargedWith(x, enlargedWindow(y)); }

// A run's reduced pixels at hand: the window's four (columns x0 and x0 + 1 of its two rows),
// fetched again only when x0 changes (every few pixels of a row: the reduction's factor).
struct EnlargeCache { int x0; ivec4 a, b, c, d; };

EnlargeCache enlargeCache() { return EnlargeCache(-1, ivec4(0), ivec4(0), ivec4(0), ivec4(0)); }

// enlargedWith(x, row), from the cache (`row` is the same for the whole run).
uvec4 enlargedCached(int x, ivec3 row, inout EnlargeCache k) {
    uint tx = texelFetch(enlargeTables, x).r;
    int x0 = int(tx >> 15), wx = int(tx & 0x7fffu);
    if (x0 != k.x0) {
        int x1 = min(x0 + 1, pc.b.x - 1);
        k.x0 = x0;
        k.a = reducedAt(x0, row.x);
        k.b = reducedAt(x1, row.x);
        k.c = reducedAt(x0, row.y);
        k.d = reducedAt(x1, row.y);
    }
    ivec4 top = clamp((ivec4(64) + k.a * wx + k.b * (16384 - wx)) >> 7, ivec4(0), ivec4(255 << 7));
    ivec4 bottom = clamp((ivec4(64) + k.c * wx + k.d * (16384 - wx)) >> 7, ivec4(0), ivec4(255 << 7));
    ivec4 sum = ivec4(1 << 20) + top * row.z + bottom * (16384 - row.z);
    return uvec4(clamp(sum >> 21, ivec4(0), ivec4(255)));
}
