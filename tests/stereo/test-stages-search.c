/* test-stages-search.c: the discrete search (§5) and the level-0 refinement search (§5b),
 * both GPU variants (direct and tiled), against the double-precision reference
 * (stages-fixture.h).
 */
#include <math.h>
#include <string.h>

#include "tests/stereo/stages-fixture.h"

static GpuImage *
layered(GpuContext *ctx, int w, int h, int layers, GpuFormat fmt)
{
  GError *error = NULL;
  GpuImageParams ip = { .label = "test", .width = w, .height = h, .layers = layers,
                        .format = fmt };
  GpuImage *img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  return img;
}

/* Uploads an RG32F pair image layer (l in .r, r in .g). */
static void
upload_pair(GpuImage *img, int layer, const RefImage *l, const RefImage *r)
{
  int w = l->w, h = l->h;
  g_autofree float *buf = g_new(float, 2 * (size_t)w * h);
  for (int i = 0; i < w * h; i++) {
    buf[2 * i] = (float)l->data[i];
    buf[2 * i + 1] = (float)r->data[i];
  }
  GError *error = NULL;
  g_assert_true(gpu_image_upload(img, layer, buf, (size_t)w * 8, &error));
  g_assert_no_error(error);
}

/* Search: two textured pairs shifted by random disparities, both directions of both in
 * one dispatch. The argmax is discrete, so fp32 may pick another candidate where two
 * costs tie within rounding: at least 99.5 % of the pixels must agree in certainty and,
 * where both are valid, in d within 1e-3 px (the parabola of fp32 costs).
 * With `ground` the search runs on level 1 with the pitch-plane prior (§5c): each pair a
 * random plane of its own whose bound crosses the pair's disparity at the image's centre,
 * tilted at least 0.08 px a row, so that a part of each image has only candidates above
 * its true one; no pixel may take a candidate below its bound (floor), and the bound must
 * change the result of some pixels (against the search without it). */
static void
search_case(int w, int h, double shift_lo, double shift_hi, int t_max, int radius, bool ground)
{
  enum { PAIRS = 2 };
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  int level = 0;
  double plane[PAIRS][3];
  for (int k = 0; k < PAIRS; k++) {
    plane[k][0] = plane[k][1] = 0.0;
    plane[k][2] = STEREO_GROUND_NONE;
  }
  if (ground) {   /* level 1, its disparities half the level-0 ones */
    level = 1;
    f.p.levels = 2;
    f.p.search_level = 1;
    f.p.max_disparity = 2 * t_max;
    f.p.ground_margin = g_rand_double_range(stages_rng, 0.0, 1.5);
  }
  if (radius > 0)   /* another window: the programs again */
    f.p.search_radius = radius;
  if (radius > 0 || ground)
    fixture_remake_passes(&f);
  RefImage *l[PAIRS], *r[PAIRS];
  double shift[PAIRS];
  g_autoptr(GpuImage) img = layered(f.ctx, w, h, PAIRS, GPU_FORMAT_RG32F);
  for (int k = 0; k < PAIRS; k++) {
    shift[k] = g_rand_double_range(stages_rng, shift_lo, shift_hi);
    textured_pair(w, h, shift[k], &l[k], &r[k]);
    round_to_float(l[k]);
    round_to_float(r[k]);
    upload_pair(img, k, l[k], r[k]);
    if (ground) {   /* the bound at the image's centre: the pair's shift, at level 1 */
      plane[k][0] = g_rand_double_range(stages_rng, -0.04, 0.04);
      plane[k][1] = g_rand_double_range(stages_rng, 0.08, 0.15) *
                    (g_rand_boolean(stages_rng) ? 1.0 : -1.0);
      plane[k][2] = 2.0 * shift[k] + f.p.ground_margin - plane[k][0] * w - plane[k][1] * h;
    }
  }
  g_autoptr(GpuBuffer) layers = layer_params_grounds(f.ctx, PAIRS, NULL, 0.0, plane);
  stereo_passes_set_layer_params(f.ps, layers);
  g_autoptr(GpuImage) disp = layered(f.ctx, w, h, 2 * PAIRS, GPU_FORMAT_RGBA32F);
  int t_min = 0;
  for (int tiled = 0; tiled < 2; tiled++) {
    poison(disp);
    stereo_pass_search_variant(f.ps, tiled, img, disp, t_min, t_max);
    for (int z = 0; z < 2 * PAIRS; z++) {
      int k = z / 2, eta = z % 2 ? -1 : 1;
      g_autofree float *out = download_layer(disp, z);
      check_all_finite(out, (size_t)w * h * 4, "search");
      StereoParams p = f.p;
      memcpy(p.ground, plane[k], sizeof p.ground);
      p.search_level = level;
      p.levels = level + 1;
      p.min_disparity = t_min << level;
      p.max_disparity = t_max << level;
      g_autoptr(RefImage) ref = ref_search(&p, eta > 0 ? l[k] : r[k], eta > 0 ? r[k] : l[k], eta);
      int bad = 0, valid = 0, below = 0, changed = 0;
      g_autoptr(RefImage) free_ref = NULL;
      if (ground) {
        StereoParams q = p;
        q.ground_margin = -1.0;
        free_ref = ref_search(&q, eta > 0 ? l[k] : r[k], eta > 0 ? r[k] : l[k], eta);
      }
      for (int i = 0; i < w * h; i++) {
        bool gv = out[4 * i + 1] > 0, rv = ref->data[3 * i + REF_CERT] > 0;
        valid += rv;
        if (gv != rv || (rv && fabs(out[4 * i] - ref->data[3 * i + REF_D]) > 1e-3))
          bad++;
        if (ground && gv) {
          double lo = floor(stereo_ground_bound(plane[k], p.ground_margin, eta, level, i % w, i / w));
          below += out[4 * i] < lo - 1e-4;
        }
        if (free_ref)
          changed += fabs(free_ref->data[3 * i + REF_D] - ref->data[3 * i + REF_D]) > 0.5;
      }
      g_test_message("search (%s, %d x %d window%s) pair %d eta %d shift %.2f: %d of %d "
                     "differ, %d valid, %d below the ground, %d moved by it", tiled ? "tiled" : "direct",
                     2 * stereo_params_get_search_radius(&p) + 1,
                     2 * stereo_params_get_search_radius(&p) + 1, ground ? ", ground" : "", k,
                     eta, shift[k], bad, w * h, valid, below, changed);
      g_assert_cmpint(valid, >, w * h / 3);
      g_assert_cmpfloat(bad, <=, 0.005 * w * h);
      g_assert_cmpfloat(below, <=, 0.005 * w * h);
      if (ground)
        g_assert_cmpint(changed, >, w * h / 20);
    }
  }
  for (int k = 0; k < PAIRS; k++) {
    ref_image_free(l[k]);
    ref_image_free(r[k]);
  }
  fixture_teardown(&f);
}

static void
test_search(void)
{
  search_case(96, 64, 3, 18, 24, 0, false);     /* one chunk of candidates, 9 x 9 */
  search_case(200, 40, 60, 110, 130, 0, false); /* three chunks (60 candidates each) */
  search_case(96, 64, 3, 18, 24, 3, false);     /* the 7 x 7 window of 1920 x 1080 */
}

/* The pitch-plane prior's lower bound in the search (docs/algorithm.md §5c). */
static void
test_search_ground(void)
{
  search_case(96, 64, 3, 18, 24, 0, true);
  search_case(200, 40, 30, 55, 65, 0, true);    /* two chunks at level 1 */
}

/* §5b, the refinement search, both directions in one dispatch: the prior is the level-1
 * state the pass upsamples itself (the reference gets ref_upsample of it): the true
 * disparity with noise, with a band of rows where it is 9 px off (a wrong coarse
 * estimate next to a right one, as at a depth edge: the range around those rows spans
 * both, and the search finds the right one), and from row 52 on 16 px off everywhere
 * (rows 63 and below see only that prior: their candidates exclude the true disparity,
 * which a full-range search would find). With `coarse_search` the search runs on level 2
 * (as at 1920 x 1080), whose automatic 7 x 7 window the refinement does not take: it
 * keeps its 9 x 9 (stereo_params_get_refine_radius). With `ground` the pitch-plane prior
 * too (§5c, level 0): a plane whose bound rises 0.2 px a row through the true disparity
 * at row 30; against the reference, no pixel below its bound, and the bound must change
 * some pixels (against the reference without it). */
static void
refine_case(bool coarse_search, bool ground)
{
  const int w = 120, h = 80, cw = 60, ch = 40;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  if (coarse_search) {
    f.p.levels = 3;
    f.p.search_level = 2;
    g_assert_cmpint(stereo_params_get_search_radius(&f.p), ==, 3);
    g_assert_cmpint(stereo_params_get_refine_radius(&f.p), ==, 4);
    fixture_remake_passes(&f);
  }
  double shift = g_rand_double_range(stages_rng, 2, 5);
  if (ground) {
    f.p.ground_margin = g_rand_double_range(stages_rng, 0.0, 1.0);
    f.p.ground[0] = g_rand_double_range(stages_rng, -0.01, 0.01);
    f.p.ground[1] = 0.2;
    f.p.ground[2] = shift + f.p.ground_margin - f.p.ground[0] * 0.5 * w - 0.2 * 30;
    fixture_remake_passes(&f);
  }
  g_autoptr(RefImage) l = NULL, r = NULL;
  textured_pair(w, h, shift, &l, &r);
  round_to_float(l);
  round_to_float(r);
  g_autoptr(GpuImage) img = layered(f.ctx, w, h, 1, GPU_FORMAT_RG32F);
  upload_pair(img, 0, l, r);
  g_autoptr(GpuImage) coarse = layered(f.ctx, cw, ch, 2, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) disp = layered(f.ctx, w, h, 2, GPU_FORMAT_RGBA32F);
  RefImage *prior[2];
  for (int z = 0; z < 2; z++) {
    g_autoptr(RefImage) c = ref_image_new(cw, ch, REF_FIELD_CHANNELS);
    for (int y = 0; y < ch; y++)
      for (int x = 0; x < cw; x++)
        c->data[3 * (y * cw + x)] =
          (float)(0.5 * (y >= 26 ? shift + 16.0 : y >= 10 && y < 13 ? shift + 9.0
                                 : shift + g_rand_double_range(stages_rng, -0.7, 0.7)));
    g_autofree float *buf = g_new0(float, (size_t)cw * ch * 4);
    for (int i = 0; i < cw * ch; i++)
      buf[4 * i] = (float)c->data[3 * i];
    GError *error = NULL;
    g_assert_true(gpu_image_upload(coarse, z, buf, (size_t)cw * 16, &error));
    prior[z] = ref_upsample(c, w, h);
  }
  g_autoptr(GpuBuffer) layers = layer_params_ground(f.ctx, 1, NULL, 0.0, f.p.ground);
  stereo_passes_set_layer_params(f.ps, layers);
  for (int tiled = 0; tiled < 2; tiled++) {
    poison(disp);
    stereo_pass_refine_variant(f.ps, tiled, img, coarse, disp);
    for (int z = 0; z < 2; z++) {
      int eta = z ? -1 : 1;
      g_autofree float *out = download_layer(disp, z);
      check_all_finite(out, (size_t)w * h * 4, "refine");
      g_autoptr(RefImage) ref = ref_refine_search(&f.p, eta > 0 ? l : r, eta > 0 ? r : l,
                                                  prior[z], eta);
      int bad = 0, valid = 0, right = 0, top = 0, far_right = 0, below = 0, changed = 0;
      g_autoptr(RefImage) free_ref = NULL;
      if (ground) {
        StereoParams q = f.p;
        q.ground_margin = -1.0;
        free_ref = ref_refine_search(&q, eta > 0 ? l : r, eta > 0 ? r : l, prior[z], eta);
      }
      for (int i = 0; i < w * h; i++) {
        if (ground && out[4 * i + 1] > 0)
          below += out[4 * i] < floor(stereo_ground_bound(f.p.ground, f.p.ground_margin, eta,
                                                          0, i % w, i / w)) - 1e-4;
        if (free_ref)
          changed += fabs(free_ref->data[3 * i + REF_D] - ref->data[3 * i + REF_D]) > 0.5;
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
      g_test_message("refine (%s, search on level %d%s) eta %d shift %.2f: %d of %d differ, "
                     "%d valid; rows 0-41 %d of %d within 0.5 px, rows 63- %d; %d below the "
                     "ground, %d moved by it", tiled ? "tiled" : "direct",
                     stereo_params_get_search_level(&f.p), ground ? ", ground" : "", eta,
                     shift, bad, w * h, valid, right, top, far_right, below, changed);
      g_assert_cmpint(valid, >, w * h / 3);
      g_assert_cmpint(far_right, ==, 0);         /* candidates from the prior only */
      g_assert_cmpfloat(bad, <=, 0.005 * w * h);
      if (ground) {
        g_assert_cmpfloat(below, <=, 0.005 * w * h);
        g_assert_cmpint(changed, >, w * h / 20);
      } else {
        g_assert_cmpint(right, >, top * 8 / 10);   /* the 9 px band is searched out */
      }
    }
  }
  ref_image_free(prior[0]);
  ref_image_free(prior[1]);
  fixture_teardown(&f);
}

static void
test_refine(void)
{
  refine_case(false, false);
  refine_case(true, false);
  refine_case(false, true);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/search", test_search);
  g_test_add_func("/stages/search/ground", test_search_ground);
  g_test_add_func("/stages/refine", test_refine);
  return stages_run();
}
