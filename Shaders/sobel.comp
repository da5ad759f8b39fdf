#version 450
#extension GL_EXT_control_flow_attributes : require
#include "sobel.glsl"
