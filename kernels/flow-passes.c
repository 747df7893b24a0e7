/* flow-passes.c: programs and dispatches of the optical-flow passes (flow-passes.h). */
#include "kernels/flow-passes.h"

#include <gio/gio.h>
#include <math.h>

GResource *stereod_shaders_get_resource(void);

typedef enum {
  PROG_INGEST,
  PROG_REDUCE,
  PROG_ROWS,
  PROG_COLUMNS,
  PROG_FEATURES,
  PROG_MEAN,
  PROG_TERMS,
  PROG_SMOOTH_ROWS,
  PROG_SOLVE,
  PROG_FILL,
  PROG_MEDIAN,
  PROG_UPSAMPLE,
  PROG_FB,
  PROG_PACK,
  PROG_COUNT
} ProgId;

static const char *const prog_files[PROG_COUNT] = {
  [PROG_INGEST] = "flow_ingest.comp",
  [PROG_REDUCE] = "flow_reduce.comp",
  [PROG_ROWS] = "flow_rows.comp",
  [PROG_COLUMNS] = "flow_columns.comp",
  [PROG_FEATURES] = "flow_features.comp",
  [PROG_MEAN] = "flow_mean.comp",
  [PROG_TERMS] = "flow_terms.comp",
  [PROG_SMOOTH_ROWS] = "flow_smooth_rows.comp",
  [PROG_SOLVE] = "flow_solve.comp",
  [PROG_FILL] = "flow_fill.comp",
  [PROG_MEDIAN] = "flow_median.comp",
  [PROG_UPSAMPLE] = "flow_upsample.comp",
  [PROG_FB] = "flow_fb.comp",
  [PROG_PACK] = "flow_pack.comp",
};

struct FlowPasses {
  GpuContext *gpu;
  FlowParams params;
  GpuProgram *prog[PROG_COUNT];
  float smooth_taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  int smooth_radius;
  float fill_taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  int fill_radius;
};

void
flow_passes_free(FlowPasses *ps)
{
  if (!ps)
    return;
  for (int i = 0; i < PROG_COUNT; i++)
    gpu_program_free(ps->prog[i]);
  g_free(ps);
}

int
flow_passes_row_layers(const FlowParams *params)
{
  return (flow_params_row_kernels(params) + 1) / 2;
}

/* The bank's taps as the shaders' flat uniform arrays [kernel * taps + i]. */
static void
set_bank_taps(FlowPasses *ps)
{
  const FlowParams *p = &ps->params;
  int n = 2 * p->radius + 1, nr = flow_params_row_kernels(p), N = p->orientations;
  float re[FLOW_MAX_ORIENTATIONS * (2 * FLOW_MAX_RADIUS + 1)];
  float im[FLOW_MAX_ORIENTATIONS * (2 * FLOW_MAX_RADIUS + 1)];
  double dre[2 * FLOW_MAX_RADIUS + 1], dim[2 * FLOW_MAX_RADIUS + 1];
  for (int r = 0; r < nr; r++) {
    flow_params_row_taps(p, r, dre, dim);
    for (int i = 0; i < n; i++) {
      re[r * n + i] = (float)dre[i];
      im[r * n + i] = (float)dim[i];
    }
  }
  gpu_program_set_float_array(ps->prog[PROG_ROWS], "row_re", re, nr * n);
  gpu_program_set_float_array(ps->prog[PROG_ROWS], "row_im", im, nr * n);
  float fu[FLOW_MAX_ORIENTATIONS], fv[FLOW_MAX_ORIENTATIONS];
  for (int k = 0; k < N; k++) {
    flow_params_column_taps(p, k, dre, dim);
    for (int i = 0; i < n; i++) {
      re[k * n + i] = (float)dre[i];
      im[k * n + i] = (float)dim[i];
    }
    double u, v;
    flow_params_orientation(p, k, &u, &v);
    fu[k] = (float)u;
    fv[k] = (float)v;
  }
  gpu_program_set_float_array(ps->prog[PROG_COLUMNS], "col_re", re, N * n);
  gpu_program_set_float_array(ps->prog[PROG_COLUMNS], "col_im", im, N * n);
  GpuProgram *f = ps->prog[PROG_FEATURES];
  gpu_program_set_float_array(f, "freq_u", fu, N);
  gpu_program_set_float_array(f, "freq_v", fv, N);
  gpu_program_set_float_array(ps->prog[PROG_TERMS], "freq_u", fu, N);
  gpu_program_set_float_array(ps->prog[PROG_TERMS], "freq_v", fv, N);
  double stab = p->tau / p->sigma;
  gpu_program_set_float(f, "stab2", (float)(stab * stab));
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
  g_autofree char *defines = g_strdup_printf(
    "#define RADIUS %d\n#define TAPS %d\n#define ORIENT %d\n#define ROW_KERNELS %d\n"
    "#define ROW_LAYERS %d\n#define MAX_LEVELS %d\n#define GRAD_INVALID %.1f\n"
    "#define DET_MIN %.9e\n#define FLOW_UNKNOWN %.1f\n",
    params->radius, 2 * params->radius + 1, params->orientations,
    flow_params_row_kernels(params), flow_passes_row_layers(params), FLOW_MAX_LEVELS,
    FLOW_GRAD_INVALID, FLOW_DET_MIN, (double)FLOW_UNKNOWN);
  for (int i = 0; i < PROG_COUNT; i++) {
    g_autofree char *label = g_strdup_printf("flow/%s", prog_files[i]);
    GpuProgramParams pp = { .label = label, .resource = prog_files[i], .defines = defines };
    if (!(ps->prog[i] = gpu_program_new(gpu, &pp, error)))
      return NULL;
  }
  set_bank_taps(ps);

  double taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  ps->smooth_radius = flow_gauss_taps(params->smooth_sigma, taps);
  for (int k = 0; k <= 2 * ps->smooth_radius; k++)
    ps->smooth_taps[k] = (float)taps[k];
  ps->fill_radius = flow_gauss_taps(params->fill_sigma, taps);
  for (int k = 0; k <= 2 * ps->fill_radius; k++)
    ps->fill_taps[k] = (float)taps[k];
  GpuProgram *s = ps->prog[PROG_SOLVE];
  gpu_program_set_float_array(s, "taps", ps->smooth_taps, 2 * ps->smooth_radius + 1);
  gpu_program_set_int(s, "radius", ps->smooth_radius);
  gpu_program_set_float(s, "c_min", (float)params->c_min);
  gpu_program_set_float(s, "lambda", (float)params->lambda);
  GpuProgram *fl = ps->prog[PROG_FILL];
  gpu_program_set_float_array(fl, "taps", ps->fill_taps, 2 * ps->fill_radius + 1);
  gpu_program_set_int(fl, "radius", ps->fill_radius);
  GpuProgram *t = ps->prog[PROG_TERMS];
  gpu_program_set_float(t, "kappa", (float)params->kappa);
  gpu_program_set_float(t, "gamma_exp", (float)params->gamma);
  gpu_program_set_float(t, "energy_exp", (float)params->energy);
  gpu_program_set_float(t, "cos2_exp", (float)params->cos2);
  gpu_program_set_int(t, "local_frequency", params->local_frequency ? 1 : 0);
  gpu_program_set_float(ps->prog[PROG_FB], "fb_max", (float)params->fb_max);

  if (!gpu_context_check(gpu, "flow passes setup", error))
    return NULL;
  return g_steal_pointer(&ps);
}

static void
set_size(GpuProgram *prog, const char *name, GpuImage *img)
{
  gpu_program_set_ivec2(prog, name, gpu_image_get_width(img), gpu_image_get_height(img));
}

/* Dispatch over an image's full size and layers, then a barrier. */
static void
run_2d(GpuProgram *prog, GpuImage *out)
{
  gpu_program_dispatch(prog, gpu_image_get_width(out), gpu_image_get_height(out),
                       gpu_image_get_layers(out));
  gpu_barrier();
}

void
flow_pass_ingest(FlowPasses *ps, GpuImage *src8, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_INGEST];
  set_size(p, "size", dst);
  gpu_bind_image(0, src8, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

void
flow_pass_reduce(FlowPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_REDUCE];
  set_size(p, "src_size", src);
  set_size(p, "dst_size", dst);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

void
flow_pass_rows(FlowPasses *ps, GpuImage *src, int w, int h, int frames, GpuImage *rows)
{
  GpuProgram *p = ps->prog[PROG_ROWS];
  gpu_program_set_ivec2(p, "size", w, h);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, rows, GPU_ACCESS_WRITE);
  gpu_program_dispatch(p, w, h, frames);
  gpu_barrier();
}

void
flow_pass_columns(FlowPasses *ps, GpuImage *rows, int w, int h, int frames, GpuImage *q)
{
  GpuProgram *p = ps->prog[PROG_COLUMNS];
  gpu_program_set_ivec2(p, "size", w, h);
  gpu_bind_image(0, rows, GPU_ACCESS_READ);
  gpu_bind_image(1, q, GPU_ACCESS_WRITE);
  gpu_program_dispatch(p, w, h, frames * ps->params.orientations);
  gpu_barrier();
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
  GpuProgram *p = ps->prog[PROG_FEATURES];
  set_size(p, "size", feat);
  gpu_program_set_int(p, "partial_base", partial_base);
  gpu_bind_image(0, q, GPU_ACCESS_READ);
  gpu_bind_image(1, feat, GPU_ACCESS_WRITE);
  gpu_bind_storage(2, partials);
  run_2d(p, feat);
}

void
flow_pass_mean(FlowPasses *ps, GpuBuffer *partials, int partial_base, int width, int height,
               int frames, GpuBuffer *means, int mean_base, int level)
{
  GpuProgram *p = ps->prog[PROG_MEAN];
  gpu_program_set_int(p, "partial_base", partial_base);
  gpu_program_set_int(p, "groups", flow_pass_features_groups(width, height));
  gpu_program_set_int(p, "level", level);
  gpu_program_set_int(p, "mean_base", mean_base);
  gpu_program_set_float(p, "inv_pixels", (float)(1.0 / ((double)width * height)));
  gpu_bind_storage(2, partials);
  gpu_bind_storage(3, means);
  gpu_program_dispatch(p, 256 * frames * ps->params.orientations, 1, 1);
  gpu_barrier();
}

void
flow_pass_terms(FlowPasses *ps, GpuImage *feat0, GpuImage *feat1, GpuImage *flow,
                GpuImage *terms, GpuBuffer *means, int mean_base, int level)
{
  GpuProgram *p = ps->prog[PROG_TERMS];
  set_size(p, "size", flow);
  gpu_program_set_int(p, "mean_base", mean_base);
  gpu_program_set_int(p, "level", level);
  gpu_bind_image(0, feat0, GPU_ACCESS_READ);
  gpu_bind_image(1, feat1, GPU_ACCESS_READ);
  gpu_bind_image(2, flow, GPU_ACCESS_READ);
  gpu_bind_image(3, terms, GPU_ACCESS_WRITE);
  gpu_bind_storage(4, means);
  run_2d(p, flow);
}

/* Rows of the normalized convolution over flow's size and `layers` layers. */
static void
smooth_rows(FlowPasses *ps, GpuImage *src, GpuImage *dst, GpuImage *size_of, int layers,
            const float *taps, int radius, int mode)
{
  GpuProgram *r = ps->prog[PROG_SMOOTH_ROWS];
  set_size(r, "size", size_of);
  gpu_program_set_int(r, "radius", radius);
  gpu_program_set_float_array(r, "taps", taps, 2 * radius + 1);
  gpu_program_set_int(r, "mode", mode);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  gpu_program_dispatch(r, gpu_image_get_width(size_of), gpu_image_get_height(size_of), layers);
  gpu_barrier();
}

void
flow_pass_smooth_solve(FlowPasses *ps, GpuImage *terms, GpuImage *tmp, GpuImage *flow)
{
  smooth_rows(ps, terms, tmp, flow, 2 * gpu_image_get_layers(flow), ps->smooth_taps,
              ps->smooth_radius, 0);
  GpuProgram *s = ps->prog[PROG_SOLVE];
  set_size(s, "size", flow);
  gpu_bind_image(0, tmp, GPU_ACCESS_READ);
  gpu_bind_image(1, flow, GPU_ACCESS_READ_WRITE);
  run_2d(s, flow);
}

void
flow_pass_fill(FlowPasses *ps, GpuImage *flow, GpuImage *tmp, int iterations)
{
  GpuProgram *c = ps->prog[PROG_FILL];
  set_size(c, "size", flow);
  for (int it = 0; it < iterations; it++) {
    smooth_rows(ps, flow, tmp, flow, gpu_image_get_layers(flow), ps->fill_taps,
                ps->fill_radius, 1);
    gpu_bind_image(0, tmp, GPU_ACCESS_READ);
    gpu_bind_image(1, flow, GPU_ACCESS_READ_WRITE);
    run_2d(c, flow);
  }
}

void
flow_pass_median(FlowPasses *ps, GpuImage *src, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_MEDIAN];
  set_size(p, "size", dst);
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_image(1, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
}

void
flow_pass_upsample(FlowPasses *ps, GpuImage *coarse, GpuImage *fine)
{
  GpuProgram *p = ps->prog[PROG_UPSAMPLE];
  set_size(p, "src_size", coarse);
  set_size(p, "dst_size", fine);
  gpu_bind_image(0, coarse, GPU_ACCESS_READ);
  gpu_bind_image(1, fine, GPU_ACCESS_WRITE);
  run_2d(p, fine);
}

void
flow_pass_fb(FlowPasses *ps, GpuImage *fwd, GpuImage *bwd, GpuImage *dst)
{
  GpuProgram *p = ps->prog[PROG_FB];
  set_size(p, "size", dst);
  gpu_bind_image(0, fwd, GPU_ACCESS_READ);
  gpu_bind_image(1, bwd, GPU_ACCESS_READ);
  gpu_bind_image(2, dst, GPU_ACCESS_WRITE);
  run_2d(p, dst);
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
  GpuProgram *p = ps->prog[PROG_PACK];
  int w = gpu_image_get_width(src), h = gpu_image_get_height(src);
  set_size(p, "size", src);
  gpu_program_set_int(p, "s16", layout->s16 ? 1 : 0);
  gpu_program_set_int(p, "layer_words", (int)(layout->layer_bytes / 4));
  gpu_program_set_int(p, "v_offset", (int)(layout->v_offset / 4));
  gpu_bind_image(0, src, GPU_ACCESS_READ);
  gpu_bind_storage(4, out);
  size_t pairs = ((size_t)w * h + 1) / 2;
  gpu_program_dispatch(p, (int)pairs, 1, gpu_image_get_layers(src));
  gpu_barrier();
}
