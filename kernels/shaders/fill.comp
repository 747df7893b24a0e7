#version 450
// Hole fill (docs/algorithm.md §9), FILL_ROUNDS rounds in one pass. A round: every pixel
// with v = 0 whose Gaussian-weighted sum of v over the (2 FILL_R + 1)^2 window exceeds
// 1e-6 takes (G * v d) / (G * v) and v = 1, all pixels reading the state of the round's
// start (Jacobi); the convolution is separable, rows then columns, 0 outside the image.
// src holds the state (d, certainty, sigma_d, v) before the first round, dst receives it
// after the last (different images). Any number of layers (pairs x directions).
//
// A workgroup owns a 16x16 tile. Fast path: a tile without holes is copied; otherwise
// the first round is run for the tile alone, and if no hole is left in it the later
// rounds cannot change it (they only fill holes): written. Slow path (a hole farther
// than FILL_R from every valid pixel): the rounds run on regions around the tile that
// shrink by FILL_R per round (16 + 2 FILL_R (FILL_ROUNDS - k) px for round k), their
// states in shared memory, unless that region holds no valid pixel at all (then no round
// can fill the tile's holes: they are kept). Every sum is the one a row pass and a column pass over the
// whole image would make, in the same order, so the result does not depend on the path.
layout(local_size_x = 256) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

const float taps[2 * FILL_R + 1] = FILL_TAPS;
#define HOLE 1.0e30          // a state value: no valid d (d values are far smaller)
#define IS_D(s) ((s) < 1.0e29)
#define L_OF(k) (16 + 2 * FILL_R * (FILL_ROUNDS - (k)))   // side of round k's region
// Shared states of rounds 1 .. FILL_ROUNDS - 1, one float each, one after the other
// (FILL_S_TOTAL, from the host); the fast path first stages the tile's input there.
#define BASE_OF(k) ((k) == 1 ? 0 : L_OF(1) * L_OF(1))
#define TW (16 + 2 * FILL_R)     // the tile and its halo
// Row sums of one block of outputs: 16 x 16 (tile) or 32 x 8 (regions), each needing
// 2 FILL_R more rows than it has (FILL_RS_SIZE from the host).
shared vec2 RS[FILL_RS_SIZE];
shared float S[FILL_S_TOTAL];
shared float FIN[256];       // the last round's state of the tile
shared uint holes, reach;

ivec2 tile;
int layer;

bool inside(ivec2 p) { return all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size)); }

// State before round k at image pixel p: from the image (k = 1; `staged`: its copy of
// the tile and halo in S) or from the shared state of round k - 1; HOLE outside.
float state_before(int k, ivec2 p, bool staged)
{
  if (!inside(p))
    return HOLE;
  if (k == 1 && staged) {
    ivec2 q = p - (tile - FILL_R);
    return S[q.y * TW + q.x];
  }
  if (k == 1) {
    vec4 q = imageLoad(src, ivec3(p, layer));
    return q.w > 0.0 ? q.x : HOLE;
  }
  int L = L_OF(k - 1);
  ivec2 q = p - (tile - FILL_R * (FILL_ROUNDS - (k - 1)));
  return S[BASE_OF(k - 1) + q.y * L + q.x];
}

// Round k for the square region of side L at origin o (L = 16: the tile, into FIN;
// else into the shared state of round k), in blocks of bw x bh outputs.
void fill_round(int k, ivec2 o, int L, bool staged)
{
  int li = int(gl_LocalInvocationID.x);
  int bw = L == 16 ? 16 : 32, bh = 256 / bw;
  for (int by = 0; by < L; by += bh)
    for (int bx = 0; bx < L; bx += bw) {
      int rows = bh + 2 * FILL_R;
      for (int i = li; i < rows * bw; i += 256) {
        int j = i / bw, c = i % bw;
        ivec2 p = o + ivec2(bx + c - FILL_R, by + j - FILL_R);
        vec2 acc = vec2(0.0);
        for (int t = 0; t <= 2 * FILL_R; t++) {
          float s = state_before(k, p + ivec2(t, 0), staged);
          acc += taps[t] * (IS_D(s) ? vec2(s, 1.0) : vec2(0.0));
        }
        RS[j * bw + c] = acc;
      }
      barrier();
      int c = li % bw, r = li / bw;
      ivec2 q = ivec2(bx + c, by + r);
      if (q.x < L && q.y < L) {
        ivec2 p = o + q;
        float s = state_before(k, p, staged);
        if (!IS_D(s) && inside(p)) {
          vec2 acc = vec2(0.0);
          for (int t = 0; t <= 2 * FILL_R; t++)
            acc += taps[t] * RS[(r + t) * bw + c];
          if (acc.y > 1e-6)
            s = acc.x / acc.y;
        }
        if (L == 16)
          FIN[q.y * 16 + q.x] = s;
        else
          S[BASE_OF(k) + q.y * L + q.x] = s;
      }
      barrier();
    }
}

void main()
{
  int li = int(gl_LocalInvocationID.x);
  tile = ivec2(gl_WorkGroupID.xy) * 16;
  layer = int(gl_WorkGroupID.z);
  ivec2 lid = ivec2(li % 16, li / 16);
  ivec3 g = ivec3(tile + lid, layer);
  bool in_image = inside(g.xy);
  vec4 cur = in_image ? imageLoad(src, g) : vec4(0.0, 0.0, 0.0, 1.0);
  if (li == 0)
    holes = 0u;
  barrier();
  if (!(cur.w > 0.0))
    atomicOr(holes, 1u);
  barrier();
  if (holes == 0u) {   // nothing to fill in this tile: copy
    if (in_image)
      imageStore(dst, g, cur);
    return;
  }
  for (int i = li; i < TW * TW; i += 256) {
    ivec2 p = tile - FILL_R + ivec2(i % TW, i / TW);
    S[i] = state_before(1, p, false);
  }
  barrier();
  fill_round(1, tile, 16, true);
#if FILL_ROUNDS > 1
  if (li == 0)
    holes = 0u;
  barrier();
  if (in_image && !IS_D(FIN[li]))
    atomicOr(holes, 1u);
  barrier();
  if (li == 0)
    reach = 0u;
  barrier();
  if (holes != 0u) {
    // A hole is filled only from valid pixels within FILL_R * FILL_ROUNDS of it: if the
    // region the rounds read holds none (a flat area where the filter found nothing),
    // the tile keeps its holes; this bounds the work of large unfillable areas to one
    // read of the region instead of every round on it
    const int RW = 16 + 2 * FILL_R * FILL_ROUNDS;
    for (int i = li; i < RW * RW; i += 256) {
      ivec2 p = tile - FILL_R * FILL_ROUNDS + ivec2(i % RW, i / RW);
      if (inside(p) && imageLoad(src, ivec3(p, layer)).w > 0.0) {
        atomicOr(reach, 1u);
        break;
      }
    }
  }
  barrier();
  if (holes != 0u && reach != 0u) {   // slow path: all rounds on the shrinking regions
    for (int k = 1; k < FILL_ROUNDS; k++)
      fill_round(k, tile - FILL_R * (FILL_ROUNDS - k), L_OF(k), false);
    fill_round(FILL_ROUNDS, tile, 16, false);
  }
#endif
  if (!in_image)
    return;
  float s = FIN[li];
  if (cur.w > 0.0 || !IS_D(s))
    imageStore(dst, g, cur);
  else
    imageStore(dst, g, vec4(s, cur.y, cur.z, 1.0));
}
