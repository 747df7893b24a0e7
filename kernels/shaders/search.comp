#version 450
// Discrete search (docs/algorithm.md §5) for one direction: ZNCC with adaptive support
// weights on the reference window, w_k = exp(-|a_k - a_c| / WEIGHT_GAMMA). Every integer
// candidate t_min..t_max of a pixel is evaluated in this one dispatch and the best is
// kept (argmax), refined by a parabola through its neighbours.
// Output (d_init, certainty, 0, v) with v = certainty > 0 (the hole-fill flag).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray img;
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;
uniform int eta;          // +1: reference L, other R; -1: reference R, other L
uniform int t_min;
uniform int t_max;

#define WN (2 * SEARCH_R + 1)
#define WK (WN * WN)

float wk[WK];        // support weights
float wac[WK];       // w_k (a_k - mean_a)

float oth(ivec3 p) { vec2 v = imageLoad(img, p).rg; return eta > 0 ? v.y : v.x; }

// Weighted ZNCC of candidate t; -2 marks an invalid candidate.
float cost(ivec3 g, int t, float s_w, float s_aa)
{
  int xo = g.x - eta * t;
  if (xo - SEARCH_R < 0 || xo + SEARCH_R > size.x - 1)
    return -2.0;
  float sb = 0.0;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++) {
    int y = clamp(g.y + j, 0, size.y - 1);
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++)
      sb += wk[k] * oth(ivec3(xo + i, y, g.z));
  }
  float mb = sb / s_w;
  float s_bb = 0.0, s_ab = 0.0;
  k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++) {
    int y = clamp(g.y + j, 0, size.y - 1);
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      float b = oth(ivec3(xo + i, y, g.z)) - mb;
      s_bb += wk[k] * b * b;
      s_ab += wac[k] * b;
    }
  }
  float flat_lim = s_w * 1e-6;
  if (s_aa < flat_lim || s_bb < flat_lim)
    return 0.0;
  return s_ab * inversesqrt(s_aa * s_bb);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec2 c = imageLoad(img, g).rg;
  float ac = eta > 0 ? c.x : c.y;
  float s_w = 0.0;
  float sa = 0.0;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      vec2 p = imageLoad(img, ivec3(clamp(g.xy + ivec2(i, j), ivec2(0), size - 1), g.z)).rg;
      float a = eta > 0 ? p.x : p.y;
      float w = exp(-abs(a - ac) / WEIGHT_GAMMA);
      wk[k] = w;
      wac[k] = a;
      s_w += w;
      sa += w * a;
    }
  float ma = sa / s_w;
  float s_aa = 0.0;
  for (k = 0; k < WK; k++) {
    float d = wac[k] - ma;
    s_aa += wk[k] * d * d;
    wac[k] = wk[k] * d;
  }
  float best = -2.0;
  int bt = t_min;
  for (int t = t_min; t <= t_max; t++) {
    float cc = cost(g, t, s_w, s_aa);
    if (cc > best) {
      best = cc;
      bt = t;
    }
  }
  vec4 outv = vec4(0.0);
  if (best > 0.0) {
    float d = float(bt);
    if (bt > t_min && bt < t_max) {
      float cm = cost(g, bt - 1, s_w, s_aa), cp = cost(g, bt + 1, s_w, s_aa);
      if (cm > -2.0 && cp > -2.0) {
        float den = cm - 2.0 * best + cp;
        if (den < 0.0)
          d += clamp((cm - cp) / (2.0 * den), -0.5, 0.5);
      }
    }
    outv = vec4(d, 1.0, 0.0, 1.0);
  }
  imageStore(dst, g, outv);
}
