#version 450
// Discrete ZNCC search (docs/algorithm.md §5) for one direction: every integer candidate
// t_min..t_max of a pixel is evaluated in this one dispatch and the best is kept (argmax),
// refined by a parabola through its neighbours.
// Output (d_init, certainty, 0, v) with v = certainty > 0 (the hole-fill flag).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray img;
layout(rgba32f, binding = 1) readonly uniform image2DArray stats;
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;
uniform int eta;          // +1: reference L, other R; -1: reference R, other L
uniform int t_min;
uniform int t_max;

#define WN (2 * SEARCH_R + 1)
const float FLAT = float(WN * WN) * 1e-6;

float ref_c[WN * WN];

float cost(ivec3 g, int t, float sa)
{
  int xo = g.x - eta * t;
  if (xo - SEARCH_R < 0 || xo + SEARCH_R > size.x - 1)
    return -2.0;                        // invalid candidate
  vec4 so = imageLoad(stats, ivec3(xo, g.y, g.z));
  float sb = eta > 0 ? so.w : so.y;
  if (sa < FLAT || sb < FLAT)
    return 0.0;
  float mb = eta > 0 ? so.z : so.x;
  float acc = 0.0;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++) {
    int y = clamp(g.y + j, 0, size.y - 1);
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      vec2 p = imageLoad(img, ivec3(xo + i, y, g.z)).rg;
      float b = (eta > 0 ? p.y : p.x) - mb;
      acc += ref_c[k] * b;
    }
  }
  return acc * inversesqrt(sa * sb);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  if (g.x >= size.x || g.y >= size.y)
    return;
  vec4 s = imageLoad(stats, g);
  float ma = eta > 0 ? s.x : s.z;
  float sa = eta > 0 ? s.y : s.w;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      vec2 p = imageLoad(img, ivec3(clamp(g.xy + ivec2(i, j), ivec2(0), size - 1), g.z)).rg;
      ref_c[k] = (eta > 0 ? p.x : p.y) - ma;
    }
  float best = -2.0;
  int bt = t_min;
  for (int t = t_min; t <= t_max; t++) {
    float c = cost(g, t, sa);
    if (c > best) {
      best = c;
      bt = t;
    }
  }
  vec4 outv = vec4(0.0);
  if (best > 0.0) {
    float d = float(bt);
    if (bt > t_min && bt < t_max) {
      float cm = cost(g, bt - 1, sa), cp = cost(g, bt + 1, sa);
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
