// The per-frame float parameters of a filter (binding 2), read as F(i).
//
// A uniform buffer, not a storage buffer: lavapipe reads a storage buffer one SIMD lane at a time
// with a bounds check each, even at an index every lane shares, while a uniform read at such an
// index is one scalar load (sobel + fused color matrix at 1280x720: 5.6 -> 2.9 ms).
// std140 pads float arrays to 16 bytes an element, so the floats travel as vec4s.
layout(std140, set = 0, binding = 2) uniform Params { vec4 paramQuads[8]; };
#define F(i) (paramQuads[(i) >> 2][(i) & 3])
