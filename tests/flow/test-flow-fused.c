/* test-flow-fused: the passes of the optical flow that compute their input themselves
 * (docs/optical-flow.md §12) against the separate passes they replace, bit for bit: the
 * reduce and the row pass on the 8-bit frame (the ingest), the features pass with the
 * level's means, the terms with the median or the upsampling of their prior, the check
 * of the forward flow's median. The separate passes are compared with the
 * reference in test-flow-stages.c; fresh random inputs, outputs poisoned first. */
#include <math.h>

#include "tests/flow/flow-fixture.h"

#define W 64
#define H 48

/* Every channel in [c0, c1) of every pixel equal (NaN poison never equals: a value not
 * written fails). */
static void
assert_same(const RefImage *a, const RefImage *b, int c0, int c1)
{
  g_assert_cmpint(a->w, ==, b->w);
  g_assert_cmpint(a->h, ==, b->h);
  for (int i = 0; i < a->w * a->h; i++)
    for (int c = c0; c < c1; c++) {
      double x = a->data[(size_t)i * a->ch + c], y = b->data[(size_t)i * b->ch + c];
      if (!(x == y))
        g_error("channel %d of pixel %d: %.9g and %.9g", c, i, x, y);
    }
}

/* The ingest against the reference, and the reduce and the row pass on the 8-bit frame
 * itself (how the engine runs level 0: they read it as I = Y / 255) bit for bit equal to
 * the same passes on the ingest's output. */
static void
test_ingest(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  g_autofree uint8_t *y = g_new(uint8_t, W * H);
  for (int i = 0; i < W * H; i++)
    y[i] = (uint8_t)g_rand_int_range(flow_rng, 0, 256);
  g_autoptr(RefImage) ref = ref_ingest(y, W, H, W);
  g_autoptr(GpuImage) src8 = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_R8);
  g_autoptr(GpuImage) level0 = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_R32F);
  GError *error = NULL;
  g_assert_true(gpu_image_upload(src8, 0, y, W, &error));
  flow_poison(level0);
  flow_pass_ingest(f.ps, src8, level0);
  g_autoptr(RefImage) got = flow_download(level0, 1);
  for (int i = 0; i < W * H; i++)
    g_assert_cmpfloat(fabs(got->data[i] - ref->data[i]), <, 1e-7);   /* float Y / 255 */

  int rl = flow_passes_row_layers(&f.p);
  GpuImage *reduced[2], *rows[2];
  for (int i = 0; i < 2; i++) {
    reduced[i] = flow_image_new(f.ctx, (W + 1) / 2, (H + 1) / 2, 1, GPU_FORMAT_R32F);
    rows[i] = flow_image_new(f.ctx, W, H, rl, GPU_FORMAT_RGBA32F);
    flow_poison(reduced[i]);
    flow_poison(rows[i]);
    GpuImage *src = i ? src8 : level0;
    flow_pass_reduce(f.ps, src, reduced[i]);
    flow_pass_rows(f.ps, src, W, H, 1, rows[i]);
  }
  g_autoptr(RefImage) r0 = flow_download(reduced[0], 1);
  g_autoptr(RefImage) r1 = flow_download(reduced[1], 1);
  g_autoptr(RefImage) q0 = flow_download(rows[0], 4);
  g_autoptr(RefImage) q1 = flow_download(rows[1], 4);
  assert_same(r0, r1, 0, 1);
  assert_same(q0, q1, 0, 4 * rl);
  for (int i = 0; i < 2; i++) {
    gpu_image_free(reduced[i]);
    gpu_image_free(rows[i]);
  }
  flow_fixture_teardown(&f);
}

/* The features pass that also computes the means (the last workgroup of each layer)
 * writes what the features pass followed by the mean pass write, bit for bit, and leaves
 * its counters zero: on a level of more than 256 workgroups (several partials per
 * invocation of the sum), twice on the same counters, into the second frame's means. */
static void
test_features_mean(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  const int w = 288, h = 274, level = 2, base = 5;
  int N = f.p.orientations, groups = flow_pass_features_groups(w, h);
  g_assert_cmpint(groups, >, 256);
  g_autoptr(RefImage) q = flow_random_image(w, h, 2 * N, -0.5, 0.5);
  g_autoptr(GpuImage) gq = flow_image_new(f.ctx, w, h, N, GPU_FORMAT_RG32F);
  flow_upload(gq, q, 2);
  size_t mean_bytes = (size_t)2 * N * FLOW_MAX_LEVELS * 4;
  GpuImage *feat[2];
  GpuBuffer *partials[2], *means[2];
  GError *error = NULL;
  for (int i = 0; i < 2; i++) {
    feat[i] = flow_image_new(f.ctx, w, h, N, GPU_FORMAT_RGBA32F);
    partials[i] = flow_storage_new(f.ctx, (size_t)(N * groups + base) * 4);
    means[i] = flow_storage_new(f.ctx, mean_bytes);
    g_assert_true(gpu_buffer_fill_u32(means[i], 0x7fc00000u, &error));
  }
  g_autoptr(GpuBuffer) counters = flow_storage_new(f.ctx, (size_t)N * FLOW_MAX_LEVELS * 4);
  g_assert_true(gpu_buffer_fill_u32(counters, 0, &error));
  int mean_base = N * FLOW_MAX_LEVELS;
  flow_poison(feat[0]);
  flow_pass_features(f.ps, gq, feat[0], partials[0], base);
  flow_pass_mean(f.ps, partials[0], base, w, h, 1, means[0], mean_base, level);
  g_autoptr(RefImage) f0 = flow_download(feat[0], 4);
  g_autofree float *m0 = g_malloc(mean_bytes), *m1 = g_malloc(mean_bytes);
  g_assert_true(gpu_buffer_read(means[0], 0, m0, mean_bytes, &error));
  for (int round = 0; round < 2; round++) {
    flow_poison(feat[1]);
    g_assert_true(gpu_buffer_fill_u32(means[1], 0x7fc00000u, &error));
    flow_pass_features_mean(f.ps, gq, feat[1], partials[1], base, counters, means[1],
                            mean_base, level);
    g_autoptr(RefImage) f1 = flow_download(feat[1], 4);
    assert_same(f0, f1, 0, 4 * N);
    g_assert_true(gpu_buffer_read(means[1], 0, m1, mean_bytes, &error));
    for (int k = 0; k < N; k++) {
      float a = m0[mean_base + k * FLOW_MAX_LEVELS + level];
      float b = m1[mean_base + k * FLOW_MAX_LEVELS + level];
      g_assert_cmpfloat(a, >, 0.0);
      g_assert_cmpfloat(a, ==, b);
    }
    uint32_t c[FLOW_MAX_ORIENTATIONS * FLOW_MAX_LEVELS];
    g_assert_true(gpu_buffer_read(counters, 0, c, (size_t)N * FLOW_MAX_LEVELS * 4, &error));
    for (int i = 0; i < N * FLOW_MAX_LEVELS; i++)
      g_assert_cmpuint(c[i], ==, 0);
  }
  for (int i = 0; i < 2; i++) {
    gpu_image_free(feat[i]);
    gpu_buffer_free(partials[i]);
    gpu_buffer_free(means[i]);
  }
  flow_fixture_teardown(&f);
}

/* A flow field near (du, dv) with values (w = 1) on a random `density` of the pixels. */
static RefImage *
field_near(int w, int h, double du, double dv, double density)
{
  RefImage *fl = ref_image_new(w, h, REF_FLOW_CHANNELS);
  for (int i = 0; i < w * h; i++) {
    double *p = fl->data + 4 * i;
    p[0] = (float)(du + g_rand_double_range(flow_rng, -1.5, 1.5));
    p[1] = (float)(dv + g_rand_double_range(flow_rng, -1.5, 1.5));
    bool on = g_rand_double(flow_rng) < density;
    p[2] = on ? (float)g_rand_double_range(flow_rng, 0.05, 1) : 0.0;
    p[3] = on ? 1.0 : 0.0;
  }
  return fl;
}

/* The terms with the median or the upsampling of their prior (the prior written too) and
 * the check of the forward flow's median write exactly what the median / upsampling pass
 * followed by the plain pass write. */
static void
test_fused_priors(void)
{
  FlowFixture f;
  flow_fixture_setup(&f, W, H);
  if (!f.ctx)
    return;
  int N = f.p.orientations;
  double du = g_rand_double_range(flow_rng, -3, 3), dv = g_rand_double_range(flow_rng, -3, 3);
  g_autofree uint8_t *f0 = g_new(uint8_t, W * H), *f1 = g_new(uint8_t, W * H);
  flow_textured_pair(W, H, du, dv, f0, f1);
  double m0[FLOW_MAX_ORIENTATIONS];
  g_autoptr(RefImage) a = flow_features_of(&f.p, f0, W, H, m0);
  g_autoptr(RefImage) b = flow_features_of(&f.p, f1, W, H, NULL);
  g_autoptr(GpuImage) ga = flow_image_new(f.ctx, W, H, N, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) gb = flow_image_new(f.ctx, W, H, N, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuBuffer) mbuf = flow_storage_new(f.ctx, (size_t)N * FLOW_MAX_LEVELS * 4);
  flow_upload(ga, a, 4);
  flow_upload(gb, b, 4);
  float mf[FLOW_MAX_ORIENTATIONS * FLOW_MAX_LEVELS] = { 0 };
  for (int k = 0; k < N; k++)
    mf[k * FLOW_MAX_LEVELS + 1] = (float)m0[k];
  GError *error = NULL;
  g_assert_true(gpu_buffer_write(mbuf, 0, mf, (size_t)N * FLOW_MAX_LEVELS * 4, &error));

  /* The median's input (a round's flow with holes) and the coarser level's flow. */
  g_autoptr(RefImage) round_in = field_near(W, H, du, dv, 0.7);
  int cw = (W + 1) / 2, ch = (H + 1) / 2;
  g_autoptr(RefImage) coarse_in = field_near(cw, ch, du / 2, dv / 2, 1.0);
  for (int how = FLOW_PRIOR_MEDIAN; how <= FLOW_PRIOR_UPSAMPLE; how++) {
    bool median = how == FLOW_PRIOR_MEDIAN;
    g_autoptr(GpuImage) src = median ? flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F)
                                     : flow_image_new(f.ctx, cw, ch, 1, GPU_FORMAT_RGBA32F);
    flow_upload(src, median ? round_in : coarse_in, 4);
    GpuImage *prior[2], *terms[2];
    for (int i = 0; i < 2; i++) {
      prior[i] = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
      terms[i] = flow_image_new(f.ctx, W, H, 2, GPU_FORMAT_RGBA32F);
      flow_poison(prior[i]);
      flow_poison(terms[i]);
    }
    if (median)
      flow_pass_median(f.ps, src, prior[0]);
    else
      flow_pass_upsample(f.ps, src, prior[0]);
    flow_pass_terms(f.ps, ga, gb, prior[0], terms[0], mbuf, 0, 1);
    flow_pass_terms_prior(f.ps, how, src, ga, gb, prior[1], terms[1], mbuf, 0, 1);
    g_autoptr(RefImage) p0 = flow_download(prior[0], 4);
    g_autoptr(RefImage) p1 = flow_download(prior[1], 4);
    g_autoptr(RefImage) t0 = flow_download(terms[0], 4);
    g_autoptr(RefImage) t1 = flow_download(terms[1], 4);
    long measured = 0;
    for (int i = 0; i < W * H; i++)
      measured += t0->data[8 * i + 3] > 0.0;
    g_test_message("terms with the %s of the prior: %ld of %d pixels measured",
                   median ? "median" : "upsampling", measured, W * H);
    g_assert_cmpint(measured, >, W * H / 2);
    assert_same(p0, p1, 0, 4);
    assert_same(t0, t1, 0, 8);
    for (int i = 0; i < 2; i++) {
      gpu_image_free(prior[i]);
      gpu_image_free(terms[i]);
    }
  }

  /* The check of the forward flow's median. */
  g_autoptr(GpuImage) fwd = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) bwd = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) med = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(RefImage) back = field_near(W, H, -du, -dv, 1.0);
  flow_upload(fwd, round_in, 4);
  flow_upload(bwd, back, 4);
  flow_poison(med);
  flow_pass_median(f.ps, fwd, med);
  g_autoptr(GpuImage) d0 = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  g_autoptr(GpuImage) d1 = flow_image_new(f.ctx, W, H, 1, GPU_FORMAT_RGBA32F);
  flow_poison(d0);
  flow_poison(d1);
  flow_pass_fb(f.ps, med, bwd, d0);
  flow_pass_fb_median(f.ps, fwd, bwd, d1);
  g_autoptr(RefImage) r0 = flow_download(d0, 4);
  g_autoptr(RefImage) r1 = flow_download(d1, 4);
  long kept = 0;
  for (int i = 0; i < W * H; i++)
    kept += r0->data[4 * i + 3] > 0.0;
  g_assert_cmpint(kept, >, W * H / 10);
  g_assert_cmpint(kept, <, W * H * 9 / 10);
  assert_same(r0, r1, 0, 4);
  flow_fixture_teardown(&f);
}

int
main(int argc, char **argv)
{
  flow_fixture_init(&argc, &argv);
  g_test_add_func("/flow/fused/ingest", test_ingest);
  g_test_add_func("/flow/fused/features-mean", test_features_mean);
  g_test_add_func("/flow/fused/priors", test_fused_priors);
  return flow_fixture_run();
}
