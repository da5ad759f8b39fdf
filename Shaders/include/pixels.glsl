// Pixel packing and integer helpers shared by every shader (no bindings here).
uvec4 unpackPx(uint p) { return uvec4(p & 255u, (p >> 8) & 255u, (p >> 16) & 255u, p >> 24); }
uint packPx(uvec4 c) { return c.r | (c.g << 8) | (c.b << 16) | (c.a << 24); }
vec4 unpackPxF(uint p) { return vec4(unpackPx(p)) / 255.0; }
uint packPxF(vec4 c) { return packPx(uvec4(clamp(c, 0.0, 1.0) * 255.0 + 0.5)); }

// Integer BT.601 luma, the same everywhere a filter needs brightness.
int luma8(uvec4 c) { return int((77u * c.r + 150u * c.g + 29u * c.b + 128u) >> 8); }

uint hash32(uint x) {
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}
