#version 450
#include "common.glsl"
// Unsharp mask: src is the blurred image, aux the original; out = orig + amount * (orig - blurred).
void main() {
    GRANITE_PIXEL(x, y)
    int i = y * pc.size.x + x;
    vec4 o = vec4(unpackPx(aux[i]));
    vec4 b = vec4(unpackPx(src[i]));
    vec4 r = o + F(0) * (o - b);
    r.a = o.a;
    dst[i] = epilogue(packPx(uvec4(clamp(r, 0.0, 255.0) + 0.5)));
}
