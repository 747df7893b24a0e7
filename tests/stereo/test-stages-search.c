/* test-stages-search.c: the discrete search (§5) and the level-0 refinement search (§5b),
 * both GPU variants (direct and tiled), against the double-precision reference
 * (stages-fixture.h).
 */
#include <math.h>
#include <string.h>

#include "tests/stereo/stages-fixture.h"

/* Search: a textured pair shifted by a random disparity. The argmax is discrete, so fp32
 * may pick another candidate where two costs tie within rounding: at least 99.5 % of the
 * pixels must agree in certainty and, where both are valid, in d within 1e-3 px (the
 * parabola of fp32 costs). */
static void
search_case(int w, int h, double shift_lo, double shift_hi, int t_max)
{
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  double shift = g_rand_double_range(stages_rng, shift_lo, shift_hi);
  g_autoptr(RefImage) l = NULL, r = NULL;
  textured_pair(w, h, shift, &l, &r);
  round_to_float(l);
  round_to_float(r);
  g_autoptr(GpuImage) img = pair_image(f.ctx, l, r);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  int t_min = 0;
  for (int run = 0; run < 4; run++) {
    int eta = run & 1 ? -1 : 1;
    bool tiled = run >= 2;
    poison(disp);
    stereo_pass_search_variant(f.ps, tiled, img, disp, eta, t_min, t_max);
    g_autofree float *out = download(disp);
    check_all_finite(out, (size_t)w * h * 4, "search");
    StereoParams p = f.p;
    p.search_level = 0;
    p.levels = 1;
    p.min_disparity = t_min;
    p.max_disparity = t_max;
    g_autoptr(RefImage) ref = ref_search(&p, eta > 0 ? l : r, eta > 0 ? r : l, eta);
    int bad = 0, valid = 0;
    for (int i = 0; i < w * h; i++) {
      bool gv = out[4 * i + 1] > 0, rv = ref->data[3 * i + REF_CERT] > 0;
      valid += rv;
      if (gv != rv || (rv && fabs(out[4 * i] - ref->data[3 * i + REF_D]) > 1e-3))
        bad++;
    }
    g_test_message("search (%s) eta %d shift %.2f: %d of %d differ, %d valid",
                   tiled ? "tiled" : "direct", eta, shift, bad, w * h, valid);
    g_assert_cmpint(valid, >, w * h / 3);
    g_assert_cmpfloat(bad, <=, 0.005 * w * h);
  }
  fixture_teardown(&f);
}

static void
test_search(void)
{
  search_case(96, 64, 3, 18, 24);     /* one chunk of candidates */
  search_case(200, 40, 60, 110, 130); /* three chunks (64 candidates each) */
}

/* §5b, the refinement search: the prior is the true disparity with noise, with a band of
 * rows where it is 9 px off (a wrong coarse estimate next to a right one, as at a depth
 * edge: the range around those rows spans both, and the search finds the right one), and
 * from row 52 on 16 px off everywhere (rows 63 and below see only that prior: their
 * candidates exclude the true disparity, which a full-range search would find). */
static void
test_refine(void)
{
  const int w = 120, h = 80;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  double shift = g_rand_double_range(stages_rng, 2, 5);
  g_autoptr(RefImage) l = NULL, r = NULL;
  textured_pair(w, h, shift, &l, &r);
  round_to_float(l);
  round_to_float(r);
  g_autoptr(GpuImage) img = pair_image(f.ctx, l, r);
  g_autoptr(GpuImage) prior_img = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  for (int run = 0; run < 4; run++) {
    int eta = run & 1 ? -1 : 1;
    bool tiled = run >= 2;
    g_autoptr(RefImage) prior = ref_image_new(w, h, REF_FIELD_CHANNELS);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        prior->data[3 * (y * w + x)] =
          (float)(y >= 52 ? shift + 16.0 : y >= 20 && y < 26 ? shift + 9.0
                                         : shift + g_rand_double_range(stages_rng, -0.7, 0.7));
    const RefImage *ps[1] = { prior };
    upload_channels(prior_img, ps, (int[]){ REF_D }, 1);
    poison(disp);
    stereo_pass_refine_variant(f.ps, tiled, img, prior_img, disp, eta);
    g_autofree float *out = download(disp);
    check_all_finite(out, (size_t)w * h * 4, "refine");
    g_autoptr(RefImage) ref = ref_refine_search(&f.p, eta > 0 ? l : r, eta > 0 ? r : l, prior,
                                                eta);
    int bad = 0, valid = 0, right = 0, top = 0, far_right = 0;
    for (int i = 0; i < w * h; i++) {
      bool gv = out[4 * i + 1] > 0, rv = ref->data[3 * i + REF_CERT] > 0;
      bool ok = rv && fabs(ref->data[3 * i + REF_D] - shift) < 0.5;
      valid += rv;
      if (i / w < 42) {
        top += rv;
        right += ok;
      } else if (i / w >= 63) {
        far_right += ok;
      }
      if (gv != rv || (rv && fabs(out[4 * i] - ref->data[3 * i + REF_D]) > 1e-3))
        bad++;
    }
    g_test_message("refine (%s) eta %d shift %.2f: %d of %d differ, %d valid; rows 0-41 %d of "
                   "%d within 0.5 px, rows 63- %d", tiled ? "tiled" : "direct", eta, shift, bad,
                   w * h, valid, right, top, far_right);
    g_assert_cmpint(valid, >, w * h / 3);
    g_assert_cmpint(right, >, top * 8 / 10);   /* the 9 px band is searched out */
    g_assert_cmpint(far_right, ==, 0);         /* candidates from the prior only */
    g_assert_cmpfloat(bad, <=, 0.005 * w * h);
  }
  fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/search", test_search);
  g_test_add_func("/stages/refine", test_refine);
  return stages_run();
}
