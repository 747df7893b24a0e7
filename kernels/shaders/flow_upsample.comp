#version 450
// Upsampling between levels (docs/optical-flow.md §7): (u, v) = 2 bilinear(coarse;
// x/2, y/2), clamp-to-edge (fractions 0 or 0.5), certainty and w 0 (flow_prior.glsl).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 src_size;
uniform ivec2 dst_size;
#define PRIOR_IMAGE src
#include "flow_prior.glsl"

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= dst_size.x || g.y >= dst_size.y)
    return;
  imageStore(dst, g, flow_upsample_at(g, src_size));
}
