#version 450
// Quadrature filter (docs/algorithm.md §3): complex row kernel, real column kernel,
// clamp-to-edge, both images at once. A 16x16 tile plus a RADIUS halo is loaded into
// shared memory, filtered along rows there, then along columns.
// Also writes this workgroup's sums of |qL| and |qR| for the magnitude gate (§4).
#include "common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;
layout(rg32f, binding = 0) readonly uniform image2DArray src;
layout(rgba32f, binding = 1) writeonly uniform image2DArray dst;
layout(std430, binding = 2) buffer Partials { vec2 partial[]; };
uniform ivec2 size;
const float h_re[2 * RADIUS + 1] = H_RE;   // taps computed in double on the host (§4.1)
const float h_im[2 * RADIUS + 1] = H_IM;
const float v[2 * RADIUS + 1] = V_TAPS;
uniform int partial_base;   // index of this level's first partial

#define TW (16 + 2 * RADIUS)
shared vec2 tile[TW][TW];          // [row][col] intensities (L, R)
shared vec4 rows[TW][16];          // row-filtered: (L re, L im, R re, R im)
shared vec2 red[256];

void main()
{
  ivec2 lid = ivec2(gl_LocalInvocationID.xy);
  ivec2 origin = ivec2(gl_WorkGroupID.xy) * 16 - RADIUS;
  int layer = int(gl_GlobalInvocationID.z);
  for (int i = lid.y * 16 + lid.x; i < TW * TW; i += 256) {
    int ty = i / TW, tx = i % TW;
    ivec2 p = clamp(origin + ivec2(tx, ty), ivec2(0), size - 1);
    tile[ty][tx] = imageLoad(src, ivec3(p, layer)).rg;
  }
  barrier();
  for (int ty = lid.y; ty < TW; ty += 16) {
    vec4 acc = vec4(0.0);
    for (int k = 0; k <= 2 * RADIUS; k++) {
      vec2 s = tile[ty][lid.x + k];
      acc += vec4(s.x * h_re[k], s.x * h_im[k], s.y * h_re[k], s.y * h_im[k]);
    }
    rows[ty][lid.x] = acc;
  }
  barrier();
  vec4 q = vec4(0.0);
  for (int k = 0; k <= 2 * RADIUS; k++)
    q += v[k] * rows[lid.y + k][lid.x];
  ivec2 g = ivec2(gl_GlobalInvocationID.xy);
  bool inside = g.x < size.x && g.y < size.y;
  if (inside)
    imageStore(dst, ivec3(g, layer), q);
  red[lid.y * 16 + lid.x] = inside ? vec2(length(q.xy), length(q.zw)) : vec2(0.0);
  barrier();
  for (int s = 128; s > 0; s >>= 1) {
    if (lid.y * 16 + lid.x < s)
      red[lid.y * 16 + lid.x] += red[lid.y * 16 + lid.x + s];
    barrier();
  }
  if (lid.x == 0 && lid.y == 0) {
    int groups = int(gl_NumWorkGroups.x * gl_NumWorkGroups.y);
    int gi = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    partial[partial_base + layer * groups + gi] = red[0];
  }
}
