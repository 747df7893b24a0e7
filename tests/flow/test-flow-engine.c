/* test-flow-engine: the whole GPU optical flow against the reference (ref_flow_run), the
 * int16 output, and the frame stream (submit/collect, tags, limits). */
#include <math.h>
#include <string.h>

#include "kernels/flow.h"
#include "tests/common/gpu-test.h"
#include "tests/common/texture.h"
#include "tests/flow/flow-fixture.h"

#define W 96
#define H 72

static FlowEngine *
engine_new(GpuContext *ctx, const FlowParams *p, FlowOutputFormat fmt, int in_flight)
{
  GError *error = NULL;
  FlowEngine *e = flow_engine_new(ctx, &(FlowEngineParams){
      .label = "test", .params = *p, .output = fmt, .in_flight = in_flight }, &error);
  g_assert_no_error(error);
  return e;
}

static void
compare_with_reference(bool fb)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  FlowParams p;
  flow_params_init(&p, W, H);
  p.fb_check = fb;
  /* 96 x 72 has 2 levels: the pyramid captures about +-4 px along each filter's
   * direction (docs/optical-flow.md §2), so |du|, |dv| <= 2 keeps |f| within it. */
  double du = g_rand_double_range(flow_rng, -2, 2), dv = g_rand_double_range(flow_rng, -2, 2);
  g_autofree uint8_t *f0 = g_new(uint8_t, W * H), *f1 = g_new(uint8_t, W * H);
  flow_textured_pair(W, H, du, dv, f0, f1);
  size_t n = W * H;
  g_autofree float *ru = g_new(float, n), *rv = g_new(float, n);
  g_autofree float *gu = g_new(float, n), *gv = g_new(float, n);
  GError *error = NULL;
  g_assert_true(ref_flow_run(&p, f0, W, f1, W, ru, rv, &error));
  g_autoptr(FlowEngine) e = engine_new(ctx, &p, FLOW_OUTPUT_FLOAT, 1);
  for (size_t i = 0; i < n; i++)
    gu[i] = gv[i] = NAN;
  g_assert_true(flow_engine_process(e, f0, W, f1, W, gu, gv, &error));
  g_assert_no_error(error);

  long close = 0, known_differs = 0, known = 0;
  double maxd = 0.0, epe = 0.0;
  for (size_t i = 0; i < n; i++) {
    g_assert_false(isnan(gu[i]) || isnan(gv[i]));
    bool kr = ru[i] != FLOW_UNKNOWN, kg = gu[i] != FLOW_UNKNOWN;
    g_assert_cmpint(kg, ==, gv[i] != FLOW_UNKNOWN);
    if (kr != kg) {
      known_differs++;
      continue;
    }
    if (!kr)
      continue;
    known++;
    double d = MAX(fabs(ru[i] - gu[i]), fabs(rv[i] - gv[i]));
    maxd = MAX(maxd, d);
    close += d <= 0.01;
    epe += hypot(gu[i] - du, gv[i] - dv);
  }
  g_test_message("flow (%.2f, %.2f)%s: %ld known, %ld differ in being known, %.2f %% within "
                 "0.01 px of the reference (max %.3f px), EPE %.3f px", du, dv,
                 fb ? " with the forward-backward check" : "", known, known_differs,
                 100.0 * close / MAX(known, 1), maxd, epe / MAX(known, 1));
  g_assert_cmpint(known, >, (long)n * 9 / 10);
  g_assert_cmpint(known_differs, <=, (long)n / 200);
  g_assert_cmpint(close, >=, known * 99 / 100);
  /* A smooth texture under a pure translation: the flow itself is right too. */
  g_assert_cmpfloat(epe / known, <, 0.1);
}

static void
test_reference(void)
{
  compare_with_reference(false);
}

static void
test_reference_fb(void)
{
  compare_with_reference(true);
}

/* Three frames streamed: two flows, tagged with their frames, the int16 planes equal to
 * the float ones within their step; limits of the queue. */
static void
test_stream_s16(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  FlowParams p;
  flow_params_init(&p, W, H);
  p.fb_check = false;
  g_autofree uint8_t *f0 = g_new(uint8_t, W * H), *f1 = g_new(uint8_t, W * H);
  flow_textured_pair(W, H, 1.5, -0.75, f0, f1);
  size_t n = W * H;
  g_autofree float *fu = g_new(float, n), *fv = g_new(float, n);
  GError *error = NULL;
  g_autoptr(FlowEngine) ef = engine_new(ctx, &p, FLOW_OUTPUT_FLOAT, 1);
  g_assert_true(flow_engine_process(ef, f0, W, f1, W, fu, fv, &error));

  g_autoptr(FlowEngine) e = engine_new(ctx, &p, FLOW_OUTPUT_S16, 2);
  bool queued = true;
  g_assert_true(flow_engine_submit(e, f0, W, 10, &queued, &error));
  g_assert_false(queued);
  g_assert_cmpint(flow_engine_pending(e), ==, 0);
  g_assert_true(flow_engine_submit(e, f1, W, 11, &queued, &error));
  g_assert_true(queued);
  g_assert_true(flow_engine_submit(e, f0, W, 12, &queued, &error));
  g_assert_true(queued);
  g_assert_cmpint(flow_engine_pending(e), ==, 2);
  /* A third flow does not fit: refused, nothing changed. */
  g_assert_false(flow_engine_submit(e, f1, W, 13, &queued, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);

  FlowFrame fr;
  g_assert_true(flow_engine_collect(e, true, &fr, &error));
  g_assert_cmpuint(fr.tag, ==, 11);
  g_assert_cmpuint(fr.prev_tag, ==, 10);
  g_assert_cmpint(fr.format, ==, FLOW_OUTPUT_S16);
  const int16_t *su = fr.u, *sv = fr.v;
  for (size_t i = 0; i < n; i++) {
    g_assert_cmpint(su[i], !=, FLOW_S16_UNKNOWN);
    g_assert_cmpfloat(fabs(su[i] / 32.0 - fu[i]), <=, 1.0 / 64.0 + 1e-6);
    g_assert_cmpfloat(fabs(sv[i] / 32.0 - fv[i]), <=, 1.0 / 64.0 + 1e-6);
  }
  flow_engine_release(e, &fr);
  g_assert_true(flow_engine_collect(e, true, &fr, &error));
  g_assert_cmpuint(fr.tag, ==, 12);
  g_assert_cmpuint(fr.prev_tag, ==, 11);
  /* Frame 12 back to frame 11's content: the flow is the reverse, about (-1.5, 0.75). */
  double mu = 0.0, mv = 0.0;
  for (size_t i = 0; i < n; i++) {
    mu += ((const int16_t *)fr.u)[i] / 32.0;
    mv += ((const int16_t *)fr.v)[i] / 32.0;
  }
  g_assert_cmpfloat(fabs(mu / n + 1.5), <, 0.1);
  g_assert_cmpfloat(fabs(mv / n - 0.75), <, 0.1);
  flow_engine_release(e, &fr);
  g_assert_false(flow_engine_collect(e, true, &fr, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);

  /* After a reset the next frame starts a new stream: no flow. */
  flow_engine_reset(e);
  g_assert_true(flow_engine_submit(e, f1, W, 20, &queued, &error));
  g_assert_false(queued);
}

/* ------------------------------------------------------------ batches */

#define BATCH_PAIRS 3
#define BATCH_FRAMES 4

/* Frame k of a stream: a texture of its own moved by k (du, dv). */
static void
stream_frames(double du, double dv, uint8_t *frames[BATCH_FRAMES])
{
  TestTexture t;
  test_texture_init(&t, flow_rng, 24, 0.15, 1.4, 0, 2 * G_PI, 0.25, 3.0);
  for (int k = 0; k < BATCH_FRAMES; k++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        frames[k][y * W + x] =
          (uint8_t)lround(255.0 * test_texture_at(&t, x - k * du, y - k * dv));
}

/* What a one-pair engine gives for the flow of a stream from frame a to frame b (the
 * frames between skipped): u and v planes, int16. */
static void
single_flow(GpuContext *ctx, const FlowParams *p, uint8_t *const frames[], int a, int b,
            int16_t *u, int16_t *v)
{
  g_autoptr(FlowEngine) e = engine_new(ctx, p, FLOW_OUTPUT_S16, 1);
  GError *error = NULL;
  bool queued;
  g_assert_true(flow_engine_submit(e, frames[a], W, 0, &queued, &error));
  g_assert_true(flow_engine_submit(e, frames[b], W, 1, &queued, &error));
  g_assert_true(queued);
  FlowFrame fr;
  g_assert_true(flow_engine_collect(e, true, &fr, &error));
  memcpy(u, fr.u, (size_t)W * H * 2);
  memcpy(v, fr.v, (size_t)W * H * 2);
  flow_engine_release(e, &fr);
}

/* A collected flow of the batched engine: pair, tags, and planes bit-identical to the
 * one-pair engine's flow of the same two frames. */
static void
check_flow(const FlowFrame *fr, int pair, int a, int b, int16_t *ref[BATCH_PAIRS][2],
           int ref_a[BATCH_PAIRS])
{
  g_assert_cmpint(fr->pair, ==, pair);
  g_assert_cmpuint(fr->tag, ==, (uint64_t)(100 * pair + b));
  g_assert_cmpuint(fr->prev_tag, ==, (uint64_t)(100 * pair + a));
  g_assert_cmpint(ref_a[pair], ==, a);
  g_assert_cmpint(memcmp(fr->u, ref[pair][0], (size_t)W * H * 2), ==, 0);
  g_assert_cmpint(memcmp(fr->v, ref[pair][1], (size_t)W * H * 2), ==, 0);
}

/* Three pairs in one engine, their frames submitted in pair order, out of order, as
 * subsets, with a reset: every flow equals, bit for bit, what a one-pair engine computes
 * from the same two frames of that pair (the previous frame it was given, frames it was
 * not given skipped); tags, pairs, ids and the slots' limit. */
static void
test_batch(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  FlowParams p;
  flow_params_init(&p, W, H);
  p.fb_check = true;
  const double motion[BATCH_PAIRS][2] = { { 1.2, -0.5 }, { -0.7, 0.9 }, { 0.3, 1.6 } };
  uint8_t *frames[BATCH_PAIRS][BATCH_FRAMES];
  for (int i = 0; i < BATCH_PAIRS; i++) {
    for (int k = 0; k < BATCH_FRAMES; k++)
      frames[i][k] = g_malloc((size_t)W * H);
    stream_frames(motion[i][0], motion[i][1], frames[i]);
  }
  int16_t *ref[BATCH_PAIRS][2];
  for (int i = 0; i < BATCH_PAIRS; i++)
    for (int c = 0; c < 2; c++)
      ref[i][c] = g_malloc((size_t)W * H * 2);
  GError *error = NULL;
  FlowEngine *e = flow_engine_new(ctx, &(FlowEngineParams){
      .label = "batch", .params = p, .output = FLOW_OUTPUT_S16, .in_flight = 2,
      .batch = BATCH_PAIRS }, &error);
  g_assert_no_error(error);

  /* Each step: the inputs (pair, frame; a negative frame = that frame with a reset) and
   * the previous frame each flow starts from (-1 = no flow). */
  static const struct {
    int n, pair[BATCH_PAIRS], frame[BATCH_PAIRS], from[BATCH_PAIRS];
    const char *what;
  } steps[] = {
    { 3, { 0, 1, 2 }, { 0, 0, 0 }, { -1, -1, -1 }, "first frames, in pair order" },
    { 3, { 0, 1, 2 }, { 1, 1, 1 }, { 0, 0, 0 }, "in pair order" },
    { 2, { 2, 0 }, { 2, 2 }, { 1, 1 }, "two pairs, out of order" },
    { 2, { 1, 2 }, { 2, 3 }, { 1, 2 }, "two pairs, in other positions" },
    { 3, { 0, 1, 2 }, { 3, 3, -3 }, { 2, 2, -1 }, "in pair order again, pair 2 reset" },
  };
  for (size_t st = 0; st < G_N_ELEMENTS(steps); st++) {
    FlowInput in[BATCH_PAIRS];
    int ref_a[BATCH_PAIRS] = { -1, -1, -1 };
    int n_flows = 0;
    for (int i = 0; i < steps[st].n; i++) {
      int pair = steps[st].pair[i], k = abs(steps[st].frame[i]), a = steps[st].from[i];
      in[i] = (FlowInput){ .pair = pair, .frame = frames[pair][k], .stride = W,
                           .tag = (uint64_t)(100 * pair + k), .reset = steps[st].frame[i] < 0 };
      if (a >= 0) {
        single_flow(ctx, &p, frames[pair], a, k, ref[pair][0], ref[pair][1]);
        ref_a[pair] = a;
        n_flows++;
      }
    }
    bool queued[BATCH_PAIRS];
    uint64_t id = 99;
    g_assert_true(flow_engine_submit_batch(e, in, steps[st].n, queued, &id, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(id != 0, ==, n_flows > 0);
    g_assert_cmpint(flow_engine_pending(e), ==, n_flows);
    /* collected by position, the last first */
    for (int i = steps[st].n - 1; i >= 0; i--) {
      g_assert_cmpint(queued[i], ==, steps[st].from[i] >= 0);
      FlowFrame fr;
      if (!queued[i]) {
        g_assert_false(flow_engine_collect_at(e, id, i, true, &fr, &error));
        g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
        g_clear_error(&error);
        continue;
      }
      g_assert_true(flow_engine_collect_at(e, id, i, true, &fr, &error));
      g_assert_no_error(error);
      g_assert_cmpuint(fr.submission, ==, id);
      g_assert_cmpint(fr.batch_flows, ==, n_flows);
      check_flow(&fr, steps[st].pair[i], steps[st].from[i], abs(steps[st].frame[i]), ref,
                 ref_a);
      flow_engine_release(e, &fr);
    }
    g_assert_cmpint(flow_engine_pending(e), ==, 0);
    g_test_message("batch step %zu (%s): %d flows, each identical to a one-pair engine's",
                   st + 1, steps[st].what, n_flows);
  }

  /* Slots: two submissions with flows held (one collected, not released), the third is
   * refused and changes nothing; a release frees its slot. */
  flow_engine_reset(e);
  FlowInput in[BATCH_PAIRS];
  for (int i = 0; i < BATCH_PAIRS; i++)
    in[i] = (FlowInput){ .pair = i, .frame = frames[i][0], .stride = W, .tag = 0 };
  bool queued[BATCH_PAIRS];
  uint64_t id1, id2, id3;
  g_assert_true(flow_engine_submit_batch(e, in, BATCH_PAIRS, queued, &id1, &error));
  g_assert_cmpuint(id1, ==, 0);
  for (int i = 0; i < BATCH_PAIRS; i++)
    in[i].frame = frames[i][1];
  g_assert_true(flow_engine_submit_batch(e, in, BATCH_PAIRS, queued, &id1, &error));
  g_assert_true(flow_engine_submit_batch(e, in, 2, queued, &id2, &error));
  g_assert_cmpuint(id2, >, id1);
  g_assert_true(flow_engine_can_submit(e) == false);
  g_assert_false(flow_engine_submit_batch(e, in, 1, queued, &id3, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  FlowFrame held;
  g_assert_true(flow_engine_collect(e, true, &held, &error));   /* the oldest, first */
  g_assert_cmpuint(held.submission, ==, id1);
  g_assert_cmpint(held.pair, ==, 0);
  for (int k = 0; k < 4; k++) {
    FlowFrame fr;
    g_assert_true(flow_engine_collect(e, true, &fr, &error));
    g_assert_cmpuint(fr.submission, ==, k < 2 ? id1 : id2);
    g_assert_cmpint(fr.pair, ==, k < 2 ? k + 1 : k - 2);
    flow_engine_release(e, &fr);
  }
  g_assert_cmpint(flow_engine_pending(e), ==, 0);
  g_assert_true(flow_engine_can_submit(e));     /* id2's slot */
  g_assert_true(flow_engine_submit_batch(e, in, 1, queued, &id3, &error));
  g_assert_false(flow_engine_can_submit(e));    /* id1's is still held */
  flow_engine_release(e, &held);
  g_assert_true(flow_engine_can_submit(e));
  FlowFrame fr;
  g_assert_true(flow_engine_collect(e, true, &fr, &error));
  g_assert_cmpuint(fr.submission, ==, id3);
  flow_engine_release(e, &fr);
  flow_engine_free(e);
  for (int i = 0; i < BATCH_PAIRS; i++) {
    for (int k = 0; k < BATCH_FRAMES; k++)
      g_free(frames[i][k]);
    g_free(ref[i][0]);
    g_free(ref[i][1]);
  }
}

static void
test_bad_params(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  FlowParams p;
  flow_params_init(&p, W, H);
  p.orientations = 7;
  GError *error = NULL;
  g_autoptr(FlowEngine) e = flow_engine_new(ctx, &(FlowEngineParams){ .params = p }, &error);
  g_assert_null(e);
  g_assert_error(error, FLOW_PARAMS_ERROR, 0);
  g_assert_nonnull(strstr(error->message, "orientations"));
  g_clear_error(&error);
  flow_params_init(&p, W, H);
  p.levels = 6;   /* 96 x 72 at level 5 is 3 x 3: smaller than the filter */
  g_assert_false(flow_params_validate(&p, &error));
  g_assert_error(error, FLOW_PARAMS_ERROR, 0);
  g_clear_error(&error);
  flow_params_init(&p, W, H);
  g_assert_null(flow_engine_new(ctx, &(FlowEngineParams){ .params = p, .in_flight = 9 },
                                &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
}

/* ------------------------------------------------------------ work per flow frame */

/* Streams three frames (the third submit is the steady state: a flow, with the previous
 * flow's reads behind it) and returns the counts of the last submit. */
static FlowWorkCounts
count_flow_frame(GpuContext *ctx, FlowEngine *e, bool dry)
{
  const FlowParams *p = flow_engine_get_params(e);
  size_t plane = (size_t)p->width * p->height;
  g_autofree uint8_t *img = g_malloc(plane);
  for (size_t i = 0; i < plane; i++)
    img[i] = (uint8_t)(i * 7 % 251);
  GError *error = NULL;
  flow_engine_reset(e);
  gpu_context_set_dry_run(ctx, dry);
  for (int i = 0; i < 3; i++) {
    bool queued;
    g_assert_true(flow_engine_submit(e, img, p->width, (uint64_t)i, &queued, &error));
    g_assert_no_error(error);
    g_assert_true(queued == (i > 0));
    if (queued) {
      FlowFrame fr;
      g_assert_true(flow_engine_collect(e, true, &fr, &error));
      g_assert_no_error(error);
      flow_engine_release(e, &fr);
    }
  }
  gpu_context_set_dry_run(ctx, false);
  FlowWorkCounts c;
  flow_engine_get_last_counts(e, &c);
  return c;
}

/* The dispatches of one flow frame as docs/optical-flow.md §12 lists them, from the
 * parameters: the filtering of the new frame (its level 0 read as 8 bits); per direction and round the terms (which
 * compute their prior: the upsampled coarser level or the previous round's median), the
 * applicability filter, the solve and the hole fill; the median of each level's last
 * round, except the forward flow's at level 0 with the check (which computes it);
 * the consistency stage and the packing. */
static int
expected_dispatches(const FlowParams *p)
{
  int L = flow_params_get_levels(p), dirs = p->fb_check ? 2 : 1;
  int filter = (L - 1) + 3 * L;   /* reduce; rows, columns, features + means (no ingest) */
  int round = 3 + 2 * p->fill_iterations;      /* terms, smooth rows, solve, fill */
  int medians = p->median ? dirs * L - (p->fb_check ? 1 : 0) : 0;
  int post = p->fb_check ? 1 + (p->densify ? 2 * FLOW_DENSIFY_ITERATIONS : 0) : 0;
  return filter + dirs * L * p->iterations * round + medians + post + 1;
}

/* Dispatches and barriers per flow frame at 1920 x 1080 with the defaults (and with the
 * forward-backward check), counted in code in a dry run (every pass queued and its
 * barriers issued, only glDispatchCompute skipped: llvmpipe cannot run that size in a
 * test's time). A dry run counts what a real run issues (checked at 96 x 72). */
static void
test_dispatch_count(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  for (int fb = 0; fb < 2; fb++) {
    FlowParams p;
    flow_params_init(&p, 1920, 1080);
    p.fb_check = fb;
    g_autoptr(FlowEngine) e = engine_new(ctx, &p, FLOW_OUTPUT_S16, 2);
    FlowWorkCounts c = count_flow_frame(ctx, e, true);
    g_test_message("1920x1080, %d levels, %d orientations, %d rounds per level%s: %d "
                   "dispatches, %d barriers per flow frame", flow_params_get_levels(&p),
                   p.orientations, p.iterations, fb ? ", forward-backward check" : "",
                   c.dispatches, c.barriers);
    g_assert_cmpint(c.dispatches, ==, expected_dispatches(&p));
    /* the tracker: a barrier only before a pass that reads what an earlier one wrote */
    g_assert_cmpint(c.barriers, <, c.dispatches);
  }
  FlowParams p;
  flow_params_init(&p, W, H);
  p.fb_check = true;
  g_autoptr(FlowEngine) e = engine_new(ctx, &p, FLOW_OUTPUT_FLOAT, 1);
  FlowWorkCounts dry = count_flow_frame(ctx, e, true);
  FlowWorkCounts real = count_flow_frame(ctx, e, false);
  g_test_message("%dx%d with the forward-backward check: %d dispatches, %d barriers (dry run), "
                 "%d, %d (run)", W, H, dry.dispatches, dry.barriers, real.dispatches,
                 real.barriers);
  g_assert_cmpint(dry.dispatches, ==, real.dispatches);
  g_assert_cmpint(dry.barriers, ==, real.barriers);
  g_assert_cmpint(real.dispatches, ==, expected_dispatches(&p));
}

int
main(int argc, char **argv)
{
  flow_fixture_init(&argc, &argv);
  g_test_add_func("/flow/engine/reference", test_reference);
  g_test_add_func("/flow/engine/reference-fb", test_reference_fb);
  g_test_add_func("/flow/engine/stream-s16", test_stream_s16);
  g_test_add_func("/flow/engine/batch", test_batch);
  g_test_add_func("/flow/engine/bad-params", test_bad_params);
  g_test_add_func("/flow/engine/dispatch-count", test_dispatch_count);
  return flow_fixture_run();
}
