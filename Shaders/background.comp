#version 450
#include "common.glsl"
#include "enlarge.glsl"
// Background replacement by a person mask (the `background` filter, issue 38). The mask is the
// chain's auxiliary plane (floats in aux, pc.b.z x pc.b.w, any size, 1 = person); no mask
// (pc.b.z == 0) keeps the whole frame. Each pixel's alpha is the mask's joint bilateral
// upsampling on the frame's luma, feathered: MaskRefinement.swift is the CPU reference, step by
// step (the 4x4 mask samples nearest p, weights exp(F(0) * spatial distance^2 + F(1) * luma
// difference^2), smoothstep over [1/2 - F(2), 1/2 + F(2)]).
// MODE 0: over a blurred copy of the frame (binding 4, r32ui texels, made by the blur kernel);
// 1: over the colour F(3..5) (0...255); 2: the alpha itself as gray. MODE 0's backdrop is the
// photo of mode=image as well (the filter's resident copy, scaled to cover the frame).
// SMOOTH 1: the alpha is averaged over frames in the filter's resident state (binding 6, laid out
// as background_cut.comp says, which ran before): alpha = last + F(6) * (alpha - last), unless
// the state has no history or the frame's summed luma change exceeds pc.a.xy (a 64-bit limit,
// low word first: the scene-cut threshold times the pixel count): then this frame's alpha alone.
// ENLARGE 1 (MODE 0, the blur's large-σ path): binding 4 holds the blur's reduced image and
// each pixel enlarges it as it composites (enlarge.glsl; its tables at binding 5), so the
// full-size blurred image is never written.
// f: spatial coefficient, range coefficient, feather, red, green, blue, new-alpha weight.
layout(constant_id = 0) const int MODE = 0;
layout(constant_id = 1) const int SMOOTH = 0;
layout(constant_id = 2) const int ENLARGE = 0;
layout(std430, set = 0, binding = 6) buffer State { uint state[]; };
layout(std430, set = 0, binding = 6) buffer StateQuads { uvec4 state4[]; };

// The backdrop's pixel (x, y): the reduced image enlarged bilinearly (ENLARGE 1), else its own.
uvec4 backdropAt(int x, int y) {
    return ENLARGE == 0 ? unpackPx(texelFetch(enlargeSource, y * pc.size.x + x).r) : enlarged(x, y);
}

float lumaAt(int x, int y) { return float(luma8(unpackPx(src[y * pc.size.x + x]))); }

float alphaAt(int x, int y) {
    int w = pc.size.x, h = pc.size.y, mw = pc.b.z, mh = pc.b.w;
    if (mw == 0) return 1.0;
    // p's position in mask samples, ((2x + 1) mw - w) / 2w; its floor by integer division.
    int nx = (2 * x + 1) * mw - w, ny = (2 * y + 1) * mh - h;
    float mx = float(nx) / float(2 * w), my = float(ny) / float(2 * h);
    int x0 = (nx >= 0 ? nx / (2 * w) : -((-nx + 2 * w - 1) / (2 * w))) - 1;
    int y0 = (ny >= 0 ? ny / (2 * h) : -((-ny + 2 * h - 1) / (2 * h))) - 1;
    float lp = lumaAt(x, y);
    // The exponents first, then exp(e - max e): the largest weight is 1, none hangs on denormals.
    float e[16], v[16];
    int n = 0;
    float top = -3.402823e38;
    for (int qy = max(y0, 0); qy <= min(y0 + 3, mh - 1); qy++) {
        int fy = min(((2 * qy + 1) * h) / (2 * mh), h - 1);
        float dy = float(qy) - my;
        for (int qx = max(x0, 0); qx <= min(x0 + 3, mw - 1); qx++) {
            int fx = min(((2 * qx + 1) * w) / (2 * mw), w - 1);
            float dx = float(qx) - mx;
            float dl = lp - lumaAt(fx, fy);
            e[n] = F(0) * (dx * dx + dy * dy) + F(1) * dl * dl;
            v[n] = uintBitsToFloat(aux[qy * mw + qx]);
            top = max(top, e[n]);
            n++;
        }
    }
    float sum = 0.0, weights = 0.0;
    for (int k = 0; k < n; k++) {
        float weight = exp(e[k] - top);
        sum += weight * v[k];
        weights += weight;
    }
    float m = sum / weights;
    if (F(2) <= 0.0) return m >= 0.5 ? 1.0 : 0.0;
    float t = clamp((m - (0.5 - F(2))) / (2.0 * F(2)), 0.0, 1.0);
    return t * t * (3.0 - 2.0 * t);
}

void main() {
    GRANITE_PIXEL(x, y)
    int i = y * pc.size.x + x;
    uint p = src[i];
    float alpha = alphaAt(x, y);
    if (SMOOTH == 1) {
        // The header in one load (on lavapipe each storage-buffer load is a loop over the lanes).
        uvec4 head = state4[0];
        uint limitLow = uint(pc.a.x), limitHigh = uint(pc.a.y);
        bool cut = head.z != 0u || head.y > limitHigh || (head.y == limitHigh && head.x > limitLow);
        if (!cut) {
            // precise: no fused multiply-add, the CPU reference's rounding.
            precise float last = uintBitsToFloat(state[4 + i]);
            precise float step = F(6) * (alpha - last);
            alpha = last + step;
        }
        state[4 + i] = floatBitsToUint(alpha);
    }
    if (MODE == 2) {
        uint m = uint(clamp(alpha, 0.0, 1.0) * 255.0 + 0.5);
        dst[i] = epilogueGray(m, 255u);
        return;
    }
    vec3 back = MODE == 0 ? vec3(backdropAt(x, y).rgb) : vec3(F(3), F(4), F(5));
    vec3 front = vec3(unpackPx(p).rgb);
    uvec3 o = uvec3(clamp(back + alpha * (front - back), 0.0, 255.0) + 0.5);
    dst[i] = epilogue(packPx(uvec4(o, p >> 24)));
}
