#version 450
// Hole fill (docs/algorithm.md §9), FILL_ROUNDS rounds (at most 3) in one pass. A round:
// every pixel with v = 0 whose Gaussian-weighted sum of v over the (2 FILL_R + 1)^2
// window exceeds 1e-6 takes (G * v d) / (G * v) and v = 1, all pixels reading the state
// of the round's start (Jacobi); the convolution is separable, rows then columns, 0
// outside the image. src holds the state (d, certainty, sigma_d, v) before the first
// round, dst receives it after the last (different images). Any number of layers (pairs
// x directions).
//
// A workgroup owns a 16x16 tile. Fast path: a tile without holes is copied; otherwise
// the first round is run for the tile alone, and if no hole is left in it the later
// rounds cannot change it (they only fill holes): written. Slow path (a hole farther
// than FILL_R from every valid pixel): the rounds run on regions around the tile that
// shrink by FILL_R per round (16 + 2 FILL_R (FILL_ROUNDS - k) px for round k), their
// states in shared memory, unless that region holds no valid pixel at all (then no round
// can fill the tile's holes: they are kept). The slow path's rounds before the last walk
// their region in strips, top to bottom, a few rows per step: each row sum is made once
// and kept in a ring of the rows that the step's column sums read, and the first round
// reads the image once per strip (a step's rows at a time, one float per pixel) instead
// of once per tap. Every sum is the one a
// row pass and a column pass over the whole image would make, in the same order, so the
// result does not depend on the path.
layout(local_size_x = 256) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

#if FILL_ROUNDS > 3
#error "fill.comp: at most 3 rounds"
#endif

const float taps[2 * FILL_R + 1] = FILL_TAPS;
#define HOLE 1.0e30          // a state value: no valid d (d values are far smaller)
#define IS_D(s) ((s) < 1.0e29)
#define L_OF(k) (16 + 2 * FILL_R * (FILL_ROUNDS - (k)))   // side of round k's region
// Shared states of rounds 1 .. FILL_ROUNDS - 1, one float each, one after the other
// (FILL_S_TOTAL, from the host); the fast path first stages the tile's input there, the
// first round of the slow path its FILL_CH input rows of a step after round 1's state.
#define BASE_OF(k) ((k) == 1 ? 0 : L_OF(1) * L_OF(1))
#define IN_BASE (L_OF(1) * L_OF(1))
#define TW (16 + 2 * FILL_R)     // the tile and its halo
// Row sums: of one 16 x 16 block of outputs (the tile, 2 FILL_R more rows than it has),
// or the ring of a strip (FILL_RS_SIZE from the host).
shared vec2 RS[FILL_RS_SIZE];
shared float S[FILL_S_TOTAL];
shared float FIN[256];       // the last round's state of the tile
shared uint holes, reach;

ivec2 tile;
int layer;

bool inside(ivec2 p) { return all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size)); }

float load_state(ivec2 p)
{
  if (!inside(p))
    return HOLE;
  vec4 q = imageLoad(src, ivec3(p, layer));
  return q.w > 0.0 ? q.x : HOLE;
}

// The row sum of the taps over S[i .. i + 2 FILL_R] (a state before a round, one float
// per pixel, HOLE outside the image): the sum a row pass over the image makes, in order.
vec2 row_sum(int i)
{
  vec2 acc = vec2(0.0);
  for (int t = 0; t <= 2 * FILL_R; t++) {
    float s = S[i + t];
    acc += taps[t] * (IS_D(s) ? vec2(s, 1.0) : vec2(0.0));
  }
  return acc;
}

// A hole's state s after the round from its column of row sums: RS rows y0 .. y0 +
// 2 FILL_R (rows counted modulo `wrap`, y0 < wrap) at column c of a buffer w wide; the
// sum a column pass makes, in order.
float fill_pixel(float s, int y0, int c, int w, int wrap)
{
  vec2 acc = vec2(0.0);
  int y = y0;
  for (int t = 0; t <= 2 * FILL_R; t++) {
    acc += taps[t] * RS[y * w + c];
    y = y + 1 == wrap ? 0 : y + 1;
  }
  return acc.y > 1e-6 ? acc.x / acc.y : s;
}

// A round on the tile (into FIN) from the state before it on the tile and halo, TW x TW
// at S[base], in one block of 16 x 16 outputs.
void fill_tile(int base)
{
  int li = int(gl_LocalInvocationID.x);
  for (int i = li; i < TW * 16; i += 256) {
    int j = i / 16, c = i % 16;
    RS[j * 16 + c] = row_sum(base + j * TW + c);
  }
  barrier();
  int c = li % 16, r = li / 16;
  float s = S[base + (r + FILL_R) * TW + c + FILL_R];
  if (!IS_D(s) && inside(tile + ivec2(c, r)))
    s = fill_pixel(s, r, c, 16, TW);
  FIN[r * 16 + c] = s;
  barrier();
}

#if FILL_ROUNDS > 1
// Round k < FILL_ROUNDS on its square region (side L = L_OF(k), origin o) into the
// shared state of round k, in strips of sw columns (8, 16 or 32: the fewest steps for L,
// from the host), ch = 256 / sw rows a step. Step n of a strip makes the row sums of rows
// n ch .. + ch - 1 of the region's 2 FILL_R taller input (one per invocation) into a ring
// of ch + 2 FILL_R rows, then the column sums of the ch output rows whose windows that
// completes. Round 1 reads its input ch rows a step (staged at IN_BASE, sw + 2 FILL_R
// wide) and writes it as the state before the round where its outputs go; later rounds
// read round k - 1's state.
void fill_strips(int k, const int sw)
{
  const int ch = 256 / sw, ring = ch + 2 * FILL_R, in_w = sw + 2 * FILL_R;
  int li = int(gl_LocalInvocationID.x);
  int c = li % sw, r = li / sw;
  int L = L_OF(k), Lp = L + 2 * FILL_R;   // the region, the rows of its input
  ivec2 o = tile - FILL_R * (FILL_ROUNDS - k);
  for (int sx = 0; sx < L; sx += sw) {
    bool col = sx + c < L;
    if (k == 1) {
      for (int i = li; i < ch * in_w; i += 256)
        S[IN_BASE + i] = load_state(o + ivec2(sx + i % in_w - FILL_R, i / in_w - FILL_R));
      barrier();
    }
    for (int n = 0; n * ch < Lp; n++) {
      int j = n * ch + r;   // this invocation's row of row sums
      if (col && j < Lp) {
        if (k == 1) {
          RS[(j % ring) * sw + c] = row_sum(IN_BASE + r * in_w + c);
          if (j >= FILL_R && j < L + FILL_R)
            S[(j - FILL_R) * L + sx + c] = S[IN_BASE + r * in_w + c + FILL_R];
        } else {
          RS[(j % ring) * sw + c] = row_sum(BASE_OF(k - 1) + j * Lp + sx + c);
        }
      }
      barrier();
      int q = j - 2 * FILL_R;   // the output row whose last row sum is row j
      if (col && q >= 0 && q < L) {
        float s = k == 1 ? S[q * L + sx + c]
                         : S[BASE_OF(k - 1) + (q + FILL_R) * Lp + sx + c + FILL_R];
        if (!IS_D(s) && inside(o + ivec2(sx + c, q)))
          s = fill_pixel(s, q % ring, c, sw, ring);
        S[BASE_OF(k) + q * L + sx + c] = s;
      }
      // the next step's input rows (disjoint from what is read here)
      if (k == 1)
        for (int i = li; i < ch * in_w; i += 256) {
          int y = (n + 1) * ch + i / in_w;
          if (y < Lp)
            S[IN_BASE + i] = load_state(o + ivec2(sx + i % in_w - FILL_R, y - FILL_R));
        }
      // the next step's row sums overwrite the ring rows read here
      barrier();
    }
  }
}
#endif

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
    S[i] = load_state(p);
  }
  barrier();
  fill_tile(0);
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
    fill_strips(1, FILL_SW1);
#if FILL_ROUNDS > 2
    fill_strips(2, FILL_SW2);
#endif
    fill_tile(BASE_OF(FILL_ROUNDS - 1));
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
