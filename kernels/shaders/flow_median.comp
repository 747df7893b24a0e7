#version 450
// 3x3 median of u and v (docs/optical-flow.md §7), each over the window's pixels with
// w > 0: the lower median when there are at least 5, else the value is kept.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  float vu[9], vv[9];
  int n = 0;
  for (int j = -1; j <= 1; j++)
    for (int i = -1; i <= 1; i++) {
      ivec2 p = g.xy + ivec2(i, j);
      if (p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y)
        continue;
      vec4 s = imageLoad(src, ivec3(p, g.z));
      if (!(s.w > 0.0))
        continue;
      int k = n;   // insertion into the sorted prefixes
      while (k > 0 && vu[k - 1] > s.x) {
        vu[k] = vu[k - 1];
        k--;
      }
      vu[k] = s.x;
      k = n;
      while (k > 0 && vv[k - 1] > s.y) {
        vv[k] = vv[k - 1];
        k--;
      }
      vv[k] = s.y;
      n++;
    }
  vec4 c = imageLoad(src, g);
  if (n >= 5)
    c.xy = vec2(vu[(n - 1) / 2], vv[(n - 1) / 2]);
  imageStore(dst, g, c);
}
