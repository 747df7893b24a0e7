#version 450
// One round of the phase stage (docs/algorithm.md §6, §7) in one pass: phase terms,
// the applicability filter along rows and columns, and the solve, for every layer
// z = pair * DIRS + direction (direction 0: eta = +1, reference L; 1: eta = -1).
// A workgroup (256 invocations) owns a TILE_W x TILE_H tile of the output. It computes
// the terms
// P = (c w^2, c w e, c, c e^2), e = w d0 + eta dphi, of the tile plus a SMOOTH_R halo
// (0 outside the image: normalized convolution) into shared memory, filters them along
// rows (in place, after a barrier) and along columns, and solves: the same sums in the
// same order as separate row and column passes that skip the outside.
// The prior d0 is the same level's state (.x of `prior`), or with `upsample` the coarser
// level's, 2 x bilinear (§8: the mean of up to four coarse values, fractions 0 or 0.5).
// Split variants (large levels and software renderers, where computing the halo's terms
// again costs more than a pass): TERMS_ONLY writes every pixel's terms into `terms_img`,
// FROM_TERMS is the pass above with the terms read from there; with TERMS_ROWS the terms
// pass also filters them along rows (a workgroup a row segment: 2 SMOOTH_R terms a segment
// computed twice) and FROM_ROWS filters those along columns and solves (tiles of TILE_W x
// COLS_TILE_H, halos only above and below). The same sums in the same order every way.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(QUAD_FORMAT, binding = 0) readonly uniform image2DArray quad;   // (qL, qR), layer = pair
layout(rgba32f, binding = 1) readonly uniform image2DArray prior;      // d0 in .x, layer z
layout(rgba32f, binding = 2) writeonly uniform image2DArray dst;       // (d, C, sigma_d, v)
layout(std430, binding = 0) readonly buffer Means { vec2 mean_mag[]; };  // [pair * MAX_LEVELS + level]
layout(std430, binding = 1) readonly buffer Layers { LayerParams layer_params[]; };
#if defined(TERMS_ONLY) || defined(FROM_TERMS) || defined(FROM_ROWS)
layout(rgba32f, binding = 3) uniform image2DArray terms_img;   // P per pixel, layer z
#endif
uniform ivec2 size;
uniform ivec2 prior_size;   // the prior's size (the coarser level's with upsample)
uniform int level;
uniform int upsample;
uniform vec2 d_range;       // clamp range, level px
uniform float guard;        // > 0 (§5b): d more than guard from d0 keeps d0 (cert C, sigma 0)
uniform int z_step;         // layer z = workgroup z * z_step (DIRS: the left views alone)

int layer_z() { return int(gl_WorkGroupID.z) * z_step; }

const float taps[2 * SMOOTH_R + 1] = SMOOTH_TAPS;
#define RW (TILE_W + 2 * SMOOTH_R)
#define RH (TILE_H + 2 * SMOOTH_R)
#define NT 256
// The filters are register-blocked: an invocation filters SEG_R consecutive outputs of a
// row (SEG_C of a column) from SEG + 2 SMOOTH_R shared values, each read once, instead of
// 2 SMOOTH_R + 1 reads per output. Row tasks go to consecutive invocations by row, so the
// row stride of T is odd in vec4s (RWP): no two of 8 invocations share a bank. SEG_R 4,
// SEG_C 2: on the H200 10.9 ms for the phase rounds of 16 1080p pairs, against 11.5 with
// 8 and 4 and 11.0 with 8 and 2 (STEREOD_PHASE_SEG=RxC sets them for benchmarks).
#ifndef SEG_R
#define SEG_R 4
#endif
#ifndef SEG_C
#define SEG_C 2
#endif
#define RWP (RW | 1)
#define ROW_TASKS (RH * (TILE_W / SEG_R))
#define ROW_TASKS_PER_THREAD ((ROW_TASKS + NT - 1) / NT)
#if defined(FROM_ROWS)
#define CRH (COLS_TILE_H + 2 * SMOOTH_R)
shared vec4 T[CRH][TILE_W];  // row sums of the tile's columns and its halo rows
#elif !defined(TERMS_ONLY)
shared vec4 T[RH][RWP];      // terms, then (columns 0 .. TILE_W - 1) their row sums
#endif

int pair_, eta_;

float d_prior(ivec2 p)
{
  int z = layer_z();
  if (upsample == 0)
    return imageLoad(prior, ivec3(p, z)).x;
  int x0 = p.x >> 1, y0 = p.y >> 1;
  int x1 = min(x0 + (p.x & 1), prior_size.x - 1), y1 = min(y0 + (p.y & 1), prior_size.y - 1);
  float a = imageLoad(prior, ivec3(x0, y0, z)).x, b = imageLoad(prior, ivec3(x1, y0, z)).x;
  float c = imageLoad(prior, ivec3(x0, y1, z)).x, d = imageLoad(prior, ivec3(x1, y1, z)).x;
  return 2.0 * (0.25 * (a + b + c + d));
}

// The reference's response at x (eta = +1: L, else R) and the other's.
vec2 qref(ivec2 p) { vec4 q = imageLoad(quad, ivec3(p, pair_)); return eta_ > 0 ? q.xy : q.zw; }
vec2 qoth(ivec2 p) { vec4 q = imageLoad(quad, ivec3(p, pair_)); return eta_ > 0 ? q.zw : q.xy; }

// z of §5.2 and |q0|^2; returns false when |q0| = 0.
bool freq(vec2 qm, vec2 q0, vec2 qp, out vec2 z)
{
  float m2 = dot(q0, q0);
  if (!(m2 > 0.0)) {
    z = vec2(0.0);
    return false;
  }
  vec2 e_minus = vec2(cos(OMEGA0), -sin(OMEGA0));   // e^{-i w0}
  vec2 e_plus = vec2(cos(OMEGA0), sin(OMEGA0));     // e^{+i w0}
  vec2 num = cmul(qp, e_minus) - cmul(qm, e_plus);
  z = cmulconj(num, q0) / (2.0 * m2);
  return true;
}

// §6: the four products at pixel p (inside the image) with prior d0.
vec4 terms(ivec2 p, float d0, float tmag)
{
  float xw = float(p.x) - float(eta_) * d0;
  bool ok = p.x >= RADIUS && p.x <= size.x - 1 - RADIUS && p.y >= RADIUS &&
            p.y <= size.y - 1 - RADIUS && xw - 1.0 >= float(RADIUS) &&
            xw + 1.0 <= float(size.x - 1 - RADIUS);
  if (!ok)
    return vec4(0.0);
  vec2 rm = qref(ivec2(p.x - 1, p.y));
  vec2 r0 = qref(p);
  vec2 rp = qref(ivec2(p.x + 1, p.y));
  // Other image at xw - 1, xw, xw + 1: linear interpolation along x, 4 fetches.
  float fl = floor(xw - 1.0);
  int i0 = int(fl);
  float f = (xw - 1.0) - fl;
  vec2 o0 = qoth(ivec2(i0, p.y));
  vec2 o1 = qoth(ivec2(i0 + 1, p.y));
  vec2 o2 = qoth(ivec2(min(i0 + 2, size.x - 1), p.y));
  vec2 o3 = qoth(ivec2(min(i0 + 3, size.x - 1), p.y));
  vec2 om = mix(o0, o1, f);
  vec2 oc = mix(o1, o2, f);
  vec2 op = mix(o2, o3, f);
  vec2 zr, zo;
  bool okr = freq(rm, r0, rp, zr);
  bool oko = freq(om, oc, op, zo);
  float ar = length(r0), ao = length(oc);
  if (!(okr && oko && dot(zr, zr) <= STAB2 && dot(zo, zo) <= STAB2 && min(ar, ao) >= tmag))
    return vec4(0.0);
  float wr = OMEGA0 + asin_precise(clamp(zr.y, -1.0, 1.0));
  float wo = OMEGA0 + asin_precise(clamp(zo.y, -1.0, 1.0));
  float w = 0.5 * (wr + wo);
  vec2 C = cmulconj(oc, r0);
  float dphi = atan2_precise(C.y, C.x);
  float sym = 2.0 * ar * ao / (ar * ar + ao * ao);
  float c = pow(sym, GAMMA_EXP);
  float e = w * d0 + float(eta_) * dphi;
  return vec4(c * w * w, c * w * e, c, c * e * e);
}

// The solve at image pixel g from its filtered terms acc.
void solve(ivec2 g, vec4 acc, int z)
{
  if (g.x >= size.x || g.y >= size.y)
    return;
  float d0 = d_prior(g);
  vec4 o4;
  if (guard > 0.0 && acc.z >= C_MIN && abs(acc.y / acc.x - d0) > guard) {
    o4 = vec4(clamp(d0, d_range.x, d_range.y), acc.z, 0.0, 1.0);
  } else if (acc.z >= C_MIN) {
    float d = acc.y / acc.x;
    float var = max(acc.w / acc.x - d * d, 0.0);
    o4 = vec4(clamp(d, d_range.x, d_range.y), acc.z, sqrt(var), 1.0);
  } else {
    o4 = vec4(clamp(d0, d_range.x, d_range.y), 0.0, 0.0, 0.0);
  }
  imageStore(dst, ivec3(g, z), o4);
}

#ifndef TERMS_ONLY
// The column filter of T's row sums and the solve, for a tile of TILE_W x `rows` outputs
// at `tile` (T's row 0 is SMOOTH_R rows above it): task t has column t % TILE_W, rows
// (t / TILE_W) SEG_C ... + SEG_C - 1; the sums in the order of the taps.
void columns_and_solve(ivec2 tile, int rows, int li, int z)
{
  for (int t = li; t < TILE_W * (rows / SEG_C); t += NT) {
    int tx = t % TILE_W, y0 = (t / TILE_W) * SEG_C;
    vec4 acc[SEG_C];
    for (int q = 0; q < SEG_C; q++)
      acc[q] = vec4(0.0);
    for (int k = 0; k < SEG_C + 2 * SMOOTH_R; k++) {
      vec4 v = T[y0 + k][tx];
      for (int q = 0; q < SEG_C; q++)
        if (k - q >= 0 && k - q <= 2 * SMOOTH_R)
          acc[q] += taps[k - q] * v;
    }
    for (int q = 0; q < SEG_C; q++)
      solve(tile + ivec2(tx, y0 + q), acc[q], z);
  }
}
#endif

#if defined(TERMS_ONLY) && defined(TERMS_ROWS)
// A workgroup: the terms of row y from x0 - SMOOTH_R to x0 + ROW_OUT - 1 + SMOOTH_R (0
// outside the image), then the row filter of ROW_OUT outputs.
#define ROW_OUT (NT - 2 * SMOOTH_R)
shared vec4 S[NT];
void main()
{
  int z = layer_z();
  pair_ = z / DIRS;
  eta_ = z % DIRS == 0 ? 1 : -1;
  vec2 mm = mean_mag[pair_ * MAX_LEVELS + level];
  float tmag = max(KAPPA * (eta_ > 0 ? mm.x : mm.y), layer_params[pair_].min_magnitude);
  int li = int(gl_LocalInvocationID.x);
  int x0 = int(gl_WorkGroupID.x) * ROW_OUT;
  ivec2 p = ivec2(x0 - SMOOTH_R + li, int(gl_WorkGroupID.y));
  vec4 P = vec4(0.0);
  if (p.x >= 0 && p.x < size.x)
    P = terms(p, d_prior(p), tmag);
  S[li] = P;
  barrier();
  if (li < ROW_OUT && x0 + li < size.x) {
    vec4 acc = vec4(0.0);
    for (int k = 0; k <= 2 * SMOOTH_R; k++)
      acc += taps[k] * S[li + k];
    imageStore(terms_img, ivec3(x0 + li, p.y, z), acc);
  }
}
#elif defined(TERMS_ONLY)
void main()
{
  int z = layer_z();
  pair_ = z / DIRS;
  eta_ = z % DIRS == 0 ? 1 : -1;
  vec2 mm = mean_mag[pair_ * MAX_LEVELS + level];
  float tmag = max(KAPPA * (eta_ > 0 ? mm.x : mm.y), layer_params[pair_].min_magnitude);
  int li = int(gl_LocalInvocationID.x);
  ivec2 p = ivec2(gl_WorkGroupID.xy) * ivec2(16, 16) + ivec2(li % 16, li / 16);
  if (all(lessThan(p, size)))
    imageStore(terms_img, ivec3(p, z), terms(p, d_prior(p), tmag));
}
#elif defined(FROM_ROWS)
// A workgroup: the row sums of a TILE_W x COLS_TILE_H tile and SMOOTH_R rows above and
// below (0 outside the image), filtered along columns, and the solve.
void main()
{
  int z = layer_z();
  int li = int(gl_LocalInvocationID.x);
  ivec2 tile = ivec2(gl_WorkGroupID.xy) * ivec2(TILE_W, COLS_TILE_H);
  for (int i = li; i < TILE_W * CRH; i += NT) {
    ivec2 p = tile + ivec2(i % TILE_W, i / TILE_W - SMOOTH_R);
    vec4 P = vec4(0.0);
    if (p.y >= 0 && p.y < size.y && p.x < size.x)
      P = imageLoad(terms_img, ivec3(p, z));
    T[i / TILE_W][i % TILE_W] = P;
  }
  barrier();
  columns_and_solve(tile, COLS_TILE_H, li, z);
}
#else
void main()
{
  int z = layer_z();
  pair_ = z / DIRS;
  eta_ = z % DIRS == 0 ? 1 : -1;
  vec2 mm = mean_mag[pair_ * MAX_LEVELS + level];
  float tmag = max(KAPPA * (eta_ > 0 ? mm.x : mm.y), layer_params[pair_].min_magnitude);
  int li = int(gl_LocalInvocationID.x);
  ivec2 tile = ivec2(gl_WorkGroupID.xy) * ivec2(TILE_W, TILE_H);
  ivec2 origin = tile - SMOOTH_R;
  for (int i = li; i < RW * RH; i += NT) {
    ivec2 p = origin + ivec2(i % RW, i / RW);
    vec4 P = vec4(0.0);
#ifdef FROM_TERMS
    if (all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size)))
      P = imageLoad(terms_img, ivec3(p, z));
#else
    if (all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size)))
      P = terms(p, d_prior(p), tmag);
#endif
    T[i / RW][i % RW] = P;
  }
  barrier();
  // Rows: task t filters row t % RH, outputs (t / RH) SEG_R .. + SEG_R - 1; the sums are
  // in the order of the taps, as a tap loop per output would add them.
  vec4 r[ROW_TASKS_PER_THREAD][SEG_R];
  for (int j = 0; j < ROW_TASKS_PER_THREAD; j++) {
    int t = li + j * NT;
    for (int q = 0; q < SEG_R; q++)
      r[j][q] = vec4(0.0);
    if (t < ROW_TASKS) {
      int ty = t % RH, x0 = (t / RH) * SEG_R;
      for (int k = 0; k < SEG_R + 2 * SMOOTH_R; k++) {
        vec4 v = T[ty][x0 + k];
        for (int q = 0; q < SEG_R; q++)
          if (k - q >= 0 && k - q <= 2 * SMOOTH_R)
            r[j][q] += taps[k - q] * v;
      }
    }
  }
  barrier();
  for (int j = 0; j < ROW_TASKS_PER_THREAD; j++) {
    int t = li + j * NT;
    if (t < ROW_TASKS) {
      int ty = t % RH, x0 = (t / RH) * SEG_R;
      for (int q = 0; q < SEG_R; q++)
        T[ty][x0 + q] = r[j][q];
    }
  }
  barrier();
  columns_and_solve(tile, TILE_H, li, z);
}
#endif
