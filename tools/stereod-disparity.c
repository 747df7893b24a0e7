/* stereod-disparity: one rectified stereo pair from files in, a disparity map out.
 *
 *   stereod-disparity LEFT RIGHT -o OUT.pfm [--png16 OUT.png] [--color OUT.jpg]
 *                     [--max-disparity N] [--scales N] [--no-lr-check] [--no-densify] [--refine]
 *                     [--window N] [--smoothing S] [--noise-floor G] [--rounds N]
 *                     [--rounds-level0 N]
 *                     [--device auto|hardware|software|surfaceless|N] [--verbose|--quiet]
 *                     [--max-pixels N]
 *
 * LEFT and RIGHT: PNG, PGM/PPM or JPEG (colour is converted to luma), regular files of at
 * most --max-pixels pixels (default 64 Mpixel; tools/imageio.h), refused from their
 * headers before anything that size is allocated. Exit status 0 on
 * success, 1 when something fails at run time (files, sizes, GPU), 64 for bad usage; the
 * reason is one line "stereod-disparity: ..." on stderr.
 */
#include "gpu/gpu.h"
#include "kernels/stereo.h"
#include "tools/imageio.h"
#include "stereod-config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "stereod-disparity"
#define EXIT_USAGE 64   /* EX_USAGE */

static char *opt_output, *opt_png16, *opt_color, *opt_device, *opt_gt, *opt_calib, *opt_depth;
static double opt_max_disparity = 0.0;
static int opt_scales = 0, opt_repeat = 1, opt_window = 0, opt_rounds = 0, opt_rounds0 = 0;
static gint64 opt_max_pixels = (gint64)IMAGEIO_DEFAULT_MAX_PIXELS;
static double opt_smoothing = 0.0, opt_noise_floor = 0.0, opt_coarse_fallback = 0.0,
              opt_ground_margin = -1.0;
static gboolean opt_no_lr_check, opt_no_densify, opt_refine, opt_verbose, opt_quiet, opt_version;
static char **opt_files;

static const GOptionEntry entries[] = {
  { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
    "Write the disparity as PFM (Middlebury: float px, +inf = invalid)", "OUT.pfm" },
  { "png16", 0, 0, G_OPTION_ARG_FILENAME, &opt_png16,
    "Write the disparity as 16-bit PNG (KITTI: 256 x px, 0 = invalid)", "OUT.png" },
  { "color", 0, 0, G_OPTION_ARG_FILENAME, &opt_color,
    "Write a colour-mapped JPEG to look at (invalid = black)", "OUT.jpg" },
  { "max-disparity", 'd', 0, G_OPTION_ARG_DOUBLE, &opt_max_disparity,
    "Largest expected disparity in px (default 128, at most width-1, width/2 below 256 px)",
    "N" },
  { "scales", 's', 0, G_OPTION_ARG_INT, &opt_scales,
    "Pyramid levels, 1..8 (default 0 = automatic)", "N" },
  { "no-lr-check", 0, 0, G_OPTION_ARG_NONE, &opt_no_lr_check,
    "Skip the right-view pass and the left-right consistency check", NULL },
  { "no-densify", 0, 0, G_OPTION_ARG_NONE, &opt_no_densify,
    "Leave invalid pixels invalid (no background-side fill): what the filter measured", NULL },
  { "window", 0, 0, G_OPTION_ARG_INT, &opt_window,
    "Search window half-width, 1..7 px (default 0 = automatic: 3, a 7 x 7 window, when the search runs on level 2 or coarser, as at 1920 x 1080; else 4, 9 x 9)", "N" },
  { "rounds", 0, 0, G_OPTION_ARG_INT, &opt_rounds,
    "Phase rounds on each level above the finest, 1..8 (default 0 = automatic: 1 from 2^20 px, else 2)", "N" },
  { "rounds-level0", 0, 0, G_OPTION_ARG_INT, &opt_rounds0,
    "Phase rounds on the finest level, 1..8 (default 0 = automatic: 1 from 2^20 px, else as --rounds)", "N" },
  { "smoothing", 0, 0, G_OPTION_ARG_DOUBLE, &opt_smoothing,
    "Smoothing of the phase estimates, sigma 0.5..5 px (default 0 = 2)", "S" },
  { "noise-floor", 0, 0, G_OPTION_ARG_DOUBLE, &opt_noise_floor,
    "Noise floor of the cameras, 0..64 grey levels: weaker filter responses are not "
    "measured (default 0 = none; stereod.conf's noise_floor)", "G" },
  { "coarse-fallback", 0, 0, G_OPTION_ARG_DOUBLE, &opt_coarse_fallback,
    "A pixel the finest level cannot measure takes the estimate of the finest coarser level that measured it, where one px of that level is at most this fraction of its disparity, 0..1 (default 0 = off; stereod.conf's coarse_fallback)", "R" },
  { "ground-margin", 0, 0, G_OPTION_ARG_DOUBLE, &opt_ground_margin,
    "The pitch-plane prior: no disparity more than M px below the ground's, from the pose of --calib, 0..1000 (default off; stereod.conf's ground_margin)", "M" },
  { "refine", 0, 0, G_OPTION_ARG_NONE, &opt_refine,
    "Search again at full resolution around the coarse estimate (more accurate, slower)", NULL },
  { "calib", 'c', 0, G_OPTION_ARG_FILENAME, &opt_calib,
    "Calibration file (config/calib/example.conf): LEFT and RIGHT are the raw camera images; "
    "they are undistorted and rectified first and every output is in the rectified left view",
    "FILE" },
  { "depth", 0, 0, G_OPTION_ARG_FILENAME, &opt_depth,
    "Write depth as a 16-bit PNG in millimetres (0 = invalid); needs --calib", "OUT.png" },
  { "gt", 0, 0, G_OPTION_ARG_FILENAME, &opt_gt,
    "Score against a ground-truth PFM of the left view (inf/NaN = unknown): bad-1, bad-2, "
    "density and MAE on the pixels that are visible in both views", "GT.pfm" },
  { "device", 0, 0, G_OPTION_ARG_STRING, &opt_device,
    "EGL device: auto, hardware, software, surfaceless or an index (default auto)", "DEV" },
  { "repeat", 'n', 0, G_OPTION_ARG_INT, &opt_repeat,
    "Process the pair N times and report the best and mean time (default 1)", "N" },
  { "max-pixels", 0, 0, G_OPTION_ARG_INT64, &opt_max_pixels,
    "Largest image read, width x height (default 64000000); larger files are refused "
    "before they are decoded", "N" },
  { "verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, "Say more, enable debug logs", NULL },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Print nothing on success", NULL },
  { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, "Print the version and exit", NULL },
  { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_files, NULL, "LEFT RIGHT" },
  { NULL }
};

static int G_GNUC_PRINTF(2, 3)
fail(int status, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  /* One line, whatever the library put in the message. */
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

/* Checks what can be checked before any file is read; returns 0 or EXIT_USAGE. */
static int
check_usage(void)
{
  int n = opt_files ? (int)g_strv_length(opt_files) : 0;
  if (n != 2)
    return fail(EXIT_USAGE, "expected two input files, LEFT and RIGHT, got %d (see --help)", n);
  if (opt_depth && !opt_calib)
    return fail(EXIT_USAGE, "--depth needs --calib (see --help)");
  if (!opt_output && !opt_png16 && !opt_color && !opt_gt && !opt_depth)
    return fail(EXIT_USAGE, "nothing to write: give -o OUT.pfm, --png16 or --color");
  if (opt_max_disparity < 0.0 || opt_max_disparity > 1000.0 || isnan(opt_max_disparity))
    return fail(EXIT_USAGE, "--max-disparity must be within 0..1000 px (0 = default)");
  if (opt_scales < 0 || opt_scales > STEREO_MAX_LEVELS)
    return fail(EXIT_USAGE, "--scales must be within 1..%d (0 = automatic)", STEREO_MAX_LEVELS);
  if (opt_window < 0 || opt_window > 7)
    return fail(EXIT_USAGE, "--window must be within 1..7 px (0 = default)");
  if (opt_rounds < 0 || opt_rounds > 8 || opt_rounds0 < 0 || opt_rounds0 > 8)
    return fail(EXIT_USAGE, "--rounds and --rounds-level0 must be within 1..8 (0 = default)");
  if (!(opt_smoothing == 0.0 || (opt_smoothing >= 0.5 && opt_smoothing <= 5.0)))
    return fail(EXIT_USAGE, "--smoothing must be within 0.5..5 px (0 = default)");
  if (!(opt_noise_floor >= 0.0 && opt_noise_floor <= 64.0))
    return fail(EXIT_USAGE, "--noise-floor must be within 0..64 grey levels");
  if (!(opt_coarse_fallback >= 0.0 && opt_coarse_fallback <= 1.0))
    return fail(EXIT_USAGE, "--coarse-fallback must be within 0..1 (0 = off)");
  if (opt_ground_margin != -1.0 && !(opt_ground_margin >= 0.0 && opt_ground_margin <= 1000.0))
    return fail(EXIT_USAGE, "--ground-margin must be within 0..1000 px");
  if (opt_ground_margin >= 0.0 && !opt_calib)
    return fail(EXIT_USAGE, "--ground-margin needs --calib (its pose says where the ground is)");
  if (opt_repeat < 1 || opt_repeat > 10000)
    return fail(EXIT_USAGE, "--repeat must be within 1..10000");
  if (opt_device && !device_valid(opt_device))
    return fail(EXIT_USAGE, "--device must be auto, hardware, software, surfaceless or an "
                            "index, not '%s'", opt_device);
  if (opt_verbose && opt_quiet)
    return fail(EXIT_USAGE, "--verbose and --quiet exclude each other");
  if (opt_max_pixels < 1 || opt_max_pixels > (gint64)IMAGEIO_MAX_SIDE * IMAGEIO_MAX_SIDE)
    return fail(EXIT_USAGE, "--max-pixels must be within 1..%" G_GINT64_FORMAT,
                (gint64)IMAGEIO_MAX_SIDE * IMAGEIO_MAX_SIDE);
  return 0;
}

static void
params_apply_options(StereoParams *p, int width)
{
  if (opt_max_disparity > 0.0) {
    p->max_disparity = opt_max_disparity;
  } else {
    /* The default range is what most pairs need; small images get a range they can hold. */
    p->max_disparity = MIN(128.0, width - 1.0);
    if (width < 256)
      p->max_disparity = MIN(p->max_disparity, floor(width / 2.0));
  }
  p->levels = opt_scales;
  p->lr_check = !opt_no_lr_check;
  p->densify = !opt_no_densify;
  p->refine = opt_refine;
  if (opt_window > 0)
    p->search_radius = opt_window;
  if (opt_smoothing > 0.0)
    p->smooth_sigma = opt_smoothing;
  if (opt_rounds > 0)
    p->iterations = opt_rounds;
  if (opt_rounds0 > 0)
    p->iterations_level0 = opt_rounds0;
  stereo_params_set_noise_floor(p, opt_noise_floor);
  p->coarse_fallback = opt_coarse_fallback;
  p->ground_margin = opt_ground_margin;
}

static double
valid_fraction(const float *d, size_t n)
{
  size_t valid = 0;
  for (size_t i = 0; i < n; i++)
    valid += !isnan(d[i]);
  return n ? (double)valid / n : 0.0;
}

static int
write_outputs(const float *disp, int w, int h)
{
  g_autoptr(GError) error = NULL;
  size_t stride = sizeof(float) * (size_t)w;
  if (opt_output && !imageio_write_pfm(opt_output, disp, w, h, stride, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  if (opt_png16 && !imageio_write_png16_disparity(opt_png16, disp, w, h, stride, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  float used_max;
  if (opt_color && !imageio_write_color_jpeg(opt_color, disp, w, h, stride, 0.0f, 90,
                                             &used_max, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  if (opt_color && opt_verbose)
    printf("colour map: 0..%.1f px (99th percentile)\n", used_max);
  return 0;
}

/* Non-occluded mask from the left-view ground truth alone: pixel x of a row is visible
 * in the right view unless a pixel with a disparity larger by more than 1 px lands on the
 * same right-image column (forward warp with a z-buffer, per row). */
static void
noc_mask(const float *gt, int w, int h, bool *noc)
{
  g_autofree float *zbuf = g_new(float, w);
  for (int y = 0; y < h; y++) {
    const float *row = gt + (size_t)y * w;
    for (int x = 0; x < w; x++)
      zbuf[x] = -INFINITY;
    for (int x = 0; x < w; x++) {
      if (!isfinite(row[x]))
        continue;
      int xr = (int)lround(x - row[x]);
      if (xr >= 0 && xr < w)
        zbuf[xr] = MAX(zbuf[xr], row[x]);
    }
    for (int x = 0; x < w; x++) {
      size_t i = (size_t)y * w + x;
      noc[i] = false;
      if (!isfinite(row[x]))
        continue;
      int xr = (int)lround(x - row[x]);
      noc[i] = xr >= 0 && xr < w && row[x] >= zbuf[xr] - 1.0f;
    }
  }
}

/* Prints the Middlebury-style scores of `disp` against a ground-truth PFM. */
static int
score_gt(const float *disp, int w, int h)
{
  g_autoptr(GError) error = NULL;
  const ImageioLimits limits = { .max_pixels = (uint64_t)opt_max_pixels };
  g_autoptr(ImageioF32) gt = imageio_read_pfm_full(opt_gt, &limits, &error);
  if (!gt)
    return fail(EXIT_FAILURE, "%s", error->message);
  if (gt->width != w || gt->height != h)
    return fail(EXIT_FAILURE, "%s is %dx%d but the pair is %dx%d", opt_gt, gt->width,
                gt->height, w, h);
  size_t n = (size_t)w * h;
  g_autofree float *g = g_new(float, n);
  for (int y = 0; y < h; y++)
    memcpy(g + (size_t)y * w, (const uint8_t *)gt->data + (size_t)y * gt->stride,
           sizeof(float) * w);
  g_autofree bool *noc = g_new(bool, n);
  noc_mask(g, w, h, noc);
  size_t scored = 0, bad1 = 0, bad2 = 0, have = 0;
  double sum = 0.0;
  for (size_t i = 0; i < n; i++) {
    if (!noc[i])
      continue;
    scored++;
    if (isnan(disp[i])) {
      bad1++;
      bad2++;
      continue;
    }
    double e = fabs(disp[i] - g[i]);
    have++;
    sum += e;
    bad1 += e > 1.0;
    bad2 += e > 2.0;
  }
  if (!scored)
    return fail(EXIT_FAILURE, "%s: no pixel with a ground truth visible in both views", opt_gt);
  printf("%s: noc bad-1 %.2f%%, bad-2 %.2f%%, density %.2f%%, MAE %.3f px over %zu pixels\n",
         opt_gt, 100.0 * bad1 / scored, 100.0 * bad2 / scored, 100.0 * have / scored,
         have ? sum / have : 0.0, scored);
  return 0;
}

static int
run(void)
{
  const char *left_path = opt_files[0], *right_path = opt_files[1];
  g_autoptr(GError) error = NULL;

  const ImageioLimits limits = { .max_pixels = (uint64_t)opt_max_pixels };
  g_autoptr(ImageioU8) left = imageio_read_gray_full(left_path, &limits, &error);
  if (!left)
    return fail(EXIT_FAILURE, "%s", error->message);
  g_autoptr(ImageioU8) right = imageio_read_gray_full(right_path, &limits, &error);
  if (!right)
    return fail(EXIT_FAILURE, "%s", error->message);
  if (left->width != right->width || left->height != right->height)
    return fail(EXIT_FAILURE, "%s is %dx%d but %s is %dx%d: the pair must have one size",
                left_path, left->width, left->height, right_path, right->width,
                right->height);
  const int w = left->width, h = left->height;

  StereoParams params;
  stereo_params_init(&params, w, h);
  params_apply_options(&params, w);
  if (!stereo_params_validate(&params, &error))
    return fail(EXIT_FAILURE, "%dx%d pair: %s", w, h, error->message);

  StereoCalib calib;
  if (opt_calib) {
    if (!calib_load(opt_calib, &calib, &error))
      return fail(EXIT_FAILURE, "%s", error->message);
    if (calib.width != w || calib.height != h)
      return fail(EXIT_FAILURE, "%s is for %dx%d images but the pair is %dx%d", opt_calib,
                  calib.width, calib.height, w, h);
    double plane[3];
    if (params.ground_margin >= 0.0 && !calib_ground_plane(&calib, plane))
      return fail(EXIT_FAILURE, "--ground-margin: the pose of %s does not put the camera at "
                  "least 0.5 m above the pitch, with a baseline of at most half that height",
                  opt_calib);
  }

  gint64 t0 = g_get_monotonic_time();
  g_autoptr(GpuContext) gpu = gpu_context_new(&(GpuContextParams){
      .label = PROG, .device = opt_device }, &error);
  if (!gpu)
    return fail(EXIT_FAILURE, "GPU: %s", error->message);
  g_autoptr(StereoEngine) engine = stereo_engine_new(gpu, &(StereoEngineParams){
      .label = PROG, .params = params, .output = STEREO_OUTPUT_FLOAT, .in_flight = 1,
      .calib = opt_calib ? &calib : NULL, .depth = opt_depth != NULL },
      &error);
  if (!engine)
    return fail(EXIT_FAILURE, "stereo engine: %s", error->message);
  gint64 t1 = g_get_monotonic_time();
  if (opt_verbose)
    printf("GPU: %s (%s), set up in %.1f ms\n", gpu_context_get_renderer(gpu),
           gpu_context_get_version(gpu), (t1 - t0) / 1000.0);

  g_autofree float *disp = g_new(float, (size_t)w * h);
  g_autofree uint16_t *depth = opt_depth ? g_new(uint16_t, (size_t)w * h) : NULL;
  double best = INFINITY, total = 0.0;
  for (int i = 0; i < opt_repeat; i++) {
    gint64 a = g_get_monotonic_time();
    if (!stereo_engine_process_full(engine, left->data, left->stride, right->data,
                                    right->stride, disp, NULL, depth, &error))
      return fail(EXIT_FAILURE, "processing failed: %s", error->message);
    double ms = (g_get_monotonic_time() - a) / 1000.0;
    best = MIN(best, ms);
    total += ms;
  }

  int status = write_outputs(disp, w, h);
  if (status)
    return status;
  if (depth && !imageio_write_png16(opt_depth, depth, w, h, sizeof(uint16_t) * (size_t)w, &error))
    return fail(EXIT_FAILURE, "%s", error->message);
  if (opt_gt && (status = score_gt(disp, w, h)))
    return status;

  if (!opt_quiet) {
    const StereoParams *used = stereo_engine_get_params(engine);
    g_autofree char *timing = opt_repeat > 1
        ? g_strdup_printf("best %.1f ms, mean %.1f ms over %d", best, total / opt_repeat,
                          opt_repeat)
        : g_strdup_printf("%.1f ms", best);
    printf("%s: %dx%d, %d levels, search %s, L-R check %s, max disparity %.0f px, %s, "
           "%.1f%% valid\n", left_path, w, h, stereo_params_get_levels(used),
           stereo_params_use_refine(used) ? "on, level-0 refinement"
           : stereo_params_use_search(used) ? "on" : "off", used->lr_check ? "on" : "off",
           used->max_disparity, timing, 100.0 * valid_fraction(disp, (size_t)w * h));
  }
  return 0;
}

int
main(int argc, char **argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_summary(ctx, "Computes the disparity map of a rectified stereo pair "
                                    "(left view is the reference) on the GPU.");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error))
    return fail(EXIT_USAGE, "%s (see --help)", error->message);
  if (opt_version) {
    printf(PROG " %s\n", STEREOD_VERSION);
    return 0;
  }
  int status = check_usage();
  if (status)
    return status;
  if (opt_verbose)
    g_log_set_debug_enabled(TRUE);
  status = run();
  g_strfreev(opt_files);
  g_free(opt_output);
  g_free(opt_png16);
  g_free(opt_color);
  g_free(opt_device);
  g_free(opt_gt);
  g_free(opt_calib);
  g_free(opt_depth);
  return status;
}
