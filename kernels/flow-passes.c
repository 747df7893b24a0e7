/* flow-passes.c: one function per GPU stage of the optical flow (docs/optical-flow.md),
 * each a GpuPass whose per-engine constants (taps, gates, exponents, thresholds) are
 * compile-time defines, so that engines with the same parameters share the compiled
 * programs; what changes between dispatches (sizes, levels, offsets) is uniforms. */
#include "kernels/flow-passes.h"
#include "kernels/glsl-defines.h"

#include <gio/gio.h>
#include <math.h>
#include <string.h>

GResource *stereod_shaders_get_resource(void);

/* Which groups of constants a pass's program needs (its identity is its text). */
enum {
  D_BANK = 1 << 0,      /* RADIUS, TAPS, ORIENT, ROW_KERNELS, ROW_LAYERS, the bank's taps */
  D_FREQ = 1 << 1,      /* ORIENT, FREQ_U, FREQ_V, GRAD_INVALID */
  D_FEATURES = 1 << 2,  /* STAB2 */
  D_TERMS = 1 << 3,     /* KAPPA, LOCAL_FREQUENCY (the exponents are uniforms: flow_terms.comp) */
  D_SMOOTH = 1 << 4,    /* ROWS_R, ROWS_TAPS with the applicability Gaussian, ROWS_MODE 0 */
  D_FILL_ROWS = 1 << 5, /* the same with the hole-fill Gaussian, ROWS_MODE 1 */
  D_SOLVE = 1 << 6,     /* ORIENT, SMOOTH_R, SMOOTH_TAPS, C_MIN, LAMBDA, DET_MIN */
  D_FILL = 1 << 7,      /* FILL_R, FILL_TAPS */
  D_FB = 1 << 8,        /* FB_MAX */
  D_PACK = 1 << 9,      /* FLOW_UNKNOWN */
  D_LEVELS = 1 << 10,   /* MAX_LEVELS */
};

typedef enum {
  PASS_INGEST,
  PASS_REDUCE,
  PASS_REDUCE_U8,      /* flow_reduce.comp reading the 8-bit frame (the ingest, §1) */
  PASS_ROWS,
  PASS_ROWS_U8,        /* flow_rows.comp reading the 8-bit frame */
  PASS_COLUMNS,
  PASS_FEATURES,
  PASS_FEATURES_MEAN,  /* flow_features.comp with the level's means (the last workgroup) */
  PASS_MEAN,
  PASS_TERMS,
  PASS_TERMS_MEDIAN,   /* flow_terms.comp with the prior computed: the 3x3 median (§12) */
  PASS_TERMS_UPSAMPLE, /* ... the upsampled coarser level */
  PASS_SMOOTH_ROWS,    /* flow_smooth_rows.comp with the applicability filter (§6) */
  PASS_FILL_ROWS,      /* the same file with the hole-fill filter (§7) */
  PASS_SOLVE,
  PASS_FILL,
  PASS_MEDIAN,
  PASS_UPSAMPLE,
  PASS_FB,
  PASS_FB_MEDIAN,      /* the check of the forward flow's 3x3 median, computed there */
  PASS_PACK,
  PASS_COUNT
} PassId;

typedef struct {
  const char *file;
  const char *variant;       /* extra defines of this variant, or NULL */
  unsigned groups;           /* D_* */
  const char *uniforms[GPU_PASS_MAX_UNIFORMS];
} PassInfo;

/* Uniform handles are the index in PassInfo.uniforms. */
#define TERMS_UNIFORMS \
  { "size", "mean_base", "level", "gamma_exp", "energy_exp", "cos2_exp", "prior_size" }

static const PassInfo pass_info[PASS_COUNT] = {
  [PASS_INGEST] = { "flow_ingest.comp", NULL, 0, { "size" } },
  [PASS_REDUCE] = { "flow_reduce.comp", NULL, 0, { "src_size", "dst_size" } },
  [PASS_REDUCE_U8] = { "flow_reduce.comp", "#define SRC_FORMAT r8\n", 0,
                       { "src_size", "dst_size" } },
  [PASS_ROWS] = { "flow_rows.comp", NULL, D_BANK, { "size" } },
  [PASS_ROWS_U8] = { "flow_rows.comp", "#define SRC_FORMAT r8\n", D_BANK, { "size" } },
  [PASS_COLUMNS] = { "flow_columns.comp", NULL, D_BANK, { "size" } },
  [PASS_FEATURES] = { "flow_features.comp", NULL, D_FREQ | D_FEATURES,
                      { "size", "partial_base" } },
  [PASS_FEATURES_MEAN] = { "flow_features.comp", "#define WITH_MEAN 1\n",
                           D_FREQ | D_FEATURES | D_LEVELS,
                           { "size", "partial_base", "level", "mean_base", "inv_pixels" } },
  [PASS_MEAN] = { "flow_mean.comp", NULL, D_LEVELS,
                  { "partial_base", "groups", "level", "mean_base", "inv_pixels" } },
  [PASS_TERMS] = { "flow_terms.comp", NULL, D_FREQ | D_TERMS | D_LEVELS, TERMS_UNIFORMS },
  [PASS_TERMS_MEDIAN] = { "flow_terms.comp", "#define PRIOR_MEDIAN 1\n",
                          D_FREQ | D_TERMS | D_LEVELS, TERMS_UNIFORMS },
  [PASS_TERMS_UPSAMPLE] = { "flow_terms.comp", "#define PRIOR_UPSAMPLE 1\n",
                            D_FREQ | D_TERMS | D_LEVELS, TERMS_UNIFORMS },
  [PASS_SMOOTH_ROWS] = { "flow_smooth_rows.comp", NULL, D_SMOOTH, { "size" } },
  [PASS_FILL_ROWS] = { "flow_smooth_rows.comp", NULL, D_FILL_ROWS, { "size" } },
  [PASS_SOLVE] = { "flow_solve.comp", NULL, D_SOLVE, { "size" } },
  [PASS_FILL] = { "flow_fill.comp", NULL, D_FILL, { "size" } },
  [PASS_MEDIAN] = { "flow_median.comp", NULL, 0, { "size" } },
  [PASS_UPSAMPLE] = { "flow_upsample.comp", NULL, 0, { "src_size", "dst_size" } },
  [PASS_FB] = { "flow_fb.comp", NULL, D_FB, { "size" } },
  [PASS_FB_MEDIAN] = { "flow_fb.comp", "#define FWD_MEDIAN 1\n", D_FB, { "size" } },
  [PASS_PACK] = { "flow_pack.comp", NULL, D_PACK, { "size", "s16", "layer_words", "v_offset" } },
};

struct FlowPasses {
  GpuContext *gpu;
  FlowParams params;
  int batch, frames;       /* flow_passes_set_frames(): images of `batch` frames, the
                              first `frames` of them processed */
  GpuPass *pass[PASS_COUNT];
};

void
flow_passes_free(FlowPasses *ps)
{
  if (!ps)
    return;
  for (int i = 0; i < PASS_COUNT; i++)
    gpu_pass_free(ps->pass[i]);
  g_free(ps);
}

int
flow_passes_row_layers(const FlowParams *params)
{
  return (flow_params_row_kernels(params) + 1) / 2;
}

/* The bank's taps as flat arrays [kernel * taps + i]: the N / 2 + 1 row kernels, the N
 * column kernels. */
static void
append_bank(GString *s, const FlowParams *p)
{
  int n = 2 * p->radius + 1, nr = flow_params_row_kernels(p), N = p->orientations;
  double re[FLOW_MAX_ORIENTATIONS * (2 * FLOW_MAX_RADIUS + 1)];
  double im[FLOW_MAX_ORIENTATIONS * (2 * FLOW_MAX_RADIUS + 1)];
  for (int r = 0; r < nr; r++)
    flow_params_row_taps(p, r, re + r * n, im + r * n);
  glsl_append_array(s, "ROW_RE", re, nr * n);
  glsl_append_array(s, "ROW_IM", im, nr * n);
  for (int k = 0; k < N; k++)
    flow_params_column_taps(p, k, re + k * n, im + k * n);
  glsl_append_array(s, "COL_RE", re, N * n);
  glsl_append_array(s, "COL_IM", im, N * n);
}

static void
append_gauss(GString *s, const char *radius_name, const char *taps_name, double sigma)
{
  double taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  int r = flow_gauss_taps(sigma, taps);
  g_string_append_printf(s, "#define %s %d\n", radius_name, r);
  glsl_append_array(s, taps_name, taps, 2 * r + 1);
}

static char *
pass_defines(const FlowParams *p, unsigned groups, const char *variant)
{
  GString *s = g_string_new(NULL);
  if (groups & (D_BANK | D_FREQ | D_SOLVE))
    g_string_append_printf(s, "#define ORIENT %d\n", p->orientations);
  if (groups & D_BANK) {
    g_string_append_printf(s, "#define RADIUS %d\n#define TAPS %d\n#define ROW_KERNELS %d\n"
                           "#define ROW_LAYERS %d\n", p->radius, 2 * p->radius + 1,
                           flow_params_row_kernels(p), flow_passes_row_layers(p));
    append_bank(s, p);
  }
  if (groups & D_FREQ) {
    double fu[FLOW_MAX_ORIENTATIONS], fv[FLOW_MAX_ORIENTATIONS];
    for (int k = 0; k < p->orientations; k++)
      flow_params_orientation(p, k, &fu[k], &fv[k]);
    glsl_append_array(s, "FREQ_U", fu, p->orientations);
    glsl_append_array(s, "FREQ_V", fv, p->orientations);
    g_string_append_printf(s, "#define GRAD_INVALID %.1f\n", FLOW_GRAD_INVALID);
  }
  if (groups & D_FEATURES) {
    double stab = p->tau / p->sigma;
    glsl_append_define_float(s, "STAB2", stab * stab);
  }
  if (groups & D_TERMS) {
    glsl_append_define_float(s, "KAPPA", p->kappa);
    g_string_append_printf(s, "#define LOCAL_FREQUENCY %d\n", p->local_frequency ? 1 : 0);
  }
  if (groups & D_LEVELS)
    g_string_append_printf(s, "#define MAX_LEVELS %d\n", FLOW_MAX_LEVELS);
  if (groups & D_SMOOTH) {
    append_gauss(s, "ROWS_R", "ROWS_TAPS", p->smooth_sigma);
    g_string_append(s, "#define ROWS_MODE 0\n");
  }
  if (groups & D_FILL_ROWS) {
    append_gauss(s, "ROWS_R", "ROWS_TAPS", p->fill_sigma);
    g_string_append(s, "#define ROWS_MODE 1\n");
  }
  if (groups & D_SOLVE) {
    append_gauss(s, "SMOOTH_R", "SMOOTH_TAPS", p->smooth_sigma);
    glsl_append_define_float(s, "C_MIN", p->c_min);
    glsl_append_define_float(s, "LAMBDA", p->lambda);
    glsl_append_define_float(s, "DET_MIN", FLOW_DET_MIN);
  }
  if (groups & D_FILL)
    append_gauss(s, "FILL_R", "FILL_TAPS", p->fill_sigma);
  if (groups & D_FB)
    glsl_append_define_float(s, "FB_MAX", p->fb_max);
  if (groups & D_PACK)
    g_string_append_printf(s, "#define FLOW_UNKNOWN %.1f\n", (double)FLOW_UNKNOWN);
  if (variant)
    g_string_append(s, variant);
  return g_string_free(s, FALSE);
}

FlowPasses *
flow_passes_new(GpuContext *gpu, const FlowParams *params, GError **error)
{
  g_return_val_if_fail(gpu != NULL && params != NULL, NULL);
  if (!flow_params_validate(params, error))
    return NULL;
  (void)stereod_shaders_get_resource(); /* keeps the embedded shaders linked in */

  g_autoptr(FlowPasses) ps = g_new0(FlowPasses, 1);
  ps->gpu = gpu;
  ps->params = *params;
  ps->batch = ps->frames = 1;
  for (int i = 0; i < PASS_COUNT; i++) {
    const PassInfo *pi = &pass_info[i];
    g_autofree char *defines = pass_defines(params, pi->groups, pi->variant);
    g_autofree char *label = g_strdup_printf("flow/%s%s%s", pi->file,
                                             i == PASS_FILL_ROWS ? " (fill)" : "",
                                             !pi->variant ? ""
                                             : strstr(pi->variant, "r8") ? " (8-bit source)"
                                             : " (input computed)");
    GpuPassParams pp = { .label = label, .resource = pi->file, .defines = defines };
    memcpy(pp.uniforms, pi->uniforms, sizeof pp.uniforms);
    if (!(ps->pass[i] = gpu_pass_new(gpu, &pp, error)))
      return NULL;
  }
  /* Set once: each pass keeps them (uniforms 3..5 of flow_terms.comp). */
  for (int i = PASS_TERMS; i <= PASS_TERMS_UPSAMPLE; i++) {
    gpu_pass_set_float(ps->pass[i], 3, (float)params->gamma);
    gpu_pass_set_float(ps->pass[i], 4, (float)params->energy);
    gpu_pass_set_float(ps->pass[i], 5, (float)params->cos2);
  }
  if (!gpu_context_check(gpu, "flow passes setup", error))
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

void
flow_passes_set_frames(FlowPasses *ps, int batch, int frames)
{
  g_return_if_fail(ps && batch >= 1 && frames >= 1 && frames <= batch);
  ps->batch = batch;
  ps->frames = frames;
}

/* The layers of `img` that belong to the frames processed: all of them for a batch of
 * one, else the first `frames` of `batch` frames' equal shares. */
static int
frame_layers(FlowPasses *ps, GpuImage *img)
{
  int layers = gpu_image_get_layers(img);
  return ps->batch > 1 ? layers / ps->batch * ps->frames : layers;
}

/* Dispatch over an image's full size and the layers of the frames processed. */
static void
run_over(FlowPasses *ps, GpuPass *p, GpuPassRun *run, GpuImage *out)
{
  run->size[0] = gpu_image_get_width(out);
  run->size[1] = gpu_image_get_height(out);
  run->size[2] = frame_layers(ps, out);
  gpu_pass_dispatch(p, run);
}

void
flow_pass_ingest(FlowPasses *ps, GpuImage *src8, GpuImage *dst)
{
  GpuPass *p = ps->pass[PASS_INGEST];
  set_size(p, 0, dst);
  GpuPassRun run = { .images = { IMG(src8, READ), IMG(dst, WRITE) } };
  run_over(ps, p, &run, dst);
}

/* The variant of a pass that reads `src`: R32F, or the 8-bit frame (R8). */
static GpuPass *
for_source(FlowPasses *ps, PassId r32f, PassId r8, GpuImage *src)
{
  return ps->pass[gpu_image_get_format(src) == GPU_FORMAT_R8 ? r8 : r32f];
}

void
flow_pass_reduce(FlowPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuPass *p = for_source(ps, PASS_REDUCE, PASS_REDUCE_U8, src);
  set_size(p, 0, src);
  set_size(p, 1, dst);
  GpuPassRun run = { .images = { IMG(src, READ), IMG(dst, WRITE) } };
  run_over(ps, p, &run, dst);
}

void
flow_pass_rows(FlowPasses *ps, GpuImage *src, int w, int h, int frames, GpuImage *rows)
{
  GpuPass *p = for_source(ps, PASS_ROWS, PASS_ROWS_U8, src);
  gpu_pass_set_ivec2(p, 0, w, h);
  GpuPassRun run = { .images = { IMG(src, READ), IMG(rows, WRITE) }, .size = { w, h, frames } };
  gpu_pass_dispatch(p, &run);
}

void
flow_pass_columns(FlowPasses *ps, GpuImage *rows, int w, int h, int frames, GpuImage *q)
{
  GpuPass *p = ps->pass[PASS_COLUMNS];
  gpu_pass_set_ivec2(p, 0, w, h);
  GpuPassRun run = { .images = { IMG(rows, READ), IMG(q, WRITE) },
                     .size = { w, h, frames * ps->params.orientations } };
  gpu_pass_dispatch(p, &run);
}

int
flow_pass_features_groups(int width, int height)
{
  return ((width + 15) / 16) * ((height + 15) / 16);
}

void
flow_pass_features(FlowPasses *ps, GpuImage *q, GpuImage *feat, GpuBuffer *partials,
                   int partial_base)
{
  GpuPass *p = ps->pass[PASS_FEATURES];
  set_size(p, 0, feat);
  gpu_pass_set_int(p, 1, partial_base);
  GpuPassRun run = { .images = { IMG(q, READ), IMG(feat, WRITE) },
                     .buffers = { [2] = BUF(partials, WRITE) } };
  run_over(ps, p, &run, feat);
}

void
flow_pass_features_mean(FlowPasses *ps, GpuImage *q, GpuImage *feat, GpuBuffer *partials,
                        int partial_base, GpuBuffer *counters, GpuBuffer *means, int mean_base,
                        int level)
{
  GpuPass *p = ps->pass[PASS_FEATURES_MEAN];
  int w = gpu_image_get_width(feat), h = gpu_image_get_height(feat);
  set_size(p, 0, feat);
  gpu_pass_set_int(p, 1, partial_base);
  gpu_pass_set_int(p, 2, level);
  gpu_pass_set_int(p, 3, mean_base);
  gpu_pass_set_float(p, 4, (float)(1.0 / ((double)w * h)));
  GpuPassRun run = { .images = { IMG(q, READ), IMG(feat, WRITE) },
                     .buffers = { [2] = BUF(partials, READ_WRITE), [3] = BUF(means, WRITE),
                                  [5] = BUF(counters, READ_WRITE) } };
  run_over(ps, p, &run, feat);
}

void
flow_pass_mean(FlowPasses *ps, GpuBuffer *partials, int partial_base, int width, int height,
               int frames, GpuBuffer *means, int mean_base, int level)
{
  GpuPass *p = ps->pass[PASS_MEAN];
  gpu_pass_set_int(p, 0, partial_base);
  gpu_pass_set_int(p, 1, flow_pass_features_groups(width, height));
  gpu_pass_set_int(p, 2, level);
  gpu_pass_set_int(p, 3, mean_base);
  gpu_pass_set_float(p, 4, (float)(1.0 / ((double)width * height)));
  GpuPassRun run = { .buffers = { [2] = BUF(partials, READ), [3] = BUF(means, WRITE) },
                     .groups = { frames * ps->params.orientations, 1, 1 } };
  gpu_pass_dispatch(p, &run);
}

void
flow_pass_terms(FlowPasses *ps, GpuImage *feat0, GpuImage *feat1, GpuImage *flow,
                GpuImage *terms, GpuBuffer *means, int mean_base, int level)
{
  flow_pass_terms_prior(ps, FLOW_PRIOR_IMAGE, NULL, feat0, feat1, flow, terms, means,
                        mean_base, level);
}

void
flow_pass_terms_prior(FlowPasses *ps, FlowPrior prior, GpuImage *prior_src, GpuImage *feat0,
                      GpuImage *feat1, GpuImage *flow, GpuImage *terms, GpuBuffer *means,
                      int mean_base, int level)
{
  g_return_if_fail(prior < FLOW_PRIOR_COUNT && (prior == FLOW_PRIOR_IMAGE) == !prior_src);
  static const PassId ids[FLOW_PRIOR_COUNT] = {
    [FLOW_PRIOR_IMAGE] = PASS_TERMS,
    [FLOW_PRIOR_MEDIAN] = PASS_TERMS_MEDIAN,
    [FLOW_PRIOR_UPSAMPLE] = PASS_TERMS_UPSAMPLE,
  };
  GpuPass *p = ps->pass[ids[prior]];
  set_size(p, 0, flow);
  gpu_pass_set_int(p, 1, mean_base);
  gpu_pass_set_int(p, 2, level);
  GpuPassRun run = { .images = { IMG(feat0, READ), IMG(feat1, READ), IMG(flow, READ),
                                 IMG(terms, WRITE) },
                     .buffers = { [4] = BUF(means, READ) } };
  if (prior_src) {
    set_size(p, 6, prior_src);
    run.images[2] = (GpuPassImage)IMG(prior_src, READ);
    run.images[5] = (GpuPassImage)IMG(flow, WRITE);
  }
  run_over(ps, p, &run, flow);
}

/* Rows of the normalized convolution (pass PASS_SMOOTH_ROWS or PASS_FILL_ROWS) over
 * size_of's size and `layers` layers. */
static void
smooth_rows(FlowPasses *ps, PassId id, GpuImage *src, GpuImage *dst, GpuImage *size_of,
            int layers)
{
  GpuPass *r = ps->pass[id];
  set_size(r, 0, size_of);
  GpuPassRun run = { .images = { IMG(src, READ), IMG(dst, WRITE) },
                     .size = { gpu_image_get_width(size_of), gpu_image_get_height(size_of),
                               layers } };
  gpu_pass_dispatch(r, &run);
}

void
flow_pass_smooth_solve(FlowPasses *ps, GpuImage *terms, GpuImage *tmp, GpuImage *flow)
{
  smooth_rows(ps, PASS_SMOOTH_ROWS, terms, tmp, flow, 2 * frame_layers(ps, flow));
  GpuPass *s = ps->pass[PASS_SOLVE];
  set_size(s, 0, flow);
  GpuPassRun run = { .images = { IMG(tmp, READ), IMG(flow, READ_WRITE) } };
  run_over(ps, s, &run, flow);
}

void
flow_pass_fill(FlowPasses *ps, GpuImage *flow, GpuImage *tmp, int iterations)
{
  GpuPass *c = ps->pass[PASS_FILL];
  set_size(c, 0, flow);
  for (int it = 0; it < iterations; it++) {
    smooth_rows(ps, PASS_FILL_ROWS, flow, tmp, flow, frame_layers(ps, flow));
    GpuPassRun run = { .images = { IMG(tmp, READ), IMG(flow, READ_WRITE) } };
    run_over(ps, c, &run, flow);
  }
}

void
flow_pass_median(FlowPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuPass *p = ps->pass[PASS_MEDIAN];
  set_size(p, 0, dst);
  GpuPassRun run = { .images = { IMG(src, READ), IMG(dst, WRITE) } };
  run_over(ps, p, &run, dst);
}

void
flow_pass_upsample(FlowPasses *ps, GpuImage *coarse, GpuImage *fine)
{
  GpuPass *p = ps->pass[PASS_UPSAMPLE];
  set_size(p, 0, coarse);
  set_size(p, 1, fine);
  GpuPassRun run = { .images = { IMG(coarse, READ), IMG(fine, WRITE) } };
  run_over(ps, p, &run, fine);
}

static void
run_fb(FlowPasses *ps, PassId id, GpuImage *fwd, GpuImage *bwd, GpuImage *dst)
{
  GpuPass *p = ps->pass[id];
  set_size(p, 0, dst);
  GpuPassRun run = { .images = { IMG(fwd, READ), IMG(bwd, READ), IMG(dst, WRITE) } };
  run_over(ps, p, &run, dst);
}

void
flow_pass_fb(FlowPasses *ps, GpuImage *fwd, GpuImage *bwd, GpuImage *dst)
{
  run_fb(ps, PASS_FB, fwd, bwd, dst);
}

void
flow_pass_fb_median(FlowPasses *ps, GpuImage *fwd, GpuImage *bwd, GpuImage *dst)
{
  run_fb(ps, PASS_FB_MEDIAN, fwd, bwd, dst);
}

void
flow_pack_layout(int width, int height, bool s16, FlowPackLayout *layout)
{
  size_t n = (size_t)width * height;
  layout->s16 = s16;
  /* int16: words of two pixels, the last one padded */
  layout->v_offset = s16 ? 4 * ((n + 1) / 2) : 4 * n;
  layout->layer_bytes = 2 * layout->v_offset;
}

void
flow_pass_pack(FlowPasses *ps, GpuImage *src, GpuBuffer *out, const FlowPackLayout *layout)
{
  GpuPass *p = ps->pass[PASS_PACK];
  int w = gpu_image_get_width(src), h = gpu_image_get_height(src);
  set_size(p, 0, src);
  gpu_pass_set_int(p, 1, layout->s16 ? 1 : 0);
  gpu_pass_set_int(p, 2, (int)(layout->layer_bytes / 4));
  gpu_pass_set_int(p, 3, (int)(layout->v_offset / 4));
  size_t pairs = ((size_t)w * h + 1) / 2;
  GpuPassRun run = { .images = { IMG(src, READ) }, .buffers = { [4] = BUF(out, WRITE) },
                     .size = { (int)pairs, 1, frame_layers(ps, src) } };
  gpu_pass_dispatch(p, &run);
}
