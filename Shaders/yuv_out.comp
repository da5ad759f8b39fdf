#version 450
#include "common.glsl"
// A chain's final RGBA8 image (src, pc.size.xy = width, height) to YUV bytes for the outputs:
// BT.601 limited range in the integer formulas of GraniteMedia's ColorConversion.luma/cb/cr
// (chroma from sums of four samples), the layouts of GraniteMedia's YUVLayout:
//   LAYOUT 0 YUYV 4:2:2: rows pc.a.x bytes apart; a pair's chroma the mean of its two pixels
//   LAYOUT 1 planar 4:2:0: Y rows pc.a.x apart, then Cb, then Cr rows pc.a.y apart; 2x2 means
//   LAYOUT 2 planar 4:4:4: the same with full-size chroma
// Odd edges repeat the last column/row. One invocation writes one 32-bit word of the output
// (pc.a.z bytes in all; words laid out pc.size.z a row), byte by byte, so rows need no alignment
// and no two invocations share a word. Padding bytes are 0.
// ROWS 1 (every stride a multiple of 4, the usual case): one invocation per word of one row
// (x: the word, y: the row, luma rows then Cb then Cr), no division per byte; pc.size.z is then
// the words of the longest row.
layout(constant_id = 0) const int LAYOUT = 0;
layout(constant_id = 1) const int ROWS = 0;

ivec3 rgbAt(int x, int y) { return ivec3(unpackPx(src[y * pc.size.x + x]).rgb); }
int lumaOf(ivec3 c) { return ((66 * c.r + 129 * c.g + 25 * c.b + 128) >> 8) + 16; }
int cbOf(ivec3 s) { return clamp(((-38 * s.r - 74 * s.g + 112 * s.b + 512) >> 10) + 128, 0, 255); }
int crOf(ivec3 s) { return clamp(((112 * s.r - 94 * s.g - 18 * s.b + 512) >> 10) + 128, 0, 255); }

int byteAt(int i) {
    int w = pc.size.x, h = pc.size.y;
    if (LAYOUT == 0) {
        int stride = pc.a.x;
        int y = i / stride, col = i - y * stride;
        if (col >= ((w + 1) / 2) * 4) return 0;
        int k = col & 3, x0 = (col >> 2) * 2, x1 = min(x0 + 1, w - 1);
        if ((k & 1) == 0) return lumaOf(rgbAt(k == 0 ? x0 : x1, y));
        ivec3 s = (rgbAt(x0, y) + rgbAt(x1, y)) * 2;
        return k == 1 ? cbOf(s) : crOf(s);
    }
    int ls = pc.a.x, cs = pc.a.y;
    if (i < ls * h) {
        int y = i / ls, x = i - y * ls;
        return x < w ? lumaOf(rgbAt(x, y)) : 0;
    }
    bool sub = LAYOUT == 1;
    int cw = sub ? (w + 1) / 2 : w, ch = sub ? (h + 1) / 2 : h;
    int j = i - ls * h;
    int plane = j / (cs * ch);
    j -= plane * cs * ch;
    int cy = j / cs, cx = j - cy * cs;
    if (cx >= cw) return 0;
    ivec3 s;
    if (sub) {
        int x0 = cx * 2, x1 = min(x0 + 1, w - 1), y0 = cy * 2, y1 = min(y0 + 1, h - 1);
        s = rgbAt(x0, y0) + rgbAt(x1, y0) + rgbAt(x0, y1) + rgbAt(x1, y1);
    } else {
        s = rgbAt(cx, cy) * 4;
    }
    return plane == 0 ? cbOf(s) : crOf(s);
}

void rowsMain() {
    int wx = int(gl_GlobalInvocationID.x), row = int(gl_GlobalInvocationID.y);
    int w = pc.size.x, h = pc.size.y;
    uint v = 0u;
    if (LAYOUT == 0) {
        int stride = pc.a.x;
        if (wx * 4 >= stride || row >= h) return;
        if (wx < (w + 1) / 2) {
            int x0 = wx * 2, x1 = min(x0 + 1, w - 1);
            ivec3 a = rgbAt(x0, row), b = rgbAt(x1, row), s = (a + b) * 2;
            v = uint(lumaOf(a)) | (uint(cbOf(s)) << 8) | (uint(lumaOf(b)) << 16) | (uint(crOf(s)) << 24);
        }
        dst[(row * stride) / 4 + wx] = v;
        return;
    }
    int ls = pc.a.x, cs = pc.a.y;
    if (row < h) {
        if (wx * 4 >= ls) return;
        for (int k = 0; k < 4; k++) {
            int x = wx * 4 + k;
            if (x < w) v |= uint(lumaOf(rgbAt(x, row))) << (8 * k);
        }
        dst[(row * ls) / 4 + wx] = v;
        return;
    }
    bool sub = LAYOUT == 1;
    int cw = sub ? (w + 1) / 2 : w, ch = sub ? (h + 1) / 2 : h;
    int r = row - h, plane = r >= ch ? 1 : 0, cy = r - plane * ch;
    if (cy >= ch || wx * 4 >= cs) return;
    for (int k = 0; k < 4; k++) {
        int cx = wx * 4 + k;
        if (cx >= cw) break;
        ivec3 s;
        if (sub) {
            int x0 = cx * 2, x1 = min(x0 + 1, w - 1), y0 = cy * 2, y1 = min(y0 + 1, h - 1);
            s = rgbAt(x0, y0) + rgbAt(x1, y0) + rgbAt(x0, y1) + rgbAt(x1, y1);
        } else {
            s = rgbAt(cx, cy) * 4;
        }
        v |= uint(plane == 0 ? cbOf(s) : crOf(s)) << (8 * k);
    }
    dst[(ls * h + plane * cs * ch + cy * cs) / 4 + wx] = v;
}

void main() {
    if (ROWS == 1) { rowsMain(); return; }
    int word = int(gl_GlobalInvocationID.y) * pc.size.z + int(gl_GlobalInvocationID.x);
    int base = word * 4;
    if (int(gl_GlobalInvocationID.x) >= pc.size.z || base >= pc.a.z) return;
    uint v = 0u;
    for (int k = 0; k < 4; k++) {
        if (base + k < pc.a.z) v |= uint(byteAt(base + k)) << (8 * k);
    }
    dst[word] = v;
}
