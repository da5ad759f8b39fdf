#version 450
#include "common.glsl"
#include "enlarge.glsl"
// Background replacement by a person mask (the `background` filter, issue 38). The mask is the
// chain's auxiliary plane (floats, pc.b.z x pc.b.w, any size, 1 = person); no mask (pc.b.z == 0,
// a live stream's frames before the model's first) makes the whole frame background. Each pixel's alpha is the guided filter's: background_guide.comp left
// the coefficients of each mask cell and of the cell after it in its row at binding 7
// (A, B, A', B'), taken here bilinearly at the pixel's position (centres at integer + 1/2,
// clamped; two loads a pixel), alpha = clamp(A * luma / 255 + B, 0, 1), then
// feathered (smoothstep over [1/2 - F(1), 1/2 + F(1)]); the average over frames is in the fits
// background_guide.comp made. MaskRefinement.swift is the CPU reference, step by step.
// MODE 0: over a blurred copy of the frame (binding 4, r32ui texels, made by the blur kernel);
// 1: over the colour F(2..4) (0...255); 2: the alpha itself as gray. MODE 0's backdrop is the
// photo of mode=image as well (the filter's resident copy, scaled to cover the frame).
// ENLARGE 1 (MODE 0, the blur's large-σ path): binding 4 holds the blur's reduced image and
// each pixel enlarges it as it composites (enlarge.glsl; its tables at binding 5), so the
// full-size blurred image is never written.
// f: the guide's epsilon (background_guide.comp), feather, red, green, blue, the new fit's weight (background_guide.comp).
// RUN: pixels of a row per invocation (Background.record: 32 on a CPU device, where a loop keeps
// every SIMD lane busy and each storage-buffer access is a loop over the lanes; 1 on a GPU),
// dispatched in one dimension (runs × rows invocations). VEC 1 (rows of whole quads, RUN a multiple
// of 4): the pixels and the output move as quads.
layout(constant_id = 0) const int MODE = 0;
layout(constant_id = 1) const int ENLARGE = 0;
layout(constant_id = 2) const int RUN = 1;
layout(constant_id = 3) const int VEC = 0;
layout(std430, set = 0, binding = 6) readonly buffer Guide { vec4 coefficients[]; };

// What a run keeps between its pixels: the backdrop's reduced pixels (ENLARGE) and the mask
// cells' coefficients, fetched again only when the pixel moves to another column of them.
struct RunCache { EnlargeCache backdrop; int cell; vec4 c0, c1; };

// The backdrop's pixel (x, y): the reduced image enlarged bilinearly (ENLARGE 1; `row` is
// enlargedWindow(y), made once a row), else its own.
uvec4 backdropAt(int x, int y, ivec3 row, inout RunCache k) {
    return ENLARGE == 0 ? unpackPx(texelFetch(enlargeSource, y * pc.size.x + x).r) : enlargedCached(x, row, k.backdrop);
}

// Walking a row: the unclamped cell of pixel x and its remainder, ((2x + 1) n - w) = cell * 2w +
// rem with 0 <= rem < 2w (the floor by integer division once); `next` moves to x + 1 without one.
struct Walk { int cell; int rem; };

Walk walkFrom(int x, int w, int n) {
    int t = (2 * x + 1) * n - w;
    int cell = t >= 0 ? t / (2 * w) : -((-t + 2 * w - 1) / (2 * w));
    return Walk(cell, t - cell * 2 * w);
}

// A pixel's position along an axis in mask cells (MaskRefinement.bilinearPosition): the cell
// before it and the weight of the one after, clamped at the ends.
void position(Walk walk, int frame, int n, out int index, out float weight) {
    index = walk.cell;
    weight = float(walk.rem) / float(2 * frame);
    if (index < 0) { index = 0; weight = 0.0; }
    if (index >= n - 1) { index = n - 1; weight = 0.0; }
}

void next(inout Walk walk, int w, int n) {
    walk.rem += 2 * n;
    while (walk.rem >= 2 * w) { walk.rem -= 2 * w; walk.cell++; }
}

// Pixel (x, y)'s alpha (p: its colour; walk: x's place in the mask's columns);
// y0, y1, ay: its row's mask rows.
float alphaAt(Walk walk, uint p, int y0, int y1, float ay, inout RunCache k) {
    int mw = pc.b.z;
    if (mw == 0) return 0.0;
    int x0;
    float ax;
    position(walk, pc.size.x, mw, x0, ax);
    if (x0 != k.cell) {
        // Each load holds the cell and the one after it (A, B, A', B').
        k.cell = x0;
        k.c0 = coefficients[y0 * mw + x0];
        k.c1 = coefficients[y1 * mw + x0];
    }
    vec4 c0 = k.c0, c1 = k.c1;
    precise vec2 top = c0.xy + ax * (c0.zw - c0.xy);
    precise vec2 bottom = c1.xy + ax * (c1.zw - c1.xy);
    precise vec2 c = top + ay * (bottom - top);
    precise float m = c.x * (float(luma8(unpackPx(p))) / 255.0) + c.y;
    m = clamp(m, 0.0, 1.0);
    if (F(1) <= 0.0) return m >= 0.5 ? 1.0 : 0.0;
    float t = clamp((m - (0.5 - F(1))) / (2.0 * F(1)), 0.0, 1.0);
    return t * t * (3.0 - 2.0 * t);
}

// The output pixel: the alpha as gray (MODE 2), or the frame mixed over the backdrop.
uint mixed(int x, int y, uint p, float alpha, ivec3 row, inout RunCache k) {
    if (MODE == 2) {
        uint m = uint(clamp(alpha, 0.0, 1.0) * 255.0 + 0.5);
        return epilogueGray(m, 255u);
    }
    vec3 back = MODE == 0 ? vec3(backdropAt(x, y, row, k).rgb) : vec3(F(2), F(3), F(4));
    vec3 front = vec3(unpackPx(p).rgb);
    uvec3 o = uvec3(clamp(back + alpha * (front - back), 0.0, 255.0) + 0.5);
    return epilogue(packPx(uvec4(o, p >> 24)));
}

void main() {
    // One dimension: invocation g takes run g % runs of row g / runs (every lane busy, whatever
    // the width).
    int w = pc.size.x, runs = (w + RUN - 1) / RUN;
    int g = int(gl_GlobalInvocationID.x);
    if (g >= runs * pc.size.y) return;
    int y = g / runs, x0 = (g % runs) * RUN, end = min(x0 + RUN, w);
    // This row's mask rows and the backdrop's, once for the run.
    int my0 = 0, my1 = 0;
    float ay = 0.0;
    if (pc.b.z != 0) {
        position(walkFrom(y, pc.size.y, pc.b.w), pc.size.y, pc.b.w, my0, ay);
        my1 = min(my0 + 1, pc.b.w - 1);
    }
    ivec3 row = ENLARGE == 1 && MODE == 0 ? enlargedWindow(y) : ivec3(0);
    RunCache k = RunCache(enlargeCache(), -1, vec4(0.0), vec4(0.0));
    int mw = max(pc.b.z, 1);
    Walk walk = walkFrom(x0, w, mw);
    if (VEC == 1) {
        for (int qx = x0; qx < end; qx += 4) {
            int q = (y * w + qx) / 4;
            uvec4 p = src4[q];
            vec4 alpha;
            alpha.x = alphaAt(walk, p.x, my0, my1, ay, k);
            next(walk, w, mw);
            alpha.y = alphaAt(walk, p.y, my0, my1, ay, k);
            next(walk, w, mw);
            alpha.z = alphaAt(walk, p.z, my0, my1, ay, k);
            next(walk, w, mw);
            alpha.w = alphaAt(walk, p.w, my0, my1, ay, k);
            next(walk, w, mw);
            uvec4 o;
            o.x = mixed(qx, y, p.x, alpha.x, row, k);
            o.y = mixed(qx + 1, y, p.y, alpha.y, row, k);
            o.z = mixed(qx + 2, y, p.z, alpha.z, row, k);
            o.w = mixed(qx + 3, y, p.w, alpha.w, row, k);
            dst4[q] = o;
        }
    } else {
        for (int px = x0; px < end; px++) {
            int i = y * w + px;
            uint p = src[i];
            float alpha = alphaAt(walk, p, my0, my1, ay, k);
            next(walk, w, mw);
            dst[i] = mixed(px, y, p, alpha, row, k);
        }
    }
}
