#version 450
// Background-side densification, scanline step (docs/algorithm.md §10): an invalid pixel
// takes the smaller of the nearest valid disparities to its left and right in the row.
// In (d, valid, k, .), out (d, state, k, .): state 0 invalid, 1 filled, 2 measured.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 c = imageLoad(src, g);
  if (c.y > 0.0) {
    imageStore(dst, g, vec4(c.x, 2.0, c.z, 0.0));
    return;
  }
  float best = 1e30;
  bool found = false;
  for (int x = g.x - 1; x >= 0; x--) {
    vec4 s = imageLoad(src, ivec3(x, g.y, g.z));
    if (s.y > 0.0) {
      best = s.x;
      found = true;
      break;
    }
  }
  for (int x = g.x + 1; x < size.x; x++) {
    vec4 s = imageLoad(src, ivec3(x, g.y, g.z));
    if (s.y > 0.0) {
      best = min(best, s.x);
      found = true;
      break;
    }
  }
  imageStore(dst, g, found ? vec4(best, 1.0, c.z, 0.0) : vec4(c.x, 0.0, c.z, 0.0));
}
