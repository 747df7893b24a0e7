// flow_prior.glsl: the 3x3 median and the 2x upsampling of a flow field (u, v, c, w)
// (docs/optical-flow.md §7) as functions: for flow_median.comp and flow_upsample.comp, and
// for the passes that compute them where they read them instead of reading a separate
// pass's output (§12: the terms, the forward-backward check). One text, so
// that a fused pass computes exactly the values the separate pass would have written.
// The includer defines PRIOR_IMAGE, the name of the image2DArray read.

// u and v each over the window's pixels with w > 0: the lower median when there are at
// least 5, else the value is kept; c and w as they are. `size`: the flow's size.
vec4 flow_median_at(ivec3 g, ivec2 size)
{
  float vu[9], vv[9];
  int n = 0;
  for (int j = -1; j <= 1; j++)
    for (int i = -1; i <= 1; i++) {
      ivec2 p = g.xy + ivec2(i, j);
      if (p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y)
        continue;
      vec4 s = imageLoad(PRIOR_IMAGE, ivec3(p, g.z));
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
  vec4 c = imageLoad(PRIOR_IMAGE, g);
  if (n >= 5)
    c.xy = vec2(vu[(n - 1) / 2], vv[(n - 1) / 2]);
  return c;
}

// (u, v) = 2 bilinear(coarse; x/2, y/2), clamp-to-edge (fractions 0 or 0.5), certainty
// and w 0. `src_size`: the coarse flow's size.
vec4 flow_upsample_at(ivec3 g, ivec2 src_size)
{
  int x0 = min(g.x >> 1, src_size.x - 1), y0 = min(g.y >> 1, src_size.y - 1);
  int x1 = min(x0 + (g.x & 1), src_size.x - 1), y1 = min(y0 + (g.y & 1), src_size.y - 1);
  vec2 s = imageLoad(PRIOR_IMAGE, ivec3(x0, y0, g.z)).xy +
           imageLoad(PRIOR_IMAGE, ivec3(x1, y0, g.z)).xy +
           imageLoad(PRIOR_IMAGE, ivec3(x0, y1, g.z)).xy +
           imageLoad(PRIOR_IMAGE, ivec3(x1, y1, g.z)).xy;
  return vec4(2.0 * 0.25 * s, 0.0, 0.0);
}
