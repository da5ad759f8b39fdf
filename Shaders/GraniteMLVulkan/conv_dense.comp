#version 450
#include "ml.glsl"
// Group-1 convolution of any kernel, strides, pads and dilations: the tiled body of
// conv_tiled.glsl with a loop over the taps, each bounds-checked.
#define TAPS 1
#include "conv_tiled.glsl"
