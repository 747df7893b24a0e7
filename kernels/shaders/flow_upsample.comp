#version 450
// Upsampling between levels (docs/optical-flow.md §7): (u, v) = 2 bilinear(coarse;
// x/2, y/2), clamp-to-edge (fractions 0 or 0.5), certainty and w 0.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 src_size;
uniform ivec2 dst_size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= dst_size.x || g.y >= dst_size.y)
    return;
  int x0 = min(g.x >> 1, src_size.x - 1), y0 = min(g.y >> 1, src_size.y - 1);
  int x1 = min(x0 + (g.x & 1), src_size.x - 1), y1 = min(y0 + (g.y & 1), src_size.y - 1);
  vec2 s = imageLoad(src, ivec3(x0, y0, g.z)).xy + imageLoad(src, ivec3(x1, y0, g.z)).xy +
           imageLoad(src, ivec3(x0, y1, g.z)).xy + imageLoad(src, ivec3(x1, y1, g.z)).xy;
  imageStore(dst, g, vec4(2.0 * 0.25 * s, 0.0, 0.0));
}
