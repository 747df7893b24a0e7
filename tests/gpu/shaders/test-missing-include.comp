#version 450
#include "test-does-not-exist.glsl"
layout(local_size_x = 1) in;
void main()
{
}
