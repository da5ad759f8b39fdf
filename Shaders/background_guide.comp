#version 450
#include "common.glsl"
// The `background` filter's guided filter (issue 38), at the person mask's size: three steps
// (STEP, one dispatch each, one invocation a mask cell; the destination size is the mask's,
// the source the frame), then background.comp takes the coefficients bilinearly and makes each
// pixel's alpha = A * luma / 255 + B. MaskRefinement.swift is the CPU reference, in the same
// order of operations (`precise`: no fused multiply-adds, the CPU's rounding).
//   STEP 0: the guide: the frame's mean luma over the cell (0...1) beside the mask (aux) -> out
//   STEP 1: each (2r + 1)^2 window's linear fit of the mask on the guide: a = cov / (var + F(0)),
//           b = mean p - a * mean I (in: the guide) -> out
//   STEP 2: the fits' mean over the windows covering the cell, and the same for the cell after it
//           in its row (the last cell's own again): (A, B, A', B') -> out as vec4s, so
//           background.comp takes a row's two cells in one load
// Windows are clipped at the mask's borders; r is pc.a.x. In and out are vec2 a cell (bindings 4,
// 5), but step 2's out is vec4 a cell.
layout(constant_id = 0) const int STEP = 0;
layout(std430, set = 0, binding = 4) readonly buffer In { vec2 cells[]; };
layout(std430, set = 0, binding = 5) writeonly buffer Out { vec2 result[]; };
layout(std430, set = 0, binding = 5) writeonly buffer OutPairs { vec4 result4[]; };

// The frame pixels of cell q along an axis of `frame` pixels and `n` cells (MaskRefinement.cellSpan).
ivec2 span(int q, int frame, int n) {
    int start = q * frame / n;
    return ivec2(start, max((q + 1) * frame / n, start + 1));
}

// Over cell (qx, qy)'s window (clipped), the sums of (v.x, v.y, v.x^2, v.x * v.y) of the input,
// rows then columns (MaskRefinement's order).
vec4 windowSums(int qx, int qy, int mw, int mh, int r) {
    precise vec4 s = vec4(0.0);
    for (int cy = max(qy - r, 0); cy <= min(qy + r, mh - 1); cy++) {
        for (int cx = max(qx - r, 0); cx <= min(qx + r, mw - 1); cx++) {
            vec2 v = cells[cy * mw + cx];
            precise vec4 term = vec4(v.x, v.y, v.x * v.x, v.x * v.y);
            s += term;
        }
    }
    return s;
}

// The number of cells in cell (qx, qy)'s window, as a float.
float windowCount(int qx, int qy, int mw, int mh, int r) {
    return float((min(qx + r, mw - 1) - max(qx - r, 0) + 1) * (min(qy + r, mh - 1) - max(qy - r, 0) + 1));
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
        return;
    }
    if (STEP == 1) {
        precise vec4 s = windowSums(qx, qy, mw, mh, r);
        precise float count = windowCount(qx, qy, mw, mh, r);
        precise float meanI = s.x / count, meanP = s.y / count;
        precise float a = (s.w / count - meanI * meanP) / (s.z / count - meanI * meanI + F(0));
        precise float b = meanP - a * meanI;
        result[q] = vec2(a, b);
    } else {
        precise vec2 here = windowSums(qx, qy, mw, mh, r).xy / windowCount(qx, qy, mw, mh, r);
        int next = min(qx + 1, mw - 1);
        precise vec2 after = windowSums(next, qy, mw, mh, r).xy / windowCount(next, qy, mw, mh, r);
        result4[q] = vec4(here, after);
    }
}
