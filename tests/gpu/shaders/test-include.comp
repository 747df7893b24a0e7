#version 450
// Includes test-common.glsl twice: the second line must be dropped.
#include "test-common.glsl"
#include "test-common.glsl"

layout(local_size_x = 32) in;
layout(std430, binding = 0) buffer Out { float v[]; };
uniform int n;

void main()
{
  int i = int(gl_GlobalInvocationID.x);
  if (i < n)
    v[i] = test_twice(float(i)) + TEST_OFFSET;
}
