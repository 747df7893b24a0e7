#version 450
// Post-processing at level 0 (docs/algorithm.md §10) up to the densification, in one
// pass, one workgroup per image row and pair:
//  1. validity: certainty, L-R check (LR_CHECK), window spread (SIGMA_D_MAX); with
//     FALLBACK_LEVELS, a pixel level 0 did not measure may take a coarser level's d;
//  2. MEDIAN: the 3 x 3 median of the valid values (valid iff >= 5 of the 9 are; pixels
//     outside count as invalid), by a sorting network;
//  3. DENSIFY: an invalid pixel takes the d of the nearest valid pixel to its left or
//     right in the row: the smaller one (background), unless the strongest intensity
//     step towards the larger one is weaker by more than EDGE_MARGIN than the strongest
//     step towards the smaller one.
// Step 3 needs, per pixel, the nearest valid neighbour on each side and the largest
// step on the way: segmented scans over the row. Each of the ROW_THREADS invocations
// (a power of two) owns ROW_CHUNK consecutive pixels; it summarises its chunk in each
// direction, the workgroup scans the summaries in shared memory (log2 steps), and each
// invocation walks its chunk again with the carry it receives. The cost per pixel is
// the same whatever the image holds (the scans of the former shader stopped at the
// first valid pixel, so a row with long gaps cost more).
// STAGED (where the rows fit the shared memory): step 1 of the three rows is computed
// first, one pixel per invocation in turn (coalesced reads), into shared memory; with
// STAGE_K (where it fits too) also the output's k of row y.
// Output (d, state, k, 0): state 2 measured, 1 filled, 0 invalid;
// k = clamp(C/0.5, 0, 1) exp(-(sigma_d/0.5)^2) of the left view's state at the pixel.
// With GROUND_MARGIN (the pitch-plane prior, docs/algorithm.md §5c), step 1 also
// invalidates a pixel whose d is below its ground bound (common.glsl ground_bound).
#include "sortnet.glsl"
#ifdef GROUND_MARGIN
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Layers { LayerParams layer_params[]; };
#endif
layout(local_size_x = ROW_THREADS) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray disp;      // layers pair * DIRS (+ 1)
layout(rg32f, binding = 1) readonly uniform image2DArray intensity;   // level 0, L in .r
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;
uniform ivec2 size;
#ifdef LR_COARSE
// The L-R check's right view from level 1 (the right view is not computed at level 0):
// d_R at level-0 pixel (x, y) is 2 x the bilinear value at (x / 2, y / 2) there. The
// check interpolates those values linearly between the two pixels around xr; both lie
// in one level-1 cell (xr / 2 and its neighbour share the cell's linear piece), so that
// is the bilinear value at (xr / 2, y / 2) itself: 4 loads (2 on even rows, where the
// two rows are one), not 8 or 16.
layout(rgba32f, binding = 3) readonly uniform image2DArray coarse;   // layers pair * DIRS (+ 1)
uniform ivec2 coarse_size;

float coarse_dr(float xr, int yy, int zr)
{
  float u = 0.5 * xr;
  int x0 = int(floor(u)), x1 = min(x0 + 1, coarse_size.x - 1);
  float f = u - float(x0);
  int y0 = yy >> 1;
  float a = mix(imageLoad(coarse, ivec3(x0, y0, zr)).x, imageLoad(coarse, ivec3(x1, y0, zr)).x, f);
  if ((yy & 1) == 0 || y0 + 1 >= coarse_size.y)
    return a + a;
  float b = mix(imageLoad(coarse, ivec3(x0, y0 + 1, zr)).x,
                imageLoad(coarse, ivec3(x1, y0 + 1, zr)).x, f);
  return a + b;   // 2 x their mean
}
#endif

#if FALLBACK_LEVELS > 0
// The coarse fallback (docs/algorithm.md §10, step 1): the final states of levels
// 1 .. FALLBACK_LEVELS (after their hole fill; a measured pixel has certainty >= C_MIN
// there, a filled one 0). A pixel that level 0 did not measure takes 2^s d of the level-s
// pixel holding it, from the finest level s that measured it where one px of that level
// is at most FALLBACK_REL of the disparity (2^s <= FALLBACK_REL 2^s d): a near surface
// without fine texture (a plain kit close to a 4K camera) is measured on a coarser level
// only. The window spread test is not applied to it; the L-R check is.
layout(rgba32f, binding = 4) readonly uniform image2DArray fb1;
#if FALLBACK_LEVELS > 1
layout(rgba32f, binding = 5) readonly uniform image2DArray fb2;
#endif
#if FALLBACK_LEVELS > 2
layout(rgba32f, binding = 6) readonly uniform image2DArray fb3;
#endif
#if FALLBACK_LEVELS > 3
layout(rgba32f, binding = 7) readonly uniform image2DArray fb4;
#endif

// Level s's state at the pixel holding level-0 pixel (x, yy), layer z (s = 1..FALLBACK_LEVELS).
vec4 fallback_state(int s, int x, int yy, int z)
{
  ivec3 q = ivec3(x >> s, yy >> s, z);
#if FALLBACK_LEVELS > 3
  if (s == 4)
    return imageLoad(fb4, q);
#endif
#if FALLBACK_LEVELS > 2
  if (s == 3)
    return imageLoad(fb3, q);
#endif
#if FALLBACK_LEVELS > 1
  if (s == 2)
    return imageLoad(fb2, q);
#endif
  return imageLoad(fb1, q);
}

// The fallback's (d, 1) at level-0 pixel (x, yy) of the left view's layer z, or (0, 0).
vec2 fallback(int x, int yy, int z)
{
  for (int s = 1; s <= FALLBACK_LEVELS; s++) {
    vec4 c = fallback_state(s, x, yy, z);
    float scale = float(1 << s);
    if (c.y >= C_MIN && scale <= FALLBACK_REL * (scale * c.x))
      return vec2(scale * c.x, 1.0);
  }
  return vec2(0.0);
}
#endif

#define C ROW_CHUNK
#define BIG 3.0e38

int pair, y;

// Step 1 at (x, yy): (1 valid / 0, d); outside the image invalid.
vec2 validity(int x, int yy)
{
  if (x < 0 || yy < 0 || x >= size.x || yy >= size.y)
    return vec2(0.0);
  vec4 l = imageLoad(disp, ivec3(x, yy, pair * DIRS));
  bool valid = l.y >= C_MIN;
  bool spread = SIGMA_D_MAX > 0.0;
#if FALLBACK_LEVELS > 0
  if (!valid) {
    vec2 f = fallback(x, yy, pair * DIRS);
    if (f.y > 0.0) {
      l.x = f.x;
      valid = true;
      spread = false;
    }
  }
#endif
  if (LR_CHECK != 0) {
    float xr = float(x) - l.x;
    if (xr < 0.0 || xr > float(size.x - 1)) {
      valid = false;
    } else {
      int zr = pair * DIRS + DIRS - 1;
#ifdef LR_COARSE
      float dr = coarse_dr(xr, yy, zr);
#else
      float fl = floor(xr);
      int i0 = int(fl);
      int i1 = min(i0 + 1, size.x - 1);
      float dr = mix(imageLoad(disp, ivec3(i0, yy, zr)).x, imageLoad(disp, ivec3(i1, yy, zr)).x,
                     xr - fl);
#endif
      valid = valid && abs(l.x - dr) <= LR_MAX;
    }
  }
  if (spread)
    valid = valid && l.z <= SIGMA_D_MAX;
#ifdef GROUND_MARGIN
  valid = valid && l.x >= ground_bound(layer_params[pair], 1, ivec2(x, yy), 1.0);
#endif
  return vec2(valid ? 1.0 : 0.0, l.x);
}

#ifdef STAGED
// Step 1 of rows y - 1, y, y + 1, computed once per pixel with coalesced reads: the d of
// a valid pixel, INVALID_D where invalid (d is never below min_disparity - 2 >= -2).
#define INVALID_D -1.0e30
shared float VD[3][STAGE_W];
#ifdef STAGE_K
shared float KC[STAGE_W];   // the output's k of row y
#endif

vec2 validity_staged(int x, int j)
{
  if (x < 0 || x >= size.x)
    return vec2(0.0);
  float d = VD[j][x];
  return d > 0.5 * INVALID_D ? vec2(1.0, d) : vec2(0.0);
}
#define VALIDITY(x, j) validity_staged((x), (j))
#else
#define VALIDITY(x, j) validity((x), y + (j) - 1)
#endif

float I(int x) { return imageLoad(intensity, ivec3(x, y, pair)).r; }

// |I(x+1) - I(x)|, 0 where it leaves the row.
float step_at(int x) { return x >= 0 && x + 1 < size.x ? abs(I(x + 1) - I(x)) : 0.0; }

// A segment summary: whether it has a valid pixel, the d of the one nearest to the
// side the scan runs towards, and the largest step from it to the segment's end (or over
// the whole segment when it has none).
struct Sum { bool has; float d, e; };

// `a` followed by `b` (in the direction of the scan).
Sum combine(Sum a, Sum b) { return b.has ? b : Sum(a.has, a.d, max(a.e, b.e)); }

#define EMPTY Sum(false, 0.0, 0.0)

#ifdef SCAN_HILLIS_STEELE   // STEREOD_POST_SCAN=hs; the default: the grouped scans below
shared bool s_has[2][ROW_THREADS];
shared float s_d[2][ROW_THREADS], s_e[2][ROW_THREADS];

// Inclusive scan of the summaries of direction `dir` over the invocations in the order
// of the scan (dir 0: 0 .. ROW_THREADS - 1, dir 1: backwards), Hillis-Steele; every
// invocation takes part.
Sum scan(int dir, Sum mine)
{
  int t = int(gl_LocalInvocationID.x);
  int r = dir == 0 ? t : ROW_THREADS - 1 - t;   // position in the scan order
  for (int off = 1; off < ROW_THREADS; off <<= 1) {
    s_has[dir][t] = mine.has;
    s_d[dir][t] = mine.d;
    s_e[dir][t] = mine.e;
    barrier();
    if (r >= off) {
      int o = dir == 0 ? t - off : t + off;
      mine = combine(Sum(s_has[dir][o], s_d[dir][o], s_e[dir][o]), mine);
    }
    barrier();
  }
  return mine;
}

// Both scans; the carries of this invocation's chunk: what the chunks before it (f) and
// after it (b) leave.
void carries(Sum fw, Sum bw, out Sum f, out Sum b)
{
  int t = int(gl_LocalInvocationID.x);
  Sum fi = scan(0, fw), bi = scan(1, bw);
  s_has[0][t] = fi.has;
  s_d[0][t] = fi.d;
  s_e[0][t] = fi.e;
  s_has[1][t] = bi.has;
  s_d[1][t] = bi.d;
  s_e[1][t] = bi.e;
  barrier();
  f = t > 0 ? Sum(s_has[0][t - 1], s_d[0][t - 1], s_e[0][t - 1]) : EMPTY;
  b = t < ROW_THREADS - 1 ? Sum(s_has[1][t + 1], s_d[1][t + 1], s_e[1][t + 1]) : EMPTY;
}
#else
// The scans in three steps with three barriers (the Hillis-Steele scan above needs two
// for each of its log2(ROW_THREADS) steps and direction): the summaries are stored in the
// order of each scan in groups of 32; one invocation per group and direction scans its
// group serially and leaves the group's total in the slot after it (the layout has one
// per group: slot i + i / 32, which also keeps the serial reads of 32 invocations in
// different banks); one invocation per direction turns the totals into the groups'
// exclusive prefixes; then each invocation combines its neighbour's entry with its
// group's prefix. The same combinations in the same order as a serial scan (the
// operation is associative and max is exact): the same carries.
#define NG (ROW_THREADS / 32)
#define SLOT(i) ((i) + ((i) >> 5))
shared bool s_has[2][ROW_THREADS + NG];
shared float s_d[2][ROW_THREADS + NG], s_e[2][ROW_THREADS + NG];

Sum slot_get(int dir, int k) { return Sum(s_has[dir][k], s_d[dir][k], s_e[dir][k]); }

void slot_set(int dir, int k, Sum v)
{
  s_has[dir][k] = v.has;
  s_d[dir][k] = v.d;
  s_e[dir][k] = v.e;
}

// The inclusive scan of direction dir at position i of its order.
Sum inclusive(int dir, int i)
{
  Sum v = slot_get(dir, SLOT(i));
  int g = i >> 5;
  return g > 0 ? combine(slot_get(dir, g * 33 + 32), v) : v;
}

void carries(Sum fw, Sum bw, out Sum f, out Sum b)
{
  int t = int(gl_LocalInvocationID.x);
  slot_set(0, SLOT(t), fw);
  slot_set(1, SLOT(ROW_THREADS - 1 - t), bw);
  barrier();
  if (t < 2 * NG) {
    int dir = t / NG, base = (t % NG) * 33;
    Sum acc = slot_get(dir, base);
    for (int k = 1; k < 32; k++) {
      acc = combine(acc, slot_get(dir, base + k));
      slot_set(dir, base + k, acc);
    }
    slot_set(dir, base + 32, acc);   // the group's total
  }
  barrier();
  if (t < 2) {
    Sum run = EMPTY;
    for (int g = 0; g < NG; g++) {
      Sum tot = slot_get(t, g * 33 + 32);
      slot_set(t, g * 33 + 32, run);   // the exclusive prefix of group g
      run = combine(run, tot);
    }
  }
  barrier();
  f = t > 0 ? inclusive(0, t - 1) : EMPTY;
  b = t < ROW_THREADS - 1 ? inclusive(1, ROW_THREADS - 2 - t) : EMPTY;
}
#endif

void main()
{
  y = int(gl_WorkGroupID.y);
  pair = int(gl_WorkGroupID.z);
  int t = int(gl_LocalInvocationID.x);
  int a = t * C;

#ifdef STAGED
  for (int x = t; x < size.x; x += ROW_THREADS)
    for (int j = 0; j < 3; j++) {
      vec2 v = validity(x, y + j - 1);
      VD[j][x] = v.x > 0.0 ? v.y : INVALID_D;
    }
#ifdef STAGE_K
  for (int x = t; x < size.x; x += ROW_THREADS) {
    vec4 l = imageLoad(disp, ivec3(x, y, pair * DIRS));
    KC[x] = clamp(l.y / 0.5, 0.0, 1.0) * exp(-(l.z / 0.5) * (l.z / 0.5));
  }
#endif
  barrier();
#endif
  // Steps 1 and 2 for this invocation's chunk.
  float dm[C];
  bool vm[C];
#ifdef MEDIAN
  vec2 win[3][3];   // validity of columns x - 1, x, x + 1 of rows y - 1, y, y + 1
  for (int j = 0; j < 3; j++) {
    win[j][0] = vec2(0.0);
    win[j][1] = VALIDITY(a - 1, j);
    win[j][2] = VALIDITY(a, j);
  }
#endif
  for (int i = 0; i < C; i++) {
    int x = a + i;
#ifdef MEDIAN
    for (int j = 0; j < 3; j++) {
      win[j][0] = win[j][1];
      win[j][1] = win[j][2];
      win[j][2] = VALIDITY(x + 1, j);
    }
    float v[9];
    int n = 0;
    for (int j = 0; j < 3; j++)
      for (int c = 0; c < 3; c++) {
        bool ok = win[j][c].x > 0.0;
        v[3 * j + c] = ok ? win[j][c].y : BIG;
        n += ok ? 1 : 0;
      }
    sort9(v);
    int k = (n - 1) / 2;
    float med = v[0];
    for (int q = 1; q < 5; q++)   // the median index is at most 4
      med = q == k ? v[q] : med;
    vm[i] = n >= 5 && x < size.x;
    dm[i] = n >= 5 ? med : win[1][1].y;
#else
    vec2 c0 = VALIDITY(x, 1);
    vm[i] = c0.x > 0.0;
    dm[i] = c0.y;
#endif
  }

#ifdef DENSIFY
  // Step 3: summaries of the chunk, forward (towards +x) and backward.
  float st[C];   // step from pixel a + i to a + i + 1
  for (int i = 0; i < C; i++)
    st[i] = step_at(a + i);
  float st_before = step_at(a - 1);
  Sum fw = Sum(false, 0.0, 0.0), bw = Sum(false, 0.0, 0.0);
  for (int i = 0; i < C; i++)
    fw = vm[i] ? Sum(true, dm[i], st[i]) : Sum(fw.has, fw.d, max(fw.e, st[i]));
  for (int i = C - 1; i >= 0; i--) {
    float sb = i > 0 ? st[i - 1] : st_before;
    bw = vm[i] ? Sum(true, dm[i], sb) : Sum(bw.has, bw.d, max(bw.e, sb));
  }
  // Exclusive carries: what the chunks before (after) this one leave.
  Sum f, b;
  carries(fw, bw, f, b);
  // Forward walk: the nearest valid pixel to the left of each pixel and the step maximum.
  bool lh[C];
  float ld[C], le[C];
  for (int i = 0; i < C; i++) {
    lh[i] = f.has;
    ld[i] = f.d;
    le[i] = f.e;
    f = vm[i] ? Sum(true, dm[i], st[i]) : Sum(f.has, f.d, max(f.e, st[i]));
  }
#endif

  // Backward walk (with DENSIFY) and the output.
  for (int i = C - 1; i >= 0; i--) {
    int x = a + i;
    if (x >= size.x)
      continue;
#ifdef STAGE_K
    float kc = KC[x];
#else
    vec4 l = imageLoad(disp, ivec3(x, y, pair * DIRS));
    float kc = clamp(l.y / 0.5, 0.0, 1.0) * exp(-(l.z / 0.5) * (l.z / 0.5));
#endif
    vec4 o = vec4(dm[i], vm[i] ? 2.0 : 0.0, kc, 0.0);
#ifdef DENSIFY
    if (!vm[i]) {
      // b describes the pixels right of x: the nearest valid one and the step maximum.
      if (lh[i] && b.has) {
        bool l_low = ld[i] <= b.d;
        float e_low = l_low ? le[i] : b.e, e_high = l_low ? b.e : le[i];
        o = vec4(e_high + EDGE_MARGIN < e_low ? max(ld[i], b.d) : min(ld[i], b.d), 1.0, kc, 0.0);
      } else if (lh[i] || b.has) {
        o = vec4(lh[i] ? ld[i] : b.d, 1.0, kc, 0.0);
      }
    }
    float sb = i > 0 ? st[i - 1] : st_before;
    b = vm[i] ? Sum(true, dm[i], sb) : Sum(b.has, b.d, max(b.e, sb));
#endif
    imageStore(dst, ivec3(x, y, pair), o);
  }
}
