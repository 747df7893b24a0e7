#version 450
#include "test-broken.glsl"
layout(local_size_x = 1) in;
void main()
{
}
