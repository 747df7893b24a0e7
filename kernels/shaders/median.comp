#version 450
// NaN-aware 3x3 median (docs/algorithm.md §10): valid iff >= 5 of the 9 are valid; the
// lower median of the valid values. In/out (d, state, k, .), state 0 invalid, 2 measured.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  float v[9];
  int n = 0;
  for (int j = -1; j <= 1; j++)
    for (int i = -1; i <= 1; i++) {
      ivec2 p = g.xy + ivec2(i, j);
      if (p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y)
        continue;
      vec4 s = imageLoad(src, ivec3(p, g.z));
      if (s.y > 0.0) {
        // insertion into the sorted prefix
        int k = n;
        while (k > 0 && v[k - 1] > s.x) {
          v[k] = v[k - 1];
          k--;
        }
        v[k] = s.x;
        n++;
      }
    }
  vec4 c = imageLoad(src, g);
  if (n >= 5)
    imageStore(dst, g, vec4(v[(n - 1) / 2], 2.0, c.z, 0.0));
  else
    imageStore(dst, g, vec4(c.x, 0.0, c.z, 0.0));
}
