#version 450
#include "common.glsl"
#include "enlarge.glsl"
// The last pass of the blur's large-σ path: the blurred reduced image (binding 4, r32ui texels)
// enlarged bilinearly to the destination (pc.size.zw, as large as the source) by enlarge.glsl,
// written through the epilogue. One pass where the resize filter's two would write and read back
// a full-size intermediate.

void main() {
    GRANITE_PIXEL(x, y)
    dst[y * pc.size.z + x] = epilogue(packPx(enlarged(x, y)));
}
