/* test-accuracy.c: accuracy of the GPU engine with the default settings of
 * stereod-disparity, on real data (Middlebury, scored as shared/data/middlebury/README.md
 * defines) and on synthetic textured pairs with exact disparity (constant and slanted,
 * 0 to 100 px). Prints the tables; fails above the limits of the stereo-engine issue.
 *
 * The Middlebury folder comes from STEREOD_MIDDLEBURY_DIR (meson option middlebury_dir).
 * Where it is absent the Middlebury test skips with a message, or fails when
 * STEREOD_REQUIRE_DATA=1.
 */
#include <math.h>
#include <string.h>

#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"
#include "tests/common/texture.h"
#include "tests/common/middlebury.h"

static GRand *rng;

/* The tool's defaults (tools/stereod-disparity.c): stereo_params_init, max disparity
 * 128 clamped to the image. */
static void
default_params(StereoParams *p, int w, int h)
{
  stereo_params_init(p, w, h);
  p->max_disparity = MIN(128.0, w < 256 ? w / 2 : w - 1);
}

static bool with_refine;   /* the level-0 refinement search (§5b) of the cases run now */

static bool
run_engine(GpuContext *ctx, int w, int h, const uint8_t *l, const uint8_t *r, float *disp,
           uint8_t *conf)
{
  GError *error = NULL;
  StereoEngineParams ep = { .label = "accuracy", .output = STEREO_OUTPUT_FLOAT };
  default_params(&ep.params, w, h);
  ep.params.refine = with_refine;
  g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &ep, &error);
  g_assert_no_error(error);
  bool ok = stereo_engine_process(e, l, w, r, w, disp, conf, &error);
  g_assert_no_error(error);
  return ok;
}

typedef struct {
  const char *name;
  double max_bad2, max_bad2_refine;
  double sgbm_bad2;   /* OpenCV StereoSGBM, shared/data/middlebury/README.md */
} SceneLimit;

static void
test_middlebury(void)
{
  const char *dir = g_getenv("STEREOD_MIDDLEBURY_DIR");
  bool require = g_strcmp0(g_getenv("STEREOD_REQUIRE_DATA"), "1") == 0;
  if (!dir || !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_autofree char *msg = g_strdup_printf("Middlebury data not found at %s (meson option "
                                           "middlebury_dir)", dir ? dir : "(unset)");
    if (require)
      g_error("%s and STEREOD_REQUIRE_DATA=1", msg);
    g_test_skip(msg);
    return;
  }
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  /* limits: measured 7.82 / 9.58 / 12.62 (mean 10.01) without, 5.18 / 7.67 / 5.70 (mean
   * 6.18) with the refinement search, on llvmpipe and the H200 alike */
  static const SceneLimit scenes[] = {
    { "tsukuba", 10.0, 7.0, 5.0 },
    { "teddy", 15.0, 10.0, 14.8 },
    { "cones", 16.0, 8.0, 12.0 },
  };
  for (int pass = 0; pass < 2; pass++) {
    with_refine = pass == 1;
    double sum_bad2 = 0;
    g_test_message("%s level-0 refinement (refine=%s):", with_refine ? "with" : "without",
                   with_refine ? "true" : "false");
    g_test_message("scene    | noc bad-1 %% | noc bad-2 %% | density %% | MAE px | SGBM bad-2 %%");
    for (size_t i = 0; i < G_N_ELEMENTS(scenes); i++) {
      g_autofree char *path = g_build_filename(dir, scenes[i].name, NULL);
      GError *error = NULL;
      g_autoptr(MiddleburyScene) sc = middlebury_scene_load(path, 0, &error);
      g_assert_no_error(error);
      g_autofree float *disp = g_new(float, (size_t)sc->width * sc->height);
      for (size_t k = 0; k < (size_t)sc->width * sc->height; k++)
        disp[k] = 12345.0f;   /* poison: any unwritten pixel scores as bad */
      run_engine(ctx, sc->width, sc->height, sc->left, sc->right, disp, NULL);
      MiddleburyScore s = middlebury_score(sc, disp);
      g_test_message("%-8s | %11.2f | %11.2f | %9.2f | %6.3f | %5.1f", scenes[i].name, s.bad1,
                     s.bad2, s.density, s.mae, scenes[i].sgbm_bad2);
      g_assert_cmpfloat(s.density, >=, 95.0);
      g_assert_cmpfloat(s.bad2, <=, with_refine ? scenes[i].max_bad2_refine : scenes[i].max_bad2);
      sum_bad2 += s.bad2;
    }
    double mean = sum_bad2 / G_N_ELEMENTS(scenes);
    double limit = with_refine ? 8.0 : 12.0;
    g_test_message("mean noc bad-2 %.2f %% (limit %.0f %%)", mean, limit);
    g_assert_cmpfloat(mean, <=, limit);
  }
  with_refine = false;
  gpu_context_free(ctx);
}

/* Synthetic pairs: a smooth random texture (sum of sinusoids, contrast everywhere)
 * sampled exactly at x (left) and x + d(x, y) (right), so the left-view disparity is
 * known exactly. Scored on the pixels the filter measured (confidence 128..255) away
 * from the image borders: the filters, warps and smoothing of level 1 run out within
 * about 30 px of the left and right edges of the overlap (ALGORITHM.md §11.3 point 11),
 * where up to 12 % of the pixels are rejected and filled. Inside, the rejected pixels
 * are the weakly textured ones of the random texture: measured share 77.8-100 % over
 * the 840 cases of seeds 1-30, but a draw with wide weak stretches goes lower (61.3 and
 * 67.5 % on seeds 2242787981 and 289812262, every inside pixel within 1 px all the
 * same; a bound of 70 % failed about one run in twenty). Mean error and bad-1 are taken
 * on the measured pixels, at least half of them, and bad-1 < 1 % is required over all
 * the inside pixels, filled ones included: what the filling must get right. */

/* d(x, y) = a + b x + c y for the left view: the right image at x' shows the left point
 * x with x' = x - d = (1 - b) x - a - c y, so x = (x' + a + c y) / (1 - b). */
static void
synthetic_case(GpuContext *ctx, double a, double b, double c)
{
  const int w = 320, h = 96;
  size_t n = (size_t)w * h;
  TestTexture t;
  test_texture_init(&t, rng, 32, 0.2, 1.5, -1.2, 1.2, 0.2, 2.0);
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      l[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x, y));
      r[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, (x + a + c * y) / (1.0 - b), y));
    }
  g_autofree float *disp = g_new(float, n);
  g_autofree uint8_t *conf = g_new(uint8_t, n);
  run_engine(ctx, w, h, l, r, disp, conf);
  double sum_err = 0, sum_signed = 0;
  int visible = 0, visible_bad = 0, scored = 0, bad = 0;
  for (int y = 8; y < h - 8; y++)
    for (int x = 8; x < w - 32; x++) {
      double d = a + b * x + c * y;
      if (x - d < 32)
        continue;
      visible++;
      float v = disp[y * w + x];
      visible_bad += isnan(v) || fabs(v - d) > 1.0;
      /* textured pixels: those the filter measured (confidence 128..255); pixels it
       * rejected and filled from neighbours are not scored here, but must stay rare */
      if (conf[y * w + x] < 128)
        continue;
      scored++;
      float e = disp[y * w + x];
      if (isnan(e) || fabs(e - d) > 1.0) {
        bad++;
        continue;
      }
      sum_err += fabs(e - d);
      sum_signed += e - d;
    }
  double mean = sum_err / MAX(scored - bad, 1), bias = sum_signed / MAX(scored - bad, 1);
  double bad1 = 100.0 * bad / MAX(scored, 1);
  double visible_bad1 = 100.0 * visible_bad / MAX(visible, 1);
  g_test_message("d = %6.2f %+.3f x %+.3f y: mean |error| %.4f px, bias %+.4f px, "
                 "bad-1 %.3f %% of %d measured (%.1f %% of the visible pixels); all visible "
                 "pixels: bad-1 %.3f %%", a, b, c, mean, bias, bad1, scored,
                 100.0 * scored / MAX(visible, 1), visible_bad1);
  g_assert_cmpint(scored, >, 1000);
  g_assert_cmpfloat(scored, >=, 0.5 * visible);
  g_assert_cmpfloat(mean, <, 0.05);
  g_assert_cmpfloat(bad1, <, 1.0);
  g_assert_cmpfloat(visible_bad1, <, 1.0);
}

static void
test_synthetic(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  /* constant disparities across the range, with random fractions */
  const double constants[] = { 0.0, 3.0, 13.0, 31.0, 47.0, 64.0, 83.0, 100.0 };
  for (int pass = 0; pass < 2; pass++) {
    with_refine = pass == 1;
    g_test_message("%s level-0 refinement:", with_refine ? "with" : "without");
    for (size_t i = 0; i < G_N_ELEMENTS(constants); i++)
      synthetic_case(ctx, constants[i] + (i ? g_rand_double(rng) * 0.9 : 0.0), 0.0, 0.0);
    /* slanted planes: along x (foreshortening: the views differ in local frequency) and
     * along y (a ground plane seen from above: disparity grows down the image). Steeper
     * slants along x cost accuracy (foreshortening): measured over random textures,
     * 0.02 px/px 0.033-0.037 px, 0.03 px/px 0.042-0.050 px, 0.04-0.05 px/px 0.047-0.051 px
     * mean error (bench/RESULTS.md), so the bound is checked at 0.02 px/px along x. */
    synthetic_case(ctx, 4.0, 0.02, 0.0);       /* 4 .. 10.4 px */
    synthetic_case(ctx, 70.0, 0.02, 0.0);      /* 70 .. 76.4 px */
    synthetic_case(ctx, 95.0, -0.02, 0.0);     /* 95 .. 88.6 px */
    synthetic_case(ctx, 0.5, 0.0, 0.03);       /* 0.5 .. 3.4 px */
    synthetic_case(ctx, 60.0, 0.0, 0.03);      /* 60 .. 62.9 px */
    synthetic_case(ctx, 30.0, 0.02, 0.02);     /* 30 .. 38.3 px */
  }
  with_refine = false;
  gpu_context_free(ctx);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  rng = test_seeded_rand();
  g_test_add_func("/accuracy/middlebury", test_middlebury);
  g_test_add_func("/accuracy/synthetic", test_synthetic);
  int r = g_test_run();
  g_rand_free(rng);
  return r;
}
