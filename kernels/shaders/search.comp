#version 450
// Discrete search (docs/algorithm.md §5) for one direction: ZNCC with adaptive support
// weights on the reference window, w_k = exp(-|a_k - a_c| / WEIGHT_GAMMA). Every integer
// candidate t_min..t_max of a pixel is evaluated in this one dispatch and the best is
// kept (argmax), refined by a parabola through its neighbours.
// With SEARCH_TILED the other image's rows that a 16x16 tile needs for CHUNK candidates
// are staged in shared memory, chunk after chunk, so each texel is fetched once per chunk
// (fast on discrete GPUs); without it the window is read from the image directly (fast
// on llvmpipe, where workgroup barriers are expensive). Both sum the same values in the
// same order.
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
#define CHUNK 64
#define TILE_H (16 + 2 * SEARCH_R)
#define TILE_W (16 + CHUNK - 1 + 2 * SEARCH_R)

#ifdef SEARCH_TILED
shared float tile[TILE_H][TILE_W];
// The other image at window offset (j, i) of a candidate whose window starts at column
// c0 of the tile (row ly + j).
#define OTH(j, i) tile[ly + (j)][c0 + (i)]
#else
#define OTH(j, i) oth_at(g, xo - SEARCH_R + (i), g.y - SEARCH_R + (j))
#endif

float wk[WK];        // support weights
float wac[WK];       // w_k (a_k - mean_a)

float oth_at(ivec3 g, int x, int y)
{
  vec2 p = imageLoad(img, ivec3(x, clamp(y, 0, size.y - 1), g.z)).rg;
  return eta > 0 ? p.y : p.x;
}

// Weighted ZNCC of candidate t; -2 marks an invalid candidate.
// (lx, ly): the pixel's position in the workgroup; base: image x of tile column 0.
float cost(ivec3 g, int t, int lx, int ly, int base, float s_w, float s_aa)
{
  int xo = g.x - eta * t;
  if (xo - SEARCH_R < 0 || xo + SEARCH_R > size.x - 1)
    return -2.0;
  int c0 = xo - SEARCH_R - base;
  // One pass over the window (docs/algorithm.md §5): S_bb = sum w b^2 - S_w mean_b^2 and
  // S_ab = sum w (a - mean_a) b.
  float sb = 0.0, sbb = 0.0, s_ab = 0.0;
  int k = 0;
  for (int j = 0; j < WN; j++)
    for (int i = 0; i < WN; i++, k++) {
      float b = OTH(j, i);
      float wb = wk[k] * b;
      sb += wb;
      sbb += wb * b;
      s_ab += wac[k] * b;
    }
  float s_bb = sbb - sb * sb / s_w;
  float flat_lim = s_w * 1e-6;
  if (s_aa < flat_lim || s_bb < flat_lim)
    return 0.0;
  return s_ab * inversesqrt(s_aa * s_bb);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  ivec2 origin = ivec2(gl_WorkGroupID.xy) * 16;
  bool inside = g.x < size.x && g.y < size.y;
  // Rows are clamped like the reference window: tile row r is image row origin.y - R + r.
  // (The y clamp of the other window equals the clamp of the row index.)
  float s_w = 0.0, s_aa = 0.0;
  if (inside) {
    vec2 c = imageLoad(img, g).rg;
    float ac = eta > 0 ? c.x : c.y;
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
    for (k = 0; k < WK; k++) {
      float d = wac[k] - ma;
      s_aa += wk[k] * d * d;
      wac[k] = wk[k] * d;
    }
  }
  float best = -2.0, cm = -2.0, cp = -2.0, prevc = -2.0;
  bool want_next = false;
  int bt = t_min;
  for (int t0 = t_min; t0 <= t_max; t0 += CHUNK) {
    int t1 = min(t0 + CHUNK - 1, t_max);
    // Tile column 0 is image column base: the leftmost x - eta t - R over the tile/chunk.
    int base = eta > 0 ? origin.x - t1 - SEARCH_R : origin.x + t0 - SEARCH_R;
#ifdef SEARCH_TILED
    barrier();
    for (int i = ly * 16 + lx; i < TILE_H * TILE_W; i += 256) {
      int r = i / TILE_W, col = i % TILE_W;
      int x = base + col;
      float v = 0.0;
      if (x >= 0 && x < size.x)
        v = oth_at(g, x, origin.y - SEARCH_R + r);
      tile[r][col] = v;
    }
    barrier();
#endif
    if (inside)
      for (int t = t0; t <= t1; t++) {
        float c = cost(g, t, lx, ly, base, s_w, s_aa);
        if (want_next) {
          cp = c;
          want_next = false;
        }
        if (c > best) {
          best = c;
          bt = t;
          cm = t > t_min ? prevc : -2.0;
          cp = -2.0;
          want_next = true;
        }
        prevc = c;
      }
  }
  if (!inside)
    return;
  vec4 outv = vec4(0.0);
  if (best > 0.0) {
    float d = float(bt);
    if (bt > t_min && bt < t_max && cm > -2.0 && cp > -2.0) {
      float den = cm - 2.0 * best + cp;
      if (den < 0.0)
        d += clamp((cm - cp) / (2.0 * den), -0.5, 0.5);
    }
    outv = vec4(d, 1.0, 0.0, 1.0);
  }
  imageStore(dst, g, outv);
}
