#version 450
// Upsampling between levels (docs/algorithm.md §8): d_fine(x, y) = 2 bilinear(d_coarse;
// x/2, y/2), clamp-to-edge, exact lerp (fractions 0 or 0.5).
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
  int x0 = g.x >> 1, y0 = g.y >> 1;
  int x1 = min(x0 + (g.x & 1), src_size.x - 1), y1 = min(y0 + (g.y & 1), src_size.y - 1);
  float a = imageLoad(src, ivec3(x0, y0, g.z)).x, b = imageLoad(src, ivec3(x1, y0, g.z)).x;
  float c = imageLoad(src, ivec3(x0, y1, g.z)).x, d = imageLoad(src, ivec3(x1, y1, g.z)).x;
  float v = 0.25 * (a + b + c + d);   // == bilinear with weights 0 / 0.5 in each axis
  imageStore(dst, g, vec4(2.0 * v, 0.0, 0.0, 0.0));
}
