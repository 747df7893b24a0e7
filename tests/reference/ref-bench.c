/* ref-bench: the time of the plain-C double-precision reference (one thread) on the pairs
 * stereod-bench times the GPU engine on (bench/pairs.h: same generator, same seed, same
 * order), for the ratio in bench/RESULTS.md. Built, not installed: it links the reference,
 * which is test code.
 *
 *   ref-bench [--sizes 640x480,1920x1080] [--scales 5] [--max-disparity 128] [--pairs N]
 *             [--csv FILE]
 *
 * For each size and number of scales: the median wall-clock time of N pairs (default 1),
 * printed as stereod-bench printed it before: "reference WxH scales S (plain C, double,
 * 1 thread): X ms per pair, Y pairs/s". Exit status 0, 1 when a run fails, 2 for bad usage.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/pairs.h"
#include "reference.h"

#define MAX_LIST 8

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* "a,b,c" of positive integers (or WxH pairs when `sizes`); false on anything else. */
static bool
parse_list(const char *s, bool sizes, int out[][2], int *n)
{
  g_auto(GStrv) parts = g_strsplit(s, ",", -1);
  *n = 0;
  for (int i = 0; parts[i]; i++) {
    if (*n == MAX_LIST)
      return false;
    g_auto(GStrv) wh = g_strsplit(parts[i], "x", -1);
    if (g_strv_length(wh) != (sizes ? 2u : 1u))
      return false;
    for (int k = 0; wh[k]; k++) {
      guint64 v;
      if (!g_ascii_string_to_unsigned(wh[k], 10, sizes ? 64 : 1, sizes ? 8192 : 8, &v, NULL))
        return false;
      out[*n][k] = (int)v;
    }
    (*n)++;
  }
  return *n > 0;
}

int
main(int argc, char **argv)
{
  g_autofree char *sizes_s = NULL, *scales_s = NULL, *csv_path = NULL;
  int pairs = 1;
  double max_disparity = 128;
  GOptionEntry entries[] = {
    { "sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_s, "WxH list", "640x480,1920x1080" },
    { "scales", 0, 0, G_OPTION_ARG_STRING, &scales_s, "pyramid levels list", "5" },
    { "max-disparity", 0, 0, G_OPTION_ARG_DOUBLE, &max_disparity, "search range", "D" },
    { "pairs", 0, 0, G_OPTION_ARG_INT, &pairs, "pairs timed per case (default 1)", "N" },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &csv_path, "also write CSV", "FILE" },
    { NULL },
  };
  g_autoptr(GError) error = NULL;
  g_autoptr(GOptionContext) oc = g_option_context_new("- time the CPU reference");
  g_option_context_add_main_entries(oc, entries, NULL);
  int sizes[MAX_LIST][2], scales[MAX_LIST][2], n_sizes, n_scales;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || argc != 1 ||
      !parse_list(sizes_s ? sizes_s : "640x480,1920x1080", true, sizes, &n_sizes) ||
      !parse_list(scales_s ? scales_s : "5", false, scales, &n_scales) || pairs < 1 ||
      pairs > 1000 || !(max_disparity >= 1 && max_disparity <= 1000)) {
    fprintf(stderr, "ref-bench: %s\n", error ? error->message : "bad arguments (see --help)");
    return 2;
  }
  FILE *csv = NULL;
  if (csv_path && !(csv = fopen(csv_path, "we"))) {
    fprintf(stderr, "ref-bench: %s: %s\n", csv_path, g_strerror(errno));
    return 1;
  }
  /* stereod-bench's generator state: seed 12345, BENCH_N_INPUTS pairs per size in order. */
  GRand *rng = g_rand_new_with_seed(12345);
  int rc = 0;
  for (int i = 0; i < n_sizes && rc == 0; i++) {
    const int w = sizes[i][0], h = sizes[i][1];
    const double max_d = MIN(max_disparity, w / 2);
    uint8_t *left[BENCH_N_INPUTS], *right[BENCH_N_INPUTS];
    for (int k = 0; k < BENCH_N_INPUTS; k++) {
      left[k] = g_malloc((size_t)w * h);
      right[k] = g_malloc((size_t)w * h);
      bench_make_pair(rng, w, h, max_d * 0.6, left[k], right[k]);
    }
    for (int s = 0; s < n_scales && rc == 0; s++) {
      StereoParams p;
      stereo_params_init(&p, w, h);
      p.levels = scales[s][0];
      p.max_disparity = max_d;
      g_autofree float *d = g_new(float, (size_t)w * h);
      g_autofree double *t = g_new(double, pairs);
      for (int k = 0; k < pairs; k++) {
        gint64 t0 = g_get_monotonic_time();
        if (!ref_stereo_run(&p, left[k % BENCH_N_INPUTS], w, right[k % BENCH_N_INPUTS], w, d,
                            NULL, &error)) {
          fprintf(stderr, "ref-bench: %dx%d scales %d: %s\n", w, h, p.levels,
                  error ? error->message : "failed");
          rc = 1;
          break;
        }
        t[k] = (g_get_monotonic_time() - t0) * 1e-3;
      }
      if (rc)
        break;
      qsort(t, pairs, sizeof *t, cmp_double);
      double med = t[(pairs - 1) / 2];
      printf("reference %dx%d scales %d (plain C, double, 1 thread): %.1f ms per pair, "
             "%.3f pairs/s\n", w, h, p.levels, med, 1000.0 / med);
      fflush(stdout);
      if (csv)
        fprintf(csv, "# reference,%d,%d,%d,%.3f\n", w, h, p.levels, med);
    }
    for (int k = 0; k < BENCH_N_INPUTS; k++) {
      g_free(left[k]);
      g_free(right[k]);
    }
  }
  g_rand_free(rng);
  if (csv)
    fclose(csv);
  return rc;
}
