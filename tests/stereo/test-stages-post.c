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
  GError *error = NULL;
  GpuImageParams sp = { .label = "state", .width = w, .height = h, .layers = 2,
                        .format = GPU_FORMAT_RGBA32F };
  g_autoptr(GpuImage) state = gpu_image_new(f.ctx, &sp, &error);
  g_assert_no_error(error);
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
  {
    g_autofree float *buf = g_new0(float, (size_t)w * h * 4);
    for (int side = 0; side < 2; side++) {
      const RefImage *fs = side ? fr : fl;
      for (int i = 0; i < w * h; i++)
        for (int c = 0; c < 3; c++)
          buf[4 * i + c] = (float)fs->data[3 * i + c];
      g_assert_true(gpu_image_upload(state, side, buf, (size_t)w * 16, &error));
    }
  }
  size_t n = (size_t)w * h;

  /* 1. validity */
  poison(a);
  stereo_pass_post_lr(f.ps, state, a);
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

/* A calibration with lens distortion, a principal point off centre and rectifying
 * rotations, so the map exercises every term of calib_rectified_to_raw. */
static void
distorted_calib(StereoCalib *c, int w, int h)
{
  const double dist[5] = { -0.21, 0.06, 0.0012, -0.0008, -0.01 };
  const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 10 };
  calib_init_ideal(c, w, h, 0.9 * w, 0.5 * w + 1.7, 0.5 * h - 2.3, 0.5, dist, rot, centre);
  double a = 0.02, b = -0.015;  /* small rotations about y (left) and x (right) */
  double r1[9] = { cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a) };
  double r2[9] = { 1, 0, 0, 0, cos(b), -sin(b), 0, sin(b), cos(b) };
  memcpy(c->R1, r1, sizeof r1);
  memcpy(c->R2, r2, sizeof r2);
  for (int i = 0; i < 5; i++)
    c->dist_right[i] = 0.8 * dist[i];
}

/* Rectification (§0) and the level-1 reduce in the same pass: bilinear interpolation of
 * [0,1] intensities at positions from a map stored in fp32 (the position itself is
 * rounded to ~1e-4 px at 100 px, so a 1-level intensity step per pixel moves the result by
 * < 1e-6) and fp32 weights: 1e-5, also after the 5 x 5 reduce (weights summing to 1).
 * Two pairs in one dispatch: the second uses its own map (the first's swapped sides). */
static void
test_rectify(void)
{
  const int w = 97, h = 61, w1 = 49, h1 = 31;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  StereoCalib calib;
  distorted_calib(&calib, w, h);
  size_t n = (size_t)w * h;
  g_autofree uint8_t *raw = g_new(uint8_t, 4 * n);
  for (size_t i = 0; i < 4 * n; i++)
    raw[i] = (uint8_t)g_rand_int_range(stages_rng, 0, 256);
  GError *error = NULL;
  GpuImageParams ip = { .label = "raw", .width = w, .height = h, .layers = 4,
                        .format = GPU_FORMAT_R8 };
  g_autoptr(GpuImage) raw8 = gpu_image_new(f.ctx, &ip, &error);
  g_assert_no_error(error);
  for (int l = 0; l < 4; l++)
    g_assert_true(gpu_image_upload(raw8, l, raw + l * n, w, &error));
  GpuImageParams mp = { .label = "map", .width = w, .height = h, .layers = 4,
                        .format = GPU_FORMAT_RG32F };
  g_autoptr(GpuImage) map = gpu_image_new(f.ctx, &mp, &error);
  g_assert_no_error(error);
  g_autofree float *uv = g_new(float, 2 * n);
  int outside = 0;
  for (int side = 0; side < 2; side++) {
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double u, v;
        calib_rectified_to_raw(&calib, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
        uv[2 * (y * w + x)] = (float)u;
        uv[2 * (y * w + x) + 1] = (float)v;
        outside += u < 0 || v < 0 || u > w - 1 || v > h - 1;
      }
    g_assert_true(gpu_image_upload(map, side, uv, (size_t)w * 8, &error));
    g_assert_true(gpu_image_upload(map, 3 - side, uv, (size_t)w * 8, &error));
  }
  g_assert_cmpint(outside, >, 0);   /* the border rule is exercised */
  GpuImageParams dp = { .label = "level0", .width = w, .height = h, .layers = 2,
                        .format = GPU_FORMAT_RG32F };
  g_autoptr(GpuImage) dst = gpu_image_new(f.ctx, &dp, &error);
  dp.label = "level1";
  dp.width = w1;
  dp.height = h1;
  g_autoptr(GpuImage) dst1 = gpu_image_new(f.ctx, &dp, &error);
  g_assert_no_error(error);
  poison(dst);
  poison(dst1);
  stereo_pass_ingest(f.ps, raw8, map, dst, dst1);
  for (int pair = 0; pair < 2; pair++) {
    g_autofree float *out = download_layer(dst, pair);
    g_autofree float *out1 = download_layer(dst1, pair);
    check_all_finite(out, 2 * n, "rectify");
    check_all_finite(out1, 2 * (size_t)w1 * h1, "rectify level 1");
    CalibSide sl = pair ? CALIB_RIGHT : CALIB_LEFT, sr = pair ? CALIB_LEFT : CALIB_RIGHT;
    g_autoptr(RefImage) rl = ref_rectify(&calib, sl, raw + 2 * pair * n, w);
    g_autoptr(RefImage) rr = ref_rectify(&calib, sr, raw + (2 * pair + 1) * n, w);
    g_autoptr(RefImage) rl1 = ref_reduce(rl);
    g_autoptr(RefImage) rr1 = ref_reduce(rr);
    double max_err = 0, max_err1 = 0;
    for (size_t i = 0; i < n; i++) {
      max_err = MAX(max_err, fabs(out[2 * i] - rl->data[i]));
      max_err = MAX(max_err, fabs(out[2 * i + 1] - rr->data[i]));
    }
    for (int i = 0; i < w1 * h1; i++) {
      max_err1 = MAX(max_err1, fabs(out1[2 * i] - rl1->data[i]));
      max_err1 = MAX(max_err1, fabs(out1[2 * i + 1] - rr1->data[i]));
    }
    g_test_message("rectify pair %d: max abs error %.3g, level 1 %.3g", pair, max_err, max_err1);
    g_assert_cmpfloat(max_err, <, 1e-5);
    g_assert_cmpfloat(max_err1, <, 1e-5);
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
