#version 450
#include "ml.glsl"
// 1×1 convolution (group 1, no padding, any stride): the tiled body of conv_tiled.glsl without
// taps or bounds checks — most of a MobileNet's multiply-adds.
#define TAPS 0
#include "conv_tiled.glsl"
