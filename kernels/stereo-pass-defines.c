/* stereo-pass-defines.c: the GLSL defines of the stereo filter's programs (see
 * stereo-pass-defines.h): taps computed in double, thresholds, window and tile sizes, and
 * the shared-memory layouts of fill.comp and post.comp. */
#include "kernels/stereo-pass-defines.h"

#include "kernels/glsl-defines.h"
#include "kernels/stereo-passes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* The slow path of fill.comp runs a round before the last on a square region of side l
 * in strips of sw columns, 256 / sw rows a step (one row sum per invocation): the width
 * of 32, 16, 8 that takes the fewest steps for l (the wider on a tie: fewer reads). */
static int
fill_strip_width(int r, int l)
{
  int best = 32, best_steps = INT_MAX;
  for (int sw = 32; sw >= 8; sw /= 2) {
    int ch = 256 / sw, steps = (l + sw - 1) / sw * ((l + 2 * r + ch - 1) / ch);
    if (steps < best_steps) {
      best = sw;
      best_steps = steps;
    }
  }
  return best;
}

/* The shared memory of fill.comp for radius r and k rounds in one pass: the states of
 * rounds 1 .. k-1 on their regions (or the staged tile; round 1's input rows of a step
 * after round 1's state), the row sums of the tile or a strip's ring, the tile's last
 * state. sw[i]: the strip width of round i + 1. */
typedef struct {
  int s_total, rs_size, bytes;
  int sw[2];
} FillLayout;

static FillLayout
fill_layout(int r, int k)
{
  int tw = 16 + 2 * r;
  FillLayout fl = { .s_total = tw * tw, .rs_size = tw * 16, .sw = { 32, 32 } };
  if (k > 1) {
    int l1 = 16 + 2 * r * (k - 1), l2 = k > 2 ? 16 + 2 * r * (k - 2) : 0;
    for (int i = 0; i < k - 1; i++) {
      fl.sw[i] = fill_strip_width(r, i == 0 ? l1 : l2);
      fl.rs_size = MAX(fl.rs_size, (256 / fl.sw[i] + 2 * r) * fl.sw[i]);
    }
    int in = 256 / fl.sw[0] * (fl.sw[0] + 2 * r);
    fl.s_total = MAX(fl.s_total, l1 * l1 + MAX(l2 * l2, in));
  }
  fl.bytes = fl.s_total * 4 + fl.rs_size * 8 + 256 * 4 + 16;
  return fl;
}

int
stereo_quad_tile_width(void)
{
  /* 32: fewer halo pixels a workgroup loads and filters along rows (2.1 a pixel instead of
   * 2.6 at the default radius 5): on an H100 the quadrature of 16 1080p pairs took 1.47
   * ms against 1.69 with 16 (bench/results/2026-12-06-h100-variants) */
  const char *env = g_getenv("STEREOD_QUAD_TILE");
  return env && atoi(env) == 16 ? 16 : 32;
}

int
stereo_fill_rounds_per_pass(const StereoParams *p, int shared_limit)
{
  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int r = stereo_gauss_taps(p->fill_sigma, taps);
  int k = CLAMP(p->fill_iterations, 1, 3);
  while (k > 1 && fill_layout(r, k).bytes > shared_limit)
    k--;
  return k;
}

/* post.comp's shared memory with its rows staged: the three rows' validity (and with
 * `k` the output row's k), 4 bytes a pixel each, beside the scans' arrays (12 bytes an
 * entry, an entry per invocation in each direction, and with the `grouped` scans one
 * more per group of 32). */
static int
post_shared_bytes(int width, int threads, bool k, bool grouped)
{
  return (k ? 16 : 12) * width + 2 * (threads + (grouped ? threads / 32 : 0)) * 12 + 64;
}

char *
stereo_pass_defines(const StereoParams *p, unsigned groups, const char *variant,
                    int shared_limit)
{
  GString *s = g_string_new(NULL);
  if (groups & (D_FILTER | D_PHASE))
    g_string_append_printf(s, "#define RADIUS %d\n", p->radius);
  if (groups & D_FILTER) {
    double h_re[2 * STEREO_MAX_RADIUS + 1], h_im[2 * STEREO_MAX_RADIUS + 1];
    double v[2 * STEREO_MAX_RADIUS + 1];
    stereo_params_filter_taps(p, h_re, h_im, v);
    glsl_append_array(s, "H_RE", h_re, 2 * p->radius + 1);
    glsl_append_array(s, "H_IM", h_im, 2 * p->radius + 1);
    glsl_append_array(s, "V_TAPS", v, 2 * p->radius + 1);
  }
  if (groups & D_SEARCH) {
    g_string_append_printf(s, "#define SEARCH_R %d\n#define REFINE_R %d\n"
                           "#define REFINE_WINDOW %d\n#define REFINE_PAD %d\n",
                           stereo_params_get_search_radius(p),
                           stereo_params_get_refine_radius(p), STEREO_REFINE_WINDOW,
                           STEREO_REFINE_PAD);
    glsl_append_define_float(s, "WEIGHT_GAMMA", STEREO_SEARCH_WEIGHT_GAMMA);
    /* The candidates a tiled search invocation sums at once: the search's range in
     * groups of at most 12, as even as they come (33 candidates, 1920 x 1080 at 128 px:
     * 3 x 11). The work is its arithmetic: on the H200 (16 1080p pairs) 3 x 11 took
     * 3.26 ms, 5 x 8 (the last group with one candidate) 3.80, 3 x 12 3.43, 3 x 16 4.12,
     * 9 x 4 3.28 (bench/results/2026-12-06-h200-engine). The refinement's ranges are
     * the tiles' own: 8 there. STEREOD_SEARCH_GROUP=N (benchmarks, 2..16) sets both. */
    int t_min, t_max;
    stereo_params_search_range(p, &t_min, &t_max);
    int n = MAX(t_max - t_min + 1, 1), n_groups = (n + 11) / 12;
    int group = MAX((n + n_groups - 1) / n_groups, 2), refine_group = 8;
    const char *sg = g_getenv("STEREOD_SEARCH_GROUP");
    if (sg && atoi(sg) >= 2 && atoi(sg) <= 16)
      group = refine_group = atoi(sg);
    g_string_append_printf(s, "#define SEARCH_GROUP %d\n#define REFINE_GROUP %d\n", group,
                           refine_group);
  }
  if (groups & D_PHASE) {
    double stab = p->tau / p->sigma;
    glsl_append_define_float(s, "OMEGA0", p->omega0);
    glsl_append_define_float(s, "STAB2", stab * stab);
    glsl_append_define_float(s, "KAPPA", p->kappa);
    glsl_append_define_float(s, "GAMMA_EXP", p->gamma);
  }
  if (groups & (D_SMOOTH | D_POST))
    glsl_append_define_float(s, "C_MIN", p->c_min);
  if ((groups & (D_SEARCH | D_POST)) && p->ground_margin >= 0.0)
    glsl_append_define_float(s, "GROUND_MARGIN", p->ground_margin);
  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  if (groups & D_SMOOTH) {
    int r = stereo_gauss_taps(p->smooth_sigma, taps);
    g_string_append_printf(s, "#define SMOOTH_R %d\n", r);
    glsl_append_array(s, "SMOOTH_TAPS", taps, 2 * r + 1);
  }
  if (groups & D_FILL) {
    int r = stereo_gauss_taps(p->fill_sigma, taps);
    g_string_append_printf(s, "#define FILL_R %d\n", r);
    glsl_append_array(s, "FILL_TAPS", taps, 2 * r + 1);
    int per = stereo_fill_rounds_per_pass(p, shared_limit);
    int k = groups & D_FILL_REST ? p->fill_iterations % per : per;
    FillLayout fl = fill_layout(r, MAX(k, 1));
    g_string_append_printf(s, "#define FILL_ROUNDS %d\n#define FILL_S_TOTAL %d\n"
                           "#define FILL_RS_SIZE %d\n#define FILL_SW1 %d\n#define FILL_SW2 %d\n",
                           MAX(k, 1), fl.s_total, fl.rs_size, fl.sw[0], fl.sw[1]);
  }
  if (groups & D_POST) {
    /* post.comp: a workgroup per row, about 2 pixels per invocation (fewer invocations
     * and barriers for narrow images), 32..1024 invocations, as many as let the staged
     * rows fit the shared memory (on the H200 at 1920 x 1080, 16 pairs: 2.23 ms with
     * 1024, 2.64 with 512, 4.12 with 256, 6.47 with 128) */
    /* The row fill's scans: grouped, with three barriers (on the H200 the post pass of 16
     * 1080p pairs takes 1.99 ms, against 2.23 with Hillis-Steele scans,
     * bench/results/2026-12-06-h200-service), or with STEREOD_POST_SCAN=hs (benchmarks)
     * the Hillis-Steele scans; the same carries, both tested */
    bool grouped = g_strcmp0(g_getenv("STEREOD_POST_SCAN"), "hs") != 0;
    int threads = 32;
    while (threads < 1024 && threads * 2 < p->width)
      threads *= 2;
    while (threads > 256 && post_shared_bytes(p->width, threads, false, grouped) > shared_limit)
      threads /= 2;   /* the staged rows fit: fewer invocations */
    /* STEREOD_POST_THREADS=N (benchmarks): N invocations a row (a power of two, 32..1024) */
    const char *pt = g_getenv("STEREOD_POST_THREADS");
    if (pt && atoi(pt) >= 32 && atoi(pt) <= 1024 && (atoi(pt) & (atoi(pt) - 1)) == 0)
      threads = atoi(pt);
    g_string_append_printf(s, "#define LR_CHECK %d\n#define ROW_THREADS %d\n"
                           "#define ROW_CHUNK %d\n", p->lr_check ? 1 : 0, threads,
                           (p->width + threads - 1) / threads);
    /* post.comp's staged rows (3 floats a pixel) beside its scan arrays */
    if (post_shared_bytes(p->width, threads, false, grouped) <= shared_limit &&
        g_strcmp0(g_getenv("STEREOD_POST_STAGED"), "0"))
      g_string_append_printf(s, "#define STAGED 1\n#define STAGE_W %d\n%s", p->width,
                             post_shared_bytes(p->width, threads, true, grouped) <= shared_limit &&
                                 g_strcmp0(g_getenv("STEREOD_POST_STAGE_K"), "0")
                               ? "#define STAGE_K 1\n" : "");
    if (!grouped)
      g_string_append(s, "#define SCAN_HILLIS_STEELE 1\n");
    if (p->median)
      g_string_append(s, "#define MEDIAN 1\n");
    if (p->densify)
      g_string_append(s, "#define DENSIFY 1\n");
    glsl_append_define_float(s, "LR_MAX", p->lr_max);
    glsl_append_define_float(s, "SIGMA_D_MAX", p->sigma_d_max);
    glsl_append_define_float(s, "EDGE_MARGIN", STEREO_DENSIFY_EDGE_MARGIN);
    g_string_append_printf(s, "#define FALLBACK_LEVELS %d\n", stereo_params_fallback_levels(p));
    glsl_append_define_float(s, "FALLBACK_REL", p->coarse_fallback);
  }
  if (groups & D_LEVELS)
    g_string_append_printf(s, "#define MAX_LEVELS %d\n", STEREO_MAX_LEVELS);
  if (groups & D_QUAD)
    g_string_append_printf(s, "#define QUAD_LEVELS %d\n#define QUAD_FORMAT %s\n"
                           "#define QUAD_TILE_W %d\n", STEREO_QUAD_LEVELS_PER_PASS,
                           gpu_format_glsl_layout(STEREO_QUAD_FORMAT), stereo_quad_tile_width());
  if (groups & D_DIRS)
    g_string_append_printf(s, "#define DIRS %d\n", p->lr_check ? 2 : 1);
  if (groups & D_SMOOTH) {
    /* The phase pass's tile: its terms and halo in shared memory (16 bytes a pixel, rows
     * padded to an odd count; phase.comp's register blocking wants TILE_W % 8 == 0 and
     * TILE_H % 4 == 0), within the device's limit (32 KiB on llvmpipe, 48 KiB on
     * NVIDIA). The larger the tile, the fewer terms a fused round computes twice for the
     * halos (32 x 32: 1.9 terms per output at the default radius 6; 32 x 16: 2.4; 16 x 16:
     * 3.1), but the fewer workgroups share an SM: on the H200 32 x 16 is the fastest both
     * fused and split (10.1 and 8.6 ms for the level-0 rounds of 16 1080p pairs; 32 x 32:
     * 13.2 and 10.3; 16 x 16: 10.7 and 9.1; bench/results/2026-12-02-h200-profile). */
    int r = stereo_gauss_taps(p->smooth_sigma, taps);
    static const int tiles[][2] = { { 32, 16 }, { 32, 32 }, { 16, 16 }, { 32, 8 }, { 16, 8 } };
    int tw = 16, th = 8;
    /* STEREOD_PHASE_TILE=WxH (benchmarks): that tile where it fits */
    const char *env = g_getenv("STEREOD_PHASE_TILE");
    int ew = 0, eh = 0;
    if (env && sscanf(env, "%dx%d", &ew, &eh) == 2 && ew > 0 && eh > 0 && ew * eh % 256 == 0 &&
        ew % 8 == 0 && eh % 4 == 0 && ((ew + 2 * r) | 1) * (eh + 2 * r) * 16 <= shared_limit) {
      tw = ew;
      th = eh;
    } else
    for (size_t i = 0; i < G_N_ELEMENTS(tiles); i++)
      if (((tiles[i][0] + 2 * r) | 1) * (tiles[i][1] + 2 * r) * 16 <= shared_limit) {
        tw = tiles[i][0];
        th = tiles[i][1];
        break;
      }
    g_string_append_printf(s, "#define TILE_W %d\n#define TILE_H %d\n", tw, th);
    /* The split round's column pass (FROM_ROWS): TILE_W columns, COLS_TILE_H rows and
     * the 2 SMOOTH_R rows of its halo in shared memory (16 bytes a value). Taller tiles
     * read fewer halo rows (16: 1.75 row sums an output at the default radius 6, 32:
     * 1.4), but 16 was the fastest on an H100: level 0 of 16 1080p pairs 1.74 ms, 1.93
     * with 32, 3.11 with 64 (bench/results/2026-12-06-h100-variants; one task an
     * invocation, less shared memory a workgroup). STEREOD_PHASE_COLS_H=N (benchmarks):
     * N rows where they fit. */
    int ch = 16;
    const char *ce = g_getenv("STEREOD_PHASE_COLS_H");
    if (ce && atoi(ce) >= 4 && atoi(ce) % 4 == 0 && atoi(ce) <= 256)
      ch = atoi(ce);
    while (ch > 4 && tw * (ch + 2 * r) * 16 > shared_limit)
      ch /= 2;
    g_string_append_printf(s, "#define COLS_TILE_H %d\n", ch);
    /* STEREOD_PHASE_SEG=RxC (benchmarks): outputs per invocation of the row and the
     * column filter (divisors of the tile's width and height) */
    const char *seg = g_getenv("STEREOD_PHASE_SEG");
    int sr = 0, sc = 0;
    if (seg && sscanf(seg, "%dx%d", &sr, &sc) == 2 && sr > 0 && sc > 0 && tw % sr == 0 &&
        th % sc == 0)
      g_string_append_printf(s, "#define SEG_R %d\n#define SEG_C %d\n", sr, sc);
  }
  if (variant)
    g_string_append(s, variant);
  return g_string_free(s, FALSE);
}
