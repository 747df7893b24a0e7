/* stereo-passes.c: one function per GPU stage of the filter (docs/algorithm.md). */
#include "kernels/stereo-passes.h"

#include <gio/gio.h>
#include <math.h>


GResource *stereod_shaders_get_resource(void);

typedef enum {
  PROG_INGEST,
  PROG_REDUCE,
  PROG_QUADRATURE,
  PROG_MEAN,
  PROG_SEARCH,
  PROG_PHASE,
  PROG_SMOOTH_ROWS,
  PROG_SOLVE,
  PROG_FILL,
  PROG_UPSAMPLE,
  PROG_POST_LR,
  PROG_MEDIAN,
  PROG_DENSIFY,
  PROG_DENSIFY_MEDIAN,
  PROG_PACK,
  PROG_RECTIFY,
  PROG_SEARCH_TILED,
  PROG_REFINE,         /* search.comp with SEARCH_REFINE (§5b), made when params->refine */
  PROG_REFINE_TILED,
  PROG_COUNT
} ProgId;

static const char *const prog_files[PROG_COUNT] = {
  [PROG_INGEST] = "ingest.comp",
  [PROG_REDUCE] = "reduce.comp",
  [PROG_QUADRATURE] = "quadrature.comp",
  [PROG_MEAN] = "mean.comp",
  [PROG_SEARCH] = "search.comp",
  [PROG_PHASE] = "phase.comp",
  [PROG_SMOOTH_ROWS] = "smooth_rows.comp",
  [PROG_SOLVE] = "solve.comp",
  [PROG_FILL] = "fill.comp",
  [PROG_UPSAMPLE] = "upsample.comp",
  [PROG_POST_LR] = "post_lr.comp",
  [PROG_MEDIAN] = "median.comp",
  [PROG_DENSIFY] = "densify.comp",
  [PROG_DENSIFY_MEDIAN] = "densify_median.comp",
  [PROG_PACK] = "pack.comp",
  [PROG_RECTIFY] = "rectify.comp",
  [PROG_SEARCH_TILED] = "search.comp",
  [PROG_REFINE] = "search.comp",
  [PROG_REFINE_TILED] = "search.comp",
};

struct StereoPasses {
  GpuContext *gpu;
  StereoParams params;
  GpuProgram *prog[PROG_COUNT];
  float smooth_taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int smooth_radius;
  float fill_taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int fill_radius;
  bool search_tiled;
};

void
stereo_passes_free(StereoPasses *ps)
{
  if (!ps)
    return;
  for (int i = 0; i < PROG_COUNT; i++)
    gpu_program_free(ps->prog[i]);
  g_free(ps);
}

StereoPasses *
stereo_passes_new(GpuContext *gpu, const StereoParams *params, GError **error)
{
  g_return_val_if_fail(gpu != NULL && params != NULL, NULL);
  if (!stereo_params_validate(params, error))
    return NULL;
  (void)stereod_shaders_get_resource(); /* keeps the embedded shaders linked in */

  g_autoptr(StereoPasses) ps = g_new0(StereoPasses, 1);
  ps->gpu = gpu;
  ps->params = *params;

  g_autofree char *defines = g_strdup_printf(
    "#define RADIUS %d\n#define SEARCH_R %d\n#define WEIGHT_GAMMA %.9e\n"
    "#define EDGE_MARGIN %.9e\n#define REFINE_WINDOW %d\n#define REFINE_PAD %d\n",
    params->radius, params->search_radius, STEREO_SEARCH_WEIGHT_GAMMA,
    STEREO_DENSIFY_EDGE_MARGIN, STEREO_REFINE_WINDOW, STEREO_REFINE_PAD);
  g_autofree char *tiled_defines = g_strconcat(defines, "#define SEARCH_TILED 1\n", NULL);
  g_autofree char *refine_defines = g_strconcat(defines, "#define SEARCH_REFINE 1\n", NULL);
  g_autofree char *refine_tiled_defines = g_strconcat(tiled_defines, "#define SEARCH_REFINE 1\n",
                                                      NULL);
  for (int i = 0; i < PROG_COUNT; i++) {
    bool refine = i == PROG_REFINE || i == PROG_REFINE_TILED;
    if (refine && !params->refine)
      continue;
    bool tiled = i == PROG_SEARCH_TILED || i == PROG_REFINE_TILED;
    g_autofree char *label = g_strdup_printf("stereo/%s%s%s", prog_files[i],
                                             refine ? " (refine)" : "", tiled ? " (tiled)" : "");
    GpuProgramParams pp = {
      .label = label,
      .resource = prog_files[i],
      .defines = refine ? (tiled ? refine_tiled_defines : refine_defines)
                        : tiled ? tiled_defines : defines,
    };
    ps->prog[i] = gpu_program_new(gpu, &pp, error);
    if (!ps->prog[i])
      return NULL;
  }

  double h_re[2 * STEREO_MAX_RADIUS + 1], h_im[2 * STEREO_MAX_RADIUS + 1];
  double v[2 * STEREO_MAX_RADIUS + 1];
  stereo_params_filter_taps(params, h_re, h_im, v);
  float fre[2 * STEREO_MAX_RADIUS + 1], fim[2 * STEREO_MAX_RADIUS + 1];
  float fv[2 * STEREO_MAX_RADIUS + 1];
  int n = 2 * params->radius + 1;
  for (int k = 0; k < n; k++) {
    fre[k] = (float)h_re[k];
    fim[k] = (float)h_im[k];
    fv[k] = (float)v[k];
  }
  GpuProgram *q = ps->prog[PROG_QUADRATURE];
  gpu_program_set_float_array(q, "h_re", fre, n);
  gpu_program_set_float_array(q, "h_im", fim, n);
  gpu_program_set_float_array(q, "v", fv, n);

  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  ps->smooth_radius = stereo_gauss_taps(params->smooth_sigma, taps);
  for (int k = 0; k <= 2 * ps->smooth_radius; k++)
    ps->smooth_taps[k] = (float)taps[k];
  ps->fill_radius = stereo_gauss_taps(params->fill_sigma, taps);
  for (int k = 0; k <= 2 * ps->fill_radius; k++)
    ps->fill_taps[k] = (float)taps[k];
  gpu_program_set_float_array(ps->prog[PROG_SOLVE], "taps", ps->smooth_taps,
                              2 * ps->smooth_radius + 1);
  gpu_program_set_int(ps->prog[PROG_SOLVE], "radius", ps->smooth_radius);
  gpu_program_set_float(ps->prog[PROG_SOLVE], "c_min", (float)params->c_min);
  gpu_program_set_float_array(ps->prog[PROG_FILL], "taps", ps->fill_taps,
                              2 * ps->fill_radius + 1);
  gpu_program_set_int(ps->prog[PROG_FILL], "radius", ps->fill_radius);

  /* The search stages the other image in shared memory on discrete GPUs; on llvmpipe,
   * where barriers are costly, direct reads are 3x faster (measured, docs/algorithm.md).
   * STEREOD_SEARCH_TILED=0/1 overrides. */
  const char *tiled = g_getenv("STEREOD_SEARCH_TILED");
  ps->search_tiled = tiled ? g_strcmp0(tiled, "0") != 0 : !gpu_context_is_software(gpu);

  GpuProgram *ph = ps->prog[PROG_PHASE];
  gpu_program_set_float(ph, "omega0", (float)params->omega0);
  double stab = params->tau / params->sigma;
  gpu_program_set_float(ph, "stab2", (float)(stab * stab));
  gpu_program_set_float(ph, "kappa", (float)params->kappa);
  gpu_program_set_float(ph, "min_magnitude", (float)params->min_magnitude);
  gpu_program_set_float(ph, "gamma_exp", (float)params->gamma);
  gpu_program_set_int(ph, "max_levels", STEREO_MAX_LEVELS);
  gpu_program_set_int(ps->prog[PROG_MEAN], "max_levels", STEREO_MAX_LEVELS);

  GpuProgram *lr = ps->prog[PROG_POST_LR];
  gpu_program_set_int(lr, "lr_check", params->lr_check ? 1 : 0);
  gpu_program_set_float(lr, "lr_max", (float)params->lr_max);
  gpu_program_set_float(lr, "sigma_d_max", (float)params->sigma_d_max);
  gpu_program_set_float(lr, "c_min", (float)params->c_min);

  if (!gpu_context_check(gpu, "stereo passes setup", error))
    return NULL;
  return g_steal_pointer(&ps);
}

/* Dispatch over an image's full size and layers, then a barrier. */
static void
run_2d(GpuProgram *prog, GpuImage *out)
{
  gpu_program_dispatch(prog, gpu_image_get_width(out), gpu_image_get_height(out),
                       gpu_image_get_layers(out));
  gpu_barrier();
}

static void
set_size(GpuProgram *prog, const char *name, GpuImage *img)
{
  gpu_program_set_ivec2(prog, name, gpu_image_get_width(img), gpu_image_get_height(img));
}

void
stereo_pass_ingest(StereoPasses *ps, GpuImage *src8, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_INGEST];
  set_size(p, "size", dst);
  gpu_bind_image(0, src8, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

void
stereo_pass_reduce(StereoPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_REDUCE];
  set_size(p, "src_size", src);
  set_size(p, "dst_size", dst);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

int
stereo_pass_quadrature_groups(int width, int height)
{
  return ((width + 15) / 16) * ((height + 15) / 16);
}

void
stereo_pass_quadrature(StereoPasses *ps, GpuImage *src, GpuImage *dst, GpuBuffer *partials,
                       int partial_base)
{
  GpuProgram *p = ps->prog[PROG_QUADRATURE];
  set_size(p, "size", dst);
  gpu_program_set_int(p, "partial_base", partial_base);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  gpu_bind_storage(2, partials);
  run_2d(p, dst);
}

void
stereo_pass_mean(StereoPasses *ps, GpuBuffer *partials, int partial_base, int width,
                 int height, int layers, GpuBuffer *means, int level)
{
  GpuProgram *p = ps->prog[PROG_MEAN];
  gpu_program_set_int(p, "partial_base", partial_base);
  gpu_program_set_int(p, "groups", stereo_pass_quadrature_groups(width, height));
  gpu_program_set_int(p, "level", level);
  gpu_program_set_float(p, "inv_pixels", (float)(1.0 / ((double)width * height)));
  gpu_bind_storage(2, partials);
  gpu_bind_storage(3, means);
  gpu_program_dispatch(p, 256 * layers, 1, 1);
  gpu_barrier();
}

void
stereo_pass_search(StereoPasses *ps, GpuImage *img, GpuImage *disp, int eta, int t_min,
                   int t_max)
{
  stereo_pass_search_variant(ps, ps->search_tiled, img, disp, eta, t_min, t_max);
}

/* One dispatch of search.comp (any of its four programs) for direction eta. */
static void
run_search(GpuProgram *p, GpuImage *img, GpuImage *disp, int eta, int t_min, int t_max)
{
  set_size(p, "size", disp);
  gpu_program_set_int(p, "eta", eta);
  gpu_program_set_int(p, "t_min", t_min);
  gpu_program_set_int(p, "t_max", t_max);
  gpu_bind_image(0, img, GPU_ACCESS_READ);
  gpu_bind_image(2, disp, GPU_ACCESS_WRITE);
  run_2d(p, disp);
}

void
stereo_pass_search_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *disp,
                           int eta, int t_min, int t_max)
{
  run_search(ps->prog[tiled ? PROG_SEARCH_TILED : PROG_SEARCH], img, disp, eta, t_min, t_max);
}

void
stereo_pass_refine(StereoPasses *ps, GpuImage *img, GpuImage *prior, GpuImage *disp, int eta)
{
  stereo_pass_refine_variant(ps, ps->search_tiled, img, prior, disp, eta);
}

void
stereo_pass_refine_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *prior,
                           GpuImage *disp, int eta)
{
  GpuProgram *p = ps->prog[tiled ? PROG_REFINE_TILED : PROG_REFINE];
  g_return_if_fail(p);   /* made only when params->refine */
  gpu_bind_image(3, prior, GPU_ACCESS_READ);
  run_search(p, img, disp, eta, (int) floor(ps->params.min_disparity),
             (int) ceil(ps->params.max_disparity));
}

void
stereo_pass_phase(StereoPasses *ps, GpuImage *quad, GpuImage *disp, GpuImage *terms,
                  GpuBuffer *means, int level, int eta)
{
  GpuProgram *p = ps->prog[PROG_PHASE];
  set_size(p, "size", disp);
  gpu_program_set_int(p, "eta", eta);
  gpu_program_set_int(p, "level", level);
  gpu_bind_image(0, quad, GPU_ACCESS_READ);
  gpu_bind_image(1, disp, GPU_ACCESS_READ);
  gpu_bind_image(2, terms, GPU_ACCESS_WRITE);
  gpu_bind_storage(3, means);
  run_2d(p, disp);
}

void
stereo_pass_smooth_solve(StereoPasses *ps, GpuImage *terms, GpuImage *tmp, GpuImage *disp,
                         int level, float guard)
{
  GpuProgram *r = ps->prog[PROG_SMOOTH_ROWS];
  set_size(r, "size", disp);
  gpu_program_set_int(r, "radius", ps->smooth_radius);
  gpu_program_set_float_array(r, "taps", ps->smooth_taps, 2 * ps->smooth_radius + 1);
  gpu_program_set_int(r, "mode", 0);
  gpu_bind_image(0, terms, GPU_ACCESS_READ);
  gpu_bind_image(1, tmp, GPU_ACCESS_WRITE);
  run_2d(r, disp);

  GpuProgram *s = ps->prog[PROG_SOLVE];
  double scale = ldexp(1.0, -level);
  gpu_program_set_float(s, "guard", guard);
  set_size(s, "size", disp);
  gpu_program_set_vec2(s, "d_range", (float)(ps->params.min_disparity * scale - 2.0),
                       (float)(ps->params.max_disparity * scale + 2.0));
  gpu_bind_image(0, tmp, GPU_ACCESS_READ);
  gpu_bind_image(1, disp, GPU_ACCESS_READ_WRITE);
  run_2d(s, disp);
}

void
stereo_pass_fill(StereoPasses *ps, GpuImage *disp, GpuImage *tmp)
{
  GpuProgram *r = ps->prog[PROG_SMOOTH_ROWS];
  GpuProgram *c = ps->prog[PROG_FILL];
  set_size(c, "size", disp);
  for (int it = 0; it < ps->params.fill_iterations; it++) {
    set_size(r, "size", disp);
    gpu_program_set_int(r, "radius", ps->fill_radius);
    gpu_program_set_float_array(r, "taps", ps->fill_taps, 2 * ps->fill_radius + 1);
    gpu_program_set_int(r, "mode", 1);
    gpu_bind_image(0, disp, GPU_ACCESS_READ);
    gpu_bind_image(1, tmp, GPU_ACCESS_WRITE);
    run_2d(r, disp);
    gpu_bind_image(0, tmp, GPU_ACCESS_READ);
    gpu_bind_image(1, disp, GPU_ACCESS_READ_WRITE);
    run_2d(c, disp);
  }
}

void
stereo_pass_upsample(StereoPasses *ps, GpuImage *coarse, GpuImage *fine)
{
  GpuProgram *p = ps->prog[PROG_UPSAMPLE];
  set_size(p, "src_size", coarse);
  set_size(p, "dst_size", fine);
  gpu_bind_image(0, coarse, GPU_ACCESS_READ);
  gpu_bind_image(1, fine, GPU_ACCESS_WRITE);
  run_2d(p, fine);
}

void
stereo_pass_post_lr(StereoPasses *ps, GpuImage *disp_l, GpuImage *disp_r, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_POST_LR];
  set_size(p, "size", dst);
  gpu_bind_image(0, disp_l, GPU_ACCESS_READ);
  gpu_bind_image(1, disp_r ? disp_r : disp_l, GPU_ACCESS_READ);
  gpu_bind_image(2, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

static void
simple_pass(StereoPasses *ps, ProgId id, GpuImage *src, GpuImage *dst)
{
  GpuProgram *p = ps->prog[id];
  set_size(p, "size", dst);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

void
stereo_pass_median(StereoPasses *ps, GpuImage *src, GpuImage *dst)
{
  simple_pass(ps, PROG_MEDIAN, src, dst);
}

void
stereo_pass_densify(StereoPasses *ps, GpuImage *src, GpuImage *intensity, GpuImage *dst)
{
  gpu_bind_image(2, intensity, GPU_ACCESS_READ);
  simple_pass(ps, PROG_DENSIFY, src, dst);
}

void
stereo_pass_densify_median(StereoPasses *ps, GpuImage *src, GpuImage *dst)
{
  simple_pass(ps, PROG_DENSIFY_MEDIAN, src, dst);
}

GpuImage *
stereo_pass_post(StereoPasses *ps, GpuImage *disp_l, GpuImage *disp_r, GpuImage *intensity,
                 GpuImage *a, GpuImage *b)
{
  stereo_pass_post_lr(ps, disp_l, ps->params.lr_check ? disp_r : NULL, a);
  GpuImage *cur = a, *other = b;
  if (ps->params.median) {
    stereo_pass_median(ps, cur, other);
    GpuImage *t = cur; cur = other; other = t;
  }
  if (ps->params.densify) {
    stereo_pass_densify(ps, cur, intensity, other);
    stereo_pass_densify_median(ps, other, cur);
  }
  return cur;
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
stereo_pass_pack(StereoPasses *ps, GpuImage *src, GpuBuffer *out,
                 const StereoPackLayout *layout, double fb_mm, double doffs)
{
  GpuProgram *p = ps->prog[PROG_PACK];
  int w = gpu_image_get_width(src), h = gpu_image_get_height(src);
  set_size(p, "size", src);
  gpu_program_set_int(p, "s16", layout->s16 ? 1 : 0);
  gpu_program_set_int(p, "layer_words", (int)(layout->layer_bytes / 4));
  gpu_program_set_int(p, "conf_offset", (int)(layout->conf_offset / 4));
  gpu_program_set_int(p, "depth_offset", layout->depth ? (int)(layout->depth_offset / 4) : -1);
  gpu_program_set_float(p, "fb_mm", (float)fb_mm);
  gpu_program_set_float(p, "doffs", (float)doffs);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_storage(4, out);
  size_t quads = ((size_t)w * h + 3) / 4;
  gpu_program_dispatch(p, (int)quads, 1, gpu_image_get_layers(src));
  gpu_barrier();
}

void
stereo_pass_rectify(StereoPasses *ps, GpuImage *src8, GpuImage *map, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_RECTIFY];
  set_size(p, "size", dst);
  gpu_bind_image(0, src8, GPU_ACCESS_READ);
  gpu_bind_image(1, map, GPU_ACCESS_READ);
  gpu_bind_image(2, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}
