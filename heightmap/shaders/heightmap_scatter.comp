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
// Layer BINS / 2 holds the pair mask (every point); layer BINS / 2 + 1 the body mask: the
// pair's bit where one of its points stands BODY_Z or higher (a body's trunk, not the
// grass nor its noise).
//
// CARVE (free-space carving): the ray from the camera to a point passed through the cells
// in front of it, so nothing in those cells stood as high as the ray did there. Layer
// BINS / 2 + 2 keeps, per cell, the lowest height at which a ray crossed it (encoded
// CEIL_KEY - mm, imageAtomicMax; 0 = no ray), sampled every half cell along the ray from
// where it comes down to the histogram's top (BINS * BIN_HEIGHT) to a gap before the
// point: CARVE_GAP_MIN m plus CARVE_SIGMAS range errors of the point (Z^2 / (f B) x the
// disparity noise), so that a point measured too far does not carve the body it is on.
// The resolve drops a cell's bins above its ceiling + CARVE_TOL. A pair's smear along its
// view lies on its own rays (they do not carve it); another pair's rays to the ground
// behind do.
//
// SEE_THROUGH: the ray from the camera to a point of the ground (lower than u_see_height)
// came down through the cells in front of it below u_see_height m, so that pair saw no
// body standing there. Layer BINS / 2 + 3 holds, per cell, the pairs whose rays crossed
// it so (imageAtomicOr of the pair's bit), sampled every half cell from where the ray
// comes down to u_see_height to a gap before the point of SEE_GAP_MIN m plus CARVE_SIGMAS
// range errors (a high camera's ray comes down from u_see_height over a short stretch:
// 0.5 m high, 37 m up and 38 m away, 0.5 m before its point; carving's 0.5 m gap would
// leave none of it). The blob
// finder drops a blob in which no cell holds more pairs' body points than pairs that saw
// through it low (blob-checks.c, see_through): a pair's smear lies on its own rays to the
// body, another pair's rays to the grass behind it pass through; a body stops them.
//
// Goal frames (u_goal.x > 0): the two goals of a football pitch are objects as tall as a
// player, standing where players stand, and the range error smears their posts and bar
// into blobs of a player's size. A point is the goal's when the ray from the camera to
// it passes within GOAL_REACH (the frame's radius, a margin and 2 px of the point's
// footprint, for the disparity window's spread) of a post or the bar, at a range within
// GOAL_GAP_MIN m plus GOAL_SIGMAS range errors of the point's, or up to u_goal_shadow m
// more beyond the frame (the disparity window mixes a thin post or bar with what lies
// behind it, so its pixels' range comes out too far, and their points stand in the
// frame's shadow), or up to u_goal_front m more in front of it (mixed with nearer
// ground): such a pixel sees the frame, and its point is dropped (it neither counts
// nor sets the pair's bit). The
// frames are given in pitch coordinates: goal lines at x = -u_goal.x and +u_goal.x, posts
// at y = +-u_goal.y, bar at z = u_goal.z, posts and bar of radius u_goal.w.

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
uniform float u_disparity_noise;   // px: the range error of carving and the goal frames
uniform vec4 u_goal;               // goal line x, post y, bar z, radius; x 0 = no goals
uniform float u_goal_shadow;       // m beyond a frame along a grazing ray, still the frame's
uniform float u_goal_front;        // m in front of a frame along a grazing ray, the same
#if defined(CARVE) || defined(SEE_THROUGH)
uniform int u_carve_stride;        // rays of every stride-th pixel in x and y (the host
                                   // keeps about 960 x 540 of them a frame)
#endif
#ifdef SEE_THROUGH
uniform float u_see_height;        // m: rays this low or lower see through a cell
#endif

#ifndef BINS
#define BINS 16
#endif
#ifndef BIN_HEIGHT
#define BIN_HEIGHT 0.2
#endif
#define Z_MIN -1.0
#define BODY_Z 0.6
#define CEIL_KEY 65535u
#define SEE_LAYER (BINS / 2 + 3)
#define CARVE_GAP_MIN 0.5
#define CARVE_SIGMAS 3.0
#define CARVE_MAX_STEPS 4096
#define SEE_GAP_MIN 0.1
#ifdef SEE_THROUGH
#define RAY_MIN_CONFIDENCE min(u_min_confidence, 1.0)   // the engine's filled pixels too
#else
#define RAY_MIN_CONFIDENCE u_min_confidence
#endif
#define GOAL_MARGIN 0.1
#define GOAL_FOOTPRINT_PX 2.0
#define GOAL_GAP_MIN 0.3
#define GOAL_SIGMAS 3.0

// The distance between the segment from c to c + s_max u (u a unit vector) and the
// segment from a to b, and the ray's parameter s at the closest points (clamped to both
// segments; parallel segments: the closest point nearest a).
float ray_segment(vec3 c, vec3 u, float s_max, vec3 a, vec3 b, out float s)
{
  vec3 v = b - a, w = c - a;
  float vv = dot(v, v), uv = dot(u, v), uw = dot(u, w), vw = dot(v, w);
  float den = vv - uv * uv;   // |u| = 1: vv (1 - cos^2)
  float t = den > 1e-9 * vv ? clamp((vw - uv * uw) / den, 0.0, 1.0) : 0.0;
  s = clamp(t * uv - uw, 0.0, s_max);
  t = clamp((s * uv + vw) / vv, 0.0, 1.0);
  s = clamp(t * uv - uw, 0.0, s_max);
  return length(c + s * u - (a + t * v));
}

// Whether the ray from c to the point q, measured at range error sigma, sees a goal frame.
bool sees_goal(vec3 c, vec3 q, float sigma, float footprint)
{
  vec3 d = q - c;
  float range = length(d);
  if (!(range > 0.0))
    return false;
  vec3 u = d / range;
  float gap = GOAL_GAP_MIN + GOAL_SIGMAS * sigma;
  float behind = gap + u_goal_shadow;   // the point beyond the frame by up to this
  float front = gap + u_goal_front;     // or in front of it by up to this
  float reach = u_goal.w + GOAL_MARGIN + GOAL_FOOTPRINT_PX * footprint * range;
  for (int g = 0; g < 2; g++) {
    float x = g == 0 ? -u_goal.x : u_goal.x;
    vec3 p0 = vec3(x, -u_goal.y, 0.0), p1 = vec3(x, u_goal.y, 0.0);
    vec3 t0 = vec3(x, -u_goal.y, u_goal.z), t1 = vec3(x, u_goal.y, u_goal.z);
    float s;
    if ((ray_segment(c, u, range + front, p0, t0, s) <= reach && s >= range - behind) ||
        (ray_segment(c, u, range + front, p1, t1, s) <= reach && s >= range - behind) ||
        (ray_segment(c, u, range + front, t0, t1, s) <= reach && s >= range - behind))
      return true;
  }
  return false;
}

#if defined(CARVE) || defined(SEE_THROUGH)
// The cells the ray from the camera centre c to the point q crosses below height z_top,
// sampled every half cell up to `gap` m (horizontal) before q: with `ceiling` (carving)
// each keeps the lowest height a ray crossed it at, else (SEE_THROUGH) the pair's bit in
// its see-through layer.
void mark_ray(vec3 c, vec3 q, float z_top, float gap, bool ceiling)
{
  vec2 dxy = q.xy - c.xy;
  float len = length(dxy);
  if (!(c.z > z_top) || !(q.z < z_top) || !(len > gap))
    return;
  float t0 = (z_top - c.z) / (q.z - c.z);   // 0 < t0 < 1: the ray comes down to z_top
  float t1 = 1.0 - gap / len;
  if (!(t1 > t0))
    return;
  float dt = 0.5 / (u_grid.z * len);        // half a cell in t
  int n = min(int(ceil((t1 - t0) / dt)), CARVE_MAX_STEPS);
  for (int i = 0; i <= n; i++) {
    float t = min(t0 + float(i) * dt, t1);
    vec3 r = c + t * (q - c);
    vec2 cf = (r.xy - u_grid.xy) * u_grid.z;
    if (!(cf.x >= 0.0 && cf.y >= 0.0 && cf.x < float(u_cells.x) && cf.y < float(u_cells.y)))
      continue;
    ivec2 cell = min(ivec2(cf), u_cells - 1);
    if (ceiling)
      imageAtomicMax(u_bins, ivec3(cell, BINS / 2 + 2),
                     CEIL_KEY - uint(clamp(r.z, 0.0, z_top) * 1000.0));
    else
      imageAtomicOr(u_bins, ivec3(cell, SEE_LAYER), uint(u_pair_bit));
  }
}
#endif

void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= u_size.x || p.y >= u_size.y)
    return;
  int v = imageLoad(u_disparity, ivec3(p, 0)).r;
  if (v == -32768)
    return;
  // below u_min_confidence a pixel is not a point of the map; with SEE_THROUGH its ray
  // may still see through cells (RAY_MIN_CONFIDENCE: the engine's filled pixels too)
  bool counted = true;
  if (u_has_confidence != 0) {
    float c = imageLoad(u_confidence, ivec3(p, 0)).r * 255.0;
    counted = c + 0.5 >= u_min_confidence;
    if (c + 0.5 < RAY_MIN_CONFIDENCE)
      return;
  }
  vec3 q;
  if (!heightmap_pixel_to_pitch(vec2(p), float(v) * u_scale, q))
    return;
  if (!(q.z >= Z_MIN))
    return;
  // the point's depth Z and its range error: Z = f / w, w = d / B + Q33, f B = Q23 / Q32
  float w = u_q[14] * (float(v) * u_scale) + u_q[15];
  float fb = u_q[11] / u_q[14];
  float z = u_q[11] / w;
  float sigma = fb > 0.0 ? z * z / fb * u_disparity_noise : 0.0;
  vec3 centre = vec3(u_pose[9], u_pose[10], u_pose[11]);
#ifdef CARVE
  if (counted && p.x % u_carve_stride == 0 && p.y % u_carve_stride == 0)
    mark_ray(centre, q, float(BINS) * BIN_HEIGHT, CARVE_GAP_MIN + CARVE_SIGMAS * sigma, true);
#endif
  // a pixel's footprint per metre of range: 1 / f (Q23 = f)
  if (u_goal.x > 0.0 && sees_goal(centre, q, sigma, 1.0 / abs(u_q[11])))
    return;
#ifdef SEE_THROUGH
  if (p.x % u_carve_stride == 0 && p.y % u_carve_stride == 0)
    mark_ray(centre, q, u_see_height, SEE_GAP_MIN + CARVE_SIGMAS * sigma, false);
  if (!counted)
    return;
#endif
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
  if (q.z >= BODY_Z)
    imageAtomicOr(u_bins, ivec3(cell, BINS / 2 + 1), uint(u_pair_bit));
}
