#version 450
// 3x3 median of u and v (docs/optical-flow.md §7), each over the window's pixels with
// w > 0: the lower median when there are at least 5, else the value is kept
// (flow_prior.glsl).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;
#define PRIOR_IMAGE src
#include "flow_prior.glsl"

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  imageStore(dst, g, flow_median_at(g, size));
}
