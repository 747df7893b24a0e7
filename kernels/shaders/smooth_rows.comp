#version 450
// Separable Gaussian along rows, zero outside the image (normalized convolution,
// docs/algorithm.md §7 and §9), all four channels. Compiled twice: with the
// applicability taps (SMOOTH_R, SMOOTH_TAPS) for §7, and with FILL_INPUT and the fill
// taps for §9, where the input is (v d, v, 0, 0) taken from disp (d, ., ., v).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;
#ifdef FILL_INPUT
#define R FILL_R
const float taps[2 * FILL_R + 1] = FILL_TAPS;
#else
#define R SMOOTH_R
const float taps[2 * SMOOTH_R + 1] = SMOOTH_TAPS;
#endif

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 acc = vec4(0.0);
  int lo = max(-R, -g.x), hi = min(R, size.x - 1 - g.x);
  for (int k = lo; k <= hi; k++) {
    vec4 s = imageLoad(src, ivec3(g.x + k, g.y, g.z));
#ifdef FILL_INPUT
    s = vec4(s.w * s.x, s.w, 0.0, 0.0);
#endif
    acc += taps[k + R] * s;
  }
  imageStore(dst, g, acc);
}
