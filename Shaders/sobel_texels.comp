#version 450
#extension GL_EXT_control_flow_attributes : require
#define SOURCE_TEXELS
#include "sobel.glsl"
