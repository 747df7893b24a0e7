#version 450
// Ingest: two 8-bit luma layers (2k = left, 2k+1 = right) -> RG32F level 0 (L in r, R in g).
layout(local_size_x = 16, local_size_y = 16) in;
layout(r8, binding = 0) readonly uniform image2DArray src;
layout(rg32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  float l = imageLoad(src, ivec3(g.xy, 2 * g.z)).r;
  float r = imageLoad(src, ivec3(g.xy, 2 * g.z + 1)).r;
  imageStore(dst, g, vec4(l, r, 0.0, 0.0));
}
