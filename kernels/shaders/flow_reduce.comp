#version 450
// Pyramid reduce of one frame (docs/optical-flow.md §2): 5x5 binomial, even samples,
// clamp-to-edge; rows then columns in the order of the reference. With SRC_FORMAT r8 the
// source is the 8-bit frame itself: the image format does the ingest (§1, I = Y / 255).
layout(local_size_x = 16, local_size_y = 16) in;
#ifndef SRC_FORMAT
#define SRC_FORMAT r32f
#endif
layout(SRC_FORMAT, binding = 0) readonly uniform image2DArray src;
layout(r32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 src_size;
uniform ivec2 dst_size;

const float b[5] = float[5](1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0);

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= dst_size.x || g.y >= dst_size.y)
    return;
  float acc = 0.0;
  for (int n = -2; n <= 2; n++) {
    int y = clamp(2 * g.y + n, 0, src_size.y - 1);
    float row = 0.0;
    for (int m = -2; m <= 2; m++) {
      int x = clamp(2 * g.x + m, 0, src_size.x - 1);
      row += b[m + 2] * imageLoad(src, ivec3(x, y, g.z)).r;
    }
    acc += b[n + 2] * row;
  }
  imageStore(dst, g, vec4(acc, 0.0, 0.0, 0.0));
}
