/* stereod-synth: writes a synthetic rectified stereo pair with exact ground truth.
 *
 *   stereod-synth [--scene constant|slanted|box] [--size WxH] [--seed N]
 *                 [--d0 PX] [--dx S] [--dy S] [--d1 PX] [--box X,Y,W,H]
 *                 [--contrast C] [--gain G] [--offset O] [--noise SIGMA]
 *                 -l LEFT.png -r RIGHT.png [--gt GT.pfm] [--gt-right GT1.pfm]
 *                 [--mask MASK.png] [--quiet]
 *
 * The scene model is described in tools/synth.h. Images are PNG, or PGM when the name ends
 * in .pgm. The ground truth is PFM (Middlebury: float px, rows bottom up) for the surface
 * seen at each pixel; the mask uses Middlebury's mask0nocc convention (255 visible in
 * both views, 128 occluded, 0 match outside the right image). Exit status 0, 1 when a file
 * cannot be written or the scene is invalid, 64 for bad usage.
 */
#include "tools/imageio.h"
#include "tools/synth.h"
#include "stereod-config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "stereod-synth"
#define EXIT_USAGE 64   /* EX_USAGE */

static char *opt_scene, *opt_size, *opt_box, *opt_left, *opt_right, *opt_gt, *opt_gt_right,
            *opt_mask;
static double opt_d0 = NAN, opt_dx = NAN, opt_dy = NAN, opt_d1 = NAN, opt_contrast = NAN,
              opt_gain = NAN, opt_offset = NAN, opt_noise = NAN;
static int opt_seed = 1;
static gboolean opt_quiet, opt_version;

static const GOptionEntry entries[] = {
  { "scene", 0, 0, G_OPTION_ARG_STRING, &opt_scene,
    "constant, slanted or box (default box)", "SCENE" },
  { "size", 0, 0, G_OPTION_ARG_STRING, &opt_size, "Image size (default 640x480)", "WxH" },
  { "seed", 0, 0, G_OPTION_ARG_INT, &opt_seed, "Texture and noise seed (default 1)", "N" },
  { "d0", 0, 0, G_OPTION_ARG_DOUBLE, &opt_d0, "Background disparity at (0,0), px", "PX" },
  { "dx", 0, 0, G_OPTION_ARG_DOUBLE, &opt_dx, "Background slope along x, px/px", "S" },
  { "dy", 0, 0, G_OPTION_ARG_DOUBLE, &opt_dy, "Background slope along y, px/px", "S" },
  { "d1", 0, 0, G_OPTION_ARG_DOUBLE, &opt_d1, "Box disparity, px", "PX" },
  { "box", 0, 0, G_OPTION_ARG_STRING, &opt_box, "Box rectangle in the left view", "X,Y,W,H" },
  { "contrast", 0, 0, G_OPTION_ARG_DOUBLE, &opt_contrast,
    "Texture standard deviation, grey levels (default 40)", "C" },
  { "gain", 0, 0, G_OPTION_ARG_DOUBLE, &opt_gain, "Right image gain (default 1)", "G" },
  { "offset", 0, 0, G_OPTION_ARG_DOUBLE, &opt_offset, "Right image offset (default 0)", "O" },
  { "noise", 0, 0, G_OPTION_ARG_DOUBLE, &opt_noise,
    "Right image Gaussian noise sigma, grey levels (default 0)", "SIGMA" },
  { "left", 'l', 0, G_OPTION_ARG_FILENAME, &opt_left, "Left image to write", "LEFT.png" },
  { "right", 'r', 0, G_OPTION_ARG_FILENAME, &opt_right, "Right image to write", "RIGHT.png" },
  { "gt", 'g', 0, G_OPTION_ARG_FILENAME, &opt_gt, "Left-view ground truth (PFM)", "GT.pfm" },
  { "gt-right", 0, 0, G_OPTION_ARG_FILENAME, &opt_gt_right,
    "Right-view ground truth (PFM)", "GT1.pfm" },
  { "mask", 'm', 0, G_OPTION_ARG_FILENAME, &opt_mask,
    "Occlusion mask (PNG: 255 visible, 128 occluded, 0 outside)", "MASK.png" },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Print nothing on success", NULL },
  { "version", 0, 0, G_OPTION_ARG_NONE, &opt_version, "Print the version and exit", NULL },
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

/* Parses "A<sep>B<sep>..." into n integers. */
static bool
parse_ints(const char *s, const char *seps, int n, int *out)
{
  g_auto(GStrv) parts = g_strsplit_set(s, seps, -1);
  if ((int)g_strv_length(parts) != n)
    return false;
  for (int i = 0; i < n; i++) {
    guint64 v;
    if (!g_ascii_string_to_unsigned(parts[i], 10, 0, 100000, &v, NULL))
      return false;
    out[i] = (int)v;
  }
  return true;
}

static void
set_if(double *field, double value)
{
  if (!isnan(value))
    *field = value;
}

static int
make_params(SynthParams *p)
{
  SynthScene scene = SYNTH_SCENE_BOX;
  if (opt_scene && !synth_scene_from_name(opt_scene, &scene))
    return fail(EXIT_USAGE, "unknown scene '%s' (constant, slanted or box)", opt_scene);
  int size[2] = { 640, 480 };
  if (opt_size && !parse_ints(opt_size, "x", 2, size))
    return fail(EXIT_USAGE, "--size must look like 640x480, not '%s'", opt_size);
  synth_params_init(p, scene, size[0], size[1]);
  p->seed = (uint32_t)opt_seed;
  set_if(&p->d0, opt_d0);
  set_if(&p->dx, opt_dx);
  set_if(&p->dy, opt_dy);
  set_if(&p->d1, opt_d1);
  set_if(&p->contrast, opt_contrast);
  set_if(&p->gain, opt_gain);
  set_if(&p->offset, opt_offset);
  set_if(&p->noise, opt_noise);
  if (opt_box) {
    int b[4];
    if (!parse_ints(opt_box, ",", 4, b))
      return fail(EXIT_USAGE, "--box must look like X,Y,W,H, not '%s'", opt_box);
    p->box_x = b[0];
    p->box_y = b[1];
    p->box_w = b[2];
    p->box_h = b[3];
  }
  return 0;
}

static int
write_files(const SynthPair *pair)
{
  const int w = pair->width, h = pair->height;
  const size_t fs = sizeof(float) * (size_t)w;
  g_autoptr(GError) error = NULL;
  if (!imageio_write_gray(opt_left, pair->left, w, h, (size_t)w, &error) ||
      !imageio_write_gray(opt_right, pair->right, w, h, (size_t)w, &error) ||
      (opt_gt && !imageio_write_pfm(opt_gt, pair->disparity, w, h, fs, &error)) ||
      (opt_gt_right && !imageio_write_pfm(opt_gt_right, pair->disparity_right, w, h, fs,
                                          &error)) ||
      (opt_mask && !imageio_write_png8(opt_mask, pair->mask, w, h, (size_t)w, &error)))
    return fail(EXIT_FAILURE, "%s", error->message);
  return 0;
}

int
main(int argc, char **argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new(NULL);
  g_option_context_set_summary(ctx, "Writes a synthetic rectified stereo pair with exact "
                                    "ground truth (left view is the reference).");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error))
    return fail(EXIT_USAGE, "%s (see --help)", error->message);
  if (opt_version) {
    printf("stereod-synth %s\n", STEREOD_VERSION);
    return 0;
  }
  if (argc > 1)
    return fail(EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[1]);
  if (!opt_left || !opt_right)
    return fail(EXIT_USAGE, "give the files to write: -l LEFT.png -r RIGHT.png");

  SynthParams p;
  int status = make_params(&p);
  if (status)
    return status;
  g_autoptr(SynthPair) pair = synth_pair_new(&p, &error);
  if (!pair)
    return fail(EXIT_FAILURE, "invalid scene: %s", error->message);
  status = write_files(pair);
  if (status)
    return status;

  if (!opt_quiet) {
    const size_t n = (size_t)p.width * p.height;
    float lo = INFINITY, hi = -INFINITY;
    size_t occluded = 0, outside = 0;
    for (size_t i = 0; i < n; i++) {
      lo = MIN(lo, pair->disparity[i]);
      hi = MAX(hi, pair->disparity[i]);
      occluded += pair->mask[i] == SYNTH_MASK_OCCLUDED;
      outside += pair->mask[i] == SYNTH_MASK_OUTSIDE;
    }
    printf("%s %dx%d seed %u: disparity %.2f..%.2f px, %.1f%% occluded, %.1f%% outside; "
           "wrote %s %s%s%s%s%s%s%s\n", synth_scene_name(p.scene), p.width, p.height, p.seed,
           lo, hi, 100.0 * occluded / n, 100.0 * outside / n, opt_left, opt_right,
           opt_gt ? " " : "", opt_gt ? opt_gt : "", opt_gt_right ? " " : "",
           opt_gt_right ? opt_gt_right : "", opt_mask ? " " : "", opt_mask ? opt_mask : "");
  }
  return 0;
}
