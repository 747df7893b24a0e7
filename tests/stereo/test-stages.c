/* test-stages.c: the filter's pyramid, quadrature, phase, smoothing/solve, hole fill and
 * upsample passes, each against the double-precision reference (stages-fixture.h).
 * Tolerances are stated per stage with the reason.
 */
#include <math.h>
#include <string.h>

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
  stereo_pass_ingest(f.ps, in8, NULL, l0, l1);
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
  stereo_pass_ingest(f.ps, in8, NULL, l0, NULL);
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
 * < 1e-5 (ALGORITHM.md §10.4 names 1e-5 for the filter). The mean magnitude is a sum
 * over all pixels: relative 1e-5. */
static void
test_quadrature(void)
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
    ip.format = GPU_FORMAT_RGBA32F;
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
    base += PAIRS * stereo_pass_quadrature_groups(w, h) + 3;
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
        double max_err = 0;
        for (int i = 0; i < w * h; i++) {
          max_err = MAX(max_err, fabs(out[4 * i + 0] - qa->data[2 * i]));
          max_err = MAX(max_err, fabs(out[4 * i + 1] - qa->data[2 * i + 1]));
          max_err = MAX(max_err, fabs(out[4 * i + 2] - qb->data[2 * i]));
          max_err = MAX(max_err, fabs(out[4 * i + 3] - qb->data[2 * i + 1]));
        }
        g_assert_cmpfloat(max_err, <, 1e-5);
        double ma = ref_mean_magnitude(qa), mb = ref_mean_magnitude(qb);
        int mi = 2 * (k * STEREO_MAX_LEVELS + level_of[l]);
        if (run == 0)
          g_test_message("quadrature %dx%d pair %d: max abs error %.3g, means %.6f %.6f", w, h,
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

static GpuBuffer *
means_buffer(GpuContext *ctx, int level, double ml, double mr)
{
  GError *error = NULL;
  GpuBuffer *means = storage_buffer(ctx, "means", STEREO_MAX_LEVELS * 8);
  float m[2] = { (float)ml, (float)mr };
  g_assert_true(gpu_buffer_fill_u32(means, 0x7fc00000u, &error));
  g_assert_true(gpu_buffer_write(means, (size_t)level * 8, m, sizeof m, &error));
  g_assert_no_error(error);
  return means;
}

/* Phase terms on real filter responses of a textured pair and a random prior near the
 * true disparity. Gates are thresholds on fp32 quantities, so a pixel within rounding of
 * a threshold may flip: at most 0.5 % of the pixels may differ in the gate; elsewhere
 * every product within 2e-4 relative (asin/atan and the reciprocal of |q0|^2 in fp32). */
static void
test_phase(void)
{
  const int w = 90, h = 50;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  double shift = g_rand_double_range(stages_rng, 2, 12);
  g_autoptr(RefImage) l = NULL, r = NULL;
  textured_pair(w, h, shift, &l, &r);
  g_autoptr(RefImage) ql = ref_quadrature(&f.p, l);
  g_autoptr(RefImage) qr = ref_quadrature(&f.p, r);
  round_to_float(ql);
  round_to_float(qr);
  double ml = (float)ref_mean_magnitude(ql), mr = (float)ref_mean_magnitude(qr);
  g_autoptr(GpuImage) quad = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  const RefImage *s[4] = { ql, ql, qr, qr };
  upload_channels(quad, s, (int[]){ 0, 1, 0, 1 }, 4);
  g_autoptr(GpuBuffer) means = means_buffer(f.ctx, 0, ml, mr);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) terms = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  for (int eta = 1; eta >= -1; eta -= 2) {
    g_autoptr(RefImage) prior = ref_image_new(w, h, REF_FIELD_CHANNELS);
    for (int i = 0; i < w * h; i++)
      prior->data[3 * i] = (float)(shift + g_rand_double_range(stages_rng, -1.0, 1.0));
    const RefImage *ps[1] = { prior };
    upload_channels(disp, ps, (int[]){ REF_D }, 1);
    poison(terms);
    stereo_pass_phase(f.ps, quad, disp, terms, means, 0, eta);
    g_autofree float *out = download(terms);
    check_all_finite(out, (size_t)w * h * 4, "phase");
    g_autoptr(RefImage) ref = ref_phase_terms(&f.p, eta > 0 ? ql : qr, eta > 0 ? qr : ql, prior,
                                              eta, f.p.kappa * (eta > 0 ? ml : mr));
    int flips = 0, active = 0;
    double max_rel = 0;
    for (int i = 0; i < w * h; i++) {
      bool ga = out[4 * i + 2] > 0, ra = ref->data[4 * i + 2] > 0;
      active += ra;
      if (ga != ra) {
        flips++;
        continue;
      }
      for (int c = 0; c < 4; c++)
        max_rel = MAX(max_rel, fabs(out[4 * i + c] - ref->data[4 * i + c]) /
                                 (1.0 + fabs(ref->data[4 * i + c])));
    }
    g_test_message("phase eta %d: %d active, %d gate flips, max rel error %.3g", eta, active,
                   flips, max_rel);
    g_assert_cmpint(active, >, w * h / 3);
    g_assert_cmpfloat(flips, <=, 0.005 * w * h);
    g_assert_cmpfloat(max_rel, <, 2e-4);
  }
  fixture_teardown(&f);
}

/* Smooth + solve on random, self-consistent terms (some pixels without certainty).
 * d within 1e-4 px, certainty within 1e-5; sigma_d^2 = E/A - d^2 cancels in fp32, so it
 * is compared within 2e-6 (1 + d^2) px^2. */
/* The applicability filter and the solve against the reference; with guard > 0 (§5b)
 * half of the priors lie near the solution, so both sides of the guard occur. */
static void
smooth_solve_case(double guard)
{
  const int w = 70, h = 44, level = 1;
  Fixture f;
  fixture_setup(&f, 2 * w, 2 * h);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) terms = ref_image_new(w, h, 4);
  g_autoptr(RefImage) prior = ref_image_new(w, h, REF_FIELD_CHANNELS);
  for (int i = 0; i < w * h; i++) {
    double c = g_rand_double(stages_rng) < 0.4 ? 0.0 : g_rand_double_range(stages_rng, 0.0, 1.0);
    double om = g_rand_double_range(stages_rng, 1.2, 1.9);
    double di = 8.0 + 0.02 * (i % w) + g_rand_double_range(stages_rng, -0.5, 0.5);
    double e = om * di;
    double *t = terms->data + 4 * i;
    t[0] = (float)(c * om * om);
    t[1] = (float)(c * om * e);
    t[2] = (float)c;
    t[3] = (float)(c * e * e);
    prior->data[3 * i] = (float)(guard > 0 && i % 2 ? di + g_rand_double_range(stages_rng, -0.4, 0.4)
                                                    : g_rand_double_range(stages_rng, -20, 40));
  }
  /* Holes: a block without any certainty so that some pixels keep d0 (and are clamped). */
  for (int y = 10; y < 30; y++)
    for (int x = 20; x < 45; x++)
      memset(terms->data + 4 * (y * w + x), 0, 4 * sizeof(double));
  g_autoptr(GpuImage) gt = image_new(f.ctx, w + 5, h + 3, GPU_FORMAT_RGBA32F); /* larger */
  g_autoptr(GpuImage) tmp = image_new(f.ctx, w + 5, h + 3, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  {
    g_autofree float *buf = g_new0(float, (size_t)(w + 5) * (h + 3) * 4);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        for (int c = 0; c < 4; c++)
          buf[(y * (w + 5) + x) * 4 + c] = (float)terms->data[(y * w + x) * 4 + c];
    /* garbage outside the processed region must not leak in */
    for (int y = 0; y < h + 3; y++)
      for (int x = 0; x < w + 5; x++)
        if (x >= w || y >= h)
          for (int c = 0; c < 4; c++)
            buf[(y * (w + 5) + x) * 4 + c] = 1e6f;
    GError *error = NULL;
    g_assert_true(gpu_image_upload(gt, 0, buf, (size_t)(w + 5) * 16, &error));
  }
  const RefImage *ps[1] = { prior };
  upload_channels(disp, ps, (int[]){ REF_D }, 1);
  poison(tmp);
  stereo_pass_smooth_solve(f.ps, gt, tmp, disp, level, (float)guard);
  g_autofree float *out = download(disp);
  check_all_finite(out, (size_t)w * h * 4, "solve");
  g_autoptr(RefImage) ref = ref_smooth_solve(&f.p, terms, prior, level, guard);
  int kept = 0, guarded = 0, flips = 0;
  for (int i = 0; i < w * h; i++) {
    const double *rf = ref->data + 3 * i;
    bool rg = rf[REF_CERT] > 0 && rf[REF_SIGMA] == 0 && rf[REF_D] == prior->data[3 * i];
    guarded += rg;
    if (guard > 0 && fabs(out[4 * i] - rf[REF_D]) >= 1e-4 &&
        fabs(fabs(rf[REF_D] - prior->data[3 * i]) - guard) < 1e-3) {
      flips++;   /* |d - d0| within rounding of the guard: either side is right */
      continue;
    }
    g_assert_cmpfloat(fabs(out[4 * i] - rf[REF_D]), <, 1e-4);
    g_assert_cmpfloat(fabs(out[4 * i + 1] - rf[REF_CERT]), <, 1e-5);
    double var_g = (double)out[4 * i + 2] * out[4 * i + 2];
    double var_r = rf[REF_SIGMA] * rf[REF_SIGMA];
    g_assert_cmpfloat(fabs(var_g - var_r), <, 2e-6 * (1.0 + rf[REF_D] * rf[REF_D]));
    g_assert_cmpfloat(out[4 * i + 3], ==, rf[REF_CERT] > 0 ? 1.0 : 0.0);
    kept += rf[REF_CERT] == 0;
  }
  g_assert_cmpint(kept, >, 100);
  g_test_message("smooth-solve guard %.2f: %d kept d0 without certainty, %d guarded, %d at the "
                 "guard's edge", guard, kept, guarded, flips);
  if (guard > 0) {
    g_assert_cmpint(guarded, >, 100);
    g_assert_cmpint(flips, <=, 3);
  }
  fixture_teardown(&f);
}

static void
test_smooth_solve(void)
{
  smooth_solve_case(0.0);
  smooth_solve_case(STEREO_REFINE_GUARD);
}

/* Hole fill: random field, 40 % holes plus a large hole: d within 1e-4 px (ratios of
 * fp32 sums of at most 25 x 25 taps). */
static void
test_fill(void)
{
  const int w = 77, h = 53;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) field = ref_image_new(w, h, REF_FIELD_CHANNELS);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double *v = ref_image_at(field, x, y);
      bool hole = g_rand_double(stages_rng) < 0.4 || (x > 30 && x < 70 && y > 5 && y < 45);
      v[REF_D] = (float)g_rand_double_range(stages_rng, 0, 30);
      v[REF_CERT] = hole ? 0.0 : (float)g_rand_double_range(stages_rng, 0.05, 1.0);
    }
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) tmp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(RefImage) vflag = ref_image_new(w, h, 1);
  for (int i = 0; i < w * h; i++)
    vflag->data[i] = field->data[3 * i + REF_CERT] > 0 ? 1.0 : 0.0;
  const RefImage *s[4] = { field, field, field, vflag };
  upload_channels(disp, s, (int[]){ REF_D, REF_CERT, REF_SIGMA, 0 }, 4);
  poison(tmp);
  stereo_pass_fill(f.ps, disp, tmp);
  g_autofree float *out = download(disp);
  check_all_finite(out, (size_t)w * h * 4, "fill");
  ref_fill_holes(&f.p, field);
  for (int i = 0; i < w * h; i++)
    g_assert_cmpfloat(fabs(out[4 * i] - field->data[3 * i + REF_D]), <, 1e-4);
  fixture_teardown(&f);
}

/* Upsample: 2 x the mean of up to 4 fp32 values: 1e-5 px at values up to 40. */
static void
test_upsample(void)
{
  Fixture f;
  fixture_setup(&f, 64, 64);
  if (!f.ctx)
    return;
  const int cw = 33, ch = 21, fw = 65, fh = 41;
  g_autoptr(RefImage) coarse = random_image(cw, ch, REF_FIELD_CHANNELS, 0, 20);
  g_autoptr(GpuImage) src = image_new(f.ctx, cw, ch, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) dst = image_new(f.ctx, fw, fh, GPU_FORMAT_RGBA32F);
  const RefImage *s[1] = { coarse };
  upload_channels(src, s, (int[]){ REF_D }, 1);
  poison(dst);
  stereo_pass_upsample(f.ps, src, dst);
  g_autofree float *out = download(dst);
  check_all_finite(out, (size_t)fw * fh * 4, "upsample");
  g_autoptr(RefImage) ref = ref_upsample(coarse, fw, fh);
  for (int i = 0; i < fw * fh; i++) {
    g_assert_cmpfloat(fabs(out[4 * i] - ref->data[3 * i]), <, 1e-5);
    g_assert_cmpfloat(out[4 * i + 1], ==, 0.0);
  }
  fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  stages_init(&argc, &argv);
  g_test_add_func("/stages/ingest", test_ingest);
  g_test_add_func("/stages/reduce", test_reduce);
  g_test_add_func("/stages/quadrature", test_quadrature);
  g_test_add_func("/stages/phase", test_phase);
  g_test_add_func("/stages/smooth-solve", test_smooth_solve);
  g_test_add_func("/stages/fill", test_fill);
  g_test_add_func("/stages/upsample", test_upsample);
  return stages_run();
}
