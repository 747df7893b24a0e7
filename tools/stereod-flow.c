/* stereod-flow: the optical flow between two frames from files in, flow files out.
 *
 *   stereod-flow FRAME0 FRAME1 -o OUT.flo [--png OUT.png] [--color OUT.jpg] [--scales N]
 *                [--gt GT.flo] [--fb-check] [--size WxH] [--bench N [--pairs P]]
 *                [--device auto|hardware|software|surfaceless|N] [--verbose|--quiet]
 *                [--max-pixels N]
 *
 * FRAME0 and FRAME1: PNG, PGM/PPM or JPEG (colour is converted to luma), regular files of
 * at most --max-pixels pixels (default 64 Mpixel; tools/imageio.h), refused from their
 * headers before anything that size is allocated; --size is bounded the same way. The
 * flow is that of
 * FRAME0's pixels: (x, y) moves to (x + u, y + v) in FRAME1. Exit status 0 on success, 1
 * when something fails at run time (files, sizes, GPU), 64 for bad usage; the reason is one
 * line "stereod-flow: ..." on stderr.
 */
#include "gpu/gpu.h"
#include "kernels/flow.h"
#include "tools/imageio.h"
#include "stereod-config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "stereod-flow"
#define EXIT_USAGE 64   /* EX_USAGE */

static char *opt_output, *opt_png, *opt_color, *opt_device, *opt_gt, *opt_size;
static int opt_scales = 0, opt_bench = 0, opt_pairs = 1;
static gint64 opt_max_pixels = (gint64)IMAGEIO_DEFAULT_MAX_PIXELS;
static gboolean opt_fb, opt_verbose, opt_quiet, opt_version;
static char **opt_files;

static const GOptionEntry entries[] = {
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
    "Write the flow as Middlebury .flo (float u, v; unknown = 1e10)", "OUT.flo" },
  { "png", 0, 0, G_OPTION_ARG_FILENAME, &opt_png,
    "Write the flow as a KITTI 16-bit PNG (R, G = 64 x px + 2^15, B = valid)", "OUT.png" },
  { "color", 0, 0, G_OPTION_ARG_FILENAME, &opt_color,
    "Write the Middlebury colour-wheel picture (JPEG) to look at (unknown = black)",
    "OUT.jpg" },
  { "scales", 's', 0, G_OPTION_ARG_INT, &opt_scales,
    "Pyramid levels, 1..8 (default 0 = automatic)", "N" },
  { "fb-check", 0, 0, G_OPTION_ARG_NONE, &opt_fb,
    "Also compute the backward flow; keep only vectors that pass the forward-backward check "
    "(1 px) and densify the rest from their neighbours (off by default: "
    "docs/optical-flow.md)", NULL },
  { "gt", 0, 0, G_OPTION_ARG_FILENAME, &opt_gt,
    "Score against a ground-truth .flo: EPE, AAE, bad-1, bad-3 and density", "GT.flo" },
  { "size", 0, 0, G_OPTION_ARG_STRING, &opt_size,
    "Resample both frames to WxH first (bilinear; for benchmarks at a given size)", "WxH" },
  { "bench", 'n', 0, G_OPTION_ARG_INT, &opt_bench,
    "Benchmark: stream N frames (FRAME0, FRAME1, FRAME0, ...) through the engine as a camera "
    "would and report the milliseconds per flow frame (wall clock and GPU stages)", "N" },
  { "pairs", 0, 0, G_OPTION_ARG_INT, &opt_pairs,
    "With --bench: P cameras in one engine, each submission a frame of every one (as the "
    "service batches its pairs), 1..32 (default 1)", "P" },
  { "device", 0, 0, G_OPTION_ARG_STRING, &opt_device,
    "EGL device: auto, hardware, software, surfaceless or an index (default auto)", "DEV" },
  { "max-pixels", 0, 0, G_OPTION_ARG_INT64, &opt_max_pixels,
    "Largest image read or made with --size, width x height (default 64000000); larger "
    "files are refused before they are decoded", "N" },
  { "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, "Say more, enable debug logs", NULL },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Print nothing on success", NULL },
  { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, "Print the version and exit", NULL },
  { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_files, NULL, "FRAME0 FRAME1" },
  { NULL }
};

static int G_GNUC_PRINTF(2, 3)
fail(int status, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_strdelimit(msg, "\n", ' ');
  fprintf(stderr, PROG ": %s\n", msg);
  return status;
}

static bool
device_valid(const char *s)
{
  static const char *names[] = { "auto", "hardware", "software", "surfaceless" };
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
    if (strcmp(s, names[i]) == 0)
      return true;
  if (!*s || strlen(s) > 3)
    return false;
  for (const char *c = s; *c; c++)
    if (!g_ascii_isdigit(*c))
      return false;
  return true;
}

/* "WxH" with 16 <= W, H <= IMAGEIO_MAX_SIDE. */
static bool
parse_size(const char *s, int *w, int *h)
{
  char *end;
  guint64 a, b;
  if (!g_ascii_isdigit(*s))
    return false;
  a = g_ascii_strtoull(s, &end, 10);
  if (*end != 'x' || !g_ascii_isdigit(end[1]))
    return false;
  b = g_ascii_strtoull(end + 1, &end, 10);
  if (*end || a < 16 || b < 16 || a > IMAGEIO_MAX_SIDE || b > IMAGEIO_MAX_SIDE)
    return false;
  *w = (int)a;
  *h = (int)b;
  return true;
}

static int
check_usage(int *w, int *h)
{
  int n = opt_files ? (int)g_strv_length(opt_files) : 0;
  if (n != 2)
    return fail(EXIT_USAGE, "expected two input files, FRAME0 and FRAME1, got %d (see --help)",
                n);
  if (!opt_output && !opt_png && !opt_color && !opt_gt && !opt_bench)
    return fail(EXIT_USAGE, "nothing to do: give -o OUT.flo, --png, --color, --gt or --bench");
  if (opt_scales < 0 || opt_scales > FLOW_MAX_LEVELS)
    return fail(EXIT_USAGE, "--scales must be within 1..%d (0 = automatic)", FLOW_MAX_LEVELS);
  if (opt_bench < 0 || opt_bench > 100000)
    return fail(EXIT_USAGE, "--bench must be within 1..100000 frames");
  if (opt_pairs < 1 || opt_pairs > FLOW_MAX_BATCH || (opt_pairs > 1 && !opt_bench))
    return fail(EXIT_USAGE, "--pairs must be within 1..%d, with --bench", FLOW_MAX_BATCH);
  if (opt_size && !parse_size(opt_size, w, h))
    return fail(EXIT_USAGE, "--size must be WxH with both within 16..%d, not '%s'",
                IMAGEIO_MAX_SIDE, opt_size);
  if (opt_device && !device_valid(opt_device))
    return fail(EXIT_USAGE, "--device must be auto, hardware, software, surfaceless or an "
                            "index, not '%s'", opt_device);
  if (opt_verbose && opt_quiet)
    return fail(EXIT_USAGE, "--verbose and --quiet exclude each other");
  if (opt_max_pixels < 1 || opt_max_pixels > (gint64)IMAGEIO_MAX_SIDE * IMAGEIO_MAX_SIDE)
    return fail(EXIT_USAGE, "--max-pixels must be within 1..%" G_GINT64_FORMAT,
                (gint64)IMAGEIO_MAX_SIDE * IMAGEIO_MAX_SIDE);
  if (opt_size && (gint64)*w * *h > opt_max_pixels)
    return fail(EXIT_USAGE, "--size %s is more than --max-pixels %" G_GINT64_FORMAT " pixels",
                opt_size, opt_max_pixels);
  return 0;
}

/* Bilinear resampling of a luma plane to w x h (pixel centres aligned). */
static ImageioU8 *
resample(const ImageioU8 *in, int w, int h)
{
  ImageioU8 *out = imageio_u8_new(w, h);
  double sx = (double)in->width / w, sy = (double)in->height / h;
  for (int y = 0; y < h; y++) {
    double ys = CLAMP((y + 0.5) * sy - 0.5, 0.0, in->height - 1.0);
    int y0 = (int)ys, y1 = MIN(y0 + 1, in->height - 1);
    double fy = ys - y0;
    const uint8_t *r0 = IMAGEIO_ROW(in, y0), *r1 = IMAGEIO_ROW(in, y1);
    uint8_t *dst = IMAGEIO_ROW(out, y);
    for (int x = 0; x < w; x++) {
      double xs = CLAMP((x + 0.5) * sx - 0.5, 0.0, in->width - 1.0);
      int x0 = (int)xs, x1 = MIN(x0 + 1, in->width - 1);
      double fx = xs - x0;
      double v = (1 - fy) * ((1 - fx) * r0[x0] + fx * r0[x1]) +
                 fy * ((1 - fx) * r1[x0] + fx * r1[x1]);
      dst[x] = (uint8_t)lround(v);
    }
  }
  return out;
}

static int
write_outputs(const float *u, const float *v, int w, int h)
{
  g_autoptr(GError) error = NULL;
  size_t stride = sizeof(float) * (size_t)w;
  if (opt_output && !imageio_write_flo(opt_output, u, v, w, h, stride, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  if (opt_png && !imageio_write_kitti_flow(opt_png, u, v, w, h, stride, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  float used_max;
  if (opt_color && !imageio_write_flow_color_jpeg(opt_color, u, v, w, h, stride, 0.0f, 90,
                                                  &used_max, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  if (opt_color && opt_verbose)
    printf("colour wheel: |flow| 0..%.2f px (99th percentile)\n", used_max);
  return 0;
}

static int
score_gt(const float *u, const float *v, int w, int h)
{
  g_autoptr(GError) error = NULL;
  const ImageioLimits limits = { .max_pixels = (uint64_t)opt_max_pixels };
  g_autoptr(ImageioFlow) gt = imageio_read_flo_full(opt_gt, &limits, &error);
  if (!gt)
    return fail(EXIT_FAILURE, "%s", error->message);
  if (gt->u->width != w || gt->u->height != h)
    return fail(EXIT_FAILURE, "%s is %dx%d but the frames are %dx%d", opt_gt, gt->u->width,
                gt->u->height, w, h);
  long n = 0, est = 0, bad1 = 0, bad3 = 0;
  double epe = 0.0, aae = 0.0;
  for (size_t i = 0; i < (size_t)w * h; i++) {
    float gu = gt->u->data[i], gv = gt->v->data[i];
    if (!imageio_flow_known(gu, gv))
      continue;
    n++;
    if (!imageio_flow_known(u[i], v[i])) {
      bad1++;
      bad3++;
      continue;
    }
    est++;
    double e = hypot((double)u[i] - gu, (double)v[i] - gv);
    epe += e;
    bad1 += e > 1.0;
    bad3 += e > 3.0;
    double c = ((double)u[i] * gu + (double)v[i] * gv + 1.0) /
               sqrt(((double)u[i] * u[i] + (double)v[i] * v[i] + 1.0) *
                    ((double)gu * gu + (double)gv * gv + 1.0));
    aae += acos(CLAMP(c, -1.0, 1.0)) * 180.0 / G_PI;
  }
  if (!n)
    return fail(EXIT_FAILURE, "%s: no pixel with a known flow", opt_gt);
  printf("%s: EPE %.3f px, AAE %.2f deg, bad-1 %.2f%%, bad-3 %.2f%%, density %.2f%% over %ld "
         "pixels\n", opt_gt, est ? epe / est : 0.0, est ? aae / est : 0.0, 100.0 * bad1 / n,
         100.0 * bad3 / n, 100.0 * est / n, n);
  return 0;
}

/* Collects one flow; the GPU stages of its submission are added once (at its pair 0). */
static bool
bench_collect(FlowEngine *engine, bool timed, double *stage, int *submissions, GError **error)
{
  FlowFrame fr;
  if (!flow_engine_collect(engine, true, &fr, error))
    return false;
  if (timed && fr.pair == 0) {
    for (int s = 0; s < FLOW_STAGE_COUNT; s++)
      stage[s] += fr.stage_ms[s];
    (*submissions)++;
  }
  flow_engine_release(engine, &fr);
  return true;
}

/* Streams opt_bench frames of opt_pairs cameras (every submission a frame of each, in
 * order) through submit/collect with two submissions in flight, as the service does, and
 * prints the wall-clock and per-stage GPU milliseconds per flow frame (a camera's). */
static int
bench(FlowEngine *engine, const ImageioU8 *f0, const ImageioU8 *f1)
{
  g_autoptr(GError) error = NULL;
  const int warm = MIN(5, opt_bench), P = opt_pairs;
  double stage[FLOW_STAGE_COUNT] = { 0 };
  int flows = 0, submissions = 0;
  gint64 start = 0;
  flow_engine_reset(engine);
  for (int i = 0; i < opt_bench + warm; i++) {
    if (i == warm)
      start = g_get_monotonic_time();
    const ImageioU8 *f = (i & 1) ? f1 : f0;
    while (flow_engine_pending(engine) >= 2 * P)
      for (int k = 0; k < P; k++)
        if (!bench_collect(engine, i > warm, stage, &submissions, &error))
          return fail(EXIT_FAILURE, "collect: %s", error->message);
    FlowInput in[FLOW_MAX_BATCH];
    bool queued[FLOW_MAX_BATCH];
    for (int k = 0; k < P; k++)
      in[k] = (FlowInput){ .pair = k, .frame = f->data, .stride = f->stride,
                           .tag = (uint64_t)i };
    if (!flow_engine_submit_batch(engine, in, P, queued, NULL, &error))
      return fail(EXIT_FAILURE, "submit: %s", error->message);
    for (int k = 0; k < P; k++)
      flows += queued[k] && i >= warm;
  }
  while (flow_engine_pending(engine) > 0)
    if (!bench_collect(engine, true, stage, &submissions, &error))
      return fail(EXIT_FAILURE, "collect: %s", error->message);
  double wall = (g_get_monotonic_time() - start) / 1000.0;
  printf("bench: %dx%d, %d camera%s in one engine, %d flow frames, %.3f ms per flow frame "
         "(wall clock, %.1f frames/s)\n", f0->width, f0->height, P, P > 1 ? "s" : "", flows,
         wall / MAX(flows, 1), 1000.0 * flows / wall);
  printf("bench: GPU ms per flow frame:");
  for (int s = 0; s < FLOW_STAGE_COUNT; s++)
    printf(" %s %.3f", flow_stage_name(s), stage[s] / MAX(submissions, 1) / P);
  printf("\n");
  FlowWorkCounts wc;
  flow_engine_get_last_counts(engine, &wc);
  printf("bench: %d dispatches, %d barriers per submission of %d flow frame%s (counted in "
         "code)\n", wc.dispatches, wc.barriers, opt_pairs, opt_pairs > 1 ? "s" : "");
  return 0;
}

static int
run(int size_w, int size_h)
{
  g_autoptr(GError) error = NULL;
  const ImageioLimits limits = { .max_pixels = (uint64_t)opt_max_pixels };
  g_autoptr(ImageioU8) f0 = imageio_read_gray_full(opt_files[0], &limits, &error);
  if (!f0)
    return fail(EXIT_FAILURE, "%s", error->message);
  g_autoptr(ImageioU8) f1 = imageio_read_gray_full(opt_files[1], &limits, &error);
  if (!f1)
    return fail(EXIT_FAILURE, "%s", error->message);
  if (f0->width != f1->width || f0->height != f1->height)
    return fail(EXIT_FAILURE, "%s is %dx%d but %s is %dx%d: the frames must have one size",
                opt_files[0], f0->width, f0->height, opt_files[1], f1->width, f1->height);
  if (opt_size) {
    ImageioU8 *a = resample(f0, size_w, size_h), *b = resample(f1, size_w, size_h);
    imageio_u8_free(f0);
    imageio_u8_free(f1);
    f0 = a;
    f1 = b;
  }
  const int w = f0->width, h = f0->height;
  FlowParams params;
  flow_params_init(&params, w, h);
  params.levels = opt_scales;
  if (opt_fb)
    params.fb_check = true;
  if (!flow_params_validate(&params, &error))
    return fail(EXIT_FAILURE, "%dx%d frames: %s", w, h, error->message);

  gint64 t0 = g_get_monotonic_time();
  g_autoptr(GpuContext) gpu = gpu_context_new(&(GpuContextParams){
      .label = PROG, .device = opt_device }, &error);
  if (!gpu)
    return fail(EXIT_FAILURE, "GPU: %s", error->message);
  g_autoptr(FlowEngine) engine = flow_engine_new(gpu, &(FlowEngineParams){
      .label = PROG, .params = params, .output = FLOW_OUTPUT_FLOAT,
      .in_flight = opt_bench ? 2 : 1, .batch = opt_bench ? opt_pairs : 1 }, &error);
  if (!engine)
    return fail(EXIT_FAILURE, "flow engine: %s", error->message);
  if (opt_verbose)
    printf("GPU: %s (%s, %s), set up in %.1f ms\n", gpu_context_get_renderer(gpu),
           gpu_context_get_version(gpu), gpu_context_get_device(gpu),
           (g_get_monotonic_time() - t0) / 1000.0);

  size_t n = (size_t)w * h;
  g_autofree float *u = g_new(float, n), *v = g_new(float, n);
  gint64 a = g_get_monotonic_time();
  if (!flow_engine_process(engine, f0->data, f0->stride, f1->data, f1->stride, u, v, &error))
    return fail(EXIT_FAILURE, "processing failed: %s", error->message);
  double ms = (g_get_monotonic_time() - a) / 1000.0;
  int status = write_outputs(u, v, w, h);
  if (!status && opt_gt)
    status = score_gt(u, v, w, h);
  if (!status && opt_bench)
    status = bench(engine, f0, f1);
  if (status)
    return status;
  if (!opt_quiet) {
    size_t known = 0;
    for (size_t i = 0; i < n; i++)
      known += imageio_flow_known(u[i], v[i]);
    printf("%s: %dx%d, %d levels, %d orientations, forward-backward check %s, %.1f ms "
           "(both frames filtered), %.1f%% known\n", opt_files[0], w, h,
           flow_params_get_levels(&params), params.orientations,
           params.fb_check ? "on" : "off", ms, 100.0 * known / n);
  }
  return 0;
}

int
main(int argc, char **argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_summary(ctx, "Computes the optical flow from FRAME0 to FRAME1 on the "
                                    "GPU (phase-based, coarse to fine).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error))
    return fail(EXIT_USAGE, "%s (see --help)", error->message);
  if (opt_version) {
    printf(PROG " %s\n", STEREOD_VERSION);
    return 0;
  }
  int w = 0, h = 0;
  int status = check_usage(&w, &h);
  if (status)
    return status;
  if (opt_verbose)
    g_log_set_debug_enabled(TRUE);
  status = run(w, h);
  g_strfreev(opt_files);
  g_free(opt_output);
  g_free(opt_png);
  g_free(opt_color);
  g_free(opt_device);
  g_free(opt_gt);
  g_free(opt_size);
  return status;
}
