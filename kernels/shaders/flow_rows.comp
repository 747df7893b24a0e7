#version 450
// Row pass of the oriented quadrature bank (docs/optical-flow.md §3): the ROW_KERNELS
// complex row responses of one level image, clamp-to-edge, two per RGBA layer
// (layer b * ROW_LAYERS + r / 2, .xy for even r, .zw for odd r). With SRC_FORMAT r8 the
// source is the 8-bit frame itself: the image format does the ingest (§1, I = Y / 255).
layout(local_size_x = 16, local_size_y = 16) in;
#ifndef SRC_FORMAT
#define SRC_FORMAT r32f
#endif
layout(SRC_FORMAT, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;
const float row_re[ROW_KERNELS * TAPS] = ROW_RE;   // taps computed in double on the host
const float row_im[ROW_KERNELS * TAPS] = ROW_IM;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec2 acc[ROW_LAYERS * 2];
  for (int r = 0; r < ROW_LAYERS * 2; r++)
    acc[r] = vec2(0.0);
  for (int i = -RADIUS; i <= RADIUS; i++) {
    float a = imageLoad(src, ivec3(clamp(g.x + i, 0, size.x - 1), g.y, g.z)).r;
    for (int r = 0; r < ROW_KERNELS; r++)
      acc[r] += a * vec2(row_re[r * TAPS + i + RADIUS], row_im[r * TAPS + i + RADIUS]);
  }
  for (int l = 0; l < ROW_LAYERS; l++)
    imageStore(dst, ivec3(g.xy, g.z * ROW_LAYERS + l), vec4(acc[2 * l], acc[2 * l + 1]));
}
