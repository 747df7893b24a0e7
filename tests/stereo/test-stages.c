/* test-stages.c: every GPU pass of the filter against the double-precision reference.
 *
 * Each test draws fresh random inputs (the seed is printed; STEREOD_TEST_SEED repeats a
 * run), computes the stage with tests/reference/, uploads the same inputs (rounded to
 * float) to the GPU, poisons the output with NaN, runs the one pass, reads back and
 * compares. Tolerances are stated per stage with the reason.
 */
#include <math.h>
#include <string.h>

#include "kernels/stereo-passes.h"
#include "tests/common/gpu-test.h"
#include "tests/common/texture.h"
#include "tests/reference/reference.h"

static GRand *rng;

/* ---------------------------------------------------------------- helpers */

static GpuImage *
image_new(GpuContext *ctx, int w, int h, GpuFormat fmt)
{
  GError *error = NULL;
  GpuImageParams ip = { .label = "test", .width = w, .height = h, .layers = 1, .format = fmt };
  GpuImage *img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  return img;
}

static GpuBuffer *
storage_buffer(GpuContext *ctx, const char *label, size_t size)
{
  GError *error = NULL;
  GpuBufferParams bp = { .label = label, .size = size, .usage = GPU_BUFFER_STORAGE };
  GpuBuffer *buf = gpu_buffer_new(ctx, &bp, &error);
  g_assert_no_error(error);
  return buf;
}

static void
poison(GpuImage *img)
{
  const float nan4[4] = { NAN, NAN, NAN, NAN };
  GError *error = NULL;
  g_assert_true(gpu_image_fill(img, nan4, &error));
  g_assert_no_error(error);
}

/* Uploads channels of up to 4 reference images into one float image (chan_of[i] = which
 * source channel goes to texture channel i; src NULL = 0). */
static void
upload_channels(GpuImage *img, const RefImage *const *src, const int *chan, int n)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  g_autofree float *buf = g_new0(float, (size_t)w * h * tc);
  for (int i = 0; i < n && i < tc; i++) {
    if (!src[i])
      continue;
    g_assert_cmpint(src[i]->w, ==, w);
    g_assert_cmpint(src[i]->h, ==, h);
    for (int p = 0; p < w * h; p++)
      buf[(size_t)p * tc + i] = (float)src[i]->data[(size_t)p * src[i]->ch + chan[i]];
  }
  GError *error = NULL;
  g_assert_true(gpu_image_upload(img, 0, buf, (size_t)w * tc * sizeof(float), &error));
  g_assert_no_error(error);
}

static float *
download(GpuImage *img)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  float *buf = g_new(float, (size_t)w * h * tc);
  GError *error = NULL;
  g_assert_true(gpu_image_download(img, 0, buf, (size_t)w * tc * sizeof(float), &error));
  g_assert_no_error(error);
  return buf;
}

/* Rounds a reference image to float precision in place (what the GPU sees as input). */
static void
round_to_float(RefImage *img)
{
  for (size_t i = 0; i < (size_t)img->w * img->h * img->ch; i++)
    img->data[i] = (float)img->data[i];
}

static RefImage *
random_image(int w, int h, int ch, double lo, double hi)
{
  RefImage *img = ref_image_new(w, h, ch);
  for (size_t i = 0; i < (size_t)w * h * ch; i++)
    img->data[i] = (float)g_rand_double_range(rng, lo, hi);
  return img;
}

/* A smooth random texture (sum of random sinusoids) sampled at x + shift: a textured
 * pair with known disparity `shift` when used for left (0) and right (-shift). */

static void
make_pair(int w, int h, double disparity, uint8_t *left, uint8_t *right)
{
  TestTexture t;
  test_texture_init(&t, rng, 24, 0.15, 1.4, 0, G_PI, 0.25, 3.0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      left[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x, y));
      right[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x + disparity, y));
    }
}

static void
check_all_finite(const float *v, size_t n, const char *what)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      g_error("%s: element %zu was not written (%g)", what, i, v[i]);
}

typedef struct {
  GpuContext *ctx;
  StereoParams p;
  StereoPasses *ps;
} Fixture;

static void
fixture_setup(Fixture *f, int w, int h)
{
  f->ctx = gpu_test_context();
  if (!f->ctx)
    return;
  stereo_params_init(&f->p, w, h);
  f->p.max_disparity = 24;
  f->p.refine = true;   /* the refinement programs are made only then */
  GError *error = NULL;
  f->ps = stereo_passes_new(f->ctx, &f->p, &error);
  g_assert_no_error(error);
}

static void
fixture_teardown(Fixture *f)
{
  stereo_passes_free(f->ps);
  gpu_context_free(f->ctx);
}

/* ---------------------------------------------------------------- stages */

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
  g_autoptr(GpuImage) src = image_new(f.ctx, 67, 45, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) dst = image_new(f.ctx, 34, 23, GPU_FORMAT_RG32F);
  const RefImage *s[2] = { a, b };
  upload_channels(src, s, (int[]){ 0, 0 }, 2);
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

/* Quadrature filter: 11 + 11 taps of magnitude < 0.4 on [0,1] inputs: fp32 accumulation
 * error < 1e-5 (ALGORITHM.md §10.4 names 1e-5 for the filter). The mean magnitude is a
 * sum over all pixels: relative 1e-5. */
static void
test_quadrature(void)
{
  Fixture f;
  fixture_setup(&f, 83, 61);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) a = random_image(83, 61, 1, 0, 1);
  g_autoptr(RefImage) b = random_image(83, 61, 1, 0, 1);
  g_autoptr(GpuImage) src = image_new(f.ctx, 83, 61, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) dst = image_new(f.ctx, 83, 61, GPU_FORMAT_RGBA32F);
  const RefImage *s[2] = { a, b };
  upload_channels(src, s, (int[]){ 0, 0 }, 2);
  poison(dst);
  int groups = stereo_pass_quadrature_groups(83, 61);
  GError *error = NULL;
  g_autoptr(GpuBuffer) partials = storage_buffer(f.ctx, "partials", (size_t)groups * 8 + 64);
  g_autoptr(GpuBuffer) means = storage_buffer(f.ctx, "means", STEREO_MAX_LEVELS * 8);
  g_assert_true(gpu_buffer_fill_u32(means, 0x7fc00000u, &error));
  stereo_pass_quadrature(f.ps, src, dst, partials, 8);   /* offset base: not at 0 */
  stereo_pass_mean(f.ps, partials, 8, 83, 61, 1, means, 3);
  g_autofree float *out = download(dst);
  check_all_finite(out, 83 * 61 * 4, "quadrature");
  g_autoptr(RefImage) qa = ref_quadrature(&f.p, a);
  g_autoptr(RefImage) qb = ref_quadrature(&f.p, b);
  double max_err = 0;
  for (int i = 0; i < 83 * 61; i++) {
    max_err = MAX(max_err, fabs(out[4 * i + 0] - qa->data[2 * i]));
    max_err = MAX(max_err, fabs(out[4 * i + 1] - qa->data[2 * i + 1]));
    max_err = MAX(max_err, fabs(out[4 * i + 2] - qb->data[2 * i]));
    max_err = MAX(max_err, fabs(out[4 * i + 3] - qb->data[2 * i + 1]));
  }
  g_test_message("quadrature max abs error %.3g", max_err);
  g_assert_cmpfloat(max_err, <, 1e-5);
  float m[STEREO_MAX_LEVELS * 2];
  g_assert_true(gpu_buffer_read(means, 0, m, sizeof m, &error));
  double ma = ref_mean_magnitude(qa), mb = ref_mean_magnitude(qb);
  g_assert_cmpfloat(fabs(m[6] - ma), <, 1e-5 * ma);
  g_assert_cmpfloat(fabs(m[7] - mb), <, 1e-5 * mb);
  fixture_teardown(&f);
}

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
  g_autofree uint8_t *l8 = g_new(uint8_t, w * h);
  g_autofree uint8_t *r8 = g_new(uint8_t, w * h);
  double shift = g_rand_double_range(rng, shift_lo, shift_hi);
  make_pair(w, h, shift, l8, r8);
  g_autoptr(RefImage) l = ref_ingest(l8, w, h, w);
  g_autoptr(RefImage) r = ref_ingest(r8, w, h, w);
  round_to_float(l);
  round_to_float(r);
  g_autoptr(GpuImage) img = image_new(f.ctx, w, h, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  const RefImage *s[2] = { l, r };
  upload_channels(img, s, (int[]){ 0, 0 }, 2);
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
  g_autofree uint8_t *l8 = g_new(uint8_t, w * h);
  g_autofree uint8_t *r8 = g_new(uint8_t, w * h);
  double shift = g_rand_double_range(rng, 2, 5);
  make_pair(w, h, shift, l8, r8);
  g_autoptr(RefImage) l = ref_ingest(l8, w, h, w);
  g_autoptr(RefImage) r = ref_ingest(r8, w, h, w);
  round_to_float(l);
  round_to_float(r);
  g_autoptr(GpuImage) img = image_new(f.ctx, w, h, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) prior_img = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) disp = image_new(f.ctx, w, h, GPU_FORMAT_RGBA32F);
  const RefImage *s[2] = { l, r };
  upload_channels(img, s, (int[]){ 0, 0 }, 2);
  for (int run = 0; run < 4; run++) {
    int eta = run & 1 ? -1 : 1;
    bool tiled = run >= 2;
    g_autoptr(RefImage) prior = ref_image_new(w, h, REF_FIELD_CHANNELS);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        prior->data[3 * (y * w + x)] =
          (float)(y >= 52 ? shift + 16.0 : y >= 20 && y < 26 ? shift + 9.0
                                         : shift + g_rand_double_range(rng, -0.7, 0.7));
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
  g_autofree uint8_t *l8 = g_new(uint8_t, w * h);
  g_autofree uint8_t *r8 = g_new(uint8_t, w * h);
  double shift = g_rand_double_range(rng, 2, 12);
  make_pair(w, h, shift, l8, r8);
  g_autoptr(RefImage) l = ref_ingest(l8, w, h, w);
  g_autoptr(RefImage) r = ref_ingest(r8, w, h, w);
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
      prior->data[3 * i] = (float)(shift + g_rand_double_range(rng, -1.0, 1.0));
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
    double c = g_rand_double(rng) < 0.4 ? 0.0 : g_rand_double_range(rng, 0.0, 1.0);
    double om = g_rand_double_range(rng, 1.2, 1.9);
    double di = 8.0 + 0.02 * (i % w) + g_rand_double_range(rng, -0.5, 0.5);
    double e = om * di;
    double *t = terms->data + 4 * i;
    t[0] = (float)(c * om * om);
    t[1] = (float)(c * om * e);
    t[2] = (float)c;
    t[3] = (float)(c * e * e);
    prior->data[3 * i] = (float)(guard > 0 && i % 2 ? di + g_rand_double_range(rng, -0.4, 0.4)
                                                    : g_rand_double_range(rng, -20, 40));
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
      bool hole = g_rand_double(rng) < 0.4 || (x > 30 && x < 70 && y > 5 && y < 45);
      v[REF_D] = (float)g_rand_double_range(rng, 0, 30);
      v[REF_CERT] = hole ? 0.0 : (float)g_rand_double_range(rng, 0.05, 1.0);
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
      l[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * x + 0.2 * y) + g_rand_double_range(rng, -0.3, 0.3));
      r[REF_D] = (float)(6.0 + 4.0 * sin(0.1 * (x + 6) + 0.2 * y) +
                         (g_rand_double(rng) < 0.5 ? 0.0 : g_rand_double_range(rng, -3, 3)));
      l[REF_CERT] = g_rand_double(rng) < 0.1 ? 0.0 : (float)g_rand_double_range(rng, 0.01, 1.0);
      l[REF_SIGMA] = (float)g_rand_double_range(rng, 0.0, 1.3);
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
    ir->data[i] = (float)(g_rand_int_range(rng, 0, 256) / 255.0);
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

/* Rectification: bilinear interpolation of [0,1] intensities at positions from a map
 * stored in fp32 (the position itself is rounded to ~1e-4 px at 100 px, so a 1-level
 * intensity step per pixel moves the result by < 1e-6) and fp32 weights: 1e-5. */
static void
test_rectify(void)
{
  const int w = 97, h = 61;
  Fixture f;
  fixture_setup(&f, w, h);
  if (!f.ctx)
    return;
  StereoCalib calib;
  distorted_calib(&calib, w, h);
  g_autofree uint8_t *raw = g_new(uint8_t, 2 * (size_t)w * h);
  for (size_t i = 0; i < 2 * (size_t)w * h; i++)
    raw[i] = (uint8_t)g_rand_int_range(rng, 0, 256);
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
  }
  g_assert_cmpint(outside, >, 0);   /* the border rule is exercised */
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
  g_test_message("rectify max abs error %.3g", max_err);
  g_assert_cmpfloat(max_err, <, 1e-5);
  fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  const char *seed_env = g_getenv("STEREOD_TEST_SEED");
  guint32 seed = seed_env ? (guint32)g_ascii_strtoull(seed_env, NULL, 10) : g_random_int();
  g_test_message("seed %u (STEREOD_TEST_SEED)", seed);
  rng = g_rand_new_with_seed(seed);
  g_test_add_func("/stages/reduce", test_reduce);
  g_test_add_func("/stages/quadrature", test_quadrature);
  g_test_add_func("/stages/search", test_search);
  g_test_add_func("/stages/refine", test_refine);
  g_test_add_func("/stages/phase", test_phase);
  g_test_add_func("/stages/smooth-solve", test_smooth_solve);
  g_test_add_func("/stages/fill", test_fill);
  g_test_add_func("/stages/upsample", test_upsample);
  g_test_add_func("/stages/post", test_post);
  g_test_add_func("/stages/rectify", test_rectify);
  int r = g_test_run();
  g_rand_free(rng);
  return r;
}
