#version 450
// heightmap_scatter.comp: every valid pixel of one pair -> pitch point -> one count in the
// height histogram of its grid cell (image atomics), and the pair's bit in the cell's
// pair mask.
//
// Histogram: HEIGHTMAP_BINS bins of BIN_HEIGHT m over [0, BINS * BIN_HEIGHT); heights
// below 0 count in bin 0 (pitch noise), above the range in the top bin. Points lower
// than Z_MIN are not pitch (reflections, mismatches) and are dropped. Counters are 16 bit,
// two per r32ui texel: layer b / 2 holds bin b in its low (even b) or high (odd b) half.
// A counter stops at 65535 (checked before adding: a race can overshoot by the number of
// concurrent adders, far below the 65536 left between a half and the next).
// Layer BINS / 2 holds the pair mask.

#include "heightmap_common.glsl"

layout(local_size_x = 16, local_size_y = 16) in;

layout(r16i, binding = 0) uniform readonly iimage2DArray u_disparity;
layout(r8, binding = 1) uniform readonly image2DArray u_confidence;
layout(r32ui, binding = 2) uniform uimage2DArray u_bins;

uniform ivec2 u_size;            // input size, px
uniform float u_scale;           // px per disparity unit
uniform int u_has_confidence;    // 0: every valid pixel is used
uniform float u_min_confidence;  // 0..255
uniform vec4 u_grid;             // x0, y0, 1 / cell, unused
uniform ivec2 u_cells;           // grid size
uniform int u_pair_bit;       // 1 << pair, as a bit pattern

#ifndef BINS
#define BINS 16
#endif
#ifndef BIN_HEIGHT
#define BIN_HEIGHT 0.2
#endif
#define Z_MIN -1.0

void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= u_size.x || p.y >= u_size.y)
    return;
  int v = imageLoad(u_disparity, ivec3(p, 0)).r;
  if (v == -32768)
    return;
  if (u_has_confidence != 0) {
    float c = imageLoad(u_confidence, ivec3(p, 0)).r * 255.0;
    if (c + 0.5 < u_min_confidence)
      return;
  }
  vec3 q;
  if (!heightmap_pixel_to_pitch(vec2(p), float(v) * u_scale, q))
    return;
  if (!(q.z >= Z_MIN))
    return;
  vec2 cf = (q.xy - u_grid.xy) * u_grid.z;
  if (!(cf.x >= 0.0 && cf.y >= 0.0 && cf.x < float(u_cells.x) && cf.y < float(u_cells.y)))
    return;
  ivec2 cell = min(ivec2(cf), u_cells - 1);
  int bin = clamp(int(floor(q.z / BIN_HEIGHT)), 0, BINS - 1);
  ivec3 at = ivec3(cell, bin >> 1);
  uint shift = uint(bin & 1) * 16u;
  uint count = (imageLoad(u_bins, at).r >> shift) & 0xffffu;
  if (count < 0xffffu)
    imageAtomicAdd(u_bins, at, 1u << shift);
  imageAtomicOr(u_bins, ivec3(cell, BINS / 2), uint(u_pair_bit));
}
