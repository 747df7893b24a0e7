/* test-engine-reference.c: the whole GPU engine against the double-precision reference.
 *
 * Whole-filter agreement cannot be bit-exact: fp32 and double disagree on a few gate
 * decisions (thresholds) and the coarse-to-fine chain spreads such a flip over a
 * smoothing window. The bounds below say how much may differ and why. Each run draws a
 * fresh textured pair (the seed is printed; STEREOD_TEST_SEED repeats it), and every
 * output is checked after a first run on different inputs, so a pixel the GPU failed to
 * write would keep the first run's value and fail.
 */
#include <math.h>
#include <string.h>

#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"
#include "tests/reference/reference.h"
#include "tests/stereo/engine-test.h"

static GRand *rng;

typedef struct {
  int both_valid, validity_differs, value_differs;
  double max_diff;
} Agreement;

static Agreement
compare(const float *g, const float *r, size_t n, double tol)
{
  Agreement a = { 0 };
  for (size_t i = 0; i < n; i++) {
    bool gv = !isnan(g[i]), rv = !isnan(r[i]);
    if (gv != rv) {
      a.validity_differs++;
    } else if (gv) {
      a.both_valid++;
      double d = fabs(g[i] - r[i]);
      a.max_diff = MAX(a.max_diff, d);
      if (d > tol)
        a.value_differs++;
    }
  }
  return a;
}

/* The scene of run_against_reference: engine_test_scene's, or with `plain` its box of coarse
 * texture only (engine_test_plain_box_scene). */
static void
reference_scene(int w, int h, double d0, double d1, bool plain, uint8_t *left, uint8_t *right)
{
  if (plain)
    engine_test_plain_box_scene(rng, w, h, d0, d1, w / 3, 2 * w / 3, h / 4, 3 * h / 4, left, right);
  else
    engine_test_scene(rng, w, h, d0, d1, left, right);
}

static void
run_against_reference_scene(const StereoParams *p, double d0, double d1, bool plain)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  int w = p->width, h = p->height;
  size_t n = (size_t)w * h;
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  g_autofree float *gd = g_new(float, n), *rd = g_new(float, n);
  g_autofree uint8_t *gc = g_new(uint8_t, n), *rc = g_new(uint8_t, n);
  GError *error = NULL;
  StereoEngine *e = engine_test_new(ctx, p, STEREO_OUTPUT_FLOAT, 1);

  /* First run on another scene: its outputs are what an unwritten pixel would show. */
  reference_scene(w, h, d1, d0, plain, l, r);
  g_assert_true(stereo_engine_process(e, l, w, r, w, gd, gc, &error));
  g_assert_no_error(error);

  reference_scene(w, h, d0, d1, plain, l, r);
  g_assert_true(stereo_engine_process(e, l, w, r, w, gd, gc, &error));
  g_assert_no_error(error);
  g_assert_true(ref_stereo_run(p, l, w, r, w, rd, rc, &error));
  g_assert_no_error(error);

  Agreement a = compare(gd, rd, n, 0.01);
  int conf_off = 0;
  for (size_t i = 0; i < n; i++)
    conf_off += abs((int)gc[i] - (int)rc[i]) > 2;
  g_test_message("%dx%d d %.2f/%.2f search %d: %d both valid, %d validity differs, "
                 "%d values > 0.01 px apart (max %.4f), %d confidences > 2 apart",
                 w, h, d0, d1, stereo_params_use_search(p), a.both_valid, a.validity_differs,
                 a.value_differs, a.max_diff, conf_off);
  /* (the pitch-plane prior's test invalidates a third of the image's background) */
  g_assert_cmpint(a.both_valid, >, (int)((p->ground_margin >= 0.0 ? 0.35 : 0.5) * n));
  /* At most 1 % of the pixels may change validity and 1 % of the common ones may differ
   * by more than 0.01 px: a gate flip inside the coarse-to-fine chain moves the result by
   * up to a smoothing window's worth of pixels. On the plain box the coarse fallback
   * gives level 0 the coarse levels' estimates, 2 or 4 times a flip's effect there, over
   * a sixth of the image: 5 % (at most 2.9 % seen in 60 runs). */
  g_assert_cmpfloat(a.validity_differs, <=, 0.01 * n);
  g_assert_cmpfloat(a.value_differs, <=, (plain ? 0.05 : 0.01) * a.both_valid);
  g_assert_cmpfloat(conf_off, <=, 0.02 * n);
  stereo_engine_free(e);
  gpu_context_free(ctx);
}

/* One frame of l, r through an engine of p made for it. */
static void
process_once(GpuContext *ctx, const StereoParams *p, const uint8_t *l, const uint8_t *r,
             float *d, uint8_t *c)
{
  GError *error = NULL;
  StereoEngine *e = engine_test_new(ctx, p, STEREO_OUTPUT_FLOAT, 1);
  g_assert_true(stereo_engine_process(e, l, p->width, r, p->width, d, c, &error));
  g_assert_no_error(error);
  stereo_engine_free(e);
}

static void
run_against_reference(const StereoParams *p, double d0, double d1)
{
  run_against_reference_scene(p, d0, d1, false);
}

static void
test_reference_pyramid(void)
{
  StereoParams p;
  stereo_params_init(&p, 160, 96);
  p.max_disparity = 4;   /* within the pure pyramid's range: no search */
  p.iterations_level0 = 3;   /* an odd count at level 0: the state images' turns */
  g_assert_false(stereo_params_use_search(&p));
  run_against_reference(&p, g_rand_double_range(rng, 0.5, 1.5), g_rand_double_range(rng, 2, 3.5));
}

static void
test_reference_search(void)
{
  StereoParams p;
  stereo_params_init(&p, 192, 120);
  p.max_disparity = 40;
  p.refine = true;   /* §5b as well; test_reference_options runs without it */
  p.iterations_level0 = 1;   /* what 1920 x 1080 and larger get by default */
  g_assert_true(stereo_params_use_search(&p));
  g_assert_true(stereo_params_use_refine(&p));
  run_against_reference(&p, g_rand_double_range(rng, 4, 15), g_rand_double_range(rng, 20, 36));
}

static void
test_reference_options(void)
{
  StereoParams p;
  stereo_params_init(&p, 128, 80);
  p.max_disparity = 30;
  p.lr_check = false;
  p.densify = false;
  p.median = false;
  p.iterations = 1;
  p.min_magnitude = 0.01;   /* the absolute floor of the magnitude gate */
  run_against_reference(&p, g_rand_double_range(rng, 4, 10), g_rand_double_range(rng, 12, 20));
}

#define FALLBACK_SCENE_SEED 1u   /* the fixed scene of test_reference_fallback's counts */

/* The coarse fallback (§10 step 1) against the reference, and what it is for: a box of
 * coarse texture only, which a noise floor leaves unmeasured at level 0, is measured from
 * levels 1 and 2 with it (at its true disparity) and not without it. */
static void
test_reference_fallback(void)
{
  StereoParams p;
  stereo_params_init(&p, 192, 120);
  p.max_disparity = 40;
  p.levels = 4;
  p.search_level = 2;
  p.iterations_level0 = 1;
  stereo_params_set_noise_floor(&p, 4.0);
  p.coarse_fallback = 0.25;   /* level 1 from d >= 8 px, level 2 from 16 px */
  g_assert_cmpint(stereo_params_fallback_levels(&p), ==, 2);
  double d0 = g_rand_double_range(rng, 3, 6), d1 = g_rand_double_range(rng, 20, 30);
  /* against the reference on engine_test_scene's box of coarse texture only, level 1 the
   * fallback's (the search on level 1, as 960 x 540 gets it); its rule on given fields is
   * checked exactly by /stages/post/fallback */
  StereoParams pr;
  stereo_params_init(&pr, 192, 120);
  pr.max_disparity = 40;
  pr.iterations_level0 = 1;
  stereo_params_set_noise_floor(&pr, 3.0);
  pr.coarse_fallback = 0.25;
  g_assert_cmpint(stereo_params_fallback_levels(&pr), ==, 1);
  run_against_reference_scene(&pr, d0, d1, true);

  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  int w = p.width, h = p.height;
  size_t n = (size_t)w * h;
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  g_autofree float *on = g_new(float, n), *off = g_new(float, n);
  g_autofree uint8_t *c_on = g_new(uint8_t, n), *c_off = g_new(uint8_t, n);
  /* most of the image is the box: its inside is far from the background's depth. One
   * drawn scene, the same every run: how much of such a box the coarse levels measure
   * depends on the texture drawn (38-96 % of it over 17 seeds), so a fresh
   * scene would make these counts a matter of luck; the rule itself is checked against
   * the reference on fresh scenes above and in /stages/post/fallback. */
  g_autoptr(GRand) fixed = g_rand_new_with_seed(FALLBACK_SCENE_SEED);
  d0 = g_rand_double_range(fixed, 3, 6);
  d1 = g_rand_double_range(fixed, 20, 30);
  int x0 = w / 8, x1 = 7 * w / 8, y0 = h / 8, y1 = 7 * h / 8;
  engine_test_plain_box_scene(fixed, w, h, d0, d1, x0, x1, y0, y1, l, r);
  process_once(ctx, &p, l, r, on, c_on);
  StereoParams q = p;
  q.coarse_fallback = 0.0;
  process_once(ctx, &q, l, r, off, c_off);
  /* the box's inner part (16 px from its edges, in the left view) */
  int box = 0, measured_off = 0, measured_on = 0, right_on = 0;
  for (int y = y0 + 16; y < y1 - 16; y++)
    for (int x = x0 + 16; x < x1 - 16; x++) {
      size_t i = (size_t)y * w + x;
      box++;
      measured_off += c_off[i] >= 128;
      if (c_on[i] >= 128) {
        measured_on++;
        right_on += fabs(on[i] - d1) <= 1.0;
      }
    }
  g_test_message("box %d px, d %.2f: measured %d without the fallback, %d with it (%d within "
                 "1 px)", box, d1, measured_off, measured_on, right_on);
  g_assert_cmpint(measured_off, <, box / 3);
  g_assert_cmpint(measured_on, >, 2 * box / 3);
  g_assert_cmpint(right_on, >=, (int)(0.9 * measured_on));
  gpu_context_free(ctx);
}

/* The pitch-plane prior (docs/algorithm.md §5c) against the reference, and what it does:
 * engine_test_scene's background at d0 and box at d1, under a plane whose bound rises
 * down the image through d0 (0.075 px a row, crossing it at row 2 h / 3; a slight tilt
 * along x): the background below the crossing is below the ground and
 * invalid, above it measured as without the prior, the box (d1, far above the bound)
 * measured as without the prior. The engine has no calibration: the plane is StereoParams.ground. */
static void
test_reference_ground(void)
{
  StereoParams p;
  stereo_params_init(&p, 192, 120);
  p.max_disparity = 40;
  p.iterations_level0 = 1;
  p.densify = false;
  int w = p.width, h = p.height;
  double d0 = g_rand_double_range(rng, 5, 10), d1 = g_rand_double_range(rng, 22, 32);
  p.ground_margin = g_rand_double_range(rng, 0.25, 1.0);
  p.ground[0] = g_rand_double_range(rng, -0.005, 0.005);
  p.ground[1] = 9.0 / h;   /* the bound crosses d0 at row 2 h / 3 */
  p.ground[2] = d0 + p.ground_margin - p.ground[0] * 0.5 * w - p.ground[1] * 2.0 * h / 3.0;
  run_against_reference(&p, d0, d1);

  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  size_t n = (size_t)w * h;
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  g_autofree float *on = g_new(float, n), *off = g_new(float, n);
  g_autofree uint8_t *c_on = g_new(uint8_t, n), *c_off = g_new(uint8_t, n);
  engine_test_scene(rng, w, h, d0, d1, l, r);
  process_once(ctx, &p, l, r, on, c_on);
  StereoParams q = p;
  q.ground_margin = -1.0;
  process_once(ctx, &q, l, r, off, c_off);
  /* the background's rows 12 px from the crossing (0.9 px of bound), 16 px from the
   * borders, outside the box (engine_test_scene: x in w/3..2w/3, y in h/4..3h/4) and
   * 8 px from it; the box's inside */
  int below = 0, below_off = 0, below_on = 0, under = 0, above = 0, above_off = 0;
  int above_on = 0, box = 0, box_on = 0, box_off = 0;
  double max_under = 0.0;
  for (int y = 16; y < h - 16; y++)
    for (int x = 16; x < w - 16; x++) {
      size_t i = (size_t)y * w + x;
      bool in_box = x >= w / 3 + 8 && x < 2 * w / 3 - 8 && y >= h / 4 + 8 && y < 3 * h / 4 - 8;
      bool near_box = x >= w / 3 - 8 && x < 2 * w / 3 + 8 && y >= h / 4 - 8 && y < 3 * h / 4 + 8;
      double bound = stereo_ground_bound(p.ground, p.ground_margin, 1, 0, x, y);
      /* the 3 x 3 median after the check takes a neighbour's d: at most the bound's
       * change to a neighbour below the pixel's own */
      if (c_on[i] >= 128 && on[i] < bound - fabs(p.ground[0]) - fabs(p.ground[1]) - 1e-4) {
        under++;
      }
      if (c_on[i] >= 128)
        max_under = MAX(max_under, bound - on[i]);
      if (in_box) {
        box++;
        box_on += c_on[i] >= 128 && fabs(on[i] - d1) <= 1.0;
        box_off += c_off[i] >= 128 && fabs(off[i] - d1) <= 1.0;
      } else if (!near_box && y > 2 * h / 3 + 12) {
        below++;
        below_off += c_off[i] >= 128;
        below_on += c_on[i] >= 128;
      } else if (!near_box && y < 2 * h / 3 - 12) {
        above++;
        above_off += c_off[i] >= 128;
        above_on += c_on[i] >= 128;
      }
    }
  g_test_message("ground d0 %.2f, d1 %.2f, margin %.2f: below the crossing %d px, measured "
                 "%d without the prior, %d with it; above %d px, %d / %d; box %d px, %d "
                 "within 1 px without the prior, %d with it; %d measured below their neighbours' bound (below their own by %.3f px at most)", d0, d1,
                 p.ground_margin, below, below_off, below_on, above, above_off, above_on, box,
                 box_off, box_on, under, max_under);
  g_assert_cmpint(under, ==, 0);
  g_assert_cmpint(below_off, >, below / 2);
  g_assert_cmpint(below_on, <, below / 20);
  g_assert_cmpint(above_on, >, above / 2);
  /* how much of the box the engine measures within 1 px depends on the texture drawn
   * and on d1 (43-84 % without the prior over 80 seeds): the prior must not lose the box,
   * i.e. it measures as much of it as without the prior (-0.6 % to +6 % over 80 seeds) */
  g_assert_cmpint(box_off, >, box / 4);
  g_assert_cmpint(box_on, >=, box_off - box / 50);
  gpu_context_free(ctx);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  rng = test_seeded_rand();
  g_test_add_func("/engine/reference/pyramid", test_reference_pyramid);
  g_test_add_func("/engine/reference/search", test_reference_search);
  g_test_add_func("/engine/reference/options", test_reference_options);
  g_test_add_func("/engine/reference/fallback", test_reference_fallback);
  g_test_add_func("/engine/reference/ground", test_reference_ground);
  int r = g_test_run();
  g_rand_free(rng);
  return r;
}
