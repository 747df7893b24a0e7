/* stereod-bench: throughput and latency of the stereo engine, end to end (8-bit pairs
 * in from host memory, disparity + confidence out to host memory), with the GPU time of
 * every stage from GL_TIMESTAMP queries.
 *
 *   stereod-bench [--sizes 640x480,1920x1080] [--scales 1,5] [--in-flight 1,4]
 *                 [--frames N] [--warmup N] [--max-disparity D] [--format s16|float]
 *                 [--refine] [--csv FILE] [--device D] [--save-pairs DIR]
 *
 * For each combination: 8 different synthetic textured pairs are generated and rotated
 * (so caches do not flatter), `warmup` pairs are run and discarded, then `frames` pairs
 * are pushed through the submit/collect queue with `in_flight` pairs outstanding.
 * Reported: pairs/s and Mpixel/s (wall clock over the timed pairs), latency p50/p99 per
 * pair (submit call to collect return, wall clock), and the median GPU ms of each stage.
 * The pairs come from bench/pairs.h; tests/reference/ref-bench (built, not installed)
 * times the plain-C double-precision reference on the same pairs, for the ratio: an
 * installed program does not carry the test code.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/pairs.h"
#include "stereod-config.h"
#include "kernels/stereo.h"

#define N_INPUTS BENCH_N_INPUTS

typedef struct {
  int w, h;
} Size;

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
percentile(double *v, int n, double q)
{
  qsort(v, n, sizeof *v, cmp_double);
  int i = (int)ceil(q * n) - 1;
  return v[CLAMP(i, 0, n - 1)];
}

static bool
parse_list(const char *s, int *out, int max, int *n)
{
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  *n = 0;
  for (int i = 0; parts[i] && *n < max; i++) {
    char *end;
    long v = strtol(parts[i], &end, 10);
    if (*end || v <= 0)
      return false;
    out[(*n)++] = (int)v;
  }
  return *n > 0;
}

static bool
parse_sizes(const char *s, Size *out, int max, int *n)
{
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  *n = 0;
  for (int i = 0; parts[i] && *n < max; i++) {
    if (sscanf(parts[i], "%dx%d", &out[*n].w, &out[*n].h) != 2 || out[*n].w < 64 ||
        out[*n].h < 64)
      return false;
    (*n)++;
  }
  return *n > 0;
}

typedef struct {
  int frames, warmup;
  gboolean refine;
  double max_disparity;
  StereoOutputFormat format;
  FILE *csv;
} Options;

static bool
bench_one(GpuContext *gpu, const Options *o, Size sz, int scales, int in_flight,
          uint8_t **left, uint8_t **right)
{
  GError *error = NULL;
  StereoEngineParams ep = { .label = "bench", .output = o->format, .in_flight = in_flight };
  stereo_params_init(&ep.params, sz.w, sz.h);
  ep.params.levels = scales;
  ep.params.max_disparity = MIN(o->max_disparity, sz.w / 2);
  ep.params.refine = o->refine;
  g_autoptr(StereoEngine) e = stereo_engine_new(gpu, &ep, &error);
  if (!e) {
    fprintf(stderr, "stereod-bench: %dx%d scales %d: %s\n", sz.w, sz.h, scales, error->message);
    g_error_free(error);
    return false;
  }
  int total = o->warmup + o->frames;
  double *lat = g_new(double, total);
  double *stage = g_new(double, (size_t)total * STEREO_STAGE_COUNT);
  int64_t *t_submit = g_new(int64_t, total);
  int submitted = 0, collected = 0;
  int64_t t_start = 0;
  while (collected < total) {
    while (submitted < total && stereo_engine_pending(e) < in_flight) {
      int k = submitted % N_INPUTS;
      t_submit[submitted] = g_get_monotonic_time();
      if (!stereo_engine_submit(e, left[k], sz.w, right[k], sz.w, submitted, &error))
        goto fail;
      submitted++;
    }
    StereoFrame f;
    if (!stereo_engine_collect(e, true, &f, &error))
      goto fail;
    int64_t now = g_get_monotonic_time();
    lat[collected] = (now - t_submit[f.tag]) * 1e-3;
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      stage[(size_t)s * total + collected] = f.stage_ms[s];
    stereo_engine_release(e, &f);
    collected++;
    if (collected == o->warmup)
      t_start = now;
  }
  double secs = (g_get_monotonic_time() - t_start) * 1e-6;
  double fps = o->frames / secs;
  double p50 = percentile(lat + o->warmup, o->frames, 0.5);
  double p99 = percentile(lat + o->warmup, o->frames, 0.99);
  double st[STEREO_STAGE_COUNT], gpu_sum = 0;
  for (int s = 0; s < STEREO_STAGE_COUNT; s++) {
    st[s] = percentile(stage + (size_t)s * total + o->warmup, o->frames, 0.5);
    gpu_sum += st[s];
  }
  printf("%5dx%-5d %6d %9d %10.1f %9.1f %8.2f %8.2f |", sz.w, sz.h, scales, in_flight, fps,
         fps * sz.w * sz.h * 1e-6, p50, p99);
  for (int s = 0; s < STEREO_STAGE_COUNT; s++)
    printf(" %7.3f", st[s]);
  printf(" %7.3f\n", gpu_sum);
  fflush(stdout);
  if (o->csv) {
    fprintf(o->csv, "%d,%d,%d,%d,%.3f,%.3f,%.4f,%.4f", sz.w, sz.h, scales, in_flight, fps,
            fps * sz.w * sz.h * 1e-6, p50, p99);
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      fprintf(o->csv, ",%.4f", st[s]);
    fprintf(o->csv, ",%.4f\n", gpu_sum);
    fflush(o->csv);
  }
  g_free(lat);
  g_free(stage);
  g_free(t_submit);
  return true;
fail:
  fprintf(stderr, "stereod-bench: %s\n", error->message);
  g_error_free(error);
  g_free(lat);
  g_free(stage);
  g_free(t_submit);
  return false;
}

int
main(int argc, char **argv)
{
  g_autofree char *sizes_s = NULL, *scales_s = NULL, *flight_s = NULL, *csv_path = NULL;
  g_autofree char *device = NULL, *format_s = NULL, *save_dir = NULL;
  Options o = { .frames = 200, .warmup = 20, .max_disparity = 128 };
  gboolean version = FALSE;
  GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_s, "WxH list", "640x480,1920x1080" },
    { "scales", 0, 0, G_OPTION_ARG_STRING, &scales_s, "pyramid levels list", "1,5" },
    { "in-flight", 0, 0, G_OPTION_ARG_STRING, &flight_s, "pairs in flight list", "1,4" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &o.frames, "timed pairs per case", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &o.warmup, "pairs before timing", "N" },
    { "max-disparity", 0, 0, G_OPTION_ARG_DOUBLE, &o.max_disparity, "search range", "D" },
    { "refine", 0, 0, G_OPTION_ARG_NONE, &o.refine,
      "with the level-0 refinement search (docs/algorithm.md §5b)", NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_s, "output format s16|float", "F" },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "also write CSV", "FILE" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device, "EGL device", "D" },
    { "save-pairs", 0, 0, G_OPTION_ARG_FILENAME, &save_dir,
      "write the first input pair of each size as PGM (for bench/opencv_peer.py)", "DIR" },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL },
  };
  GError *error = NULL;
  g_autoptr(GOptionContext) oc = g_option_context_new("- stereo engine benchmark");
  g_option_context_add_main_entries(oc, entries, NULL);
  if (!g_option_context_parse(oc, &argc, &argv, &error)) {
    fprintf(stderr, "stereod-bench: %s (see --help)\n", error->message);
    return 64;   /* EX_USAGE */
  }
  if (version) {
    printf("stereod-bench %s\n", STEREOD_VERSION);
    return 0;
  }
  Size sizes[8];
  int scales[8], flights[8], n_sizes, n_scales, n_flights;
  if (!parse_sizes(sizes_s ? sizes_s : "640x480,1920x1080", sizes, 8, &n_sizes) ||
      !parse_list(scales_s ? scales_s : "5", scales, 8, &n_scales) ||
      !parse_list(flight_s ? flight_s : "1,4", flights, 8, &n_flights) || o.frames < 1 ||
      o.warmup < 0) {
    fprintf(stderr, "stereod-bench: bad --sizes, --scales, --in-flight or --frames (see --help)\n");
    return 64;
  }
  o.format = g_strcmp0(format_s, "float") == 0 ? STEREO_OUTPUT_FLOAT : STEREO_OUTPUT_S16;
  if (csv_path && !(o.csv = fopen(csv_path, "we"))) {
    fprintf(stderr, "stereod-bench: %s: %s\n", csv_path, g_strerror(errno));
    return 1;
  }
  GpuContextParams gp = { .label = "bench", .device = device };
  g_autoptr(GpuContext) gpu = gpu_context_new(&gp, &error);
  if (!gpu) {
    fprintf(stderr, "stereod-bench: %s\n", error->message);
    return 1;
  }
  printf("# device: %s | %s | %s\n", gpu_context_get_device(gpu), gpu_context_get_renderer(gpu),
         gpu_context_get_version(gpu));
  printf("# output %s, max disparity %.0f, level-0 refinement %s, %d timed pairs after %d "
         "warm-up, %d inputs rotated\n", o.format == STEREO_OUTPUT_S16 ? "s16+u8" : "float+u8",
         o.max_disparity, o.refine ? "on" : "off", o.frames, o.warmup, N_INPUTS);
  printf("%-11s %6s %9s %10s %9s %8s %8s |", "size", "scales", "in-flight", "pairs/s",
         "Mpix/s", "p50 ms", "p99 ms");
  for (int s = 0; s < STEREO_STAGE_COUNT; s++)
    printf(" %7s", stereo_stage_name(s));
  printf(" %7s\n", "gpu ms");
  if (o.csv) {
    fprintf(o.csv, "width,height,scales,in_flight,pairs_per_s,mpix_per_s,p50_ms,p99_ms");
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      fprintf(o.csv, ",%s_ms", stereo_stage_name(s));
    fprintf(o.csv, ",gpu_ms\n");
  }
  if (save_dir && g_mkdir_with_parents(save_dir, 0755) < 0) {
    fprintf(stderr, "stereod-bench: %s: %s\n", save_dir, g_strerror(errno));
    return 1;
  }
  GRand *rng = g_rand_new_with_seed(12345);
  int rc = 0;
  for (int i = 0; i < n_sizes; i++) {
    uint8_t *left[N_INPUTS], *right[N_INPUTS];
    for (int k = 0; k < N_INPUTS; k++) {
      left[k] = g_malloc((size_t)sizes[i].w * sizes[i].h);
      right[k] = g_malloc((size_t)sizes[i].w * sizes[i].h);
      bench_make_pair(rng, sizes[i].w, sizes[i].h,
                      MIN(o.max_disparity, sizes[i].w / 2) * 0.6, left[k], right[k]);
    }
    if (save_dir)
      for (int k = 0; k < 2; k++) {
        g_autofree char *name = g_strdup_printf("%dx%d-%s.pgm", sizes[i].w, sizes[i].h,
                                                k ? "right" : "left");
        g_autofree char *path = g_build_filename(save_dir, name, NULL);
        FILE *fp = fopen(path, "wbe");
        if (!fp || fprintf(fp, "P5\n%d %d\n255\n", sizes[i].w, sizes[i].h) < 0 ||
            fwrite(k ? right[0] : left[0], (size_t)sizes[i].w * sizes[i].h, 1, fp) != 1) {
          fprintf(stderr, "stereod-bench: cannot write %s\n", path);
          rc = 1;
        }
        if (fp)
          fclose(fp);
      }
    for (int s = 0; s < n_scales; s++) {
      for (int f = 0; f < n_flights; f++)
        if (!bench_one(gpu, &o, sizes[i], scales[s], flights[f], left, right))
          rc = 1;
    }
    for (int k = 0; k < N_INPUTS; k++) {
      g_free(left[k]);
      g_free(right[k]);
    }
  }
  g_rand_free(rng);
  if (o.csv)
    fclose(o.csv);
  return rc;
}
