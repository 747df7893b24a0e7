/* test-stages-post.c: the post-processing passes (§10: L-R check, median, densify, pack)
 * and the rectification (§0) against the double-precision reference (stages-fixture.h).
 */
#include <math.h>
#include <string.h>

#include "tests/stereo/stages-fixture.h"

/* Post-processing, step by step, on random fields whose L-R consistency holds for about
 * half of the pixels. Validity is a comparison of fp32 values (|dL - dR| <= lr_max after
 * an interpolation): at most 0.2 % may flip. Median and densification only select and
 * compare values, so given the same validity they must agree exactly. */
static void
test_post(void)
{
  const int w = 81, h = 47;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) fl = ref_image_new(w, h, REF_FIELD_CHANNELS);
  g_autoptr(RefImage) fr = ref_image_new(w, h, REF_FIELD_CHANNELS);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double *l = ref_image_at(fl, x, y), *r = ref_image_at(fr, x, y);
      l[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * x + 0.2 * y) + g_rand_double_range(stages_rng, -0.3, 0.3));
      r[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * (x + 6) + 0.2 * y) +
                         (g_rand_double(stages_rng) < 0.5 ? 0.0 : g_rand_double_range(stages_rng, -3, 3)));
      l[REF_CERT] = g_rand_double(stages_rng) < 0.1 ? 0.0 : (float)g_rand_double_range(stages_rng, 0.01, 1.0);
      l[REF_SIGMA] = (float)g_rand_double_range(stages_rng, 0.0, 1.3);
    }
  g_autoptr(GpuImage) dl = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) dr = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) a = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) b = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  /* Level-0 intensity for the densify side choice: 8-bit values with steps around the
   * edge margin, as the engine's ingest produces them. */
  g_autoptr(GpuImage) inten = image_new(f.ctx, w, h, GPU_FORMAT_RG32F);
  g_autoptr(RefImage) ir = ref_image_new(w, h, 1);
  for (int i = 0; i < w * h; i++)
    ir->data[i] = (float)(g_rand_int_range(stages_rng, 0, 256) / 255.0);
  const RefImage *si[1] = { ir };
  upload_channels(inten, si, (int[]){ 0 }, 1);
  const RefImage *sl[3] = { fl, fl, fl }, *sr[1] = { fr };
  upload_channels(dl, sl, (int[]){ REF_D, REF_CERT, REF_SIGMA }, 3);
  upload_channels(dr, sr, (int[]){ REF_D }, 1);
  size_t n = (size_t)w * h;

  /* 1. validity */
  poison(a);
  stereo_pass_post_lr(f.ps, dl, dr, a);
  g_autofree float *va = download(a);
  check_all_finite(va, n * 4, "post_lr");
  g_autofree bool *valid = g_new(bool, n);
  ref_post_valid(&f.p, fl, fr, valid);
  int flips = 0, nvalid = 0;
  for (size_t i = 0; i < n; i++) {
    flips += (va[4 * i + 1] > 0) != valid[i];
    nvalid += valid[i];
  }
  g_test_message("post: %d valid of %zu, %d flips", nvalid, n, flips);
  g_assert_cmpint(nvalid, >, n / 5);
  g_assert_cmpint(nvalid, <, 4 * n / 5);
  g_assert_cmpfloat(flips, <=, 0.002 * n);
  /* From here on feed the reference's validity to both sides so that steps compare exactly. */
  for (size_t i = 0; i < n; i++) {
    va[4 * i] = (float)fl->data[3 * i];
    va[4 * i + 1] = valid[i] ? 2.0f : 0.0f;
  }
  GError *error = NULL;
  g_assert_true(gpu_image_upload(a, 0, va, (size_t)w * 16, &error));

  /* 2. median */
  g_autofree double *d = g_new(double, n);
  for (size_t i = 0; i < n; i++)
    d[i] = (float)fl->data[3 * i];
  poison(b);
  stereo_pass_median(f.ps, a, b);
  g_autofree float *vb = download(b);
  check_all_finite(vb, n * 4, "median");
  ref_median3x3(w, h, d, valid);
  for (size_t i = 0; i < n; i++) {
    g_assert_cmpint(vb[4 * i + 1] > 0, ==, valid[i]);
    if (valid[i])
      g_assert_cmpfloat(vb[4 * i], ==, (float)d[i]);
  }

  /* 3. densify (scanline fill, then the 9x3 median of the filled pixels) */
  poison(a);
  stereo_pass_densify(f.ps, b, inten, a);
  poison(b);
  stereo_pass_densify_median(f.ps, a, b);
  g_autofree float *vd = download(b);
  check_all_finite(vd, n * 4, "densify");
  g_autofree bool *filled = g_new0(bool, n);
  ref_densify(w, h, ir->data, d, valid, filled);
  int nfilled = 0;
  for (size_t i = 0; i < n; i++) {
    float state = vd[4 * i + 1];
    g_assert_cmpfloat(state, ==, filled[i] ? 1.0 : valid[i] ? 2.0 : 0.0);
    if (valid[i])
      g_assert_cmpfloat(vd[4 * i], ==, (float)d[i]);
    nfilled += filled[i];
  }
  g_assert_cmpint(nfilled, >, 0);
  fixture_teardown(&f);
}

/* A calibration with a random lens of OpenCV's `model` (5, 8, 12 or 14 coefficients) on
 * each side, rectifying rotations and raw principal points 0.1 w off centre (left
 * camera to the right, right camera to the left). The coefficients keep the radial
 * factor within 0.91..1.1 at r^2 <= 0.5 (the rectified corners) and the other terms
 * under ~1.3 px, so the last column of the left view and the first of the right view map
 * more than 1.5 px outside their raw images: the border rule is always exercised (about
 * a fifth of the pixels have a tap outside), the rest of each view is inside. */
static void
random_calib(StereoCalib *c, int w, int h, int model)
{
  const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 10 };
  double f = 0.9 * w;
  calib_init_ideal(c, w, h, 0.95 * f, 0.5 * w + 1.7, 0.5 * h - 2.3, 0.5, NULL, rot, centre);
  for (int side = 0; side < 2; side++) {
    double *K = side ? c->K_right : c->K_left, *D = side ? c->dist_right : c->dist_left;
    K[0] = f * g_rand_double_range(stages_rng, 0.99, 1.01);
    K[4] = K[0] * g_rand_double_range(stages_rng, 0.99, 1.01);
    K[2] = (side ? 0.4 : 0.6) * w + g_rand_double_range(stages_rng, -1, 1);
    K[5] = 0.5 * h + g_rand_double_range(stages_rng, -3, 3);
    const double range[CALIB_DIST_COUNT] = { 0.08, 0.02, 0.002, 0.002, 0.01, 0.08, 0.02, 0.01,
                                             0.003, 0.003, 0.003, 0.003, 0.03, 0.03 };
    for (int i = 0; i < model; i++)
      D[i] = g_rand_double_range(stages_rng, -range[i], range[i]);
  }
  double a = g_rand_double_range(stages_rng, -0.015, 0.015);
  double b = g_rand_double_range(stages_rng, -0.02, 0.02);
  double r1[9] = { cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a) };
  double r2[9] = { 1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b) };
  memcpy(c->R1, r1, sizeof r1);
  memcpy(c->R2, r2, sizeof r2);
  GError *error = NULL;
  g_assert_true(calib_validate(c, &error));
  g_assert_cmpint(calib_dist_model(c->dist_left), ==, model);
}

/* Rectification with each of OpenCV's distortion models: the engine's map
 * (calib_rectified_to_raw, stored in fp32) sampled by the GPU against the reference
 * (ref_rectified_to_raw in double, bilinear in double). Intensities are in [0, 1], so
 * the bilinear sample moves by at most 1 per px of position per axis; fp32 rounds
 * positions within (-128, 128) px by <= 3.8e-6 px per axis, fp32 weights add ~1e-7:
 * 1e-5. */
static void
test_rectify(void)
{
  const int w = 97, h = 61;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  static const int models[] = { 5, 8, 12, 14 };
  for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
    StereoCalib calib;
    random_calib(&calib, w, h, models[m]);
    g_autofree uint8_t *raw = g_new(uint8_t, 2 * (size_t)w * h);
    for (size_t i = 0; i < 2 * (size_t)w * h; i++)
      raw[i] = (uint8_t)g_rand_int_range(stages_rng, 0, 256);
    /* two layers: left raw, right raw */
    GError *error = NULL;
    GpuImageParams ip = { .label = "raw", .width = w, .height = h, .layers = 2,
                          .format = GPU_FORMAT_R8 };
    g_autoptr(GpuImage) raw8 = gpu_image_new(f.ctx, &ip, &error);
    g_assert_no_error(error);
    g_assert_true(gpu_image_upload(raw8, 0, raw, w, &error));
    g_assert_true(gpu_image_upload(raw8, 1, raw + (size_t)w * h, w, &error));
    GpuImageParams mp = { .label = "map", .width = w, .height = h, .layers = 2,
                          .format = GPU_FORMAT_RG32F };
    g_autoptr(GpuImage) map = gpu_image_new(f.ctx, &mp, &error);
    g_assert_no_error(error);
    g_autofree float *uv = g_new(float, 2 * (size_t)w * h);
    int outside[2] = { 0, 0 };
    for (int side = 0; side < 2; side++) {
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          double u, v;
          calib_rectified_to_raw(&calib, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
          g_assert_cmpfloat(fabs(u), <, 128.0);
          g_assert_cmpfloat(fabs(v), <, 128.0);
          uv[2 * (y * w + x)] = (float)u;
          uv[2 * (y * w + x) + 1] = (float)v;
          outside[side] += u < 0 || v < 0 || u > w - 1 || v > h - 1;
        }
      g_assert_true(gpu_image_upload(map, side, uv, (size_t)w * 8, &error));
    }
    g_assert_cmpint(outside[0], >=, h);   /* the border rule is exercised */
    g_assert_cmpint(outside[1], >=, h);
    g_autoptr(GpuImage) dst = image_new(f.ctx, w, h, GPU_FORMAT_RG32F);
    poison(dst);
    stereo_pass_rectify(f.ps, raw8, map, dst);
    g_autofree float *out = download(dst);
    check_all_finite(out, 2 * (size_t)w * h, "rectify");
    g_autoptr(RefImage) rl = ref_rectify(&calib, CALIB_LEFT, raw, w);
    g_autoptr(RefImage) rr = ref_rectify(&calib, CALIB_RIGHT, raw + (size_t)w * h, w);
    double max_err = 0;
    for (int i = 0; i < w * h; i++) {
      max_err = MAX(max_err, fabs(out[2 * i] - rl->data[i]));
      max_err = MAX(max_err, fabs(out[2 * i + 1] - rr->data[i]));
    }
    g_test_message("rectify, %d coefficients: %d + %d px outside, max abs error %.3g",
                   models[m], outside[0], outside[1], max_err);
    g_assert_cmpfloat(max_err, <, 1e-5);
  }
  fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/post", test_post);
  g_test_add_func("/stages/rectify", test_rectify);
  return stages_run();
}
