/* stereo-passes.c: one function per GPU stage of the filter (docs/algorithm.md), each a
 * GpuPass whose constants (taps, thresholds, window sizes) are compile-time defines, so
 * that engines with the same parameters share the compiled programs (the defines:
 * stereo-pass-defines.c). */
#include "kernels/stereo-passes.h"
#include "kernels/stereo-pass-defines.h"

#include <gio/gio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GResource *stereod_shaders_get_resource(void);


typedef enum {
  PASS_INGEST,
  PASS_INGEST_RECTIFY,
  PASS_REDUCE,
  PASS_QUADRATURE,
  PASS_SEARCH,
  PASS_SEARCH_TILED,
  PASS_REFINE,         /* search.comp with SEARCH_REFINE (§5b), made when params->refine */
  PASS_REFINE_TILED,
  PASS_PHASE,
  PASS_PHASE_TERMS,    /* the split phase round (software renderers): terms ... */
  PASS_PHASE_SPLIT,    /* ... then the rest from them */
  PASS_PHASE_ROWS,     /* the split round by rows: terms and the row filter ... */
  PASS_PHASE_COLS,     /* ... then the column filter and the solve */
  PASS_FILL,
  PASS_FILL_REST,      /* the last dispatch of fill rounds when they do not divide evenly */
  PASS_POST,
  PASS_POST_COARSE,    /* post.comp with the L-R check against level 1's right view */
  PASS_MEDIAN,         /* the 9 x 3 median of the filled pixels (densify) */
  PASS_PACK,
  PASS_COUNT
} PassId;

typedef struct {
  const char *file;
  const char *variant;       /* extra defines of this variant, or NULL */
  unsigned groups;           /* D_* */
  const char *uniforms[GPU_PASS_MAX_UNIFORMS];
} PassInfo;

/* Uniform handles: the index in PassInfo.uniforms. */
enum { U_SIZE, U_SIZE2, U_3, U_4, U_5, U_6 };

/* phase.comp's programs: one constant set and uniform list, their variant's defines */
#define PHASE_PASS(variant)                                                              \
  { "phase.comp", (variant), D_PHASE | D_SMOOTH | D_LEVELS | D_DIRS | D_QUAD,          \
    { "size", "prior_size", "level", "upsample", "d_range", "guard", "z_step" } }

static const PassInfo pass_info[PASS_COUNT] = {
  [PASS_INGEST] = { "ingest.comp", NULL, 0, { "size0", "size1" } },
  [PASS_INGEST_RECTIFY] = { "ingest.comp", "#define RECTIFY 1\n", 0, { "size0", "size1" } },
  [PASS_REDUCE] = { "reduce.comp", NULL, 0, { "src_size", "dst_size" } },
  [PASS_QUADRATURE] = { "quadrature.comp", NULL, D_FILTER | D_LEVELS | D_QUAD,
                        { "lev0", "lev1", "lev2", "start", "base", "inv_pixels" } },
  [PASS_SEARCH] = { "search.comp", NULL, D_SEARCH | D_DIRS,
                    { "size", "t_min", "t_max", "prior_size", "ground_scale" } },
  [PASS_SEARCH_TILED] = { "search.comp", "#define SEARCH_TILED 1\n", D_SEARCH | D_DIRS,
                          { "size", "t_min", "t_max", "prior_size", "ground_scale" } },
  [PASS_REFINE] = { "search.comp", "#define SEARCH_REFINE 1\n", D_SEARCH | D_DIRS,
                    { "size", "t_min", "t_max", "prior_size", "ground_scale" } },
  [PASS_REFINE_TILED] = { "search.comp", "#define SEARCH_TILED 1\n#define SEARCH_REFINE 1\n",
                          D_SEARCH | D_DIRS, { "size", "t_min", "t_max", "prior_size", "ground_scale" } },
  [PASS_PHASE] = PHASE_PASS(NULL),
  [PASS_PHASE_TERMS] = PHASE_PASS("#define TERMS_ONLY 1\n"),
  [PASS_PHASE_SPLIT] = PHASE_PASS("#define FROM_TERMS 1\n"),
  [PASS_PHASE_ROWS] = PHASE_PASS("#define TERMS_ONLY 1\n#define TERMS_ROWS 1\n"),
  [PASS_PHASE_COLS] = PHASE_PASS("#define FROM_ROWS 1\n"),
  [PASS_FILL] = { "fill.comp", NULL, D_FILL, { "size" } },
  [PASS_FILL_REST] = { "fill.comp", NULL, D_FILL | D_FILL_REST, { "size" } },
  [PASS_POST] = { "post.comp", NULL, D_POST | D_DIRS, { "size" } },
  [PASS_POST_COARSE] = { "post.comp", "#define LR_COARSE 1\n", D_POST | D_DIRS,
                         { "size", "coarse_size" } },
  [PASS_MEDIAN] = { "median.comp", NULL, 0, { "size" } },
  [PASS_PACK] = { "pack.comp", NULL, D_POST,
                  { "size", "s16", "layer_words", "conf_offset", "depth_offset" } },
};

typedef enum { PHASE_SPLIT_NEVER, PHASE_SPLIT_LARGE, PHASE_SPLIT_ALWAYS } PhaseSplit;

struct StereoPasses {
  GpuContext *gpu;
  StereoParams params;
  int layers;                /* pairs of the current batch (0: the images' layers) */
  int phase_tile[2];         /* outputs per workgroup of the phase pass (its TILE_W, TILE_H) */
  int cols_tile_h;           /* ... and rows of the split round's column pass (COLS_TILE_H) */
  int rows_out;              /* outputs per workgroup of the split round's row pass */
  PhaseSplit phase_split;    /* where a phase round is two passes (terms, then the rest) */
  bool phase_rows;           /* the split round filters rows in its first pass */
  bool lr_coarse;            /* the L-R check reads level 1's right view */
  int quad_tile;             /* the quadrature pass's tile width (its QUAD_TILE_W) */
  GpuPass *pass[PASS_COUNT];
  bool search_tiled;
  GpuBuffer *layer_params;   /* the batch's StereoLayerParams (the pitch-plane prior) */
};

void
stereo_passes_set_layers(StereoPasses *ps, int pairs)
{
  g_return_if_fail(ps && pairs >= 0);
  ps->layers = pairs;
}

void
stereo_passes_set_layer_params(StereoPasses *ps, GpuBuffer *layers)
{
  g_return_if_fail(ps);
  ps->layer_params = layers;
}

void
stereo_passes_free(StereoPasses *ps)
{
  if (!ps)
    return;
  for (int i = 0; i < PASS_COUNT; i++)
    gpu_pass_free(ps->pass[i]);
  g_free(ps);
}


StereoPasses *
stereo_passes_new(GpuContext *gpu, const StereoParams *params, GError **error)
{
  return stereo_passes_new_async(gpu, params, false, error);
}

bool
stereo_passes_poll(StereoPasses *ps, GError **error)
{
  for (int i = 0; i < PASS_COUNT; i++)
    if (ps->pass[i] && !gpu_pass_poll(ps->pass[i], error))
      return false;
  return true;
}

/* Where a phase round runs as two passes (the terms filtered along rows into an image,
 * then the column filter and the solve from it; phase_rows) instead of one. On a
 * software renderer the fused round computes the terms of the tiles' halos again (1.9
 * times the terms), which costs more there than the pass it saves: every level is
 * split. On the H200 the split round is faster too (its second pass holds fewer
 * registers), by less on small levels, where the dispatch it adds counts more: levels
 * of at least PHASE_SPLIT_PIXELS are split. 16 1080p pairs, one round a level: level 0
 * split 4.19 ms (bench/RESULTS.md, 2026-12-02: 8.6 against 10.1 ms for two rounds
 * fused), level 1 (960 x 540) 1.03 split against 1.27 fused, level 2 (480 x 270) 0.25
 * against 0.29 (bench/results/2026-12-06-h200-engine): levels 0 and 1 are split at
 * 1920 x 1080, 15 dispatches a batch (with the split by rows, level 2 split took 0.085
 * ms less a batch on an H100, under 1 %: the rule stays). STEREOD_PHASE_SPLIT=0
 * (never), 1 (every level) or "large" (the GPU rule) overrides. */
#define PHASE_SPLIT_PIXELS (1 << 18)

static PhaseSplit
phase_split(GpuContext *gpu)
{
  const char *env = g_getenv("STEREOD_PHASE_SPLIT");
  if (env)
    return !g_strcmp0(env, "0") ? PHASE_SPLIT_NEVER
         : !g_strcmp0(env, "large") ? PHASE_SPLIT_LARGE : PHASE_SPLIT_ALWAYS;
  return gpu_context_is_software(gpu) ? PHASE_SPLIT_ALWAYS : PHASE_SPLIT_LARGE;
}

static bool
split_level(const StereoPasses *ps, int width, int height)
{
  return ps->phase_split == PHASE_SPLIT_ALWAYS ||
         (ps->phase_split == PHASE_SPLIT_LARGE && (long)width * height >= PHASE_SPLIT_PIXELS);
}

bool
stereo_passes_phase_split(StereoPasses *ps, int width, int height)
{
  return split_level(ps, width, height);
}

StereoPasses *
stereo_passes_new_async(GpuContext *gpu, const StereoParams *params, bool async,
                        GError **error)
{
  g_return_val_if_fail(gpu != NULL && params != NULL, NULL);
  if (!stereo_params_validate(params, error))
    return NULL;
  (void)stereod_shaders_get_resource(); /* keeps the embedded shaders linked in */

  g_autoptr(StereoPasses) ps = g_new0(StereoPasses, 1);
  ps->gpu = gpu;
  ps->params = *params;
  ps->phase_split = phase_split(gpu);
  ps->quad_tile = stereo_quad_tile_width();   /* as the programs' defines, read once */
  /* The split round by rows: its first pass filters the terms along rows (a row segment a
   * workgroup, 2 SMOOTH_R terms of halo), its second reads the row sums of a tile with
   * halo rows only; the former split (STEREOD_PHASE_ROWS=0, benchmarks) read a tile's
   * terms with a halo on all four sides (2.4 terms an output) and filtered rows and
   * columns. On an H100, level 0 of 16 1080p pairs: 1.55 + 1.74 ms against 1.44 + 2.93
   * (bench/results/2026-12-06-h100-variants). */
  ps->phase_rows = g_strcmp0(g_getenv("STEREOD_PHASE_ROWS"), "0") != 0;
  ps->lr_coarse = stereo_params_lr_coarse(params);   /* read once, as the defines */
  for (int i = 0; i < PASS_COUNT; i++) {
    const PassInfo *pi = &pass_info[i];
    if ((i == PASS_REFINE || i == PASS_REFINE_TILED) && !params->refine)
      continue;
    if (i == PASS_MEDIAN && !params->densify)
      continue;
    if (i == PASS_POST_COARSE && !ps->lr_coarse)
      continue;
    bool split_pass = i == PASS_PHASE_TERMS || i == PASS_PHASE_SPLIT ||
                      i == PASS_PHASE_ROWS || i == PASS_PHASE_COLS;
    bool rows_pass = i == PASS_PHASE_ROWS || i == PASS_PHASE_COLS;
    if ((split_pass && ps->phase_split == PHASE_SPLIT_NEVER) ||
        (split_pass && rows_pass != ps->phase_rows) ||
        (i == PASS_PHASE && ps->phase_split == PHASE_SPLIT_ALWAYS))
      continue;
    if (i == PASS_FILL_REST &&
        params->fill_iterations % stereo_fill_rounds_per_pass(params,
                                                       gpu_context_get_max_shared_memory(gpu)) == 0)
      continue;
    g_autofree char *defines = stereo_pass_defines(params, pi->groups, pi->variant,
                                            gpu_context_get_max_shared_memory(gpu));
    g_autofree char *label = g_strdup_printf("stereo/%s%s%s", pi->file,
                                             i == PASS_REFINE || i == PASS_REFINE_TILED
                                               ? " (refine)" : "",
                                             i == PASS_SEARCH_TILED || i == PASS_REFINE_TILED
                                               ? " (tiled)" : "");
    GpuPassParams pp = { .label = label, .resource = pi->file, .defines = defines,
                         .async = async };
    memcpy(pp.uniforms, pi->uniforms, sizeof pp.uniforms);
    if (!(ps->pass[i] = gpu_pass_new(gpu, &pp, error)))
      return NULL;
  }

  {
    g_autofree char *d = stereo_pass_defines(params, D_SMOOTH, NULL,
                                      gpu_context_get_max_shared_memory(gpu));
    const char *tw = strstr(d, "#define TILE_W "), *th = strstr(d, "#define TILE_H ");
    ps->phase_tile[0] = atoi(tw + strlen("#define TILE_W "));
    ps->phase_tile[1] = atoi(th + strlen("#define TILE_H "));
    const char *ch = strstr(d, "#define COLS_TILE_H "), *sr = strstr(d, "#define SMOOTH_R ");
    ps->cols_tile_h = atoi(ch + strlen("#define COLS_TILE_H "));
    ps->rows_out = 256 - 2 * atoi(sr + strlen("#define SMOOTH_R "));
  }

  /* The search stages the other image in shared memory on discrete GPUs; on llvmpipe,
   * where barriers are costly, direct reads are 3x faster (measured, docs/algorithm.md).
   * STEREOD_SEARCH_TILED=0/1 overrides. */
  const char *tiled = g_getenv("STEREOD_SEARCH_TILED");
  ps->search_tiled = tiled ? g_strcmp0(tiled, "0") != 0 : !gpu_context_is_software(gpu);

  if (!gpu_context_check(gpu, "stereo passes setup", error))
    return NULL;
  return g_steal_pointer(&ps);
}

/* ------------------------------------------------------------ dispatch helpers */

#define IMG(i, a) { (i), GPU_ACCESS_##a }
#define BUF(b, a) { (b), GPU_ACCESS_##a }

static void
set_size(GpuPass *p, int u, GpuImage *img)
{
  gpu_pass_set_ivec2(p, u, gpu_image_get_width(img), gpu_image_get_height(img));
}

/* Dispatch over an image's full size and the batch's pairs (all its layers when no
 * batch size is set). */
static void
run_over(StereoPasses *ps, GpuPass *p, GpuPassRun *run, GpuImage *out)
{
  run->size[0] = gpu_image_get_width(out);
  run->size[1] = gpu_image_get_height(out);
  run->size[2] = ps->layers ? ps->layers : gpu_image_get_layers(out);
  gpu_pass_dispatch(p, run);
}

void
stereo_pass_ingest(StereoPasses *ps, GpuImage *src8, GpuImage *map, GpuImage *level0,
                   GpuImage *level1, GpuBuffer *layers)
{
  GpuPass *p = ps->pass[map ? PASS_INGEST_RECTIFY : PASS_INGEST];
  int w0 = gpu_image_get_width(level0), h0 = gpu_image_get_height(level0);
  set_size(p, 0, level0);
  if (level1)
    set_size(p, 1, level1);
  else
    gpu_pass_set_ivec2(p, 1, 0, 0);
  GpuPassRun run = {
    .images = { IMG(src8, READ), IMG(level0, WRITE), IMG(level1 ? level1 : level0, WRITE) },
    .groups = { (w0 + 31) / 32, (h0 + 31) / 32,
                ps->layers ? ps->layers : gpu_image_get_layers(level0) },
  };
  if (!level1)
    run.images[2].image = NULL;
  if (map) {
    g_return_if_fail(layers);
    run.images[3] = (GpuPassImage)IMG(map, READ);
    run.buffers[0] = (GpuPassBuffer)BUF(layers, READ);
  }
  gpu_pass_dispatch(p, &run);
}

void
stereo_pass_reduce(StereoPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuPass *p = ps->pass[PASS_REDUCE];
  set_size(p, 0, src);
  set_size(p, 1, dst);
  GpuPassRun run = { .images = { IMG(src, READ), IMG(dst, WRITE) } };
  run_over(ps, p, &run, dst);
}

int
stereo_pass_quadrature_groups(const StereoPasses *ps, int width, int height)
{
  return ((width + ps->quad_tile - 1) / ps->quad_tile) * ((height + 15) / 16);
}

void
stereo_pass_quadrature(StereoPasses *ps, const StereoQuadLevel *levels, int n,
                       GpuBuffer *partials, GpuBuffer *counters, GpuBuffer *means)
{
  GpuPass *p = ps->pass[PASS_QUADRATURE];
  for (int first = 0; first < n; first += STEREO_QUAD_LEVELS_PER_PASS) {
    int m = MIN(n - first, STEREO_QUAD_LEVELS_PER_PASS);
    GpuPassRun run = { .buffers = { BUF(partials, READ_WRITE), BUF(counters, READ_WRITE),
                                    BUF(means, WRITE) } };
    int start[4] = { 0 }, base[4] = { 0 };
    float inv[4] = { 0 };
    int layers = 0;
    for (int i = 0; i < STEREO_QUAD_LEVELS_PER_PASS; i++) {
      const StereoQuadLevel *l = &levels[first + MIN(i, m - 1)];
      int w = gpu_image_get_width(l->quad), h = gpu_image_get_height(l->quad);
      int lv[4] = { w, h, (w + ps->quad_tile - 1) / ps->quad_tile, l->level };
      gpu_pass_set_ivec4(p, i, lv);
      if (i < m) {
        run.images[i] = (GpuPassImage)IMG(l->img, READ);
        run.images[STEREO_QUAD_LEVELS_PER_PASS + i] = (GpuPassImage)IMG(l->quad, WRITE);
        start[i + 1] = start[i] + stereo_pass_quadrature_groups(ps, w, h);
        base[i] = l->partial_base;
        inv[i] = (float)(1.0 / ((double)w * h));
        layers = gpu_image_get_layers(l->quad);
      } else {
        start[i + 1] = start[i];
      }
    }
    gpu_pass_set_ivec4(p, 3, start);
    gpu_pass_set_ivec4(p, 4, base);
    gpu_pass_set_vec4(p, 5, inv);
    run.groups[0] = start[STEREO_QUAD_LEVELS_PER_PASS];
    run.groups[1] = 1;
    run.groups[2] = ps->layers ? ps->layers : layers;
    gpu_pass_dispatch(p, &run);
  }
}

/* Layers of a state image to dispatch over: the batch's pairs times the directions. */
static int
state_layers(StereoPasses *ps, GpuImage *state)
{
  return ps->layers ? ps->layers * (ps->params.lr_check ? 2 : 1) : gpu_image_get_layers(state);
}

/* One dispatch of search.comp (any of its four programs), both directions; `level` is the
 * level searched (the pitch-plane prior's scale). */
static void
run_search(StereoPasses *ps, GpuPass *p, GpuImage *img, GpuImage *prior, GpuImage *disp,
           int t_min, int t_max, int level)
{
  set_size(p, 0, disp);
  gpu_pass_set_int(p, 1, t_min);
  gpu_pass_set_int(p, 2, t_max);
  gpu_pass_set_float(p, 4, (float)ldexp(1.0, -level));
  GpuPassRun run = { .images = { IMG(img, READ), [2] = IMG(disp, WRITE) } };
  if (ps->params.ground_margin >= 0.0) {
    g_return_if_fail(ps->layer_params);
    run.buffers[0] = (GpuPassBuffer)BUF(ps->layer_params, READ);
  }
  if (prior) {
    set_size(p, 3, prior);
    run.images[3] = (GpuPassImage)IMG(prior, READ);
  }
  run.size[0] = gpu_image_get_width(disp);
  run.size[1] = gpu_image_get_height(disp);
  run.size[2] = state_layers(ps, disp);
  gpu_pass_dispatch(p, &run);
}

void
stereo_pass_search(StereoPasses *ps, GpuImage *img, GpuImage *disp, int t_min, int t_max)
{
  stereo_pass_search_variant(ps, ps->search_tiled, img, disp, t_min, t_max);
}

void
stereo_pass_search_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *disp,
                           int t_min, int t_max)
{
  run_search(ps, ps->pass[tiled ? PASS_SEARCH_TILED : PASS_SEARCH], img, NULL, disp, t_min,
             t_max, stereo_params_start_level(&ps->params));
}

void
stereo_pass_refine(StereoPasses *ps, GpuImage *img, GpuImage *coarse, GpuImage *disp)
{
  stereo_pass_refine_variant(ps, ps->search_tiled, img, coarse, disp);
}

void
stereo_pass_refine_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *coarse,
                           GpuImage *disp)
{
  GpuPass *p = ps->pass[tiled ? PASS_REFINE_TILED : PASS_REFINE];
  g_return_if_fail(p);   /* made only when params->refine */
  run_search(ps, p, img, coarse, disp, (int)floor(ps->params.min_disparity),
             (int)ceil(ps->params.max_disparity), 0);
}

bool
stereo_passes_lr_coarse(const StereoPasses *ps)
{
  return ps->lr_coarse;
}

void
stereo_pass_phase(StereoPasses *ps, GpuImage *quad, GpuImage *prior, bool upsample,
                  GpuImage *out, GpuBuffer *means, GpuBuffer *layers, int level, float guard,
                  GpuImage *scratch, bool left_only)
{
  int w = gpu_image_get_width(out), h = gpu_image_get_height(out);
  int passes[2] = { PASS_PHASE, -1 };
  bool split = split_level(ps, w, h);
  if (split) {
    g_return_if_fail(scratch && gpu_image_get_width(scratch) >= w &&
                     gpu_image_get_height(scratch) >= h);
    passes[0] = ps->phase_rows ? PASS_PHASE_ROWS : PASS_PHASE_TERMS;
    passes[1] = ps->phase_rows ? PASS_PHASE_COLS : PASS_PHASE_SPLIT;
  }
  for (int k = 0; k < 2 && passes[k] >= 0; k++) {
  GpuPass *p = ps->pass[passes[k]];
  double scale = ldexp(1.0, -level);
  set_size(p, 0, out);
  set_size(p, 1, prior);
  gpu_pass_set_int(p, 2, level);
  gpu_pass_set_int(p, 3, upsample ? 1 : 0);
  gpu_pass_set_vec2(p, 4, (float)(ps->params.min_disparity * scale - 2.0),
                    (float)(ps->params.max_disparity * scale + 2.0));
  gpu_pass_set_float(p, 5, guard);
  int dirs = ps->params.lr_check ? 2 : 1;
  gpu_pass_set_int(p, 6, left_only ? dirs : 1);
  bool terms_only = passes[k] == PASS_PHASE_TERMS || passes[k] == PASS_PHASE_ROWS;
  int tw = ps->phase_tile[0], th = ps->phase_tile[1];
  if (passes[k] == PASS_PHASE_TERMS)
    tw = th = 16;
  else if (passes[k] == PASS_PHASE_ROWS)
    tw = ps->rows_out, th = 1;
  else if (passes[k] == PASS_PHASE_COLS)
    th = ps->cols_tile_h;
  GpuPassRun run = {
    .images = { IMG(quad, READ), IMG(prior, READ), IMG(out, WRITE) },
    .buffers = { BUF(means, READ), BUF(layers, READ) },
    .groups = { (w + tw - 1) / tw, (h + th - 1) / th,
                state_layers(ps, out) / (left_only ? dirs : 1) },
  };
  if (terms_only) {
    run.images[2].image = NULL;
    run.images[3] = (GpuPassImage)IMG(scratch, WRITE);
  } else if (split) {
    run.images[3] = (GpuPassImage)IMG(scratch, READ);
  }
  gpu_pass_dispatch(p, &run);
  }
}

int
stereo_pass_fill(StereoPasses *ps, GpuImage *state[2], int cur)
{
  int per = stereo_fill_rounds_per_pass(&ps->params,
                                        gpu_context_get_max_shared_memory(ps->gpu));
  for (int done = 0; done < ps->params.fill_iterations; done += per) {
    GpuPass *p = ps->params.fill_iterations - done >= per ? ps->pass[PASS_FILL]
                                                          : ps->pass[PASS_FILL_REST];
    set_size(p, 0, state[cur]);
    int w = gpu_image_get_width(state[cur]), h = gpu_image_get_height(state[cur]);
    GpuPassRun run = { .images = { IMG(state[cur], READ), IMG(state[1 - cur], WRITE) },
                       .groups = { (w + 15) / 16, (h + 15) / 16, state_layers(ps, state[cur]) } };
    gpu_pass_dispatch(p, &run);
    cur = 1 - cur;
  }
  return cur;
}

void
stereo_pass_post(StereoPasses *ps, GpuImage *disp, GpuImage *intensity, GpuImage *dst,
                 GpuImage *coarse, GpuImage *const *fallback)
{
  GpuPass *p = ps->pass[coarse ? PASS_POST_COARSE : PASS_POST];
  g_return_if_fail(p);
  int n_fb = stereo_params_fallback_levels(&ps->params);
  g_return_if_fail(n_fb == 0 || fallback);
  set_size(p, 0, dst);
  if (coarse)
    set_size(p, 1, coarse);
  GpuPassRun run = {
    .images = { IMG(disp, READ), IMG(intensity, READ), IMG(dst, WRITE), IMG(coarse, READ) },
    .groups = { 1, gpu_image_get_height(dst), ps->layers ? ps->layers : gpu_image_get_layers(dst) },
  };
  for (int s = 0; s < n_fb; s++)   /* levels 1 .. n_fb at image units 4 .. */
    run.images[4 + s] = (GpuPassImage)IMG(fallback[s], READ);
  if (ps->params.ground_margin >= 0.0) {
    g_return_if_fail(ps->layer_params);
    run.buffers[0] = (GpuPassBuffer)BUF(ps->layer_params, READ);
  }
  gpu_pass_dispatch(p, &run);
}

void
stereo_pack_layout(int width, int height, bool s16, bool depth, StereoPackLayout *layout)
{
  size_t n = (size_t)width * height;
  size_t groups = (n + 3) / 4;   /* the shader writes whole groups of four pixels */
  layout->s16 = s16;
  layout->depth = depth;
  layout->conf_offset = groups * (s16 ? 8 : 16);
  if (!s16) /* float words are written only for existing pixels */
    layout->conf_offset = n * 4;
  layout->depth_offset = layout->conf_offset + groups * 4;
  layout->layer_bytes = layout->depth_offset + (depth ? groups * 8 : 0);
}

void
stereo_pass_pack(StereoPasses *ps, GpuImage *src, GpuImage *med, GpuBuffer *out,
                 const StereoPackLayout *layout, GpuBuffer *layers)
{
  GpuPass *p = ps->pass[PASS_PACK];
  int w = gpu_image_get_width(src), h = gpu_image_get_height(src);
  if (ps->params.densify) {
    g_return_if_fail(med && gpu_image_get_width(med) >= w && gpu_image_get_height(med) >= h);
    GpuPass *m = ps->pass[PASS_MEDIAN];
    set_size(m, 0, src);
    GpuPassRun mr = { .images = { IMG(src, READ), IMG(med, WRITE) },
                      .groups = { (w + 15) / 16, (h + 15) / 16,
                                  ps->layers ? ps->layers : gpu_image_get_layers(src) } };
    gpu_pass_dispatch(m, &mr);
  }
  set_size(p, 0, src);
  gpu_pass_set_int(p, 1, layout->s16 ? 1 : 0);
  gpu_pass_set_int(p, 2, (int)(layout->layer_bytes / 4));
  gpu_pass_set_int(p, 3, (int)(layout->conf_offset / 4));
  gpu_pass_set_int(p, 4, layout->depth ? (int)(layout->depth_offset / 4) : -1);
  size_t quads = ((size_t)w * h + 3) / 4;
  GpuPassRun run = { .images = { IMG(src, READ), IMG(ps->params.densify ? med : NULL, READ) },
                     .buffers = { [4] = BUF(out, WRITE), [5] = BUF(layers, READ) },
                     .size = { (int)quads, 1,
                               ps->layers ? ps->layers : gpu_image_get_layers(src) } };
  gpu_pass_dispatch(p, &run);
}
