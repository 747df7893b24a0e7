#version 450
// Separable Gaussian along rows, zero outside the image (normalized convolution,
// docs/optical-flow.md §6 and §7), every layer of the dispatch, with the Gaussian ROWS_TAPS
// (radius ROWS_R). ROWS_MODE 0: filter src as is; ROWS_MODE 1: hole-fill input (w u, w v, w, 0), w = [src.w > 0], from a flow (u, v, c, w).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;
const int radius = ROWS_R;
const float taps[2 * ROWS_R + 1] = ROWS_TAPS;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 acc = vec4(0.0);
  int lo = max(-radius, -g.x), hi = min(radius, size.x - 1 - g.x);
  for (int k = lo; k <= hi; k++) {
    vec4 s = imageLoad(src, ivec3(g.x + k, g.y, g.z));
    if (ROWS_MODE == 1)
      s = s.w > 0.0 ? vec4(s.x, s.y, 1.0, 0.0) : vec4(0.0);
    acc += taps[k + radius] * s;
  }
  imageStore(dst, g, acc);
}
