#version 450
#include "common.glsl"
// Bokeh: a disc-shaped blur of RADIUS where bright pixels weigh more (1 + boost * l^4),
// so highlights bloom into discs the way an out-of-focus lens draws them.
layout(constant_id = 0) const int RADIUS = 4;

void main() {
    GRANITE_PIXEL(x, y)
    vec4 acc = vec4(0.0);
    float total = 0.0;
    for (int dy = -RADIUS; dy <= RADIUS; dy++) {
        for (int dx = -RADIUS; dx <= RADIUS; dx++) {
            if (dx * dx + dy * dy > RADIUS * RADIUS) continue;
            uvec4 c = unpackPx(srcAt(x + dx, y + dy));
            float l = float(luma8(c)) / 255.0;
            float l2 = l * l;
            float weight = 1.0 + F(0) * (l2 * l2);
            acc += vec4(c) * weight;
            total += weight;
        }
    }
    dst[y * pc.size.x + x] = epilogue(packPx(uvec4(clamp(acc / total, 0.0, 255.0) + 0.5)));
}
