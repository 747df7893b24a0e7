#version 450
// Discrete search (docs/algorithm.md §5), both directions in one dispatch: layer
// z = pair * DIRS + direction of the output (direction 0: eta = +1, reference L, other R;
// 1: eta = -1). ZNCC with adaptive support weights on the reference window,
// w_k = exp(-|a_k - a_c| / WEIGHT_GAMMA). Every integer candidate t_min..t_max of a pixel
// is evaluated in this one dispatch and the best is kept (argmax), refined by a parabola
// through its neighbours.
//
// Two implementations with the same sums in the same order (tested against each other and
// the reference):
//  - SEARCH_TILED (discrete GPUs): the reference window of the 16x16 tile and the other
//    image's rows for CHUNK candidates are staged in shared memory; the window taps are the
//    outer loop and GROUP candidates the inner one, so a tap's weight is computed once per
//    group and no per-pixel weight array is needed (it would not fit in registers);
//  - direct (llvmpipe, where workgroup barriers are expensive): the weights are kept in
//    per-invocation arrays and every candidate reads its window from the image.
// Output (d_init, certainty, 0, v) with v = certainty > 0 (the hole-fill flag).
// The refinement search (§5b) is either variant compiled with SEARCH_REFINE: each pixel's
// candidates are floor(min) - REFINE_PAD .. ceil(max) + REFINE_PAD of the level-0 prior
// over x, y +- REFINE_WINDOW (every 2 px), within t_min..t_max; the tiled variant runs
// the union of its tile's ranges and keeps each pixel's own. The prior is the upsample
// (§8) of the level-1 state `prior`, made here where it is read.
// With GROUND_MARGIN (the pitch-plane prior, docs/algorithm.md §5c) no pixel takes a
// candidate below floor of its ground bound (common.glsl ground_bound); the tiled
// variant starts its tile's candidates at the lowest of its pixels' bounds.
#include "common.glsl"
#if defined(SEARCH_REFINE) && defined(REFINE_R)   // the refinement's window (level 0)
#undef SEARCH_R
#define SEARCH_R REFINE_R
#endif
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray img;     // layer = pair
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;   // layer z
uniform ivec2 size;
uniform int t_min;
uniform int t_max;
#ifdef SEARCH_REFINE   // §5b: per-pixel candidates from the upsampled `prior`
layout(rgba32f, binding = 3) readonly uniform image2DArray prior;   // level 1, d in .x, layer z
uniform ivec2 prior_size;

// 2 x bilinear of the level-1 d at level-0 pixel q (as upsample: the mean of up to four).
float prior_up(ivec2 q, int z)
{
  int x0 = q.x >> 1, y0 = q.y >> 1;
  int x1 = min(x0 + (q.x & 1), prior_size.x - 1), y1 = min(y0 + (q.y & 1), prior_size.y - 1);
  float a = imageLoad(prior, ivec3(x0, y0, z)).x, b = imageLoad(prior, ivec3(x1, y0, z)).x;
  float c = imageLoad(prior, ivec3(x0, y1, z)).x, d = imageLoad(prior, ivec3(x1, y1, z)).x;
  return 2.0 * (0.25 * (a + b + c + d));
}
#endif
int eta;                  // +1: reference L, other R; -1: reference R, other L
int pair;

#ifdef GROUND_MARGIN
layout(std430, binding = 0) readonly buffer Layers { LayerParams layer_params[]; };
uniform float ground_scale;   // 2^-s of the level searched

// The pixel's lowest candidate under the pitch-plane prior (at least lo).
int ground_lo(ivec2 q, int lo)
{
  float v = ground_bound(layer_params[pair], eta, q, ground_scale);
  return max(lo, int(floor(max(v, -1.0e6))));
}
#endif

#define WN (2 * SEARCH_R + 1)
#define WK (WN * WN)
// GROUP candidates are summed at once (stereo-pass-defines.c: the range in even groups
// of at most 12; 8 for the refinement), CHUNK (a multiple of GROUP) share a staged tile.
#ifdef SEARCH_REFINE
#define GROUP REFINE_GROUP
#else
#define GROUP SEARCH_GROUP
#endif
#define CHUNK (GROUP * (64 / GROUP))
#define TILE_H (16 + 2 * SEARCH_R)
// The other image's tile: CHUNK + 15 window starts, WN wide, and GROUP - 1 columns of
// padding on either side for the last group of a chunk, whose candidates past the
// chunk read the padding (their sums are not used).
#define PAD (GROUP - 1)
#define TILE_W (16 + CHUNK - 1 + 2 * SEARCH_R + 2 * PAD)
#define SEG (WN + GROUP - 1)

float ref_at(ivec3 g, int x, int y)
{
  vec2 p = imageLoad(img, ivec3(clamp(ivec2(x, y), ivec2(0), size - 1), pair)).rg;
  return eta > 0 ? p.x : p.y;
}

float oth_at(ivec3 g, int x, int y)
{
  vec2 p = imageLoad(img, ivec3(x, clamp(y, 0, size.y - 1), pair)).rg;
  return eta > 0 ? p.y : p.x;
}

float weight(float a, float ac) { return exp(-abs(a - ac) / WEIGHT_GAMMA); }

bool valid_candidate(ivec3 g, int t)
{
  int xo = g.x - eta * t;
  return xo - SEARCH_R >= 0 && xo + SEARCH_R <= size.x - 1;
}

// ZNCC from the window sums (§5): S_bb = sum w b^2 - S_w mean_b^2, S_ab = sum w (a - ma) b.
float zncc(float sb, float sbb, float s_ab, float s_w, float s_aa)
{
  float s_bb = sbb - sb * sb / s_w;
  float flat_lim = s_w * 1e-6;
  if (s_aa < flat_lim || s_bb < flat_lim)
    return 0.0;
  return s_ab * inversesqrt(s_aa * s_bb);
}

// The running argmax over candidates in increasing t, with the costs of the neighbours of
// the best for the parabola.
struct Best {
  float best, cm, cp, prevc;
  bool want_next;
  int bt;
};

void best_add(inout Best b, int t, float c, int lo)
{
  if (b.want_next) {
    b.cp = c;
    b.want_next = false;
  }
  if (c > b.best) {
    b.best = c;
    b.bt = t;
    b.cm = t > lo ? b.prevc : -2.0;
    b.cp = -2.0;
    b.want_next = true;
  }
  b.prevc = c;
}

#ifdef SEARCH_REFINE
// The prior at (x + i, y + j), clamped to the image (from shared memory when tiled).
float prior_at(ivec3 g, int i, int j);

// §5b: the candidates of pixel g: the prior's range over x, y +- REFINE_WINDOW (every
// 2 px), widened by REFINE_PAD, within t_min..t_max.
void refine_range(ivec3 g, out int lo, out int hi)
{
  float mn = 1e30, mx = -1e30;
  for (int j = -REFINE_WINDOW; j <= REFINE_WINDOW; j += 2)
    for (int i = -REFINE_WINDOW; i <= REFINE_WINDOW; i += 2) {
      float d = prior_at(g, i, j);
      mn = min(mn, d);
      mx = max(mx, d);
    }
  lo = max(t_min, int(floor(mn)) - REFINE_PAD);
  hi = min(t_max, int(ceil(mx)) + REFINE_PAD);
}
#endif

#ifdef SEARCH_TILED
shared float rtile[TILE_H][TILE_H];    // reference image around the tile (clamped)
shared float tile[TILE_H][TILE_W];     // other image for one chunk of candidates
#ifdef SEARCH_REFINE
#define PT (16 + 2 * REFINE_WINDOW)
shared float ptile[PT][PT];            // §5b: the prior around the tile (clamped)
shared int s_lo, s_hi;                 // §5b: the union of the tile's candidate ranges

float prior_at(ivec3 g, int i, int j)
{
  ivec2 l = ivec2(gl_LocalInvocationID.xy);
  return ptile[l.y + REFINE_WINDOW + j][l.x + REFINE_WINDOW + i];
}
#endif

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  pair = g.z / DIRS;
  eta = g.z % DIRS == 0 ? 1 : -1;
  int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);
  ivec2 origin = ivec2(gl_WorkGroupID.xy) * 16;
  bool inside = g.x < size.x && g.y < size.y;
  for (int i = ly * 16 + lx; i < TILE_H * TILE_H; i += 256) {
    int r = i / TILE_H, col = i % TILE_H;
    rtile[r][col] = ref_at(g, origin.x - SEARCH_R + col, origin.y - SEARCH_R + r);
  }
  barrier();
  float ac = rtile[ly + SEARCH_R][lx + SEARCH_R];
  float s_w = 0.0, sa = 0.0, s_aa = 0.0;
  for (int j = 0; j < WN; j++)
    for (int i = 0; i < WN; i++) {
      float a = rtile[ly + j][lx + i];
      float w = weight(a, ac);
      s_w += w;
      sa += w * a;
    }
  float ma = sa / s_w;
  for (int j = 0; j < WN; j++)
    for (int i = 0; i < WN; i++) {
      float a = rtile[ly + j][lx + i];
      float d = a - ma;
      s_aa += weight(a, ac) * d * d;
    }
  // §5b: each pixel's candidates from the prior; the tile runs the union of them
  int lo = t_min, hi = t_max, tlo = t_min, thi = t_max;
#ifdef GROUND_MARGIN
  lo = ground_lo(g.xy, lo);
#ifndef SEARCH_REFINE
  {   // the bound is affine in x, y: the tile's lowest is at a corner (one off: rounding)
    int c0 = min(ground_lo(origin, t_min), ground_lo(origin + ivec2(15, 0), t_min));
    int c1 = min(ground_lo(origin + ivec2(0, 15), t_min), ground_lo(origin + ivec2(15), t_min));
    tlo = max(t_min, min(c0, c1) - 1);
  }
#endif
#endif
#ifdef SEARCH_REFINE
  {
    if (lx == 0 && ly == 0) {
      s_lo = 0x7fffffff;
      s_hi = -0x7fffffff;
    }
    for (int i = ly * 16 + lx; i < PT * PT; i += 256) {
      int r = i / PT, col = i % PT;
      ivec2 q = clamp(origin + ivec2(col, r) - REFINE_WINDOW, ivec2(0), size - 1);
      ptile[r][col] = prior_up(q, g.z);
    }
    barrier();
    refine_range(g, lo, hi);
#ifdef GROUND_MARGIN
    lo = ground_lo(g.xy, lo);
#endif
    if (inside && lo <= hi) {
      atomicMin(s_lo, lo);
      atomicMax(s_hi, hi);
    }
    barrier();
    tlo = s_lo;
    thi = s_hi;
  }
#endif
  Best b = Best(-2.0, -2.0, -2.0, -2.0, false, lo);
  for (int t0 = tlo; t0 <= thi; t0 += CHUNK) {
    int t1 = min(t0 + CHUNK - 1, thi);
    // Tile column 0 is image column base: the leftmost x - eta t - R over the tile/chunk.
    int base = (eta > 0 ? origin.x - t1 - SEARCH_R : origin.x + t0 - SEARCH_R) - PAD;
    barrier();
    for (int i = ly * 16 + lx; i < TILE_H * TILE_W; i += 256) {
      int r = i / TILE_W, col = i % TILE_W;
      int x = base + col;
      tile[r][col] = x >= 0 && x < size.x ? oth_at(g, x, origin.y - SEARCH_R + r) : 0.0;
    }
    barrier();
    if (!inside)
      continue;
    for (int tg = t0; tg <= t1; tg += GROUP) {
      // Accumulator c holds candidate tg + c (eta = +1) or tg + GROUP - 1 - c (eta = -1):
      // either way its window on row j starts at column seg0 - c + GROUP - 1 of the tile,
      // so the SEG values of a row segment serve every tap and candidate of the group
      // from registers (seg[i - c + GROUP - 1]): one shared read per value instead of
      // one per tap and candidate. The sums are added in the same order as before.
      int seg0 = eta > 0 ? lx + (t1 - tg) - (GROUP - 1) + PAD : lx + (tg - t0) + PAD;
      float sb[GROUP], sbb[GROUP], sab[GROUP];
      for (int c = 0; c < GROUP; c++) {
        sb[c] = 0.0;
        sbb[c] = 0.0;
        sab[c] = 0.0;
      }
      for (int j = 0; j < WN; j++) {
        float seg[SEG];
        for (int k = 0; k < SEG; k++)
          seg[k] = tile[ly + j][seg0 + k];
        for (int i = 0; i < WN; i++) {
          float a = rtile[ly + j][lx + i];
          float w = weight(a, ac);
          float wa = w * (a - ma);
          for (int c = 0; c < GROUP; c++) {
            float v = seg[i - c + GROUP - 1];
            float wb = w * v;
            sb[c] += wb;
            sbb[c] += wb * v;
            sab[c] += wa * v;
          }
        }
      }
      for (int c = 0; c < GROUP; c++) {
        int t = tg + c;
        bool use = t <= t1;
#if defined(SEARCH_REFINE) || defined(GROUND_MARGIN)
        use = use && t >= lo && t <= hi;
#endif
        if (!use)
          continue;
        float zc = -2.0;
        if (valid_candidate(g, t)) {
          if (eta > 0)   // uniform over the workgroup
            zc = zncc(sb[c], sbb[c], sab[c], s_w, s_aa);
          else
            zc = zncc(sb[GROUP - 1 - c], sbb[GROUP - 1 - c], sab[GROUP - 1 - c], s_w, s_aa);
        }
        best_add(b, t, zc, lo);
      }
    }
  }
  if (!inside)
    return;
#else
#ifdef SEARCH_REFINE
float prior_at(ivec3 g, int i, int j)
{
  return prior_up(clamp(g.xy + ivec2(i, j), ivec2(0), size - 1), g.z);
}
#endif
float wk[WK];        // support weights
float wac[WK];       // w_k (a_k - mean_a)

float cost(ivec3 g, int t, float s_w, float s_aa)
{
  if (!valid_candidate(g, t))
    return -2.0;
  int xo = g.x - eta * t;
  float sb = 0.0, sbb = 0.0, s_ab = 0.0;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      float v = oth_at(g, xo + i, g.y + j);
      float wb = wk[k] * v;
      sb += wb;
      sbb += wb * v;
      s_ab += wac[k] * v;
    }
  return zncc(sb, sbb, s_ab, s_w, s_aa);
}

void main()
{
  ivec3 g = ivec3(gl_GlobalInvocationID);
  pair = g.z / DIRS;
  eta = g.z % DIRS == 0 ? 1 : -1;
  if (g.x >= size.x || g.y >= size.y)
    return;
  float ac = ref_at(g, g.x, g.y);
  float s_w = 0.0, sa = 0.0, s_aa = 0.0;
  int k = 0;
  for (int j = -SEARCH_R; j <= SEARCH_R; j++)
    for (int i = -SEARCH_R; i <= SEARCH_R; i++, k++) {
      float a = ref_at(g, g.x + i, g.y + j);
      float w = weight(a, ac);
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
  int lo = t_min, hi = t_max;
#ifdef SEARCH_REFINE
  refine_range(g, lo, hi);
#endif
#ifdef GROUND_MARGIN
  lo = ground_lo(g.xy, lo);
#endif
  Best b = Best(-2.0, -2.0, -2.0, -2.0, false, lo);
  for (int t = lo; t <= hi; t++)
    best_add(b, t, cost(g, t, s_w, s_aa), lo);
#endif
  vec4 outv = vec4(0.0);
  if (b.best > 0.0) {
    float d = float(b.bt);
    if (b.bt > lo && b.bt < hi && b.cm > -2.0 && b.cp > -2.0) {
      float den = b.cm - 2.0 * b.best + b.cp;
      if (den < 0.0)
        d += clamp((b.cm - b.cp) / (2.0 * den), -0.5, 0.5);
    }
    outv = vec4(d, 1.0, 0.0, 1.0);
  }
  imageStore(dst, g, outv);
}
