#version 450
// heightmap_resolve.comp: the histogram of every cell -> its robust top height.
//
// With n points in the cell, need = max(MIN_POINTS, ceil(top_fraction * n)) points must
// be at or above the top: walking the bins from the highest down, the first bin b where
// the count from the top reaches `need` holds it; inside b the points are taken as spread
// evenly, so the top is the height of the need-th highest of them. NaN when n < MIN_POINTS.
// With MIN_POINTS >= 2 one stray point never sets the height: it needs company in its
// bin or above. CARVE: a cell's bins whose bottom lies CARVE_TOL or more above its
// ceiling (heightmap_scatter.comp: the lowest ray that crossed it) are dropped first.
//
// The top is found in the histograms summed over the (2 r + 1)^2 cells around the cell,
// r = POOL, or u_far_pool for a far cell: one where even the sharpest pair that put a
// point within u_far_pool cells of it measures its range (1 m up) with an error of
// u_far_sigma m or more (D L u_disparity_noise / (f B), D and L the 3-D and horizontal
// distances from the pair's camera: u_cams). A far body's few points are smeared along
// the view over many cells, too few in each for a top; summed, they make one. A far cell
// without points of its own stays empty (the pooling does not grow a blob by its
// radius). The body support is the cell's own points, whatever the pooling.

layout(local_size_x = 16, local_size_y = 16) in;

layout(r32ui, binding = 0) uniform readonly uimage2DArray u_bins;
// The output, read back in one buffer copy: the heights (float bits) of the cells in
// row-major order, then their pair masks (the bins' last layer), then their body support:
// the points from LEG_LO_BIN up to LEG_HI_BIN (0.2-0.6 m: a standing player's shins and
// knees) in the low 16 bits and all points from LEG_LO_BIN up in the high 16 (both
// saturated at 65535; the ground bin not counted), then their body masks (the pairs with a
// point 0.6 m high or more in the cell), then their body bands: the points 0.2-0.6,
// 0.6-1.0, 1.0-1.4 and 1.4-1.8 m high in bytes 0..3 (each saturated at 255), from which
// the blob finder counts a blob's points well below its top (lower_body); with
// SEE_THROUGH then the pairs that saw through each cell low (heightmap_scatter.comp).
layout(std430, binding = 2) writeonly buffer Out { uint u_out[]; };

uniform ivec2 u_cells;
uniform int u_min_points;
uniform float u_top_fraction;
uniform vec4 u_grid;               // x0, y0, cell (m), 0
uniform int u_far_pool;            // cells; <= POOL: no far pooling
uniform float u_far_sigma;         // m
uniform float u_disparity_noise;   // px
uniform float u_cams[4 * MAX_PAIRS];   // per pair: camera centre (pitch m), f B (px m; 0:
                                       // not fused this frame)

#ifndef BINS
#define BINS 16
#endif
#ifndef POOL
#define POOL 0
#endif
#ifndef MAX_PAIRS
#define MAX_PAIRS 32
#endif
#ifndef BIN_HEIGHT
#define BIN_HEIGHT 0.2
#endif
#define CEIL_KEY 65535u
#define LEG_LO_BIN 1
#define LEG_HI_BIN 3   // exclusive
#define CARVE_TOL 0.2
#define BAND_BINS 2    // bins per body band (0.4 m), LEG_LO_BIN up, 4 bands

// The pooling radius of cell p: u_far_pool when it is far (above), else POOL.
int pool_radius(ivec2 p)
{
  if (u_far_pool <= POOL)
    return POOL;
  ivec2 lo = max(p - u_far_pool, ivec2(0)), hi = min(p + u_far_pool, u_cells - 1);
  uint seen = 0u;
  for (int y = lo.y; y <= hi.y; y++)
    for (int x = lo.x; x <= hi.x; x++)
      seen |= imageLoad(u_bins, ivec3(x, y, BINS / 2)).r;
  if (seen == 0u)
    return POOL;
  vec3 q = vec3(u_grid.xy + (vec2(p) + 0.5) * u_grid.z, 1.0);
  float best = 1e30;
  for (int k = 0; k < MAX_PAIRS; k++) {
    float fb = u_cams[4 * k + 3];
    if ((seen & (1u << uint(k))) == 0u || !(fb > 0.0))
      continue;
    vec3 d = q - vec3(u_cams[4 * k], u_cams[4 * k + 1], u_cams[4 * k + 2]);
    best = min(best, length(d) * length(d.xy) * u_disparity_noise / fb);
  }
  return best >= u_far_sigma && best < 1e30 ? u_far_pool : POOL;
}

void main()
{
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  if (p.x >= u_cells.x || p.y >= u_cells.y)
    return;
  uint c[BINS], own[BINS];
  for (int b = 0; b < BINS; b++)
    c[b] = own[b] = 0u;
  int r = pool_radius(p);
  ivec2 lo = max(p - r, ivec2(0)), hi = min(p + r, u_cells - 1);
  for (int y = lo.y; y <= hi.y; y++)
    for (int x = lo.x; x <= hi.x; x++) {
      int keep = BINS;   // bins kept: 0 .. keep - 1
#ifdef CARVE
      uint key = imageLoad(u_bins, ivec3(x, y, BINS / 2 + 2)).r;
      if (key != 0u) {
        float ceiling = float(CEIL_KEY - key) * 0.001 + CARVE_TOL;
        keep = clamp(int(ceil(ceiling / BIN_HEIGHT)), 0, BINS);   // bin b's bottom b * BIN_HEIGHT < ceiling
      }
#endif
      bool self = x == p.x && y == p.y;
      for (int l = 0; l < BINS / 2; l++) {
        uint w = imageLoad(u_bins, ivec3(x, y, l)).r;
        uint w0 = 2 * l < keep ? w & 0xffffu : 0u, w1 = 2 * l + 1 < keep ? w >> 16 : 0u;
        c[2 * l] += w0;
        c[2 * l + 1] += w1;
        own[2 * l] += self ? w0 : 0u;
        own[2 * l + 1] += self ? w1 : 0u;
      }
    }
  uint n = 0u, n_own = 0u;
  for (int b = 0; b < BINS; b++) {
    n += c[b];
    n_own += own[b];
  }
  if (r > POOL && n_own == 0u)
    n = 0u;   // a far cell of no points of its own: empty
  float h = uintBitsToFloat(0x7fc00000u);   // NaN
  if (n >= uint(u_min_points)) {
    uint need = max(uint(u_min_points), uint(ceil(u_top_fraction * float(n))));
    uint above = 0u;
    for (int b = BINS - 1; b >= 0; b--) {
      if (above + c[b] >= need) {
        float rank = float(need - above) - 0.5;   // 0.5 .. c[b] - 0.5 from the bin's top
        h = (float(b + 1) - rank / float(c[b])) * BIN_HEIGHT;
        break;
      }
      above += c[b];
    }
  }
  uint legs = 0u, body = 0u, band[4] = uint[4](0u, 0u, 0u, 0u);
  for (int b = LEG_LO_BIN; b < BINS; b++) {
    body += own[b];
    legs += b < LEG_HI_BIN ? own[b] : 0u;
    int k = (b - LEG_LO_BIN) / BAND_BINS;
    if (k < 4)
      band[k] += own[b];
  }
  uint bands = min(band[0], 255u) | (min(band[1], 255u) << 8) | (min(band[2], 255u) << 16) |
               (min(band[3], 255u) << 24);
  int cell = p.y * u_cells.x + p.x;
  u_out[cell] = floatBitsToUint(h);
  u_out[u_cells.x * u_cells.y + cell] = imageLoad(u_bins, ivec3(p, BINS / 2)).r;
  u_out[2 * u_cells.x * u_cells.y + cell] = min(legs, 65535u) | (min(body, 65535u) << 16);
  u_out[3 * u_cells.x * u_cells.y + cell] = imageLoad(u_bins, ivec3(p, BINS / 2 + 1)).r;
  u_out[4 * u_cells.x * u_cells.y + cell] = bands;
#ifdef SEE_THROUGH
  u_out[5 * u_cells.x * u_cells.y + cell] = imageLoad(u_bins, ivec3(p, BINS / 2 + 3)).r;
#endif
}
