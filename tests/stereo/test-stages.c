/* test-stages.c: the filter's ingest, pyramid and quadrature passes, each against the
 * double-precision reference (stages-fixture.h); the phase stage and the hole fill are
 * in test-stages-phase.c.
 * Tolerances are stated per stage with the reason.
 */
#include <math.h>
#include <string.h>

#include "tests/common/gpu-test.h"
#include "tests/stereo/stages-fixture.h"

/* Ingest and the level-1 reduce in one pass, three pairs (layers) at once, odd sizes:
 * level 0 is Y / 255 as the GL converts unorm8 to float (GL allows it not to be the
 * correctly rounded quotient: llvmpipe is 3e-8 off at some values, so 1e-7), level 1 the
 * reduce of it (25 products of float inputs in [0,1]: |error| < 1e-6). */
static void
test_ingest(void)
{
  const int w = 83, h = 45, w1 = 42, h1 = 23, pairs = 3;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  size_t n = (size_t)w * h;
  g_autofree uint8_t *raw = g_new(uint8_t, 2 * pairs * n);
  for (size_t i = 0; i < 2 * pairs * n; i++)
    raw[i] = (uint8_t)g_rand_int_range(stages_rng, 0, 256);
  GError *error = NULL;
  GpuImageParams ip = { .label = "in8", .width = w, .height = h, .layers = 2 * pairs,
                        .format = GPU_FORMAT_R8 };
  g_autoptr(GpuImage) in8 = gpu_image_new(f.ctx, &ip, &error);
  for (int l = 0; l < 2 * pairs; l++)
    g_assert_true(gpu_image_upload(in8, l, raw + l * n, w, &error));
  GpuImageParams dp = { .label = "level0", .width = w, .height = h, .layers = pairs,
                        .format = GPU_FORMAT_RG32F };
  g_autoptr(GpuImage) l0 = gpu_image_new(f.ctx, &dp, &error);
  dp.label = "level1";
  dp.width = w1;
  dp.height = h1;
  g_autoptr(GpuImage) l1 = gpu_image_new(f.ctx, &dp, &error);
  g_assert_no_error(error);
  poison(l0);
  poison(l1);
  stereo_pass_ingest(f.ps, in8, NULL, l0, l1, NULL);
  for (int k = 0; k < pairs; k++) {
    g_autofree float *o0 = download_layer(l0, k), *o1 = download_layer(l1, k);
    check_all_finite(o0, 2 * n, "ingest level 0");
    check_all_finite(o1, 2 * (size_t)w1 * h1, "ingest level 1");
    for (int side = 0; side < 2; side++) {
      g_autoptr(RefImage) r0 = ref_ingest(raw + (2 * k + side) * n, w, h, w);
      g_autoptr(RefImage) r1 = ref_reduce(r0);
      for (size_t i = 0; i < n; i++)
        g_assert_cmpfloat_with_epsilon(o0[2 * i + side], r0->data[i], 1e-7);
      for (int i = 0; i < w1 * h1; i++)
        g_assert_cmpfloat_with_epsilon(o1[2 * i + side], r1->data[i], 1e-6);
    }
  }
  /* Without level 1 (a filter on level 0 only) level 0 alone is made. */
  poison(l0);
  stereo_pass_ingest(f.ps, in8, NULL, l0, NULL, NULL);
  g_autofree float *o0 = download_layer(l0, 2);
  for (size_t i = 0; i < n; i++)
    g_assert_cmpfloat_with_epsilon(o0[2 * i], raw[4 * n + i] / 255.0, 1e-7);
  fixture_teardown(&f);
}

/* Reduce: 25 products of float inputs in [0,1]: |error| < 1e-6 (fp32 rounding). */
static void
test_reduce(void)
{
  Fixture f;
  fixture_setup(&f, 67, 45);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) a = random_image(67, 45, 1, 0, 1);
  g_autoptr(RefImage) b = random_image(67, 45, 1, 0, 1);
  g_autoptr(GpuImage) src = pair_image(f.ctx, a, b);
  g_autoptr(GpuImage) dst = image_new(f.ctx, 34, 23, GPU_FORMAT_RG32F);
  poison(dst);
  stereo_pass_reduce(f.ps, src, dst);
  g_autofree float *out = download(dst);
  check_all_finite(out, 34 * 23 * 2, "reduce");
  g_autoptr(RefImage) ra = ref_reduce(a);
  g_autoptr(RefImage) rb = ref_reduce(b);
  for (int i = 0; i < 34 * 23; i++) {
    g_assert_cmpfloat_with_epsilon(out[2 * i], ra->data[i], 1e-6);
    g_assert_cmpfloat_with_epsilon(out[2 * i + 1], rb->data[i], 1e-6);
  }
  fixture_teardown(&f);
}

/* Quadrature filter and mean magnitude of four levels (one dispatch of three, one of
 * one) of two pairs, run twice (the counters that elect the last workgroup must be left
 * at zero): 11 + 11 taps of magnitude < 0.4 on [0,1] inputs: fp32 accumulation error
 * < 1e-5 (ALGORITHM.md §10.4 names 1e-5 for the filter), then stored as half floats
 * (STEREO_QUAD_FORMAT): within one half-float ulp (2^-10 relative) on top, since the GL
 * may convert by truncation (llvmpipe's error exceeds half an ulp). The mean magnitude is summed from
 * the fp32 responses, over all pixels: relative 1e-5. */
static void
quadrature_case(void)
{
  enum { NL = 4, PAIRS = 2 };
  static const int sz[NL][2] = { { 83, 61 }, { 42, 31 }, { 21, 16 }, { 40, 17 } };
  static const int level_of[NL] = { 0, 1, 2, 5 };
  Fixture f;
  fixture_setup(&f, 83, 61);
  if (!f.ctx)
    return;
  GError *error = NULL;
  RefImage *a[NL][PAIRS], *b[NL][PAIRS];
  GpuImage *img[NL], *quad[NL];
  StereoQuadLevel ql[NL];
  int base = 5;   /* not at 0 */
  for (int l = 0; l < NL; l++) {
    int w = sz[l][0], h = sz[l][1];
    GpuImageParams ip = { .label = "img", .width = w, .height = h, .layers = PAIRS,
                          .format = GPU_FORMAT_RG32F };
    img[l] = gpu_image_new(f.ctx, &ip, &error);
    ip.format = STEREO_QUAD_FORMAT;
    quad[l] = gpu_image_new(f.ctx, &ip, &error);
    g_assert_no_error(error);
    g_autofree float *buf = g_new(float, 2 * (size_t)w * h);
    for (int k = 0; k < PAIRS; k++) {
      a[l][k] = random_image(w, h, 1, 0, 1);
      b[l][k] = random_image(w, h, 1, 0, 1);
      for (int i = 0; i < w * h; i++) {
        buf[2 * i] = (float)a[l][k]->data[i];
        buf[2 * i + 1] = (float)b[l][k]->data[i];
      }
      g_assert_true(gpu_image_upload(img[l], k, buf, (size_t)w * 8, &error));
    }
    ql[l] = (StereoQuadLevel){ img[l], quad[l], level_of[l], base };
    base += PAIRS * stereo_pass_quadrature_groups(f.ps, w, h) + 3;
  }
  g_autoptr(GpuBuffer) partials = storage_buffer(f.ctx, "partials", (size_t)base * 8);
  g_autoptr(GpuBuffer) counters = storage_buffer(f.ctx, "counters",
                                                 PAIRS * STEREO_MAX_LEVELS * 4);
  g_autoptr(GpuBuffer) means = storage_buffer(f.ctx, "means", PAIRS * STEREO_MAX_LEVELS * 8);
  g_assert_true(gpu_buffer_fill_u32(counters, 0, &error));
  for (int run = 0; run < 2; run++) {
    g_assert_true(gpu_buffer_fill_u32(means, 0x7fc00000u, &error));
    for (int l = 0; l < NL; l++)
      poison(quad[l]);
    stereo_pass_quadrature(f.ps, ql, NL, partials, counters, means);
    float m[PAIRS * STEREO_MAX_LEVELS * 2];
    g_assert_true(gpu_buffer_read(means, 0, m, sizeof m, &error));
    for (int l = 0; l < NL; l++)
      for (int k = 0; k < PAIRS; k++) {
        int w = sz[l][0], h = sz[l][1];
        g_autofree float *out = download_layer(quad[l], k);
        check_all_finite(out, (size_t)w * h * 4, "quadrature");
        g_autoptr(RefImage) qa = ref_quadrature(&f.p, a[l][k]);
        g_autoptr(RefImage) qb = ref_quadrature(&f.p, b[l][k]);
        double max_err = 0;   /* in units of the bound */
        for (int i = 0; i < w * h; i++)
          for (int c = 0; c < 4; c++) {
            double r = (c < 2 ? qa : qb)->data[2 * i + (c & 1)];
            max_err = MAX(max_err, fabs(out[4 * i + c] - r) / (1e-5 + ldexp(fabs(r), -10)));
          }
        g_assert_cmpfloat(max_err, <=, 1.0);
        double ma = ref_mean_magnitude(qa), mb = ref_mean_magnitude(qb);
        int mi = 2 * (k * STEREO_MAX_LEVELS + level_of[l]);
        if (run == 0)
          g_test_message("quadrature %dx%d pair %d: max error %.3g of the bound, means %.6f %.6f", w, h,
                         k, max_err, m[mi], m[mi + 1]);
        g_assert_cmpfloat(fabs(m[mi] - ma), <, 1e-5 * ma);
        g_assert_cmpfloat(fabs(m[mi + 1] - mb), <, 1e-5 * mb);
      }
    guint32 c[PAIRS * STEREO_MAX_LEVELS];
    g_assert_true(gpu_buffer_read(counters, 0, c, sizeof c, &error));
    for (size_t i = 0; i < G_N_ELEMENTS(c); i++)
      g_assert_cmpuint(c[i], ==, 0);
  }
  for (int l = 0; l < NL; l++) {
    for (int k = 0; k < PAIRS; k++) {
      ref_image_free(a[l][k]);
      ref_image_free(b[l][k]);
    }
    gpu_image_free(img[l]);
    gpu_image_free(quad[l]);
  }
  fixture_teardown(&f);
}

/* Both tile widths of the quadrature pass (32 outputs of a row a workgroup, the default,
 * and 16: STEREOD_QUAD_TILE) */
static void
test_quadrature(void)
{
  g_autofree char *saved = g_strdup(g_getenv("STEREOD_QUAD_TILE"));
  static const char *const widths[] = { "32", "16" };
  for (size_t i = 0; i < G_N_ELEMENTS(widths); i++) {
    g_setenv("STEREOD_QUAD_TILE", widths[i], TRUE);
    g_test_message("quadrature tiles %s x 16", widths[i]);
    quadrature_case();
  }
  gpu_test_setenv("STEREOD_QUAD_TILE", saved);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/ingest", test_ingest);
  g_test_add_func("/stages/reduce", test_reduce);
  g_test_add_func("/stages/quadrature", test_quadrature);
  return stages_run();
}
