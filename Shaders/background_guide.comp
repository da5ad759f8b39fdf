#version 450
#include "common.glsl"
// The `background` filter's guided filter (issue 38), at the person mask's size: five steps
// (STEP, one dispatch each, one invocation a mask cell; the destination size is the mask's,
// the source the frame), then background.comp takes the coefficients bilinearly and makes each
// pixel's alpha = A * luma / 255 + B. MaskRefinement.swift is the CPU reference, in the same
// order of operations (`precise`: no fused multiply-adds, the CPU's rounding).
//   STEP 0: the guide: the frame's mean luma over the cell (0...1) beside the mask (aux) -> out (vec2)
//   STEP 1: the window's column sums of (I, p, I^2, I * p) over its 2r + 1 rows (in: the guide)
//           -> out (vec4)
//   STEP 2: each (2r + 1)^2 window's linear fit of the mask on the guide from the column sums of
//           its 2r + 1 columns: a = cov / (var + F(0)), b = mean p - a * mean I -> out (vec2)
//   STEP 3: the fits' column sums over the window's rows (in: the fits) -> out (vec2)
//   STEP 4: the fits' mean over the windows covering the cell, and the same for the cell after it
//           in its row (the last cell's own again): (A, B, A', B') -> out (vec4), so
//           background.comp takes a row's two cells in one load
// Separable: 2(2r + 1) loads a cell instead of (2r + 1)^2 (on lavapipe the three steps of whole
// windows took 3.3 ms a frame for 256x144 cells). Windows are clipped at the mask's borders; r is
// pc.a.x. In and out are bindings 4 and 5, as vec2s or vec4s a cell as the step says.
// SMOOTH 1: the fits are averaged over frames in the filter's resident state (binding 6, n cells):
//   [0] sum low, [1] sum high, [2] no history, [3] fresh (all ones until the first frame),
//   [4 ..< 4 + 2n] the averaged fits (a, b floats), [4 + 2n ..< 4 + 3n] each cell's last luma sum.
//   Step 0 adds |luma sum - last luma sum| of its cell to the 64-bit sum (one atomic a cell) and
//   stores the sum; cell 0 turns "fresh" into "no history" for this frame. The chain zeroes words
//   0-2 before step 0. Step 2: fit = last + F(5) * (fit - last), unless there is no history or the
//   summed change exceeds pc.a.yz (a 64-bit limit, low word first: the scene-cut threshold times
//   the cells' pixels); then this frame's fit alone; either way stored as the history.
layout(constant_id = 0) const int STEP = 0;
layout(constant_id = 1) const int SMOOTH = 0;
layout(std430, set = 0, binding = 4) readonly buffer In { vec2 cells[]; };
layout(std430, set = 0, binding = 4) readonly buffer InQuads { vec4 cells4[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Out { vec2 result[]; };
layout(std430, set = 0, binding = 5) writeonly buffer OutQuads { vec4 result4[]; };
layout(std430, set = 0, binding = 6) buffer State { uint state[]; };

// The frame pixels of cell q along an axis of `frame` pixels and `n` cells (MaskRefinement.cellSpan).
ivec2 span(int q, int frame, int n) {
    int start = q * frame / n;
    return ivec2(start, max((q + 1) * frame / n, start + 1));
}

// Cell (qx, qy)'s column sums of (v.x, v.y, v.x^2, v.x * v.y) over its window's rows (clipped),
// top to bottom (MaskRefinement.windowed).
vec4 columnSums(int qx, int qy, int mw, int mh, int r) {
    precise vec4 s = vec4(0.0);
    for (int cy = max(qy - r, 0); cy <= min(qy + r, mh - 1); cy++) {
        vec2 v = cells[cy * mw + qx];
        precise vec4 term = vec4(v.x, v.y, v.x * v.x, v.x * v.y);
        s += term;
    }
    return s;
}

// Cell (qx, qy)'s window sums from the column sums of its columns (clipped), left to right: of
// the vec4s (STEP 2) or of the vec2s (STEP 4).
vec4 rowSums4(int qx, int qy, int mw, int r) {
    precise vec4 s = vec4(0.0);
    for (int cx = max(qx - r, 0); cx <= min(qx + r, mw - 1); cx++) s += cells4[qy * mw + cx];
    return s;
}
vec2 rowSums2(int qx, int qy, int mw, int r) {
    precise vec2 s = vec2(0.0);
    for (int cx = max(qx - r, 0); cx <= min(qx + r, mw - 1); cx++) s += cells[qy * mw + cx];
    return s;
}

// The number of cells in cell (qx, qy)'s window, as a float.
float windowCount(int qx, int qy, int mw, int mh, int r) {
    return float((min(qy + r, mh - 1) - max(qy - r, 0) + 1) * (min(qx + r, mw - 1) - max(qx - r, 0) + 1));
}

void main() {
    GRANITE_PIXEL(x, y)
    int qx = x, qy = y;
    int w = pc.size.x, mw = pc.size.z, mh = pc.size.w, r = pc.a.x;
    int q = qy * mw + qx;
    if (STEP == 0) {
        ivec2 rows = span(qy, pc.size.y, mh), columns = span(qx, w, mw);
        uint sum = 0u;
        for (int fy = rows.x; fy < rows.y; fy++) {
            for (int fx = columns.x; fx < columns.y; fx++) sum += uint(luma8(unpackPx(src[fy * w + fx])));
        }
        precise float i = float(sum) / float((rows.y - rows.x) * (columns.y - columns.x) * 255);
        result[q] = vec2(i, uintBitsToFloat(aux[q]));
        if (SMOOTH == 1) {
            int n = mw * mh;
            if (q == 0 && state[3] != 0u) {
                state[2] = 1u;
                state[3] = 0u;
            }
            uint last = state[4 + 2 * n + q];
            state[4 + 2 * n + q] = sum;
            uint d = sum > last ? sum - last : last - sum;
            if (d != 0u) {
                // A 64-bit sum from 32-bit atomics: the add that wraps carries into the high word.
                uint before = atomicAdd(state[0], d);
                if (before > 0xffffffffu - d) atomicAdd(state[1], 1u);
            }
        }
        return;
    }
    if (STEP == 1) {
        result4[q] = columnSums(qx, qy, mw, mh, r);
    } else if (STEP == 3) {
        result[q] = columnSums(qx, qy, mw, mh, r).xy;
    } else if (STEP == 2) {
        precise vec4 s = rowSums4(qx, qy, mw, r);
        precise float count = windowCount(qx, qy, mw, mh, r);
        precise float meanI = s.x / count, meanP = s.y / count;
        precise float a = (s.w / count - meanI * meanP) / (s.z / count - meanI * meanI + F(0));
        precise float b = meanP - a * meanI;
        precise vec2 fit = vec2(a, b);
        if (SMOOTH == 1) {
            uint limitLow = uint(pc.a.y), limitHigh = uint(pc.a.z);
            bool restart = state[2] != 0u || state[1] > limitHigh || (state[1] == limitHigh && state[0] > limitLow);
            if (!restart) {
                // precise: no fused multiply-add, the CPU reference's rounding.
                precise vec2 last = vec2(uintBitsToFloat(state[4 + 2 * q]), uintBitsToFloat(state[5 + 2 * q]));
                precise vec2 step = F(5) * (fit - last);
                fit = last + step;
            }
            state[4 + 2 * q] = floatBitsToUint(fit.x);
            state[5 + 2 * q] = floatBitsToUint(fit.y);
        }
        result[q] = fit;
    } else {
        precise vec2 here = rowSums2(qx, qy, mw, r) / windowCount(qx, qy, mw, mh, r);
        int next = min(qx + 1, mw - 1);
        precise vec2 after = rowSums2(next, qy, mw, r) / windowCount(next, qy, mw, mh, r);
        result4[q] = vec4(here, after);
    }
}
