#version 450
// Separable Gaussian along rows, zero outside the image (normalized convolution,
// docs/algorithm.md §7 and §9). CHANNELS-wide: filters all four channels.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;
uniform int radius;
uniform float taps[2 * 15 + 1];
uniform int mode;   // 0: filter src as is; 1: hole-fill input (v d, v, 0, 0) from disp (d, ., ., v)

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 acc = vec4(0.0);
  int lo = max(-radius, -g.x), hi = min(radius, size.x - 1 - g.x);
  for (int k = lo; k <= hi; k++) {
    vec4 s = imageLoad(src, ivec3(g.x + k, g.y, g.z));
    if (mode == 1)
      s = vec4(s.w * s.x, s.w, 0.0, 0.0);
    acc += taps[k + radius] * s;
  }
  imageStore(dst, g, acc);
}
