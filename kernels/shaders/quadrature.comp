#version 450
// Quadrature filter (docs/algorithm.md §3) of up to QUAD_LEVELS pyramid levels in one
// dispatch, and the mean magnitude of each (§4). Complex row kernel, real column
// kernel, clamp-to-edge, both images at once: a QUAD_TILE_W x 16 tile (an invocation
// QUAD_TILE_W / 16 outputs of a row) plus a RADIUS halo is loaded into shared memory,
// filtered along rows there, then along columns.
// The grid is one row of workgroups per layer: the tiles of level slot 0, then those of
// slot 1, ... (`start`); a workgroup's slot is uniform over it, so it indexes the image
// arrays. Each workgroup writes its sums of |qL| and |qR| (a partial); the last
// workgroup of a level and layer to finish (an atomic counter, reset by it) sums that
// level's partials in a fixed order, as one workgroup would, so the mean is deterministic.
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray src[QUAD_LEVELS];
layout(QUAD_FORMAT, binding = QUAD_LEVELS) writeonly uniform image2DArray dst[QUAD_LEVELS];
layout(std430, binding = 0) coherent buffer Partials { vec2 partial[]; };
layout(std430, binding = 1) coherent buffer Counters { uint counter[]; };  // [layer * MAX_LEVELS + level]
layout(std430, binding = 2) writeonly buffer Means { vec2 mean_mag[]; };  // [layer * MAX_LEVELS + level]
uniform ivec4 lev0;         // slot 0: width, height, tiles along x, level
uniform ivec4 lev1;
uniform ivec4 lev2;
uniform ivec4 start;        // first workgroup of slots 0, 1, 2 and the total
uniform ivec4 base;         // first partial of slots 0, 1, 2
uniform vec4 inv_pixels;    // 1 / (width * height) of slots 0, 1, 2

const float h_re[2 * RADIUS + 1] = H_RE;   // taps computed in double on the host (§4.1)
const float h_im[2 * RADIUS + 1] = H_IM;
const float v[2 * RADIUS + 1] = V_TAPS;

#define QW QUAD_TILE_W
#define NX (QW / 16)                // outputs an invocation, along the row
#define TWX (QW + 2 * RADIUS)
#define TW (16 + 2 * RADIUS)
shared vec2 tile[TW][TWX];         // [row][col] intensities (L, R)
shared vec4 rows[TW][QW];          // row-filtered: (L re, L im, R re, R im)
shared vec2 red[256];
shared bool last;

void main()
{
  int gx = int(gl_WorkGroupID.x);
  int k = gx < start.y ? 0 : gx < start.z ? 1 : 2;
  ivec4 lv = k == 0 ? lev0 : k == 1 ? lev1 : lev2;
  int first = k == 0 ? start.x : k == 1 ? start.y : start.z;
  int groups = (k == 0 ? start.y : k == 1 ? start.z : start.w) - first;
  int pbase = k == 0 ? base.x : k == 1 ? base.y : base.z;
  int t = gx - first;
  ivec2 size = lv.xy;
  ivec2 lid = ivec2(gl_LocalInvocationID.xy);
  int li = lid.y * 16 + lid.x;
  ivec2 tile_xy = ivec2(t % lv.z, t / lv.z) * ivec2(QW, 16);
  ivec2 origin = tile_xy - RADIUS;
  int layer = int(gl_WorkGroupID.z);
  for (int i = li; i < TW * TWX; i += 256) {
    int ty = i / TWX, tx = i % TWX;
    ivec2 p = clamp(origin + ivec2(tx, ty), ivec2(0), size - 1);
    tile[ty][tx] = imageLoad(src[k], ivec3(p, layer)).rg;
  }
  barrier();
  for (int ty = lid.y; ty < TW; ty += 16)
    for (int c = 0; c < NX; c++) {
      int cx = lid.x + 16 * c;
      vec4 acc = vec4(0.0);
      for (int j = 0; j <= 2 * RADIUS; j++) {
        vec2 s = tile[ty][cx + j];
        acc += vec4(s.x * h_re[j], s.x * h_im[j], s.y * h_re[j], s.y * h_im[j]);
      }
      rows[ty][cx] = acc;
    }
  barrier();
  vec2 mag = vec2(0.0);
  for (int c = 0; c < NX; c++) {
    int cx = lid.x + 16 * c;
    vec4 q = vec4(0.0);
    for (int j = 0; j <= 2 * RADIUS; j++)
      q += v[j] * rows[lid.y + j][cx];
    ivec2 g = tile_xy + ivec2(cx, lid.y);
    bool inside = g.x < size.x && g.y < size.y;
    if (inside) {
      imageStore(dst[k], ivec3(g, layer), q);
      mag += vec2(length(q.xy), length(q.zw));
    }
  }
  red[li] = mag;
  barrier();
  for (int s = 128; s > 0; s >>= 1) {
    if (li < s)
      red[li] += red[li + s];
    barrier();
  }
  int ci = layer * MAX_LEVELS + lv.w;
  int pfirst = pbase + layer * groups;
  if (li == 0) {
    partial[pfirst + t] = red[0];
    memoryBarrierBuffer();
    last = atomicAdd(counter[ci], 1u) == uint(groups - 1);
  }
  barrier();
  if (!last)
    return;
  // The last workgroup of this level and layer: every partial is written.
  memoryBarrierBuffer();
  vec2 acc = vec2(0.0);
  for (int i = li; i < groups; i += 256)
    acc += partial[pfirst + i];
  red[li] = acc;
  barrier();
  for (int s = 128; s > 0; s >>= 1) {
    if (li < s)
      red[li] += red[li + s];
    barrier();
  }
  if (li == 0) {
    float inv = k == 0 ? inv_pixels.x : k == 1 ? inv_pixels.y : inv_pixels.z;
    mean_mag[ci] = red[0] * inv;
    counter[ci] = 0u;   // ready for the next frame
  }
}
