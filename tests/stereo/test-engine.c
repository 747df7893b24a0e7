/* test-engine.c: the engine's API (formats, submit/collect ordering, errors, depth,
 * batches, dispatch counts); its agreement with the double-precision reference is
 * test-engine-reference.c. Each run draws fresh textured pairs (the seed is printed;
 * STEREOD_TEST_SEED repeats it).
 */
#include <math.h>
#include <string.h>

#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"
#include "tests/reference/reference.h"
#include "tests/stereo/engine-test.h"

static GRand *rng;

/* s16 output equals round(32 d) of the float output; the in-flight queue returns pairs in
 * submission order with their tags; submitting beyond in_flight fails cleanly. */
static void
test_formats_and_queue(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  const int w = 96, h = 64, nf = 3;
  size_t n = (size_t)w * h;
  StereoParams p;
  stereo_params_init(&p, w, h);
  p.max_disparity = 20;
  StereoEngine *ef = engine_test_new(ctx, &p, STEREO_OUTPUT_FLOAT, 1);
  StereoEngine *es = engine_test_new(ctx, &p, STEREO_OUTPUT_S16, nf);
  GError *error = NULL;
  uint8_t *l[nf], *r[nf];
  float *ref[nf];
  for (int k = 0; k < nf; k++) {
    l[k] = g_new(uint8_t, n);
    r[k] = g_new(uint8_t, n);
    ref[k] = g_new(float, n);
    engine_test_scene(rng, w, h, 3 + 2 * k, 9 + k, l[k], r[k]);
    g_assert_true(stereo_engine_process(ef, l[k], w, r[k], w, ref[k], NULL, &error));
    g_assert_no_error(error);
  }
  for (int k = 0; k < nf; k++) {
    g_assert_true(stereo_engine_submit(es, l[k], w, r[k], w, 100 + k, &error));
    g_assert_no_error(error);
  }
  g_assert_cmpint(stereo_engine_pending(es), ==, nf);
  g_assert_false(stereo_engine_submit(es, l[0], w, r[0], w, 999, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  for (int k = 0; k < nf; k++) {
    StereoFrame f;
    g_assert_true(stereo_engine_collect(es, true, &f, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(f.tag, ==, 100 + k);
    g_assert_cmpint(f.format, ==, STEREO_OUTPUT_S16);
    const int16_t *s = f.disparity;
    for (size_t i = 0; i < n; i++) {
      if (isnan(ref[k][i]))
        g_assert_cmpint(s[i], ==, STEREO_DISPARITY_INVALID);
      else
        g_assert_cmpint(s[i], ==, (int)lrintf(32.0f * ref[k][i]));
      g_assert_cmpint(f.confidence[i] == 0, ==, isnan(ref[k][i]));
    }
    for (int st = 0; st < STEREO_STAGE_COUNT; st++)
      g_assert_cmpfloat(f.stage_ms[st], >=, 0.0);
    stereo_engine_release(es, &f);
  }
  g_assert_cmpint(stereo_engine_pending(es), ==, 0);
  StereoFrame f;
  g_assert_false(stereo_engine_collect(es, false, &f, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  for (int k = 0; k < nf; k++) {
    g_free(l[k]);
    g_free(r[k]);
    g_free(ref[k]);
  }
  stereo_engine_free(es);
  stereo_engine_free(ef);
  gpu_context_free(ctx);
}

static void
test_bad_params(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  StereoParams p;
  stereo_params_init(&p, 64, 48);
  p.max_disparity = 500;   /* wider than the image */
  StereoEngineParams ep = { .params = p };
  GError *error = NULL;
  g_assert_null(stereo_engine_new(ctx, &ep, &error));
  g_assert_error(error, STEREO_PARAMS_ERROR, 0);
  g_assert_nonnull(strstr(error->message, "max_disparity"));
  g_clear_error(&error);
  gpu_context_free(ctx);
}

/* With an ideal calibration (no distortion, no rotation, rectified = raw) the
 * rectification is the identity: the disparity must equal that of the uncalibrated
 * engine exactly, the u16 depth plane must be round(1000 f B / (d - doffs)) within 1 mm
 * (fp32 division and rounding against double) and 0 where that is above 65535 mm, and
 * the f32 plane the same depth in metres within 2e-6 relative (NaN where invalid). Both
 * output planes are poisoned first. With baseline 0.6 m every depth is below 17 m; with
 * 6 m the background (d 5 px) lies 132 m away: u16 0, f32 the metres. */
static void
check_calibrated_depth(GpuContext *ctx, double baseline, double disp_far, double disp_near)
{
  const int w = 128, h = 80;
  size_t n = (size_t)w * h;
  StereoCalib calib;
  const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 20 };
  calib_init_ideal(&calib, w, h, 110.0, 63.5, 39.5, baseline, NULL, rot, centre);
  StereoParams p;
  stereo_params_init(&p, w, h);
  p.max_disparity = 30;
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  engine_test_scene(rng, w, h, disp_far, disp_near, l, r);
  GError *error = NULL;
  StereoEngine *plain = engine_test_new(ctx, &p, STEREO_OUTPUT_FLOAT, 1);
  StereoEngineParams ep = { .label = "calibrated", .params = p, .output = STEREO_OUTPUT_S16,
                            .in_flight = 1, .calib = &calib, .depth = true, .metres = true };
  StereoEngine *cal = stereo_engine_new(ctx, &ep, &error);
  g_assert_no_error(error);
  g_autofree float *d0 = g_new(float, n), *d1 = g_new(float, n), *m = g_new(float, n);
  g_autofree uint16_t *z = g_new(uint16_t, n);
  for (size_t i = 0; i < n; i++) {
    z[i] = 12345;   /* poison */
    m[i] = -7.0f;
  }
  g_assert_true(stereo_engine_process(plain, l, w, r, w, d0, NULL, &error));
  g_assert_true(stereo_engine_process_depth(cal, l, w, r, w, d1, NULL, z, m, &error));
  g_assert_no_error(error);
  int valid = 0, far = 0;
  for (size_t i = 0; i < n; i++) {
    g_assert_cmpint(isnan(d0[i]), ==, isnan(d1[i]));
    if (isnan(d0[i])) {
      g_assert_cmpuint(z[i], ==, 0);
      g_assert_true(isnan(m[i]));
      continue;
    }
    valid++;
    /* s16 output: the disparity is quantised to 1/32 px; depth uses the float value */
    g_assert_cmpfloat(fabs(d1[i] - d0[i]), <=, 0.5 / STEREO_DISPARITY_SCALE + 1e-6);
    double metres = ref_depth_m(&calib, d0[i]);
    g_assert_false(isnan(metres));
    g_assert_cmpfloat(fabs(m[i] - metres), <=, 2e-6 * metres);
    if (metres > 65.5355) {
      far++;
      g_assert_cmpuint(z[i], ==, 0);
    } else if (metres < 65.5345) {
      int expect = (int)ref_depth_mm(&calib, d0[i]);
      g_assert_cmpint(expect, >, 0);
      g_assert_cmpint(abs((int)z[i] - expect), <=, 1);
    }
  }
  g_assert_cmpint(valid, >, (int)(n / 2));
  if (baseline > 1.0)
    g_assert_cmpint(far, >, (int)(n / 4));
  else
    g_assert_cmpint(far, ==, 0);
  stereo_engine_free(cal);
  stereo_engine_free(plain);
}

static void
test_calibrated_depth(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  double d0 = g_rand_double_range(rng, 4, 9), d1 = g_rand_double_range(rng, 12, 20);
  check_calibrated_depth(ctx, 0.6, d0, d1);
  StereoParams p;
  stereo_params_init(&p, 128, 80);
  p.max_disparity = 30;
  GError *error = NULL;
  /* depth without a calibration is refused, and metres without depth */
  StereoEngineParams bad = { .params = p, .depth = true };
  g_assert_null(stereo_engine_new(ctx, &bad, &error));
  g_assert_error(error, STEREO_PARAMS_ERROR, 0);
  g_clear_error(&error);
  StereoCalib calib;
  const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 20 };
  calib_init_ideal(&calib, 128, 80, 110.0, 63.5, 39.5, 0.6, NULL, rot, centre);
  StereoEngineParams no_depth = { .params = p, .calib = &calib, .metres = true };
  g_assert_null(stereo_engine_new(ctx, &no_depth, &error));
  g_assert_error(error, STEREO_PARAMS_ERROR, 0);
  g_assert_nonnull(strstr(error->message, "metres"));
  g_clear_error(&error);
  gpu_context_free(ctx);
}

/* Depth beyond the u16 plane's 65.535 m (issue 14): invalid there, metres in f32. */
static void
test_far_depth(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  /* a fixed scene (the random draws of the other tests stay as they were): background
   * 660 / 5 = 132 m, box 660 / 15 = 44 m */
  check_calibrated_depth(ctx, 6.0, 5.0, 15.0);
  gpu_context_free(ctx);
}

/* ------------------------------------------------------------ batches */

/* A distorted calibration of its own for pair k (focal, principal point, distortion,
 * baseline and a small rectifying rotation all differ). */
static void
pair_calib(StereoCalib *c, int w, int h, int k)
{
  const double dist[5] = { -0.05 * k, 0.01 * k, 0.0005 * k, -0.0003, 0.0 };
  /* looking down at the pitch, tilted by 0.6 rad: the ground's disparity (the pitch-plane
   * prior) is about 4-7 px, rising 0.02 px a row */
  const double t = 0.6, centre[3] = { 0, 0, 10 + k };
  const double rot[9] = { 1, 0, 0, 0, -cos(t), sin(t), 0, -sin(t), -cos(t) };
  calib_init_ideal(c, w, h, (0.8 + 0.1 * k) * w, 0.5 * w + k, 0.5 * h - 0.5 * k,
                   0.4 + 0.1 * k, dist, rot, centre);
  double a = 0.01 * k;
  double r1[9] = { cos(a), 0, sin(a), 0, 1, 0, -sin(a), 0, cos(a) };
  memcpy(c->R1, r1, sizeof r1);
}

typedef struct {
  float *d;
  uint8_t *c;
  uint16_t *z;
  float *m;
} Result;

/* B different pairs in one batch give, pair by pair, what B engines of one pair each
 * give, bit for bit: every pass runs the same arithmetic on each layer and the mean
 * magnitudes are summed in a fixed order. Per pair its own scene, noise floor and (with
 * `calibrated`) calibration, depth constants and ground (the pitch-plane prior, margin
 * 1 px: it must change some pixels). The batch engine first runs a batch of
 * other scenes (what a layer the batch failed to write would still show), then the
 * pairs in a shuffled order, then a partial batch of two. */
static void
batch_case(bool calibrated)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { B = 4 };
  const int w = 128, h = 80;
  size_t n = (size_t)w * h;
  StereoParams p;
  stereo_params_init(&p, w, h);
  p.max_disparity = 30;
  static const double floor_of[B] = { 0.0, 0.012, 0.0, 0.02 };
  int moved = 0;
  if (calibrated)
    p.ground_margin = 1.0;
  StereoCalib calib[B];
  uint8_t *l[B], *r[B], *ol[B], *orr[B];
  Result single[B];
  GError *error = NULL;
  for (int k = 0; k < B; k++) {
    l[k] = g_new(uint8_t, n);
    r[k] = g_new(uint8_t, n);
    ol[k] = g_new(uint8_t, n);
    orr[k] = g_new(uint8_t, n);
    engine_test_scene(rng, w, h, g_rand_double_range(rng, 3, 10), g_rand_double_range(rng, 12, 24), l[k], r[k]);
    engine_test_scene(rng, w, h, 20, 5, ol[k], orr[k]);
    pair_calib(&calib[k], w, h, k);
    StereoParams pk = p;
    pk.min_magnitude = floor_of[k];
    StereoEngineParams ep = { .label = "single", .params = pk, .output = STEREO_OUTPUT_FLOAT,
                              .calib = calibrated ? &calib[k] : NULL, .depth = calibrated,
                              .metres = calibrated };
    g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &ep, &error);
    g_assert_no_error(error);
    single[k].d = g_new(float, n);
    single[k].c = g_new(uint8_t, n);
    single[k].z = calibrated ? g_new(uint16_t, n) : NULL;
    single[k].m = calibrated ? g_new(float, n) : NULL;
    g_assert_true(stereo_engine_process_depth(e, l[k], w, r[k], w, single[k].d, single[k].c,
                                              single[k].z, single[k].m, &error));
    g_assert_no_error(error);
    if (calibrated) {   /* the ground bites: some pixels differ without it */
      ep.params.ground_margin = -1.0;
      g_autoptr(StereoEngine) e0 = stereo_engine_new(ctx, &ep, &error);
      g_assert_no_error(error);
      g_autofree float *d0 = g_new(float, n);
      g_autofree uint8_t *c0 = g_new(uint8_t, n);
      g_assert_true(stereo_engine_process(e0, l[k], w, r[k], w, d0, c0, &error));
      for (size_t q = 0; q < n; q++)
        moved += memcmp(&d0[q], &single[k].d[q], sizeof(float)) != 0;
    }
  }
  if (calibrated) {
    g_test_message("the pitch-plane prior changed %d pixels of the %d pairs", moved, B);
    g_assert_cmpint(moved, >, 0);
  }
  StereoEngineParams bp = { .label = "batch", .params = p, .output = STEREO_OUTPUT_FLOAT,
                            .batch = B, .in_flight = 2, .calib = calibrated ? &calib[0] : NULL,
                            .depth = calibrated, .metres = calibrated };
  g_autoptr(StereoEngine) be = stereo_engine_new(ctx, &bp, &error);
  g_assert_no_error(error);
  g_assert_cmpint(stereo_engine_get_batch(be), ==, B);
  for (int k = 0; k < B; k++) {
    StereoPairParams pp = { .calib = calibrated ? &calib[k] : NULL, .min_magnitude = floor_of[k] };
    g_assert_true(stereo_engine_set_pair(be, k, &pp, &error));
    g_assert_no_error(error);
  }
  StereoInput in[B];
  for (int k = 0; k < B; k++)
    in[k] = (StereoInput){ .pair = k, .tag = 900 + k, .left = ol[k], .right = orr[k],
                           .left_stride = w, .right_stride = w };
  uint64_t id0;
  g_assert_true(stereo_engine_submit_batch(be, in, B, &id0, &error));
  for (int k = 0; k < B; k++) {
    StereoFrame f;
    g_assert_true(stereo_engine_collect(be, true, &f, &error));
    g_assert_cmpuint(f.tag, ==, 900 + k);
    stereo_engine_release(be, &f);
  }
  static const int order[B] = { 2, 0, 3, 1 };
  static const int partial[2] = { 3, 1 };
  for (int round = 0; round < 2; round++) {
    int m = round ? 2 : B;
    const int *which = round ? partial : order;
    for (int i = 0; i < m; i++)
      in[i] = (StereoInput){ .pair = which[i], .tag = 100 * round + which[i], .left = l[which[i]],
                             .right = r[which[i]], .left_stride = w, .right_stride = w };
    uint64_t id;
    g_assert_true(stereo_engine_submit_batch(be, in, m, &id, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(id, ==, id0 + 1 + round);
    StereoWorkCounts wc;
    stereo_engine_get_last_counts(be, &wc);
    g_assert_cmpint(stereo_engine_pending(be), ==, m);
    for (int i = 0; i < m; i++) {
      StereoFrame f;
      g_assert_true(stereo_engine_collect(be, true, &f, &error));
      g_assert_no_error(error);
      int k = which[i];
      g_assert_cmpint(f.pair, ==, k);
      g_assert_cmpuint(f.tag, ==, 100 * round + k);
      g_assert_cmpint(f.batch_pairs, ==, m);
      g_assert_cmpuint(f.submission, ==, id);
      g_assert_true(stereo_engine_inputs_done(be, id));
      g_assert_cmpmem(f.disparity, n * sizeof(float), single[k].d, n * sizeof(float));
      g_assert_cmpmem(f.confidence, n, single[k].c, n);
      if (calibrated) {
        g_assert_cmpmem(f.depth, n * 2, single[k].z, n * 2);
        g_assert_cmpmem(f.metres, n * 4, single[k].m, n * 4);
      } else {
        g_assert_null(f.metres);
      }
      /* the comparison is not vacuous: every pair has valid pixels to compare (the
       * fewest in 100 runs: 3200 of 10240; with a noise floor of 0.03 instead of 0.02,
       * a faint random texture left none in one run of about 15) */
      int valid = 0;
      for (size_t q = 0; q < n; q++)
        valid += !isnan(single[k].d[q]);
      g_test_message("pair %d: %d of %zu pixels valid", k, valid, n);
      g_assert_cmpint(valid, >=, (int)(n / 16));
      stereo_engine_release(be, &f);
    }
    g_test_message("%s batch of %d (pairs %d %d ...): every layer equal to its single engine, "
                   "%d dispatches, %d barriers", calibrated ? "calibrated" : "plain", m,
                   which[0], which[1], wc.dispatches, wc.barriers);
  }
  for (int k = 0; k < B; k++) {
    g_free(l[k]);
    g_free(r[k]);
    g_free(ol[k]);
    g_free(orr[k]);
    g_free(single[k].d);
    g_free(single[k].c);
    g_free(single[k].z);
    g_free(single[k].m);
  }
  g_clear_pointer(&be, stereo_engine_free);
  gpu_context_free(ctx);
}

static void
test_batch_plain(void)
{
  batch_case(false);
}

static void
test_batch_calibrated(void)
{
  batch_case(true);
}

/* The same with the L-R check against level 0's right view (STEREOD_LR_LEVEL=0; the
 * default checks against level 1's, and level 0 runs the left views alone): level 0
 * runs both views of the batch's pairs */
static void
test_batch_lr_level0(void)
{
  g_autofree char *saved = g_strdup(g_getenv("STEREOD_LR_LEVEL"));
  g_setenv("STEREOD_LR_LEVEL", "0", TRUE);
  batch_case(true);
  gpu_test_setenv("STEREOD_LR_LEVEL", saved);
}

/* A batch slot is not reused while a frame of it is held: with one slot, a submit fails
 * until the last frame of the previous batch is released, and the held frame's planes
 * stay unchanged meanwhile. */
static void
test_batch_hold(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  const int w = 96, h = 64;
  size_t n = (size_t)w * h;
  StereoParams p;
  stereo_params_init(&p, w, h);
  p.max_disparity = 20;
  GError *error = NULL;
  StereoEngineParams ep = { .label = "hold", .params = p, .output = STEREO_OUTPUT_S16,
                            .batch = 2, .in_flight = 1 };
  g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &ep, &error);
  g_assert_no_error(error);
  g_autofree uint8_t *l = g_new(uint8_t, n), *r = g_new(uint8_t, n);
  g_autofree uint8_t *l2 = g_new(uint8_t, n), *r2 = g_new(uint8_t, n);
  engine_test_scene(rng, w, h, 4, 12, l, r);
  engine_test_scene(rng, w, h, 9, 3, l2, r2);
  StereoInput in[2] = {
    { .pair = 0, .tag = 1, .left = l, .right = r, .left_stride = w, .right_stride = w },
    { .pair = 1, .tag = 2, .left = l2, .right = r2, .left_stride = w, .right_stride = w },
  };
  g_assert_true(stereo_engine_submit_batch(e, in, 2, NULL, &error));
  g_assert_false(stereo_engine_can_submit(e));
  StereoFrame a, b;
  g_assert_true(stereo_engine_collect(e, true, &a, &error));
  g_assert_true(stereo_engine_collect(e, true, &b, &error));
  g_autofree int16_t *copy = g_memdup2(a.disparity, n * 2);
  stereo_engine_release(e, &b);
  g_assert_false(stereo_engine_can_submit(e));   /* a is still held */
  g_assert_false(stereo_engine_submit_batch(e, in + 1, 1, NULL, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  g_assert_cmpmem(a.disparity, n * 2, copy, n * 2);
  stereo_engine_release(e, &a);
  g_assert_true(stereo_engine_can_submit(e));
  g_assert_true(stereo_engine_submit_batch(e, in + 1, 1, NULL, &error));
  g_assert_true(stereo_engine_collect(e, true, &a, &error));
  g_assert_cmpuint(a.tag, ==, 2);
  stereo_engine_release(e, &a);
  g_clear_pointer(&e, stereo_engine_free);
  gpu_context_free(ctx);
}

/* ------------------------------------------------------------ work per batch */

static StereoWorkCounts
count_batch(GpuContext *ctx, StereoEngine *e, int n, bool dry)
{
  const StereoParams *p = stereo_engine_get_params(e);
  size_t plane = (size_t)p->width * p->height;
  g_autofree uint8_t *img = g_malloc0(plane);
  for (size_t i = 0; i < plane; i++)
    img[i] = (uint8_t)(i * 7 % 251);
  StereoInput in[STEREO_MAX_BATCH];
  for (int k = 0; k < n; k++)
    in[k] = (StereoInput){ .pair = k, .left = img, .right = img, .left_stride = p->width,
                           .right_stride = p->width };
  GError *error = NULL;
  gpu_context_set_dry_run(ctx, dry);
  /* twice: the second is the steady state (its upload waits for the first's reads) */
  for (int round = 0; round < 2; round++) {
    g_assert_true(stereo_engine_submit_batch(e, in, n, NULL, &error));
    g_assert_no_error(error);
    for (int k = 0; k < n; k++) {
      StereoFrame f;
      g_assert_true(stereo_engine_collect(e, true, &f, &error));
      stereo_engine_release(e, &f);
    }
  }
  gpu_context_set_dry_run(ctx, false);
  StereoWorkCounts c;
  stereo_engine_get_last_counts(e, &c);
  return c;
}

/* Dispatches and barriers per batch, counted in code: with the service's settings at
 * 1920 x 1080 (stereo_params_init, s16 output, the depth plane) at most 20 dispatches
 * per batch, with or without the level-0 refinement, in the schedule of GPUs (the rounds
 * of levels of 2^18 pixels and more split in two: STEREOD_PHASE_SPLIT=large; a software
 * renderer splits every round, which is reported too); counted in a dry run (every pass queued, barriers issued, only
 * glDispatchCompute skipped: llvmpipe cannot run that size in a test's time). A dry run
 * counts what a real run issues (a batch of 3 at 320x240 both ways), and the count does
 * not depend on the batch size (1 and 3). */
static void
test_dispatch_count(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  GError *error = NULL;
  g_autofree char *saved = g_strdup(g_getenv("STEREOD_PHASE_SPLIT"));
  for (int round = 0; round < 3; round++) {
    int refine = round == 1;
    bool split = round == 2;
    g_setenv("STEREOD_PHASE_SPLIT", split ? "1" : "large", TRUE);   /* large: the GPU rule */
    StereoCalib calib;
    const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0, 0, 20 };
    calib_init_ideal(&calib, 1920, 1080, 2000.0, 959.5, 539.5, 0.5, NULL, rot, centre);
    StereoEngineParams ep = { .label = "1080p", .output = STEREO_OUTPUT_S16, .calib = &calib,
                              .depth = true };
    stereo_params_init(&ep.params, 1920, 1080);
    ep.params.refine = refine;
    g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &ep, &error);
    g_assert_no_error(error);
    StereoWorkCounts c = count_batch(ctx, e, 1, true);
    g_test_message("1920x1080, %d levels, search on level %d%s%s: %d dispatches, %d barriers "
                   "per batch", stereo_params_get_levels(&ep.params),
                   stereo_params_get_search_level(&ep.params), refine ? ", refine" : "",
                   split ? ", phase rounds split (software renderers)" : "", c.dispatches,
                   c.barriers);
    if (!split)
      g_assert_cmpint(c.dispatches, <=, 20);
    g_assert_cmpint(c.barriers, <=, c.dispatches + 1);
  }
  gpu_test_setenv("STEREOD_PHASE_SPLIT", saved);
  StereoEngineParams sp = { .label = "small", .output = STEREO_OUTPUT_S16, .batch = 3 };
  stereo_params_init(&sp.params, 320, 240);
  g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &sp, &error);
  g_assert_no_error(error);
  StereoWorkCounts dry = count_batch(ctx, e, 3, true);
  StereoWorkCounts real = count_batch(ctx, e, 3, false);
  StereoWorkCounts one = count_batch(ctx, e, 1, false);
  g_test_message("320x240: %d dispatches, %d barriers per batch (dry run), %d, %d (run), %d, %d "
                 "(a batch of one)", dry.dispatches, dry.barriers, real.dispatches, real.barriers,
                 one.dispatches, one.barriers);
  g_assert_cmpint(dry.dispatches, ==, real.dispatches);
  g_assert_cmpint(dry.barriers, ==, real.barriers);
  g_assert_cmpint(one.dispatches, ==, real.dispatches);
  g_assert_cmpint(one.barriers, ==, real.barriers);
  g_clear_pointer(&e, stereo_engine_free);
  gpu_context_free(ctx);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  rng = test_seeded_rand();
  g_test_add_func("/engine/formats-and-queue", test_formats_and_queue);
  g_test_add_func("/engine/bad-params", test_bad_params);
  g_test_add_func("/engine/calibrated-depth", test_calibrated_depth);
  g_test_add_func("/engine/far-depth", test_far_depth);
  g_test_add_func("/engine/batch/plain", test_batch_plain);
  g_test_add_func("/engine/batch/calibrated", test_batch_calibrated);
  g_test_add_func("/engine/batch/hold", test_batch_hold);
  g_test_add_func("/engine/batch/lr-level0", test_batch_lr_level0);
  g_test_add_func("/engine/dispatch-count", test_dispatch_count);
  int r = g_test_run();
  g_rand_free(rng);
  return r;
}
