/* frame-groups.c: the engine groups of the GPU thread (frame-loop-private.h): which
 * pairs share an engine, the batches they submit, the frames that come back and go to the
 * publishers, and the capture pairs held until the GPU has uploaded them. */
#include "daemon/frame-loop-private.h"

#include <math.h>
#include <string.h>

/* Pairs share an engine when it would be the same: size, every filter parameter but the
 * noise floor (per-pair data of the batch), a calibration or none, the depth planes. */
static bool
same_engine(const StereodPairConfig *a, const StereodPairConfig *b)
{
  const StereoParams *p = &a->params, *q = &b->params;
  return a->width == b->width && a->height == b->height &&
         a->has_calibration == b->has_calibration &&
         ((a->outputs ^ b->outputs) & (STEREOD_OUTPUT_DEPTH | STEREOD_OUTPUT_DEPTH_M)) == 0 &&
         p->width == q->width && p->height == q->height && p->levels == q->levels &&
         p->omega0 == q->omega0 && p->sigma == q->sigma && p->radius == q->radius &&
         p->kappa == q->kappa && p->tau == q->tau && p->gamma == q->gamma &&
         p->smooth_sigma == q->smooth_sigma && p->c_min == q->c_min &&
         p->iterations == q->iterations && p->iterations_level0 == q->iterations_level0 &&
         p->fill_sigma == q->fill_sigma &&
         p->fill_iterations == q->fill_iterations && p->min_disparity == q->min_disparity &&
         p->max_disparity == q->max_disparity && p->search_level == q->search_level &&
         p->search_radius == q->search_radius && p->refine == q->refine &&
         p->lr_check == q->lr_check && p->lr_max == q->lr_max &&
         p->sigma_d_max == q->sigma_d_max && p->median == q->median &&
         p->densify == q->densify && p->coarse_fallback == q->coarse_fallback &&
         p->ground_margin == q->ground_margin && p->ground[0] == q->ground[0] &&
         p->ground[1] == q->ground[1] && p->ground[2] == q->ground[2];
}

/* Group index of every pair of `config`, in order of first appearance. */
static int
assign_groups(const StereodConfig *config, int *group_of, int *pos_of)
{
  int n_groups = 0, first[STEREOD_CONFIG_MAX_PAIRS], size[STEREOD_CONFIG_MAX_PAIRS];
  for (int i = 0; i < config->n_pairs; i++) {
    int g = -1;
    for (int k = 0; k < n_groups && g < 0; k++)
      if (size[k] < STEREO_MAX_BATCH && same_engine(&config->pairs[first[k]], &config->pairs[i]))
        g = k;
    if (g < 0) {
      g = n_groups++;
      first[g] = i;
      size[g] = 0;
    }
    group_of[i] = g;
    pos_of[i] = size[g]++;
  }
  return n_groups;
}

bool
frame_groups_same_filter(const StereodPairConfig *a, const StereodPairConfig *b)
{
  return same_engine(a, b) && a->params.min_magnitude == b->params.min_magnitude;
}

bool
frame_groups_same(const StereodConfig *a, const StereodConfig *b)
{
  if (a->n_pairs != b->n_pairs)
    return false;
  int ga[STEREOD_CONFIG_MAX_PAIRS], pa[STEREOD_CONFIG_MAX_PAIRS];
  int gb[STEREOD_CONFIG_MAX_PAIRS], pb[STEREOD_CONFIG_MAX_PAIRS];
  int na = assign_groups(a, ga, pa), nb = assign_groups(b, gb, pb);
  if (na != nb)
    return false;
  for (int i = 0; i < a->n_pairs; i++)
    if (ga[i] != gb[i] || pa[i] != pb[i] || strcmp(a->pairs[i].name, b->pairs[i].name) ||
        !same_engine(&a->pairs[i], &b->pairs[i]))
      return false;
  return true;
}

void
frame_groups_free(LoopGroup *groups, int n_groups)
{
  for (int i = 0; groups && i < n_groups; i++)
    stereo_engine_free(groups[i].engine);
  g_free(groups);
}

bool
frame_groups_build(FrameLoop *fl, const StereodConfig *config, bool async, LoopGroup **out,
                   int *n_out, GError **error)
{
  int group_of[STEREOD_CONFIG_MAX_PAIRS], pos_of[STEREOD_CONFIG_MAX_PAIRS];
  int n = assign_groups(config, group_of, pos_of);
  LoopGroup *groups = g_new0(LoopGroup, n);
  for (int i = 0; i < config->n_pairs; i++) {
    LoopGroup *g = &groups[group_of[i]];
    g->pairs[pos_of[i]] = i;
    g->n = MAX(g->n, pos_of[i] + 1);
  }
  for (int k = 0; k < n; k++) {
    LoopGroup *g = &groups[k];
    g->fl = fl;
    const StereodPairConfig *pc = &config->pairs[g->pairs[0]];
    g_autofree char *label = g->n > 1 ? g_strdup_printf("%s+%d", pc->name, g->n - 1)
                                      : g_strdup(pc->name);
    StereoEngineParams ep = {
      .label = label,
      .params = pc->params,
      .output = STEREO_OUTPUT_S16,
      .batch = g->n,
      .in_flight = fl->in_flight,
      .calib = pc->has_calibration ? &pc->calib : NULL,
      .depth = (pc->outputs & (STEREOD_OUTPUT_DEPTH | STEREOD_OUTPUT_DEPTH_M)) != 0,
      .metres = (pc->outputs & STEREOD_OUTPUT_DEPTH_M) != 0,
      .async_programs = async,
      .defer_maps = true,   /* set per pair: computed at start-up, copied at a reload */
    };
    if (!(g->engine = stereo_engine_new(fl->gpu, &ep, error))) {
      frame_groups_free(groups, n);
      return false;
    }
    for (int b = 0; b < STEREO_MAX_IN_FLIGHT; b++)
      g->batches[b].group = g;
  }
  *out = groups;
  *n_out = n;
  return true;
}

bool
frame_groups_warm_up(LoopGroup *groups, int n_groups, GError **error)
{
  for (int k = 0; k < n_groups; k++) {
    StereoEngine *e = groups[k].engine;
    const StereoParams *p = stereo_engine_get_params(e);
    g_autofree uint8_t *blank = g_malloc0((size_t)p->width * p->height);
    StereoInput in = { .pair = 0, .left = blank, .right = blank, .left_stride = p->width,
                       .right_stride = p->width };
    StereoFrame f;
    if (!stereo_engine_submit_batch(e, &in, 1, NULL, error) ||
        !stereo_engine_collect(e, true, &f, error))
      return false;
    stereo_engine_release(e, &f);
  }
  return true;
}

/* ------------------------------------------------------------ uploads done */

void
frame_groups_release_uploaded(FrameLoop *fl)
{
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    StereoEngine *e = fl->groups[p->group].engine;
    /* uploads finish in submission order: the oldest first */
    while (p->n_held > 0 && stereo_engine_inputs_done(e, p->held[0].submission)) {
      capture_pair_release(p->capture, p->held[0].left, p->held[0].right);
      memmove(p->held, p->held + 1, (size_t)(--p->n_held) * sizeof p->held[0]);
    }
  }
}

/* ------------------------------------------------------------ collect and publish */

/* The GPU time of the flow submission a flow came from: every flow of it carries the
 * whole submission's stages. */
static double
flow_submission_ms(const FlowFrame *f)
{
  double ms = 0.0;
  for (int s = 0; s < FLOW_STAGE_COUNT; s++)
    ms += f->stage_ms[s];
  return ms;
}

/* A publisher's worker thread, after the copy into the ring. */
static void
published(gpointer data, int result, uint64_t publish_ns)
{
  LoopJob *j = data;
  LoopBatch *b = j->batch;
  FrameLoop *fl = b->group->fl;
  LoopPair *p = &fl->pairs[b->pairs[j->k]];
  stereo_engine_release(b->group->engine, &b->frames[j->k]);
  /* the pair's share of its flow submission, beside its share of the batch */
  double flow_ms = b->has_flow[j->k] ? flow_submission_ms(&b->flows[j->k]) /
                                       MAX(b->flows[j->k].batch_flows, 1) : 0.0;
  frame_flow_published(p, &b->flows[j->k], b->has_flow[j->k]);
  g_mutex_lock(&fl->stats_lock);
  if (result < 0) {
    if (!fl->publish_error)
      fl->publish_error = result;
  } else {
    p->out++;
    p->published++;
    p->gpu_ms += b->gpu_ms / b->n + flow_ms;
    fl->total_published++;
    if (p->metrics)
      daemon_metrics_published(p->metrics,
                               publish_ns > b->capture_ns[j->k]
                                 ? (double)(publish_ns - b->capture_ns[j->k]) * 1e-9 : 0.0,
                               b->gpu_ms / b->n * 1e-3);
    if (publish_ns > b->capture_ns[j->k]) {
      double ms = (double)(publish_ns - b->capture_ns[j->k]) * 1e-6;
      if (p->n_latency < MAX_LATENCIES)
        p->latency_ms[p->n_latency++] = ms;
      int bin = ms > LATENCY_BIN0_MS ? (int)(log(ms / LATENCY_BIN0_MS) / log(1.01)) : 0;
      fl->latency_hist[CLAMP(bin, 0, LATENCY_BINS - 1)]++;
      fl->total_latency_max_ms = MAX(fl->total_latency_max_ms, ms);
    }
  }
  g_mutex_unlock(&fl->stats_lock);
  g_atomic_int_add(&b->unpublished, -1);
}

static LoopBatch *
batch_of(LoopGroup *g, uint64_t id)
{
  for (int i = 0; i < STEREO_MAX_IN_FLIGHT; i++)
    if (g->batches[i].id == id)
      return &g->batches[i];
  return NULL;
}

static bool
hand_over(FrameLoop *fl, LoopGroup *g, const StereoFrame *f, GError **error)
{
  LoopBatch *b = batch_of(g, f->submission);
  g_assert(b != NULL);   /* every submission has its record */
  int k = b->collected++;
  b->frames[k] = *f;
  if (k == 0) {
    b->gpu_ms = b->flow_ms = 0.0;
    for (int s = 0; s < STEREO_STAGE_COUNT; s++)
      b->gpu_ms += f->stage_ms[s];
  }
  LoopPair *p = &fl->pairs[b->pairs[k]];
  g_assert(f->pair == p->pos);
  FramePublishJob job = {
    .ring = p->ring,
    .lane = b->pairs[k],
    .meta = {
      .frame_number = b->seq[k],
      .capture_ns = b->capture_ns[k],
      .flags = b->seq[k] != p->last_seq + 1 ? STEREOD_FRAME_FLAG_DISCONT : 0,
    },
    .done = published,
    .data = &b->jobs[k],
  };
  if (p->cfg->outputs & STEREOD_OUTPUT_DISPARITY)
    job.planes[STEREOD_RING_PLANE_DISPARITY] = f->disparity;
  if (p->cfg->outputs & STEREOD_OUTPUT_CONFIDENCE)
    job.planes[STEREOD_RING_PLANE_CONFIDENCE] = f->confidence;
  if (p->cfg->outputs & STEREOD_OUTPUT_DEPTH)
    job.planes[STEREOD_RING_PLANE_DEPTH] = f->depth;
  if (p->cfg->outputs & STEREOD_OUTPUT_DEPTH_M)
    job.planes[STEREOD_RING_PLANE_FLOAT32] = f->metres;
  /* the frame's planes go out together: its flow is collected now (done on the GPU
   * before its disparity, queued first) */
  if (p->flow && !frame_flow_collect(p, b->flow_submission, b->flow_index[k], b->seq[k],
                                     b->has_flow[k], &b->flows[k],
                                     &job.planes[STEREOD_RING_PLANE_FLOW_U],
                                     &job.planes[STEREOD_RING_PLANE_FLOW_V], error)) {
    b->has_flow[k] = false;
    stereo_engine_release(g->engine, &b->frames[k]);
    return false;
  }
  /* the batch's flow pairs were one submission: any of its flows gives its time */
  if (b->has_flow[k])
    b->flow_ms = flow_submission_ms(&b->flows[k]);
  p->last_seq = b->seq[k];
  b->jobs[k] = (LoopJob){ b, k };
  g_atomic_int_inc(&b->unpublished);
  frame_publisher_push(fl->publisher, &job);
  if (b->collected == b->n) {
    g->queued--;
    fl->queued--;
    /* the batch cap's and the collect deadline's estimate: the flows of the batch's
     * pairs run on the same GPU queue just before it, so they count as its time */
    g->last_gpu_ms = b->gpu_ms + b->flow_ms;
    g->last_n = b->n;
    g_mutex_lock(&fl->stats_lock);
    fl->total_batches++;
    fl->total_gpu_ms += b->gpu_ms;
    g_mutex_unlock(&fl->stats_lock);
  }
  return true;
}

static LoopGroup *
oldest_group(FrameLoop *fl)
{
  LoopGroup *oldest = NULL;
  int64_t t = G_MAXINT64;
  for (int i = 0; i < fl->n_groups; i++) {
    LoopGroup *g = &fl->groups[i];
    for (int k = 0; g->queued && k < STEREO_MAX_IN_FLIGHT; k++) {
      LoopBatch *b = &g->batches[k];
      if (b->id && b->collected < b->n && b->submit_us < t) {
        t = b->submit_us;
        oldest = g;
      }
    }
  }
  return oldest;
}

bool
frame_groups_collect(FrameLoop *fl, bool wait, GError **error)
{
  bool any = false;
  if (wait) {
    LoopGroup *g = oldest_group(fl);
    StereoFrame f;
    if (g) {
      if (!stereo_engine_collect(g->engine, true, &f, error) || !hand_over(fl, g, &f, error))
        return false;
      any = true;
    }
  }
  for (int i = 0; i < fl->n_groups; i++) {
    LoopGroup *g = &fl->groups[i];
    while (g->queued) {
      StereoFrame f;
      if (!stereo_engine_collect(g->engine, false, &f, error)) {
        if (error && *error)
          return false;
        break;
      }
      if (!hand_over(fl, g, &f, error))
        return false;
      any = true;
    }
  }
  return any;
}

int64_t
frame_groups_expected_done(FrameLoop *fl)
{
  LoopGroup *g = oldest_group(fl);
  if (!g)
    return 0;
  int64_t t = G_MAXINT64;
  for (int k = 0; k < STEREO_MAX_IN_FLIGHT; k++) {
    LoopBatch *b = &g->batches[k];
    if (b->id && b->collected < b->n)
      t = MIN(t, b->submit_us);
  }
  double ms = g->last_gpu_ms > 0.0 ? g->last_gpu_ms : 1.0;
  return t + (int64_t)(ms * 1000.0);
}

/* ------------------------------------------------------------ submit */

static LoopBatch *
free_batch(LoopGroup *g)
{
  for (int i = 0; i < STEREO_MAX_IN_FLIGHT; i++) {
    LoopBatch *b = &g->batches[i];
    if (!b->id || (b->collected == b->n && g_atomic_int_get(&b->unpublished) == 0))
      return b;
  }
  return NULL;
}

int
frame_groups_batch_cap(double last_batch_ms, int last_n, double fps, int in_flight,
                       int members)
{
  if (last_n <= 0 || !(last_batch_ms > 0.0) || members <= 1)
    return MAX(members, 1);
  double budget_ms = 1000.0 / MAX(fps, 0.1) / MAX(in_flight, 1);
  double cap = budget_ms / (last_batch_ms / last_n);
  return cap >= members ? members : MAX((int)cap, 1);
}

static int
batch_cap(FrameLoop *fl, LoopGroup *g)
{
  double fps = 0.0;
  for (int pos = 0; pos < g->n; pos++)
    fps = MAX(fps, fl->pairs[g->pairs[pos]].cfg->fps);
  return frame_groups_batch_cap(g->last_gpu_ms, g->last_n, fps, fl->in_flight, g->n);
}

/* Live: once every pair of the group's last round went to the GPU, the newest captured
 * pair of every member that has one, all taken at one moment (one instant of the
 * stadium, which the height map fuses). FALSE when none has one. */
static bool
take_round(FrameLoop *fl, LoopGroup *g)
{
  int held_max = MIN(fl->in_flight + 1, MAX_HELD);
  bool any = false;
  for (int pos = 0; pos < g->n; pos++)
    if (fl->pairs[g->pairs[pos]].pending_left)
      return true;   /* the round is still going to the GPU */
  for (int pos = 0; pos < g->n; pos++) {
    LoopPair *p = &fl->pairs[g->pairs[pos]];
    /* a pair whose earlier pairs are not uploaded yet waits: the capture keeps the newest */
    if (p->n_held < held_max &&
        capture_pair_take(p->capture, &p->pending_left, &p->pending_right, &p->pending_ns,
                          &p->pending_seq))
      any = true;
  }
  return any;
}

/* Submits a batch of group g from its members' pending pairs: live (offline_first =
 * UINT64_MAX) those of the current round (taken now when the last one is done), at most
 * batch_cap() of them, the rest in the next batches; offline those within their
 * tolerance of offline_first, all of them. */
static bool
submit_group(FrameLoop *fl, LoopGroup *g, uint64_t offline_first, GError **error)
{
  LoopBatch *b = free_batch(g);
  if (!b || !stereo_engine_can_submit(g->engine))
    return false;
  bool live = offline_first == UINT64_MAX;
  if (live && !take_round(fl, g))
    return false;
  const uint8_t *base = gpu_buffer_get_map(fl->arena);
  /* offline every frame goes, as fast as the GPU goes: no cap */
  int cap = live ? batch_cap(fl, g) : g->n;
  StereoInput in[STEREO_MAX_BATCH];
  /* the flow pairs' frames: one submission of their engine (one size: one engine) */
  FlowInput flow_in[STEREO_MAX_BATCH];
  int flow_pairs[STEREO_MAX_BATCH], n_flow = 0;
  FlowEngine *flow = NULL;
  int n = 0;
  for (int pos = 0; pos < g->n && n < cap; pos++) {
    LoopPair *p = &fl->pairs[g->pairs[pos]];
    if (!p->pending_left ||
        (!live && p->pending_ns - offline_first > (uint64_t)p->cfg->tolerance_ns) ||
        !frame_flow_can_take(p))   /* its flow engine's slots all in use: it waits */
      continue;
    const CaptureFrame *l = g_steal_pointer(&p->pending_left);
    const CaptureFrame *r = g_steal_pointer(&p->pending_right);
    uint64_t cns = p->pending_ns, seq = p->pending_seq;
    /* the left picture for stereod-web, only while one is asked for (metrics.h) */
    if (p->metrics) {
      int64_t now_us = g_get_monotonic_time();
      if (daemon_metrics_left_wanted(p->metrics, now_us))
        daemon_metrics_left_offer(p->metrics, l->data, l->width, l->height, l->stride, now_us);
    }
    b->has_flow[n] = false;
    b->flow_index[n] = -1;
    if (p->flow) {
      g_assert(!flow || flow == p->flow);
      flow = p->flow;
      b->flow_index[n] = n_flow;
      flow_pairs[n_flow] = g->pairs[pos];
      frame_flow_input(p, l, seq, cns, &flow_in[n_flow++]);
    }
    in[n] = (StereoInput){
      .pair = pos,
      .tag = seq,
      .buffer = fl->arena,
      .left_offset = (size_t)(l->data - base),
      .right_offset = (size_t)(r->data - base),
      .left_stride = l->stride,
      .right_stride = r->stride,
    };
    b->pairs[n] = g->pairs[pos];
    b->seq[n] = seq;
    b->capture_ns[n] = cns;
    p->held[p->n_held++] = (HeldPair){ 0, l, r };
    n++;
  }
  if (n == 0)
    return false;
  /* the flows first: their GPU work is queued before the batch's */
  bool ok = true;
  b->flow_submission = 0;
  if (n_flow > 0) {
    bool queued[STEREO_MAX_BATCH];
    ok = frame_flow_submit(fl, flow_pairs, flow, flow_in, n_flow, queued, &b->flow_submission,
                           error);
    for (int k = 0; ok && k < n; k++)
      b->has_flow[k] = b->flow_index[k] >= 0 && queued[b->flow_index[k]];
  }
  uint64_t id = 0;
  ok = ok && stereo_engine_submit_batch(g->engine, in, n, &id, error);
  for (int k = 0; k < n; k++) {
    LoopPair *p = &fl->pairs[b->pairs[k]];
    HeldPair *h = &p->held[p->n_held - 1];
    if (ok) {
      h->submission = id;
      if (p->metrics)
        daemon_metrics_submitted(p->metrics);
      g_mutex_lock(&fl->stats_lock);
      p->in++;
      fl->total_submitted++;
      g_mutex_unlock(&fl->stats_lock);
    } else {
      capture_pair_release(p->capture, h->left, h->right);
      p->n_held--;
    }
  }
  if (!ok)
    return false;
  b->id = id;
  b->n = n;
  b->collected = 0;
  b->submit_us = g_get_monotonic_time();
  g->queued++;
  fl->queued++;
  return true;
}

bool
frame_groups_submit(FrameLoop *fl, GError **error)
{
  bool any = false;
  for (int i = 0; i < fl->n_groups && fl->queued < fl->in_flight; i++) {
    LoopGroup *g = &fl->groups[(fl->rr + i) % fl->n_groups];
    if (submit_group(fl, g, UINT64_MAX, error))
      any = true;
    else if (error && *error)
      return false;
  }
  fl->rr = (fl->rr + 1) % fl->n_groups;
  return any;
}

/* The longest wait of one call for a paced replay's next round: the loop comes back in
 * between (a stop request, the watchdog, a reload). */
#define REPLAY_SLICE_US 20000

/* [daemon] offline_speed > 0: whether the round whose oldest frame was captured at
 * `first` is due (the replay's clock starts at its first round); if it is not, waits
 * towards it for at most REPLAY_SLICE_US and says whether it is due now. */
static bool
replay_due(FrameLoop *fl, uint64_t first)
{
  int64_t now = g_get_monotonic_time();
  if (fl->replay_start_us == 0) {
    fl->replay_first_ns = first;
    fl->replay_start_us = now;
    return true;
  }
  if (first <= fl->replay_first_ns)
    return true;
  double due = (double)fl->replay_start_us +
               (double)(first - fl->replay_first_ns) * 1e-3 / fl->config->offline_speed;
  double left = due - (double)now;
  if (left <= 0.0)
    return true;
  g_usleep((gulong)MIN(left, (double)REPLAY_SLICE_US));
  return left <= REPLAY_SLICE_US;
}

bool
frame_groups_offline_round(FrameLoop *fl, GError **error)
{
  bool ready = true, any = false;
  uint64_t first = UINT64_MAX;
  int held_max = MIN(fl->in_flight + 1, MAX_HELD);
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    /* read before the take: a pair seen ended that has nothing to take is done (it
     * delivers its last pair before it ends) */
    CaptureState st = capture_pair_get_state(p->capture);
    bool done = st == CAPTURE_STATE_ENDED || st == CAPTURE_STATE_FAILED;
    if (!p->pending_left && p->n_held < held_max)
      capture_pair_take(p->capture, &p->pending_left, &p->pending_right, &p->pending_ns,
                        &p->pending_seq);
    if (p->pending_left) {
      any = true;
      first = MIN(first, p->pending_ns);
    } else if (!done) {
      ready = false;
    }
  }
  if (!any || !ready)
    return false;
  if (fl->config->offline_speed > 0.0 && !replay_due(fl, first))
    return true;   /* not due yet: waited a slice, the loop comes back */
  for (int k = 0; k < fl->n_groups; k++) {
    LoopGroup *g = &fl->groups[(fl->rr + k) % fl->n_groups];
    while (fl->queued >= fl->in_flight)
      if (!frame_groups_collect(fl, true, error))
        return false;
    if (!submit_group(fl, g, first, error) && error && *error)
      return false;
  }
  fl->rr = (fl->rr + 1) % fl->n_groups;
  while (fl->queued > 0)
    if (!frame_groups_collect(fl, true, error))
      return false;
  frame_groups_release_uploaded(fl);
  return true;
}

bool
frame_groups_pending(FrameLoop *fl)
{
  for (int i = 0; i < fl->n_pairs; i++)
    if (fl->pairs[i].pending_left || fl->pairs[i].n_held)
      return true;
  return false;
}

bool
frame_groups_drain(FrameLoop *fl, GError **error)
{
  while (fl->queued > 0)
    if (!frame_groups_collect(fl, true, error))
      return false;
  frame_publisher_drain(fl->publisher);
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    for (int k = 0; k < p->n_held; k++)
      capture_pair_release(p->capture, p->held[k].left, p->held[k].right);
    p->n_held = 0;
    if (p->pending_left)
      capture_pair_release(p->capture, p->pending_left, p->pending_right);
    p->pending_left = p->pending_right = NULL;
  }
  return true;
}
