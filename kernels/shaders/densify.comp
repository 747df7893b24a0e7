#version 450
// Densification, scanline step (docs/algorithm.md §10): an invalid pixel takes the
// disparity of the nearest valid pixel to its left or right in the row: the smaller one
// (the background side), unless the strongest intensity step towards the larger one is
// weaker by more than EDGE_MARGIN than the strongest step towards the smaller one.
// In (d, state, k, .), out (d, state, k, .): state 0 invalid, 1 filled, 2 measured.
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
layout(rg32f, binding = 2) readonly uniform image2DArray intensity;   // level 0, L in .r
uniform ivec2 size;

float I(int x, int y, int z) { return imageLoad(intensity, ivec3(x, y, z)).r; }

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 c = imageLoad(src, g);
  if (c.y > 0.0) {
    imageStore(dst, g, c);
    return;
  }
  float dl = 0.0, dr = 0.0, el = 0.0, er = 0.0;
  bool fl = false, fr = false;
  float prev = I(g.x, g.y, g.z);
  for (int x = g.x - 1; x >= 0; x--) {
    float cur = I(x, g.y, g.z);
    el = max(el, abs(prev - cur));
    prev = cur;
    vec4 s = imageLoad(src, ivec3(x, g.y, g.z));
    if (s.y > 0.0) {
      dl = s.x;
      fl = true;
      break;
    }
  }
  prev = I(g.x, g.y, g.z);
  for (int x = g.x + 1; x < size.x; x++) {
    float cur = I(x, g.y, g.z);
    er = max(er, abs(cur - prev));
    prev = cur;
    vec4 s = imageLoad(src, ivec3(x, g.y, g.z));
    if (s.y > 0.0) {
      dr = s.x;
      fr = true;
      break;
    }
  }
  float d;
  if (fl && fr) {
    bool l_low = dl <= dr;
    float e_low = l_low ? el : er, e_high = l_low ? er : el;
    d = e_high + EDGE_MARGIN < e_low ? max(dl, dr) : min(dl, dr);
  } else if (fl || fr) {
    d = fl ? dl : dr;
  } else {
    imageStore(dst, g, vec4(c.x, 0.0, c.z, 0.0));
    return;
  }
  imageStore(dst, g, vec4(d, 1.0, c.z, 0.0));
}
