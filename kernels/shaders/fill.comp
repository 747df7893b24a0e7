#version 450
// Hole fill (docs/algorithm.md §9), one round, rows and columns in one pass: src holds
// the state (d, certainty, sigma_d, v) of the round's start, dst receives it after the
// round (Jacobi: every pixel reads the start state, so src and dst are different images).
// A pixel with v = 0 whose Gaussian-weighted sum of v over the window exceeds 1e-6 takes
// (G * v d) / (G * v) and v = 1; every other pixel is copied. A workgroup loads (v d, v)
// of its 16x16 tile plus a FILL_R halo (0 outside the image: normalized convolution),
// filters rows and then columns in shared memory (the same sums in the same order as a
// row pass and a column pass that skip the outside). Early exit: a tile without holes
// only copies. Any number of layers (pairs x directions).
layout(local_size_x = 16, local_size_y = 16) in;
layout(rgba32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
uniform ivec2 size;

const float taps[2 * FILL_R + 1] = FILL_TAPS;
#define TW (16 + 2 * FILL_R)
shared vec2 vd[TW][TW];      // (v d, v) at (origin + (tx, ty))
shared vec2 rows[TW][16];    // rows filtered, at the tile's columns
shared uint holes;

void main()
{
  ivec2 lid = ivec2(gl_LocalInvocationID.xy);
  int li = lid.y * 16 + lid.x;
  ivec2 tile = ivec2(gl_WorkGroupID.xy) * 16;
  int layer = int(gl_WorkGroupID.z);
  ivec3 g = ivec3(tile + lid, layer);
  bool inside = g.x < size.x && g.y < size.y;
  vec4 cur = inside ? imageLoad(src, g) : vec4(0.0, 0.0, 0.0, 1.0);
  if (li == 0)
    holes = 0u;
  barrier();
  if (!(cur.w > 0.0))
    atomicOr(holes, 1u);
  barrier();
  if (holes == 0u) {   // nothing to fill in this tile: copy
    if (inside)
      imageStore(dst, g, cur);
    return;
  }
  ivec2 origin = tile - FILL_R;
  for (int i = li; i < TW * TW; i += 256) {
    ivec2 p = origin + ivec2(i % TW, i / TW);
    vec2 s = vec2(0.0);
    if (all(greaterThanEqual(p, ivec2(0))) && all(lessThan(p, size))) {
      vec4 q = imageLoad(src, ivec3(p, layer));
      s = vec2(q.w * q.x, q.w);
    }
    vd[i / TW][i % TW] = s;
  }
  barrier();
  for (int i = li; i < TW * 16; i += 256) {
    int ty = i / 16, tx = i % 16;
    vec2 acc = vec2(0.0);
    for (int k = 0; k <= 2 * FILL_R; k++)
      acc += taps[k] * vd[ty][tx + k];
    rows[ty][tx] = acc;
  }
  barrier();
  if (!inside)
    return;
  if (cur.w > 0.0) {
    imageStore(dst, g, cur);
    return;
  }
  vec2 acc = vec2(0.0);
  for (int k = 0; k <= 2 * FILL_R; k++)
    acc += taps[k] * rows[lid.y + k][lid.x];
  if (acc.y > 1e-6)
    cur = vec4(acc.x / acc.y, cur.y, cur.z, 1.0);
  imageStore(dst, g, cur);
}
