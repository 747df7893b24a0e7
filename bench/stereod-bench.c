/* stereod-bench: throughput and latency of the stereo engine, end to end (8-bit pairs
 * in from host memory, disparity + confidence out to host memory), with the GPU time of
 * every stage from GL_TIMESTAMP queries.
 *
 *   stereod-bench [--sizes 640x480,1920x1080] [--scales 1,5] [--batch 1,4,16]
 *                 [--in-flight 1,4] [--frames N] [--warmup N] [--max-disparity D]
 *                 [--format s16|float] [--refine] [--count] [--csv FILE]
 *                 [--save-pairs DIR] [--device D] [--profile N]
 *   stereod-bench --service [service options, see bench/service.c]
 *
 * For each combination: 8 different synthetic textured pairs are generated and rotated
 * (so caches do not flatter), `warmup` pairs are run and discarded, then `frames` pairs
 * are pushed through the submit/collect queue in batches of `batch` pairs (one engine
 * serving that many pairs, every pass dispatched once per batch), `in_flight` batches
 * outstanding. Reported: pairs/s and Mpixel/s (wall clock over the timed pairs), latency
 * p50/p99 per pair (submit call of its batch to its collect, wall clock), the median GPU
 * ms of each stage per batch, GPU ms per batch and per pair, and the dispatches and
 * barriers of a batch (counted in code); a "# summary:" line per case in the form
 * bench/RESULTS.md records. --count only counts a batch's dispatches and barriers (dry
 * run, nothing computed: any size on any device). The pairs come from bench/pairs.h;
 * tests/reference/ref-bench (built, not installed) times the plain-C double-precision
 * reference on the same pairs, for the ratio: an installed program does not carry the
 * test code. --profile N runs N more batches of each case one at a time after the timed
 * ones, every dispatch between timestamp queries, and prints each pass's median GPU ms
 * per batch (the queries serialize the dispatches: a pass's time there bounds its share).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/pairs.h"
#include "bench/service.h"
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
  gboolean refine, count;
  int profile;
  double max_disparity;
  StereoOutputFormat format;
  FILE *csv;
  const char *device_name;
} Options;

#define PROFILE_MAX 256

static int
cmp_entry_label(const void *a, const void *b)
{
  return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* --profile: `o->profile` batches one at a time, every dispatch timed; per dispatch of a
 * batch (the same sequence each time) its median, then the sums per pass label. */
static bool
profile_case(GpuContext *gpu, StereoEngine *e, const Options *o, int batch, uint8_t **left,
             uint8_t **right, Size sz)
{
  GError *error = NULL;
  int runs = o->profile, n_disp = 0;
  GpuProfileEntry first[PROFILE_MAX], cur[PROFILE_MAX];
  double *ms = g_new0(double, (size_t)runs * PROFILE_MAX);
  StereoInput in[STEREO_MAX_BATCH];
  for (int r = 0; r < runs; r++) {
    for (int k = 0; k < batch; k++) {
      int idx = (r * batch + k) % N_INPUTS;
      in[k] = (StereoInput){ .pair = k, .left = left[idx], .right = right[idx],
                             .left_stride = sz.w, .right_stride = sz.w };
    }
    if (!gpu_context_profile_start(gpu, PROFILE_MAX, &error) ||
        !stereo_engine_submit_batch(e, in, batch, NULL, &error))
      goto fail;
    int n = 0;
    bool ok = true;
    for (int k = 0; k < batch && ok; k++) {
      StereoFrame f;
      ok = stereo_engine_collect(e, true, &f, &error);
      if (ok)
        stereo_engine_release(e, &f);
    }
    n = gpu_context_profile_stop(gpu, cur, PROFILE_MAX);
    if (!ok)
      goto fail;
    if (r == 0) {
      n_disp = n;
      memcpy(first, cur, sizeof(GpuProfileEntry) * (size_t)n);
    } else if (n != n_disp) {
      fprintf(stderr, "stereod-bench: --profile: %d dispatches in one batch, %d in another\n",
              n_disp, n);
      g_free(ms);
      return false;
    }
    for (int i = 0; i < n; i++)
      ms[(size_t)i * runs + r] = cur[i].ms;
  }
  printf("# profile %dx%d batch %d (%d batches, median GPU ms per dispatch):\n", sz.w, sz.h,
         batch, runs);
  double med[PROFILE_MAX], total = 0;
  for (int i = 0; i < n_disp; i++) {
    med[i] = percentile(ms + (size_t)i * runs, runs, 0.5);
    total += med[i];
    printf("#   %3d %-34s %5u x %4u x %3u %9.4f\n", i, first[i].label, first[i].groups[0],
           first[i].groups[1], first[i].groups[2], med[i]);
  }
  /* per label: the sum of its dispatches */
  const char *labels[PROFILE_MAX];
  int n_labels = 0;
  for (int i = 0; i < n_disp; i++) {
    bool seen = false;
    for (int j = 0; j < n_labels && !seen; j++)
      seen = g_strcmp0(labels[j], first[i].label) == 0;
    if (!seen)
      labels[n_labels++] = first[i].label;
  }
  qsort(labels, (size_t)n_labels, sizeof labels[0], cmp_entry_label);
  for (int j = 0; j < n_labels; j++) {
    double sum = 0;
    int count = 0;
    for (int i = 0; i < n_disp; i++)
      if (g_strcmp0(labels[j], first[i].label) == 0) {
        sum += med[i];
        count++;
      }
    printf("# profile sum %-34s %3d dispatches %9.4f ms per batch %8.4f per pair\n", labels[j],
           count, sum, sum / batch);
  }
  printf("# profile total %d dispatches %.4f ms per batch, %.4f per pair\n", n_disp, total,
         total / batch);
  fflush(stdout);
  g_free(ms);
  return true;
fail:
  fprintf(stderr, "stereod-bench: --profile: %s\n", error->message);
  g_error_free(error);
  g_free(ms);
  return false;
}

/* One case: `batch` pairs per submission, `in_flight` submissions queued. `frames` and
 * `warmup` count pairs (rounded up to whole batches). */
static bool
bench_one(GpuContext *gpu, const Options *o, Size sz, int scales, int batch, int in_flight,
          uint8_t **left, uint8_t **right)
{
  GError *error = NULL;
  StereoEngineParams ep = { .label = "bench", .output = o->format, .in_flight = in_flight,
                            .batch = batch };
  stereo_params_init(&ep.params, sz.w, sz.h);
  ep.params.levels = scales;
  ep.params.max_disparity = MIN(o->max_disparity, sz.w / 2);
  ep.params.refine = o->refine;
  g_autoptr(StereoEngine) e = stereo_engine_new(gpu, &ep, &error);
  if (!e) {
    fprintf(stderr, "stereod-bench: %dx%d scales %d batch %d: %s\n", sz.w, sz.h, scales, batch,
            error->message);
    g_error_free(error);
    return false;
  }
  StereoInput in[STEREO_MAX_BATCH];
  int n_batches = (o->warmup + o->frames + batch - 1) / batch;
  int warm_batches = (o->warmup + batch - 1) / batch;
  if (o->count) {
    /* Dry run: what a batch queues (the second one: the steady state). */
    gpu_context_set_dry_run(gpu, true);
    for (int round = 0; round < 2; round++) {
      for (int k = 0; k < batch; k++)
        in[k] = (StereoInput){ .pair = k, .left = left[k % N_INPUTS], .right = right[k % N_INPUTS],
                               .left_stride = sz.w, .right_stride = sz.w };
      if (!stereo_engine_submit_batch(e, in, batch, NULL, &error))
        goto fail_dry;
      for (int k = 0; k < batch; k++) {
        StereoFrame f;
        if (!stereo_engine_collect(e, true, &f, &error))
          goto fail_dry;
        stereo_engine_release(e, &f);
      }
    }
    gpu_context_set_dry_run(gpu, false);
    StereoWorkCounts c;
    stereo_engine_get_last_counts(e, &c);
    printf("%5dx%-5d %6d %5d: %d dispatches, %d barriers per batch (dry run, search on "
           "level %d%s)\n", sz.w, sz.h, stereo_params_get_levels(stereo_engine_get_params(e)),
           batch, c.dispatches, c.barriers,
           stereo_params_get_search_level(stereo_engine_get_params(e)),
           gpu_context_is_software(gpu) && !g_getenv("STEREOD_PHASE_SPLIT")
             ? ", phase rounds split as on software renderers; STEREOD_PHASE_SPLIT=large for the "
               "GPU schedule" : "");
    return true;
fail_dry:
    gpu_context_set_dry_run(gpu, false);
    fprintf(stderr, "stereod-bench: %s\n", error->message);
    g_error_free(error);
    return false;
  }
  int total = n_batches * batch;
  double *lat = g_new(double, total);
  double *stage = g_new(double, (size_t)n_batches * STEREO_STAGE_COUNT);
  int64_t *t_submit = g_new(int64_t, n_batches);
  int submitted = 0, collected = 0, batches_done = 0;
  int64_t t_start = g_get_monotonic_time();   /* reset after the warm-up, if there is one */
  StereoWorkCounts counts = { 0 };
  while (collected < total) {
    while (submitted < n_batches && stereo_engine_can_submit(e)) {
      for (int k = 0; k < batch; k++) {
        int idx = (submitted * batch + k) % N_INPUTS;
        in[k] = (StereoInput){ .pair = k, .tag = (uint64_t)submitted, .left = left[idx],
                               .right = right[idx], .left_stride = sz.w, .right_stride = sz.w };
      }
      t_submit[submitted] = g_get_monotonic_time();
      if (!stereo_engine_submit_batch(e, in, batch, NULL, &error))
        goto fail;
      stereo_engine_get_last_counts(e, &counts);
      submitted++;
    }
    StereoFrame f;
    if (!stereo_engine_collect(e, true, &f, &error))
      goto fail;
    int64_t now = g_get_monotonic_time();
    lat[collected] = (now - t_submit[f.tag]) * 1e-3;
    if (collected % batch == 0) {
      for (int s = 0; s < STEREO_STAGE_COUNT; s++)
        stage[(size_t)s * n_batches + batches_done] = f.stage_ms[s];
      batches_done++;
    }
    stereo_engine_release(e, &f);
    collected++;
    if (collected == warm_batches * batch)
      t_start = now;
  }
  int timed = total - warm_batches * batch, timed_b = n_batches - warm_batches;
  double secs = (g_get_monotonic_time() - t_start) * 1e-6;
  double fps = timed / secs;
  double p50 = percentile(lat + warm_batches * batch, timed, 0.5);
  double p99 = percentile(lat + warm_batches * batch, timed, 0.99);
  double st[STEREO_STAGE_COUNT], gpu_sum = 0;
  for (int s = 0; s < STEREO_STAGE_COUNT; s++) {
    st[s] = percentile(stage + (size_t)s * n_batches + warm_batches, timed_b, 0.5);
    gpu_sum += st[s];
  }
  printf("%5dx%-5d %6d %5d %9d %10.1f %9.1f %8.2f %8.2f |", sz.w, sz.h, scales, batch,
         in_flight, fps, fps * sz.w * sz.h * 1e-6, p50, p99);
  for (int s = 0; s < STEREO_STAGE_COUNT; s++)
    printf(" %7.3f", st[s]);
  printf(" %8.3f %8.3f %5d %5d\n", gpu_sum, gpu_sum / batch, counts.dispatches,
         counts.barriers);
  printf("# summary: %s %dx%d %d scales, batch %d, %d in flight: %.1f pairs/s end to end, "
         "p99 latency %.2f ms\n", o->device_name, sz.w, sz.h, scales, batch, in_flight, fps, p99);
  fflush(stdout);
  if (o->csv) {
    fprintf(o->csv, "%d,%d,%d,%d,%d,%.3f,%.3f,%.4f,%.4f", sz.w, sz.h, scales, batch, in_flight,
            fps, fps * sz.w * sz.h * 1e-6, p50, p99);
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      fprintf(o->csv, ",%.4f", st[s]);
    fprintf(o->csv, ",%.4f,%.4f,%d,%d\n", gpu_sum, gpu_sum / batch, counts.dispatches,
            counts.barriers);
    fflush(o->csv);
  }
  g_free(lat);
  g_free(stage);
  g_free(t_submit);
  if (o->profile > 0 && !profile_case(gpu, e, o, batch, left, right, sz))
    return false;
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
  g_autofree char *batch_s = NULL, *size_s = NULL, *source_s = NULL;
  gboolean service = FALSE;
  g_autofree char *pattern_s = NULL;
  BenchServiceOptions so = { .pairs = 16, .fps = 60, .seconds = 10, .warmup_seconds = 3 };
  g_autofree char *device = NULL, *format_s = NULL, *save_dir = NULL;
  Options o = { .frames = 200, .warmup = 20, .max_disparity = 128 };
  gboolean version = FALSE;
  GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_s, "WxH list", "640x480,1920x1080" },
    { "scales", 0, 0, G_OPTION_ARG_STRING, &scales_s, "pyramid levels list", "1,5" },
    { "batch", 0, 0, G_OPTION_ARG_STRING, &batch_s, "pairs per batch list", "1,4,16" },
    { "in-flight", 0, 0, G_OPTION_ARG_STRING, &flight_s, "batches in flight list", "1,4" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &o.frames, "timed pairs per case", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &o.warmup, "pairs before timing", "N" },
    { "max-disparity", 0, 0, G_OPTION_ARG_DOUBLE, &o.max_disparity, "search range", "D" },
    { "service", 0, 0, G_OPTION_ARG_NONE, &service,
      "run the service's frame loop and capture on live synthetic pairs (bench/service.c)",
      NULL },
    { "pairs", 0, 0, G_OPTION_ARG_INT, &so.pairs, "--service: camera pairs [16]", "N" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size_s, "--service: pair size [1920x1080]", "WxH" },
    { "fps", 0, 0, G_OPTION_ARG_INT, &so.fps, "--service: camera rate [60]", "R" },
    { "seconds", 0, 0, G_OPTION_ARG_INT, &so.seconds, "--service: measured seconds [10]", "S" },
    { "warmup-seconds", 0, 0, G_OPTION_ARG_INT, &so.warmup_seconds,
      "--service: seconds before measuring [3]", "S" },
    { "source", 0, 0, G_OPTION_ARG_STRING, &source_s,
      "--service: still (textured pairs, imagefreeze) or videotestsrc [still]", "S" },
    { "profile", 0, 0, G_OPTION_ARG_INT, &o.profile,
      "after each case, N batches with every dispatch timed: GPU ms per pass", "N" },
    { "count", 0, 0, G_OPTION_ARG_NONE, &o.count,
      "only count the dispatches and barriers of one batch (dry run, nothing computed)", NULL },
    { "refine", 0, 0, G_OPTION_ARG_NONE, &o.refine,
      "with the level-0 refinement search (docs/algorithm.md §5b)", NULL },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_s, "output format s16|float", "F" },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "also write CSV", "FILE" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device, "EGL device", "D" },
    { "pattern", 0, 0, G_OPTION_ARG_STRING, &pattern_s,
      "textured (random texture, known disparities) or bars (videotestsrc's SMPTE bars in "
      "both views: flat regions, the worst case for the hole fill) [textured]", "P" },
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
  int scales[8], flights[8], batches[8], n_sizes, n_scales, n_flights, n_batches;
  if (!parse_sizes(sizes_s ? sizes_s : "640x480,1920x1080", sizes, 8, &n_sizes) ||
      !parse_list(scales_s ? scales_s : "5", scales, 8, &n_scales) ||
      !parse_list(flight_s ? flight_s : "1,4", flights, 8, &n_flights) ||
      !parse_list(batch_s ? batch_s : "1", batches, 8, &n_batches) || o.frames < 1 ||
      o.warmup < 0) {
    fprintf(stderr, "stereod-bench: bad --sizes, --scales, --batch, --in-flight or --frames "
            "(see --help)\n");
    return 64;   /* EX_USAGE */
  }
  bool bars = g_strcmp0(pattern_s, "bars") == 0;
  if (pattern_s && !bars && g_strcmp0(pattern_s, "textured") != 0) {
    fprintf(stderr, "stereod-bench: bad --pattern (textured or bars; see --help)\n");
    return 64;
  }
  o.format = g_strcmp0(format_s, "float") == 0 ? STEREO_OUTPUT_FLOAT : STEREO_OUTPUT_S16;
  if (service) {
    Size sz = { 1920, 1080 };
    int n = 0;
    if (size_s && !parse_sizes(size_s, &sz, 1, &n)) {
      fprintf(stderr, "stereod-bench: bad --size\n");
      return 64;
    }
    /* the device's name for the summary line, from a context of its own */
    GpuContextParams gp = { .label = "bench", .device = device };
    g_autoptr(GpuContext) probe = gpu_context_new(&gp, &error);
    if (!probe) {
      fprintf(stderr, "stereod-bench: %s\n", error->message);
      return 1;
    }
    const char *renderer = gpu_context_get_renderer(probe);
    g_autofree char *name = g_strdup(strstr(renderer, "H200") ? "H200"
                                     : gpu_context_is_software(probe) ? "llvmpipe" : renderer);
    printf("# device: %s | %s | %s\n", gpu_context_get_device(probe), renderer,
           gpu_context_get_version(probe));
    g_clear_pointer(&probe, gpu_context_free);
    so.width = sz.w;
    so.height = sz.h;
    so.in_flight = flight_s ? flights[0] : 2;   /* the daemon's default */
    so.scales = scales_s ? scales[0] : 0;   /* 0: automatic, as the daemon */
    so.max_disparity = o.max_disparity;
    so.refine = o.refine;
    so.source = source_s ? source_s : "still";
    so.device = device;
    so.device_name = name;
    return bench_service_run(&so);
  }
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
  /* The device for the summary lines: "H200" for an NVIDIA H200, else the renderer. */
  const char *renderer = gpu_context_get_renderer(gpu);
  o.device_name = strstr(renderer, "H200") ? "H200" : gpu_context_is_software(gpu) ? "llvmpipe"
                                                                                   : renderer;
  printf("# output %s, max disparity %.0f, level-0 refinement %s, %d timed pairs after %d "
         "warm-up, %d inputs rotated\n", o.format == STEREO_OUTPUT_S16 ? "s16+u8" : "float+u8",
         o.max_disparity, o.refine ? "on" : "off", o.frames, o.warmup, N_INPUTS);
  printf("# stage columns: GPU ms per batch (median); p50/p99: submit to collect per pair\n");
  printf("%-11s %6s %5s %9s %10s %9s %8s %8s |", "size", "scales", "batch", "in-flight",
         "pairs/s", "Mpix/s", "p50 ms", "p99 ms");
  for (int s = 0; s < STEREO_STAGE_COUNT; s++)
    printf(" %7s", stereo_stage_name(s));
  printf(" %8s %8s %5s %5s\n", "gpu/batch", "gpu/pair", "disp", "barr");
  if (o.csv) {
    fprintf(o.csv, "width,height,scales,batch,in_flight,pairs_per_s,mpix_per_s,p50_ms,p99_ms");
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      fprintf(o.csv, ",%s_ms", stereo_stage_name(s));
    fprintf(o.csv, ",gpu_ms_per_batch,gpu_ms_per_pair,dispatches,barriers\n");
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
      if (bars)
        bench_make_bars(sizes[i].w, sizes[i].h, left[k], right[k]);
      else
        bench_make_pair(rng, sizes[i].w, sizes[i].h, MIN(o.max_disparity, sizes[i].w / 2) * 0.6,
                        left[k], right[k]);
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
      for (int b = 0; b < n_batches; b++)
        for (int f = 0; f < n_flights; f++)
          if (!bench_one(gpu, &o, sizes[i], scales[s], batches[b], flights[f], left, right))
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
