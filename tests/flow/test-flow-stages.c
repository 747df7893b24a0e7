/* test-flow-stages: every GPU pass of the optical flow against the double-precision
 * reference (docs/optical-flow.md), on fresh random inputs with NaN-poisoned outputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/flow/flow-fixture.h"

#define W 64
#define H 48

/* Largest |a - b| over the channels [c0, c1) of every pixel. */
static double
max_diff(const RefImage *a, const RefImage *b, int c0, int c1)
{
  g_assert_cmpint(a->w, ==, b->w);
  g_assert_cmpint(a->h, ==, b->h);
  double m = 0.0;
  for (int i = 0; i < a->w * a->h; i++)
    for (int c = c0; c < c1; c++) {
      double x = a->data[(size_t)i * a->ch + c], y = b->data[(size_t)i * b->ch + c];
      if (!isfinite(y))
        g_error("channel %d of pixel %d was not written (%g)", c, i, y);
      m = MAX(m, fabs(x - y));
    }
  return m;
}

static void
test_reduce(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) in = flow_random_image(W, H, 1, 0, 1);
  g_autoptr(RefImage) ref = ref_reduce(in);
  g_autoptr(GpuImage) src = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) dst = flow_image_new(f.ctx, ref->w, ref->h, 1, GPU_FORMAT_R32F);
  flow_upload(src, in, 1);
  flow_poison(dst);
  flow_pass_reduce(f.ps, src, dst);
  g_autoptr(RefImage) got = flow_download(dst, 1);
  g_assert_cmpfloat(max_diff(ref, got, 0, 1), <, 1e-6);
  flow_fixture_teardown(&f);
}

/* Rows and columns of the bank on a level image inside a larger scratch image (the
 * engine's layout: scratch images have level 0's size). */
static void
bank_case(FlowFixture *ff)
{
  FlowFixture f = *ff;
  const int w = W - 13, h = H - 7;
  g_autoptr(RefImage) in = flow_random_image(w, h, 1, 0, 1);
  g_autoptr(RefImage) rows = ref_flow_rows(&f.p, in);
  int rl = flow_passes_row_layers(&f.p);
  g_autoptr(GpuImage) src = flow_image_new(f.ctx, w, h, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) grows = flow_image_new(f.ctx, w, h, rl, GPU_FORMAT_RGBA32F);
  flow_upload(src, in, 1);
  flow_poison(grows);
  flow_pass_rows(f.ps, src, w, h, 1, grows);
  g_autoptr(RefImage) got = flow_download(grows, 4);
  double m = max_diff(rows, got, 0, rows->ch);
  g_test_message("rows: max |GPU - reference| %.2e", m);
  g_assert_cmpfloat(m, <, 1e-5);

  /* Columns from random row responses (rounded to what the GPU holds). */
  g_autoptr(RefImage) rin = flow_random_image(w, h, rows->ch, -0.5, 0.5);
  g_autoptr(RefImage) q = ref_flow_columns(&f.p, rin);
  g_autoptr(GpuImage) big = flow_image_new(f.ctx, W, H, rl, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gq = flow_image_new(f.ctx, w, h, f.p.orientations, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) rsmall = flow_image_new(f.ctx, w, h, rl, GPU_FORMAT_RGBA32F);
  flow_upload(rsmall, rin, 4);
  flow_poison(gq);
  flow_pass_columns(f.ps, rsmall, w, h, 1, gq);
  g_autoptr(RefImage) gotq = flow_download(gq, 2);
  m = max_diff(q, gotq, 0, q->ch);
  g_test_message("columns: max |GPU - reference| %.2e", m);
  g_assert_cmpfloat(m, <, 1e-5);
}

/* Every even orientation count the row-kernel sharing has to handle: N/2 + 1 row kernels
 * in one, two or three RGBA layers. */
static void
test_bank(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  for (int n = 2; n <= FLOW_MAX_ORIENTATIONS; n += 2) {
    f.p.orientations = n;
    flow_passes_free(f.ps);
    GError *error = NULL;
    f.ps = flow_passes_new(f.ctx, &f.p, &error);
    g_assert_no_error(error);
    g_test_message("%d orientations:", n);
    bank_case(&f);
  }
  flow_fixture_teardown(&f);
}

static void
test_features(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  int N = f.p.orientations;
  g_autofree uint8_t *f0 = g_new(uint8_t, W * H), *f1 = g_new(uint8_t, W * H);
  flow_textured_pair(W, H, 0, 0, f0, f1);
  g_autoptr(RefImage) img = ref_ingest(f0, W, H, W);
  g_autoptr(RefImage) rows = ref_flow_rows(&f.p, img);
  g_autoptr(RefImage) q = ref_flow_columns(&f.p, rows);
  flow_round_to_float(q);
  /* Some pixels with no response at all (|q| = 0 must be flagged, not divided by). */
  for (int i = 0; i < 5; i++) {
    int x = g_rand_int_range(flow_rng, 0, W), y = g_rand_int_range(flow_rng, 0, H);
    for (int c = 0; c < 2 * N; c++)
      ref_image_at(q, x, y)[c] = 0.0;
  }
  g_autoptr(RefImage) ref = ref_flow_features(&f.p, q);
  double means[FLOW_MAX_ORIENTATIONS];
  ref_flow_means(&f.p, ref, means);

  g_autoptr(GpuImage) gq = flow_image_new(f.ctx, W, H, N, GPU_FORMAT_RG32F);
  g_autoptr(GpuImage) feat = flow_image_new(f.ctx, W, H, N, GPU_FORMAT_RGBA32F);
  int groups = flow_pass_features_groups(W, H);
  g_autoptr(GpuBuffer) partials = flow_storage_new(f.ctx, (size_t)(N * groups + 8) * 4);
  g_autoptr(GpuBuffer) mbuf = flow_storage_new(f.ctx, (size_t)2 * N * FLOW_MAX_LEVELS * 4);
  flow_upload(gq, q, 2);
  flow_poison(feat);
  GError *error = NULL;
  g_assert_true(gpu_buffer_fill_u32(mbuf, 0x7fc00000u, &error));
  flow_pass_features(f.ps, gq, feat, partials, 8);
  flow_pass_mean(f.ps, partials, 8, W, H, 1, mbuf, N * FLOW_MAX_LEVELS, 3);
  g_autoptr(RefImage) got = flow_download(feat, 4);

  long flips = 0, valid = 0;
  double m = 0.0;
  for (int i = 0; i < W * H; i++)
    for (int k = 0; k < N; k++) {
      const double *a = ref->data + (size_t)i * ref->ch + 4 * k;
      const double *b = got->data + (size_t)i * got->ch + 4 * k;
      g_assert_cmpfloat(fabs(a[0] - b[0]) + fabs(a[1] - b[1]), ==, 0.0);
      bool va = a[2] != FLOW_GRAD_INVALID, vb = b[2] != FLOW_GRAD_INVALID;
      g_assert_true(isfinite(b[2]) && isfinite(b[3]));
      if (va != vb) {
        flips++;
        continue;
      }
      if (va) {
        valid++;
        m = MAX(m, MAX(fabs(a[2] - b[2]), fabs(a[3] - b[3])));
      }
    }
  g_test_message("features: %ld valid, %ld stability decisions differ, max |phi| "
                 "difference %.2e rad/px", valid, flips, m);
  /* Only the pixels within rounding of the stability threshold may decide differently. */
  g_assert_cmpint(flips, <=, W * H * N / 500);
  g_assert_cmpint(valid, >, W * H * N / 2);
  g_assert_cmpint(valid, <, W * H * N - 5);
  g_assert_cmpfloat(m, <, 2e-4);

  float gm[FLOW_MAX_ORIENTATIONS * FLOW_MAX_LEVELS];
  g_assert_true(gpu_buffer_read(mbuf, (size_t)N * FLOW_MAX_LEVELS * 4, gm,
                                (size_t)N * FLOW_MAX_LEVELS * 4, &error));
  for (int k = 0; k < N; k++)
    g_assert_cmpfloat(fabs(gm[k * FLOW_MAX_LEVELS + 3] - means[k]), <, 1e-5 * means[k]);
  flow_fixture_teardown(&f);
}

/* Features of a textured pair moving by (du, dv), a prior near it, the terms. */
static void
terms_case(FlowFixture *f, double du, double dv, RefImage **ref_out, RefImage **got_out,
           RefImage **prior_out)
{
  int N = f->p.orientations;
  g_autofree uint8_t *f0 = g_new(uint8_t, W * H), *f1 = g_new(uint8_t, W * H);
  flow_textured_pair(W, H, du, dv, f0, f1);
  double m0[FLOW_MAX_ORIENTATIONS];
  g_autoptr(RefImage) a = flow_features_of(&f->p, f0, W, H, m0);
  g_autoptr(RefImage) b = flow_features_of(&f->p, f1, W, H, NULL);
  RefImage *prior = ref_image_new(W, H, REF_FLOW_CHANNELS);
  for (int i = 0; i < W * H; i++) {
    prior->data[4 * i] = (float)(du + g_rand_double_range(flow_rng, -1.5, 1.5));
    prior->data[4 * i + 1] = (float)(dv + g_rand_double_range(flow_rng, -1.5, 1.5));
  }
  *ref_out = ref_flow_terms(&f->p, a, m0, b, prior);

  g_autoptr(GpuImage) ga = flow_image_new(f->ctx, W, H, N, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gb = flow_image_new(f->ctx, W, H, N, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gp = flow_image_new(f->ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gt = flow_image_new(f->ctx, W, H, 2, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuBuffer) mbuf = flow_storage_new(f->ctx, (size_t)N * FLOW_MAX_LEVELS * 4);
  flow_upload(ga, a, 4);
  flow_upload(gb, b, 4);
  flow_upload(gp, prior, 4);
  flow_poison(gt);
  float mf[FLOW_MAX_ORIENTATIONS * FLOW_MAX_LEVELS] = { 0 };
  for (int k = 0; k < N; k++)
    mf[k * FLOW_MAX_LEVELS + 2] = (float)m0[k];
  GError *error = NULL;
  g_assert_true(gpu_buffer_write(mbuf, 0, mf, (size_t)N * FLOW_MAX_LEVELS * 4, &error));
  flow_pass_terms(f->ps, ga, gb, gp, gt, mbuf, 0, 2);
  *got_out = flow_download(gt, 4);
  *prior_out = prior;
}

static void
test_terms(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  /* Both ways of taking the constraint's direction (the measured phase gradients and the
   * filters' centre frequencies), and the energy weight. */
  for (int mode = 0; mode < 2; mode++) {
    f.p.local_frequency = mode == 1;
    f.p.energy = mode == 1 ? 0.5 : 0.0;
    f.p.cos2 = mode == 1 ? 2.0 : 0.0;
    flow_passes_free(f.ps);
    GError *error = NULL;
    f.ps = flow_passes_new(f.ctx, &f.p, &error);
    g_assert_no_error(error);
    RefImage *ref, *got, *prior;
    terms_case(&f, g_rand_double_range(flow_rng, -3, 3), g_rand_double_range(flow_rng, -3, 3),
               &ref, &got, &prior);
    /* Per pixel, relative to the size of its own terms; a pixel whose gates decide
     * differently (a magnitude within rounding of kappa * mean) differs by one
     * orientation's share and is counted instead. */
    long differ = 0, nonzero = 0;
    double m = 0.0;
    for (int i = 0; i < W * H; i++) {
      const double *a = ref->data + (size_t)i * 8, *b = got->data + (size_t)i * 8;
      double scale = 1.0 + fabs(a[0]) + fabs(a[2]) + fabs(a[6]);
      double d = 0.0;
      for (int c = 0; c < 8; c++) {
        g_assert_true(isfinite(b[c]));
        d = MAX(d, fabs(a[c] - b[c]) / scale);
      }
      nonzero += a[3] > 0.0;
      if (fabs(a[3] - b[3]) > 1e-3)
        differ++;
      else
        m = MAX(m, d);
    }
    g_test_message("terms (%s): %ld of %d pixels measured, %ld differ in their gates, max "
                   "relative difference %.2e", mode ? "local frequency, energy 0.5, cos2 2"
                   : "centre frequencies", nonzero, W * H, differ, m);
    g_assert_cmpint(nonzero, >, W * H / 2);
    g_assert_cmpint(differ, <=, W * H / 200);
    g_assert_cmpfloat(m, <, 1e-4);
    ref_image_free(ref);
    ref_image_free(got);
    ref_image_free(prior);
  }
  flow_fixture_teardown(&f);
}

static void
test_smooth_solve(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  f.p.lambda = 0.05;   /* the regularised solve too */
  flow_passes_free(f.ps);
  GError *error = NULL;
  f.ps = flow_passes_new(f.ctx, &f.p, &error);
  g_assert_no_error(error);
  RefImage *terms, *unused, *prior;
  terms_case(&f, 1.3, -0.7, &terms, &unused, &prior);
  flow_round_to_float(terms);
  g_autoptr(RefImage) ref = ref_flow_solve(&f.p, terms, prior);

  g_autoptr(GpuImage) tmp = flow_image_new(f.ctx, W + 9, H + 5, 2, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) flow = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  /* tmp is larger than the level (the engine's layout). */
  g_autoptr(GpuImage) gsmall = flow_image_new(f.ctx, W, H, 2, GPU_FORMAT_RGBA32F);
  flow_upload(gsmall, terms, 4);
  flow_upload(flow, prior, 4);
  flow_pass_smooth_solve(f.ps, gsmall, tmp, flow);
  g_autoptr(RefImage) got = flow_download(flow, 4);
  long differ = 0, solved = 0;
  double m = 0.0, mc = 0.0;
  for (int i = 0; i < W * H; i++) {
    const double *a = ref->data + (size_t)i * 4, *b = got->data + (size_t)i * 4;
    for (int c = 0; c < 4; c++)
      g_assert_true(isfinite(b[c]));
    if (a[REF_FLOW_W] != b[REF_FLOW_W]) {
      differ++;
      continue;
    }
    solved += a[REF_FLOW_W] > 0.0;
    m = MAX(m, MAX(fabs(a[0] - b[0]), fabs(a[1] - b[1])));
    mc = MAX(mc, fabs(a[2] - b[2]));
  }
  g_test_message("solve: %ld solved, %ld decide differently, max |flow difference| %.2e px, "
                 "certainty %.2e", solved, differ, m, mc);
  g_assert_cmpint(solved, >, W * H / 2);
  g_assert_cmpint(differ, <=, W * H / 500);
  g_assert_cmpfloat(m, <, 2e-3);
  g_assert_cmpfloat(mc, <, 1e-5);
  ref_image_free(terms);
  ref_image_free(unused);
  ref_image_free(prior);
  flow_fixture_teardown(&f);
}

/* A flow field with values on a random subset (w = 1) and holes. */
static RefImage *
random_field(double density)
{
  RefImage *fl = ref_image_new(W, H, REF_FLOW_CHANNELS);
  for (int i = 0; i < W * H; i++) {
    double *p = fl->data + 4 * i;
    p[0] = (float)g_rand_double_range(flow_rng, -5, 5);
    p[1] = (float)g_rand_double_range(flow_rng, -5, 5);
    bool on = g_rand_double(flow_rng) < density;
    p[2] = on ? (float)g_rand_double_range(flow_rng, 0.05, 1) : 0.0;
    p[3] = on ? 1.0 : 0.0;
  }
  return fl;
}

static void
test_fill_median_upsample(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  g_autoptr(RefImage) in = random_field(0.03);
  /* A corner with no value near it stays a hole after one round. */
  g_autoptr(RefImage) ref = ref_image_copy(in);
  ref_flow_fill(&f.p, ref, 2);
  g_autoptr(GpuImage) fl = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) tmp = flow_image_new(f.ctx, W + 3, H + 2, 2, GPU_FORMAT_RGBA32F);
  flow_upload(fl, in, 4);
  flow_pass_fill(f.ps, fl, tmp, 2);
  g_autoptr(RefImage) got = flow_download(fl, 4);
  double m = max_diff(ref, got, 0, 4);
  g_test_message("fill: max |GPU - reference| %.2e", m);
  g_assert_cmpfloat(m, <, 1e-4);

  g_autoptr(RefImage) min = random_field(0.6);
  g_autoptr(RefImage) mref = ref_flow_median(min);
  g_autoptr(GpuImage) a = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) b = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  flow_upload(a, min, 4);
  flow_poison(b);
  flow_pass_median(f.ps, a, b);
  g_autoptr(RefImage) mgot = flow_download(b, 4);
  g_assert_cmpfloat(max_diff(mref, mgot, 0, 4), ==, 0.0);

  int cw = (W + 1) / 2 - 1, ch = (H + 1) / 2;   /* an odd fine width: 2 cw + 1 */
  g_autoptr(RefImage) coarse = ref_image_new(cw, ch, REF_FLOW_CHANNELS);
  for (int i = 0; i < cw * ch * 4; i++)
    coarse->data[i] = (float)g_rand_double_range(flow_rng, -3, 3);
  g_autoptr(RefImage) uref = ref_flow_upsample(coarse, 2 * cw + 1, 2 * ch);
  g_autoptr(GpuImage) gc = flow_image_new(f.ctx, cw, ch, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gf = flow_image_new(f.ctx, 2 * cw + 1, 2 * ch, 1, GPU_FORMAT_RGBA32F);
  flow_upload(gc, coarse, 4);
  flow_poison(gf);
  flow_pass_upsample(f.ps, gc, gf);
  g_autoptr(RefImage) ugot = flow_download(gf, 4);
  g_assert_cmpfloat(max_diff(uref, ugot, 0, 4), <, 1e-5);
  flow_fixture_teardown(&f);
}

static void
test_fb_pack(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  /* A smooth backward field and forward flows that undo it up to +-1.5 px: about half
   * pass the 1 px check; linear fields make the bilinear sampling matter. */
  g_autoptr(RefImage) fwd = random_field(0.9);
  g_autoptr(RefImage) bwd = ref_image_new(W, H, REF_FLOW_CHANNELS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double *bp = ref_image_at(bwd, x, y), *fp = ref_image_at(fwd, x, y);
      bp[0] = (float)(-0.5 + 0.02 * x);
      bp[1] = (float)(0.25 - 0.01 * y);
      bp[3] = 1.0;
      fp[0] = (float)(0.5 - 0.02 * x + g_rand_double_range(flow_rng, -1.5, 1.5));
      fp[1] = (float)(-0.25 + 0.01 * y + g_rand_double_range(flow_rng, -1.5, 1.5));
    }
  g_autoptr(RefImage) ref = ref_flow_fb_check(&f.p, fwd, bwd);
  g_autoptr(GpuImage) gf = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gb = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gd = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  flow_upload(gf, fwd, 4);
  flow_upload(gb, bwd, 4);
  flow_poison(gd);
  flow_pass_fb(f.ps, gf, gb, gd);
  g_autoptr(RefImage) got = flow_download(gd, 4);
  long kept = 0;
  for (int i = 0; i < W * H; i++) {
    g_assert_cmpfloat(got->data[4 * i + 3], ==, ref->data[4 * i + 3]);
    kept += ref->data[4 * i + 3] > 0.0;
  }
  g_assert_cmpint(kept, >, W * H / 10);
  g_assert_cmpint(kept, <, W * H * 9 / 10);
  g_assert_cmpfloat(max_diff(ref, got, 0, 4), ==, 0.0);

  /* Packing: float planes and int16 planes at 1/32 px, unknown where w = 0. */
  for (int s16 = 0; s16 < 2; s16++) {
    FlowPackLayout lay;
    flow_pack_layout(W, H - 1, s16, &lay);
    g_autoptr(GpuImage) src = flow_image_new(f.ctx, W, H - 1, 1, GPU_FORMAT_RGBA32F);
    g_autoptr(RefImage) part = ref_image_new(W, H - 1, 4);
    memcpy(part->data, ref->data, sizeof(double) * 4 * W * (H - 1));
    part->data[0] = 2000.0;   /* saturates at 32767 / 32 px */
    part->data[3] = 1.0;
    flow_upload(src, part, 4);
    g_autoptr(GpuBuffer) out = flow_storage_new(f.ctx, lay.layer_bytes);
    GError *error = NULL;
    g_assert_true(gpu_buffer_fill_u32(out, 0xdeadbeefu, &error));
    flow_pass_pack(f.ps, src, out, &lay);
    g_autofree uint8_t *bytes = g_malloc(lay.layer_bytes);
    g_assert_true(gpu_buffer_read(out, 0, bytes, lay.layer_bytes, &error));
    for (int i = 0; i < W * (H - 1); i++) {
      const double *p = part->data + 4 * i;
      bool known = p[3] > 0.0;
      for (int c = 0; c < 2; c++) {
        const uint8_t *plane = bytes + (c ? lay.v_offset : 0);
        if (s16) {
          int16_t v = ((const int16_t *)plane)[i];
          int16_t want = known ? (int16_t)lround(CLAMP(32.0 * (float)p[c], -32767.0, 32767.0))
                               : INT16_MIN;
          if (abs(v - want) > (known ? 1 : 0))   /* round() of a float may tie the other way */
            g_error("pixel %d plane %d: %d, expected %d", i, c, v, want);
        } else {
          float v = ((const float *)plane)[i];
          g_assert_cmpfloat(v, ==, known ? (float)p[c] : FLOW_UNKNOWN);
        }
      }
    }
  }
  flow_fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  flow_fixture_init(&argc, &argv);
  g_test_add_func("/flow/stages/reduce", test_reduce);
  g_test_add_func("/flow/stages/bank", test_bank);
  g_test_add_func("/flow/stages/features", test_features);
  g_test_add_func("/flow/stages/terms", test_terms);
  g_test_add_func("/flow/stages/smooth-solve", test_smooth_solve);
  g_test_add_func("/flow/stages/fill-median-upsample", test_fill_median_upsample);
  g_test_add_func("/flow/stages/fb-pack", test_fb_pack);
  return flow_fixture_run();
}
