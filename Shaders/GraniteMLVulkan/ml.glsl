// Shared by GraniteMLVulkan's network kernels. Every kernel binds the same two buffers, twice:
//   binding 0: the activation arena (floats; every value at its planned offset, in floats), written
//   binding 1: the model's constants (weights, biases, tables, epilogues), uploaded once
//   bindings 2, 3: the same two as texel buffers, which every read goes through (A(i), K(i)): on CPU
//   drivers a texel fetch at a per-invocation index is one gather, a storage-buffer read a loop
//   over the SIMD lanes with a branch each (see Documentation/GPU.md); on GPUs either is fine
//   binding 4: the constants again as a texel buffer of quads (K4(q): floats 4q...4q+3, one
//   gather for four values; the tiled convolutions' weights)
// and takes its sizes and offsets (in floats) as 32 push-constant words, P(i). Integer
// tables in the constants buffer are int32 bit patterns (read with CI).
layout(std430, set = 0, binding = 0) writeonly buffer Arena { float act[]; };
layout(std430, set = 0, binding = 1) readonly buffer Constants { float cst[]; };
layout(set = 0, binding = 2) uniform usamplerBuffer arenaTexels;
layout(set = 0, binding = 3) uniform usamplerBuffer constantTexels;
layout(set = 0, binding = 4) uniform usamplerBuffer constantQuads;
#define A(i) uintBitsToFloat(texelFetch(arenaTexels, (i)).x)
#define K(i) uintBitsToFloat(texelFetch(constantTexels, (i)).x)
layout(push_constant) uniform Push { int p[32]; } pc;
#define P(i) pc.p[i]
#define PF(i) intBitsToFloat(pc.p[i])
#define CI(i) int(texelFetch(constantTexels, (i)).x)
#define K4(q) uintBitsToFloat(texelFetch(constantQuads, (q)))
#define CI4(q) ivec4(texelFetch(constantQuads, (q)))

// The int8 convolutions (GraniteML's IntegerConv), one definition for every conv kernel: an input
// value on its quantisation grid (inv: 1 / the input's scale), and the exact int32 sum plus bias
// requantised to the output grid — the float arithmetic of GraniteML's CPU kernels, so the
// outputs agree bit for bit.
int quantiseInput(float v, float inv) { return int(roundEven(v * inv)); }
float requantise(int acc, int bias, float scale, float lo, float hi, float outScale) {
    return roundEven(clamp(float(acc + bias) * scale, lo, hi)) * outScale;
}

// fma(a, b, c) rounded once, from multiplies and adds alone: for devices whose fma() rounds twice
// (lavapipe splits it into a multiply and an add; GraniteMLVulkan's probe tells, see
// FusedMultiplyAdd.swift). The product splits exactly into uh + ul (Dekker), c + uh into th + tl
// (TwoSum), tl + ul is rounded to odd, then th + that once to nearest: the correctly rounded result
// (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", IEEE Trans. Computers 57(4), 2008). `precise`: no step may be contracted or
// reassociated, or the error terms vanish.
float exactFma(float a, float b, float c) {
    precise float ca = 4097.0 * a, ah = ca - (ca - a), al = a - ah;
    precise float cb = 4097.0 * b, bh = cb - (cb - b), bl = b - bh;
    precise float uh = a * b, ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl;
    precise float th = c + uh, tz = th - c, tl = (c - (th - tz)) + (uh - tz);
    precise float v = tl + ul, vz = v - tl, e = (tl - (v - vz)) + (ul - vz);
    // Inexact with an even last bit: step one ulp towards the lost part (rounding to odd).
    if (e != 0.0 && (floatBitsToInt(v) & 1) == 0) v = intBitsToFloat(floatBitsToInt(v) + ((v > 0.0) == (e > 0.0) ? 1 : -1));
    precise float r = th + v;
    return r;
}

// An operand that may live in either buffer (flag 1: constants).
float operand(int flag, int index) { return flag != 0 ? K(index) : A(index); }

// The node's fused epilogue: `count` steps of 4 floats at `base` (op, a, b, c), the same
// arithmetic as GraniteML's Epilogue and its C kernels (gk_epilogue).
float epilogue(float v, int base, int count) {
    for (int i = 0; i < count; i++) {
        int o = base + 4 * i;
        int op = int(K(o));
        float a = K(o + 1), b = K(o + 2), c = K(o + 3);
        switch (op) {
        case 1: v = max(v, 0.0); break;                                   // Relu
        case 2: v = min(max(v, a), b); break;                             // Clip
        case 3: v = v < 0.0 ? v * a : v; break;                           // LeakyRelu
        case 4: v = min(max(a * v + b, 0.0), 1.0); break;                 // HardSigmoid
        case 5: v = v >= 0.0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v)); break;  // Sigmoid
        case 6: v = roundEven(clamp(v / a, b, c)) * a; break;             // Q -> DQ (fake quantisation)
        case 7: v = v + a; break;
        case 8: v = v * a; break;
        case 9: v = v - a; break;
        case 10: v = a - v; break;
        case 11: v = v / a; break;
        case 12: v = a / v; break;
        case 13: v = v * clamp(v + a, b, c); break;                       // HardSwish's body
        default: break;
        }
    }
    return v;
}
