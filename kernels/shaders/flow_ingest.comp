#version 450
// Optical flow ingest (docs/optical-flow.md §1): one 8-bit luma layer per frame of the
// batch -> R32F level 0, I = Y / 255 (the r8 image format does the division).
layout(local_size_x = 16, local_size_y = 16) in;
layout(r8, binding = 0) readonly uniform image2DArray src;
layout(r32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  imageStore(dst, g, vec4(imageLoad(src, g).r, 0.0, 0.0, 0.0));
}
