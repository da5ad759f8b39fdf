#version 450
#extension GL_EXT_control_flow_attributes : require
#define SOURCE_TEXELS
#define ROW_MARGIN 1
#include "common.glsl"
#include "yuv.glsl"
#include "blur_quad.glsl"
// blur_strip.comp with a 3x3 tail, for CPU drivers: the gaussian in one dispatch and, on each
// blurred row before anything is written, the filter that follows the blur in the chain (TAIL:
// sobel edges or ink), then the optional affine epilogue. The blurred image never goes to memory.
//
// An invocation owns a strip 16 pixels wide and STRIP rows tall. It blurs 18 columns along x
// (x0 - 1 ... x0 + 16: blurRow with ROW_MARGIN 1) into the window of the last 2*RADIUS+1 source
// rows, as blur_strip.comp does, and blurs down the rows y0 - 1 ... y0 + STRIP the tail needs,
// keeping the last three blurred rows' lumas (and the middle row's pixels) in registers.
// Blurred rows and columns outside the image are the edge ones, as the unfused sobel clamps its
// reads of the blurred image: the pixels are exactly those of the two filters run apart.
layout(constant_id = 28) const int YUYV = 0;
layout(constant_id = 29) const int STRIP = 64;
// The tail: 1 sobel edges (sobel.glsl MODE 0), 2 ink (MODE 1); push a/b and F(0) are the tail's.
layout(constant_id = 30) const int TAIL = 1;
#define EDGE_MODE (TAIL - 1)
#include "edge.glsl"

void main() {
    BLUR_WEIGHTS;
    int w = pc.size.x, h = pc.size.y;
    int x0 = int(gl_GlobalInvocationID.x) * BLOCK, y0 = int(gl_GlobalInvocationID.y) * STRIP;
    if (x0 >= w || y0 >= h) return;
    uvec3 paper = uvec3(pc.b.w & 255, (pc.b.w >> 8) & 255, (pc.b.w >> 16) & 255);
    const int TAPS = 2 * RADIUS + 1;
    // Row i of the window: columns x0 ... x0 + 15 as quads, even[i * 4 + q] = (R,B) lanes, odd =
    // (G,A) lanes; the columns x0 - 1 and x0 + 16 as a pair, edgeEven[i] / edgeOdd[i].
    uvec4 even[4 * (2 * 24 + 1)], odd[4 * (2 * 24 + 1)];
    uvec2 edgeEven[2 * 24 + 1], edgeOdd[2 * 24 + 1];
    uint row[ROW_OUT];
    // Blurred rows b0 ... last: the first output row's upper neighbour (clamped) to the last one's lower.
    int rows = min(STRIP, h - y0), b0 = max(y0 - 1, 0), last = min(y0 + rows, h - 1);
    [[unroll]] for (int i = 0; i < TAPS - 1; i++) {
        blurRow(clamp(b0 - RADIUS + i, 0, h - 1), x0, w, YUYV, row);
        [[unroll]] for (int q = 0; q < 4; q++) {
            uvec4 p = uvec4(row[4 * q + 1], row[4 * q + 2], row[4 * q + 3], row[4 * q + 4]);
            even[4 * i + q] = p & M;
            odd[4 * i + q] = (p >> 8) & M;
        }
        uvec2 e = uvec2(row[0], row[ROW_OUT - 1]);
        edgeEven[i] = e & M;
        edgeOdd[i] = (e >> 8) & M;
    }
    // Column index i is x0 - 1 + i; the image's last column is index w - x0 (a multiple of 4,
    // since rows are whole quads): indices past it, and index 0 left of the image, read the edge.
    int edgeIndex = w - x0;
    // The three-row window of the tail: lumas of 18 columns, and the middle and lower rows' 16 pixels.
    int top[18], mid[18], bottom[18];
    uint here[16], below[16];
    // Rows past the image bottom repeat the last one: one more step without a new row.
    int steps = last - b0 + 1 + (y0 + rows == h ? 1 : 0);
    for (int k = 0; k < steps; k++) {
        int b = b0 + k;
        int lumas[18];
        uint pixels[16];
        if (b <= last) {
            blurRow(min(b + RADIUS, h - 1), x0, w, YUYV, row);
            [[unroll]] for (int q = 0; q < 4; q++) {
                uvec4 p = uvec4(row[4 * q + 1], row[4 * q + 2], row[4 * q + 3], row[4 * q + 4]);
                even[4 * (TAPS - 1) + q] = p & M;
                odd[4 * (TAPS - 1) + q] = (p >> 8) & M;
            }
            uvec2 e2 = uvec2(row[0], row[ROW_OUT - 1]);
            edgeEven[TAPS - 1] = e2 & M;
            edgeOdd[TAPS - 1] = (e2 >> 8) & M;
            // The column pass: blurred row b, 16 pixels and the pair either side.
            uint blurred[18];
            [[unroll]] for (int q = 0; q < 4; q++) {
                uvec4 e = even[4 * RADIUS + q] * W[0], o = odd[4 * RADIUS + q] * W[0];
                [[unroll]] for (int k2 = 1; k2 <= RADIUS; k2++) {
                    e += (even[4 * (RADIUS - k2) + q] + even[4 * (RADIUS + k2) + q]) * W[k2];
                    o += (odd[4 * (RADIUS - k2) + q] + odd[4 * (RADIUS + k2) + q]) * W[k2];
                }
                uvec4 p = (((e + 0x00800080u) >> 8) & M) | ((((o + 0x00800080u) >> 8) & M) << 8);
                blurred[4 * q + 1] = p.x; blurred[4 * q + 2] = p.y; blurred[4 * q + 3] = p.z; blurred[4 * q + 4] = p.w;
            }
            uvec2 ee = edgeEven[RADIUS] * W[0], eo = edgeOdd[RADIUS] * W[0];
            [[unroll]] for (int k2 = 1; k2 <= RADIUS; k2++) {
                ee += (edgeEven[RADIUS - k2] + edgeEven[RADIUS + k2]) * W[k2];
                eo += (edgeOdd[RADIUS - k2] + edgeOdd[RADIUS + k2]) * W[k2];
            }
            uvec2 pe = (((ee + 0x00800080u) >> 8) & M) | ((((eo + 0x00800080u) >> 8) & M) << 8);
            blurred[0] = x0 == 0 ? blurred[1] : pe.x;
            blurred[17] = pe.y;
            uint edge = edgeIndex == 4 ? blurred[4] : (edgeIndex == 8 ? blurred[8] : (edgeIndex == 12 ? blurred[12] : blurred[16]));
            [[unroll]] for (int i = 0; i < 18; i++) {
                uint p = i > edgeIndex ? edge : blurred[i];
                lumas[i] = luma8(unpackPx(p));
            }
            [[unroll]] for (int i = 0; i < 16; i++) pixels[i] = blurred[i + 1];
            // Slide the window down a row (register renames once the loop body is unrolled).
            [[unroll]] for (int i = 0; i < 4 * (TAPS - 1); i++) {
                even[i] = even[i + 4];
                odd[i] = odd[i + 4];
            }
            [[unroll]] for (int i = 0; i < TAPS - 1; i++) {
                edgeEven[i] = edgeEven[i + 1];
                edgeOdd[i] = edgeOdd[i + 1];
            }
        } else {
            lumas = bottom;
            pixels = below;
        }
        if (k == 0) {
            top = lumas;
            mid = lumas;
            here = pixels;
        } else {
            top = mid;
            mid = bottom;
            here = below;
        }
        bottom = lumas;
        below = pixels;
        // (top, mid, bottom) are now blurred rows b - 2, b - 1, b (clamped): output row b - 1.
        int y = b - 1;
        if (y >= y0) {
            int v[18], d[18];
            [[unroll]] for (int i = 0; i < 18; i++) { v[i] = top[i] + 2 * mid[i] + bottom[i]; d[i] = bottom[i] - top[i]; }
            uint o[16];
            [[unroll]] for (int n = 0; n < 16; n++) o[n] = edgePixel(v[n + 2] - v[n], d[n] + 2 * d[n + 1] + d[n + 2], here[n], paper);
            int out0 = (y * w + x0) >> 2;
            [[unroll]] for (int q = 0; q < 4; q++) {
                if (x0 + 4 * q < w) dst4[out0 + q] = uvec4(o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]);
            }
        }
    }
}
