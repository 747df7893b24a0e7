#version 450
// Smoothing of densified pixels (docs/algorithm.md §10): a filled pixel takes the lower
// median of all valid or filled values in the 9 x 3 window around it.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;   // (d, state, k, .)
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 c = imageLoad(src, g);
  if (c.y != 1.0) {
    imageStore(dst, g, c);
    return;
  }
  float v[27];
  int n = 0;
  for (int j = -1; j <= 1; j++)
    for (int i = -4; i <= 4; i++) {
      ivec2 p = g.xy + ivec2(i, j);
      if (p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y)
        continue;
      vec4 s = imageLoad(src, ivec3(p, g.z));
      if (s.y > 0.0) {
        int k = n;
        while (k > 0 && v[k - 1] > s.x) {
          v[k] = v[k - 1];
          k--;
        }
        v[k] = s.x;
        n++;
      }
    }
  imageStore(dst, g, vec4(v[(n - 1) / 2], 1.0, c.z, 0.0));
}
