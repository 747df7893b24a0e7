/* frame-loop.c: the GPU thread of stereod (see frame-loop.h): start-up, the loop, reload,
 * the end; what it reports is in frame-stats.c. */
#include "daemon/frame-loop.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/metrics.h"
#include "common/notify.h"
#include "daemon/frame-loop-private.h"

void
frame_loop_capture_params(const StereodConfig *config, const StereodPairConfig *pc,
                          CapturePairParams *cp)
{
  static const CaptureClockMode clocks[STEREOD_CLOCK_COUNT] = {
    [STEREOD_CLOCK_AUTO] = CAPTURE_CLOCK_AUTO,
    [STEREOD_CLOCK_SENDER] = CAPTURE_CLOCK_SENDER,
    [STEREOD_CLOCK_ARRIVAL] = CAPTURE_CLOCK_ARRIVAL,
    [STEREOD_CLOCK_REPLAY] = CAPTURE_CLOCK_REPLAY,
  };
  *cp = (CapturePairParams){
    .name = pc->name,
    .left = pc->left,
    .right = pc->right,
    .width = pc->width,
    .height = pc->height,
    .fps = pc->fps,
    .tolerance_ns = (uint64_t)pc->tolerance_ns,
    /* the pairs in batches whose uploads are not done yet, and the one being taken */
    .held_pairs = MIN(CLAMP(config->in_flight, 1, STEREO_MAX_IN_FLIGHT) + 1, MAX_HELD),
    .mode = config->offline ? CAPTURE_MODE_OFFLINE : CAPTURE_MODE_LIVE,
    .clock = clocks[pc->clock],
    .stall_ms = (unsigned)pc->stall_ms,
    .start_timeout_ms = (unsigned)pc->start_timeout_ms,
    .backoff_min_ms = (unsigned)pc->reconnect_min_ms,
    .backoff_max_ms = (unsigned)pc->reconnect_max_ms,
  };
}

/* The ring and the capture of pair p; its capture pool lies in the arena at pool. */
static bool
pair_open(FrameLoop *fl, LoopPair *p, const StereodPairConfig *pc, uint8_t *pool,
          GError **error)
{
  p->cfg = pc;
  RingWriterParams rp = {
    .name = pc->name,
    .width = (uint32_t)pc->width,
    .height = (uint32_t)pc->height,
    .formats = pc->outputs | (pc->flow ? STEREOD_RING_FORMAT_FLOW : 0),
    .slot_count = (uint32_t)fl->config->ring_slots,
    .disparity_scale = 1.0 / STEREO_DISPARITY_SCALE,
  };
  if (pc->has_calibration) {
    const StereoCalib *c = &pc->calib;
    rp.calibration.fx = c->P1[0];
    rp.calibration.fy = c->P1[5];
    rp.calibration.cx = c->P1[2];
    rp.calibration.cy = c->P1[6];
    rp.calibration.baseline = calib_baseline(c);
    rp.calibration.doffs = calib_doffs(c);
    memcpy(rp.calibration.q, c->Q, sizeof rp.calibration.q);
    /* the pose, for readers that map depth onto the pitch (ring.h, PRODUCER) */
    rp.producer[0] = 1.0;
    calib_rotation_to_quaternion(c->pose_rotation, &rp.producer[1]);
    memcpy(&rp.producer[5], c->pose_centre, sizeof c->pose_centre);
  }
  char why[512];
  int r = ring_writer_new_with_error(&rp, &p->ring, why, sizeof why);
  if (r < 0) {
    /* G_IO_ERROR_PERMISSION_DENIED (a name another user holds) makes stereod exit 78:
     * restarting cannot fix it, an operator must */
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "pair %s: %s", pc->name, why);
    return false;
  }
  CapturePairParams cp;
  frame_loop_capture_params(fl->config, pc, &cp);
  cp.notifier = fl->notifier;
  cp.timebase = fl->timebase;
  cp.pool_memory = pool;
  if (!(p->capture = capture_pair_new(&cp, error)))
    return false;
  return true;
}

static void
pair_close(LoopPair *p)
{
  capture_pair_free(p->capture);
  p->capture = NULL;
  ring_writer_free(p->ring);   /* marks the ring closed: readers see the end */
  p->ring = NULL;
}

/* Installs a config whose pairs group as the current ones do: new parameter pointers
 * and noise floors, no new engine. */
static bool
adopt_config(FrameLoop *fl, StereodConfig *cfg, GError **error)
{
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    const StereodPairConfig *pc = stereod_config_find_pair(cfg, p->cfg->name);
    g_assert(pc != NULL);   /* a reload that changes the pair set needs a restart */
    if (pc->params.min_magnitude != p->cfg->params.min_magnitude) {
      StereoPairParams pp = { .min_magnitude = pc->params.min_magnitude };
      if (!stereo_engine_set_pair(fl->groups[p->group].engine, p->pos, &pp, error))
        return false;
      g_message("pair %s: noise floor reloaded", pc->name);
    }
    p->cfg = pc;
  }
  stereod_config_free(fl->owned_config);
  fl->owned_config = cfg;
  fl->config = cfg;
  return true;
}

/* The engines of a reload are built: wait for what runs on the old ones, move every
 * pair's calibration map to its new engine on the GPU, and swap. */
static bool
swap_groups(FrameLoop *fl, GError **error)
{
  StereodConfig *cfg = g_steal_pointer(&fl->next_config);
  if (!frame_groups_drain(fl, error))
    return false;
  int group_of[STEREOD_CONFIG_MAX_PAIRS], pos_of[STEREOD_CONFIG_MAX_PAIRS];
  for (int k = 0; k < fl->n_next_groups; k++)
    for (int q = 0; q < fl->next_groups[k].n; q++) {
      group_of[fl->next_groups[k].pairs[q]] = k;
      pos_of[fl->next_groups[k].pairs[q]] = q;
    }
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    const StereodPairConfig *pc = &cfg->pairs[i];
    g_assert(strcmp(pc->name, p->cfg->name) == 0);   /* the pair set is unchanged */
    if (!stereo_engine_copy_pair(fl->next_groups[group_of[i]].engine, pos_of[i],
                                 fl->groups[p->group].engine, p->pos, pc->params.min_magnitude,
                                 error))
      return false;
    if (!frame_groups_same_filter(pc, p->cfg))
      g_message("pair %s: filter parameters reloaded", pc->name);
    p->group = group_of[i];
    p->pos = pos_of[i];
    p->cfg = pc;
  }
  frame_groups_free(fl->groups, fl->n_groups);
  fl->groups = g_steal_pointer(&fl->next_groups);
  fl->n_groups = fl->n_next_groups;
  fl->rr = 0;
  stereod_config_free(fl->owned_config);
  fl->owned_config = cfg;
  fl->config = cfg;
  g_debug("reload: %d pairs in %d engine groups", fl->n_pairs, fl->n_groups);
  return true;
}

/* A reload handed over by the main thread. When the pairs group as before, only the
 * noise floors change; otherwise the new engines are made with their programs built in
 * the background, the old ones keep running meanwhile, and the swap happens once every
 * new program is ready (so no compile runs on this thread while pairs wait). A reload that
 * fails to build keeps the running engines. */
static bool
apply_reload(FrameLoop *fl, GError **error)
{
  g_mutex_lock(&fl->lock);
  StereodConfig *cfg = g_steal_pointer(&fl->pending_config);
  g_mutex_unlock(&fl->lock);
  if (cfg) {
    /* a newer reload replaces one still building */
    frame_groups_free(g_steal_pointer(&fl->next_groups), fl->n_next_groups);
    stereod_config_free(g_steal_pointer(&fl->next_config));
    if (frame_groups_same(fl->config, cfg))
      return adopt_config(fl, cfg, error);
    g_autoptr(GError) local = NULL;
    if (!frame_groups_build(fl, cfg, true, &fl->next_groups, &fl->n_next_groups, &local)) {
      g_warning("reload: the new engines cannot be made (%s), keeping the running ones",
                local->message);
      stereod_config_free(cfg);
      return true;
    }
    fl->next_config = cfg;
  }
  if (!fl->next_groups)
    return true;
  for (int k = 0; k < fl->n_next_groups; k++) {
    g_autoptr(GError) local = NULL;
    if (!stereo_engine_poll_ready(fl->next_groups[k].engine, &local)) {
      if (!local)
        return true;   /* still building */
      g_warning("reload: %s, keeping the running engines", local->message);
      frame_groups_free(g_steal_pointer(&fl->next_groups), fl->n_next_groups);
      stereod_config_free(g_steal_pointer(&fl->next_config));
      return true;
    }
  }
  return swap_groups(fl, error);
}

static bool
publish_failed(FrameLoop *fl, GError **error)
{
  g_mutex_lock(&fl->stats_lock);
  int r = fl->publish_error;
  g_mutex_unlock(&fl->stats_lock);
  if (r < 0)
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "publish failed: %s",
                g_strerror(-r));
  return r < 0;
}

static bool
all_pairs_ended(FrameLoop *fl)
{
  for (int i = 0; i < fl->n_pairs; i++) {
    CaptureState st = capture_pair_get_state(fl->pairs[i].capture);
    if (st != CAPTURE_STATE_ENDED && st != CAPTURE_STATE_FAILED)
      return false;
  }
  return true;
}

/* Runs until asked to stop, or, offline, until every stream ended and everything was
 * submitted (TRUE), or an error (FALSE). */
static bool
loop_run(FrameLoop *fl, GError **error)
{
  int64_t wd_us = stereod_watchdog_interval_us();
  int64_t now = g_get_monotonic_time();
  int64_t next_wd = wd_us > 0 ? now + wd_us / 2 : G_MAXINT64;
  int64_t last_stats = now;
  fl->last_stats_us = now;
  while (!g_atomic_int_get(&fl->stop)) {
    if (!apply_reload(fl, error) || publish_failed(fl, error))
      return false;
    uint64_t seen = capture_notifier_get(fl->notifier);
    /* Offline: read before the mailboxes are looked at, so that a pair seen ended here
     * and found empty below has nothing left. */
    bool all_ended = fl->config->offline && all_pairs_ended(fl);
    frame_groups_release_uploaded(fl);
    bool work = frame_groups_collect(fl, false, error);
    if (*error)
      return false;
    if (fl->config->offline ? frame_groups_offline_round(fl, error)
                            : frame_groups_submit(fl, error))
      work = true;
    else if (*error)
      return false;

    now = g_get_monotonic_time();
    if (now >= next_wd) {
      stereod_notify("WATCHDOG=1");
      next_wd = now + wd_us / 2;
    }
    int64_t interval_us = (int64_t)fl->config->stats_interval_s * G_USEC_PER_SEC;
    if (now - last_stats >= interval_us) {
      frame_stats_log(fl, (now - last_stats) * 1e-6);
      g_autofree char *st = frame_loop_status(fl);
      g_autofree char *msg = g_strdup_printf("STATUS=%s", st);
      stereod_notify(msg);
      last_stats = now;
      fl->last_stats_us = now;
    }

    if (work)
      continue;
    if (all_ended && fl->queued == 0 && !frame_groups_pending(fl))
      return true;   /* offline: every stream ended and everything was submitted */
    /* Nothing to do now. With every batch slot busy only the oldest batch can free one:
     * wait for its fence. With batches on the GPU and slots free, new frames could be
     * submitted at once: wait for the capture until that oldest batch is expected done
     * (its group's last GPU time after its submit; GL fences cannot wake a condition
     * variable), then look at the fences again. With nothing on the GPU, wait for frames. */
    int64_t deadline = MIN(next_wd, last_stats + interval_us);
    if (fl->queued >= fl->in_flight) {
      if (!frame_groups_collect(fl, true, error))
        return false;
    } else if (fl->queued > 0) {
      int64_t expect = frame_groups_expected_done(fl);
      now = g_get_monotonic_time();
      /* at least a tenth of a millisecond, so an estimate in the past does not spin */
      capture_notifier_wait(fl->notifier, seen, MIN(deadline, MAX(expect, now + 100)));
    } else if (fl->next_groups) {
      /* a reload is building: look again soon */
      capture_notifier_wait(fl->notifier, seen, MIN(deadline, g_get_monotonic_time() + 10000));
    } else {
      capture_notifier_wait(fl->notifier, seen, deadline);
    }
  }
  return true;
}

/* Every pair's rectification map, computed on a thread per pair (a 1920x1080 map is
 * 4 million calibration evaluations). */
typedef struct {
  const StereoCalib *calib;
  float *map;
} MapJob;

static gpointer
map_job_run(gpointer data)
{
  MapJob *j = data;
  stereo_rectify_map_compute(j->calib, j->map);
  return NULL;
}

static bool
setup_engines(FrameLoop *fl, GError **error)
{
  if (!frame_groups_build(fl, fl->config, false, &fl->groups, &fl->n_groups, error))
    return false;
  MapJob jobs[STEREOD_CONFIG_MAX_PAIRS] = { 0 };
  GThread *threads[STEREOD_CONFIG_MAX_PAIRS] = { 0 };
  for (int i = 0; i < fl->n_pairs; i++) {
    const StereodPairConfig *pc = &fl->config->pairs[i];
    if (!pc->has_calibration)
      continue;
    jobs[i] = (MapJob){ &pc->calib, g_new(float, 4 * (size_t)pc->width * pc->height) };
    threads[i] = g_thread_new("stereod-map", map_job_run, &jobs[i]);
  }
  bool ok = true;
  for (int k = 0; k < fl->n_groups; k++)
    for (int q = 0; q < fl->groups[k].n; q++) {
      int i = fl->groups[k].pairs[q];
      const StereodPairConfig *pc = &fl->config->pairs[i];
      fl->pairs[i].group = k;
      fl->pairs[i].pos = q;
      if (threads[i])
        g_thread_join(g_steal_pointer(&threads[i]));
      StereoPairParams pp = { .calib = pc->has_calibration ? &pc->calib : NULL,
                              .map = jobs[i].map, .min_magnitude = pc->params.min_magnitude };
      ok = ok && stereo_engine_set_pair(fl->groups[k].engine, q, &pp, error);
      g_free(jobs[i].map);
    }
  return ok;
}

static bool
loop_setup(FrameLoop *fl, GError **error)
{
  GpuContextParams gp = { .label = "stereod", .device = fl->config->device };
  if (!(fl->gpu = gpu_context_new(&gp, error)))
    return false;
  g_message("GPU: %s, %s (%s)", gpu_context_get_device(fl->gpu),
            gpu_context_get_renderer(fl->gpu), gpu_context_get_version(fl->gpu));
  fl->n_pairs = fl->config->n_pairs;
  fl->pairs = g_new0(LoopPair, fl->n_pairs);
  /* One upload buffer holds every pair's capture pool: a frame is copied once, from the
   * GstBuffer into the memory the GPU uploads it from. */
  size_t pool_at[STEREOD_CONFIG_MAX_PAIRS], total = 0;
  for (int i = 0; i < fl->n_pairs; i++) {
    CapturePairParams cp;
    frame_loop_capture_params(fl->config, &fl->config->pairs[i], &cp);
    pool_at[i] = total;
    total += (capture_pair_pool_bytes(&cp) + 63) & ~(size_t)63;
  }
  GpuBufferParams bp = { .label = "capture pools", .size = total, .usage = GPU_BUFFER_UPLOAD };
  if (!(fl->arena = gpu_buffer_new(fl->gpu, &bp, error)))
    return false;
  uint8_t *base = gpu_buffer_get_map(fl->arena);
  if (((uintptr_t)base & 63) != 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "the upload buffer's map is not 64-byte "
                "aligned");
    return false;
  }
  if (!setup_engines(fl, error) || !frame_groups_warm_up(fl->groups, fl->n_groups, error))
    return false;
  int cores = (int)g_get_num_processors();
  fl->publisher = frame_publisher_new(CLAMP(MIN(fl->n_pairs, cores / 2), 1, 16));
  for (int i = 0; i < fl->n_pairs; i++)
    if (!pair_open(fl, &fl->pairs[i], &fl->config->pairs[i], base + pool_at[i], error))
      return false;
  if (!frame_flow_open(fl, error))
    return false;
  fl->started_us = g_get_monotonic_time();
  for (int i = 0; i < fl->n_pairs; i++)
    fl->pairs[i].metrics = fl->metrics ? daemon_metrics_pair(fl->metrics, i) : NULL;
  if (fl->metrics)
    daemon_metrics_set_collector(fl->metrics, frame_stats_metrics_collect, fl);
  for (int i = 0; i < fl->n_pairs; i++) {
    const StereodPairConfig *pc = fl->pairs[i].cfg;
    g_autofree char *range = stereod_pair_max_disparity_note(pc);
    if (range && pc->max_disparity_clamped)
      g_warning("pair %s: %s", pc->name, range);
    else if (range)
      g_message("pair %s: %s", pc->name, range);
    g_autofree char *ground = stereod_pair_ground_note(pc);
    if (ground)
      g_message("pair %s: %s", pc->name, ground);
    capture_pair_start(fl->pairs[i].capture);
    g_message("pair %s: %dx%d, publishing to %s%s", fl->pairs[i].cfg->name,
              fl->pairs[i].cfg->width, fl->pairs[i].cfg->height,
              ring_writer_get_path(fl->pairs[i].ring),
              fl->pairs[i].flow ? " with the left camera's optical flow" : "");
  }
  g_message("%d pairs in %d engine groups, at most %d batches on the GPU", fl->n_pairs,
            fl->n_groups, fl->in_flight);
  fl->totals_since_us = g_get_monotonic_time();
  return true;
}

static gpointer
loop_thread(gpointer data)
{
  FrameLoop *fl = data;
  GError *error = NULL;
  bool ok = loop_setup(fl, &error);
  g_mutex_lock(&fl->lock);
  fl->started = true;
  if (!ok)
    fl->start_error = g_steal_pointer(&error);
  g_cond_signal(&fl->cond);
  g_mutex_unlock(&fl->lock);
  bool ended = false;
  if (ok && !loop_run(fl, &error)) {
    g_critical("GPU loop stopped: %s", error ? error->message : "unknown error");
    g_clear_error(&error);
    g_atomic_int_set(&fl->exit_status, 1);
    g_atomic_int_set(&fl->stop, 2);   /* 2: failed, the daemon exits with an error */
    if (fl->on_done)
      g_main_context_invoke(fl->main_context, fl->on_done, fl->on_done_data);
  } else if (ok && !g_atomic_int_get(&fl->stop)) {
    ended = true;                     /* the loop ended by itself: offline, all done */
  }
  /* what is on the GPU is collected and published, the held pairs go back */
  if (fl->groups && fl->publisher && !gpu_context_is_failed(fl->gpu) &&
      !frame_groups_drain(fl, &error)) {
    g_warning("GPU loop: %s while stopping, ignoring", error->message);
    g_clear_error(&error);
  }
  if (ended) {
    /* the stats lines of what the last interval published, then the summary: an offline
     * run shorter than stats_interval still says how its pairs ran */
    int64_t end_us = g_get_monotonic_time();
    if (end_us > fl->last_stats_us)
      frame_stats_log(fl, (double)(end_us - fl->last_stats_us) * 1e-6);
    frame_stats_offline_summary(fl);
    g_atomic_int_set(&fl->stop, 3);
    if (fl->on_done)
      g_main_context_invoke(fl->main_context, fl->on_done, fl->on_done_data);
  }
  frame_publisher_free(g_steal_pointer(&fl->publisher));
  if (fl->metrics)   /* before the captures go */
    daemon_metrics_set_collector(fl->metrics, NULL, NULL);
  for (int i = 0; fl->pairs && i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    for (int k = 0; k < p->n_held; k++)   /* a failed GPU: never uploaded */
      capture_pair_release(p->capture, p->held[k].left, p->held[k].right);
    p->n_held = 0;
    pair_close(p);
  }
  frame_flow_close(fl);
  frame_groups_free(g_steal_pointer(&fl->next_groups), fl->n_next_groups);
  frame_groups_free(g_steal_pointer(&fl->groups), fl->n_groups);
  gpu_buffer_free(g_steal_pointer(&fl->arena));
  gpu_context_free(fl->gpu);
  fl->gpu = NULL;
  return NULL;
}

FrameLoop *
frame_loop_start(const StereodConfig *config, GSourceFunc on_done, gpointer data,
                 GError **error)
{
  FrameLoop *fl = g_new0(FrameLoop, 1);
  fl->main_context = g_main_context_ref_thread_default();
  fl->on_done = on_done;
  fl->on_done_data = data;
  fl->timebase = capture_timebase_new();
  g_mutex_init(&fl->lock);
  g_mutex_init(&fl->stats_lock);
  g_cond_init(&fl->cond);
  fl->config = config;
  fl->in_flight = CLAMP(config->in_flight, 1, STEREO_MAX_IN_FLIGHT);
  fl->notifier = capture_notifier_new();
  /* before the GPU thread: a port that cannot be bound is a start-up failure */
  if (config->metrics && !(fl->metrics = frame_stats_metrics_start(config, error))) {
    capture_notifier_unref(fl->notifier);
    capture_timebase_unref(fl->timebase);
    g_main_context_unref(fl->main_context);
    g_mutex_clear(&fl->lock);
    g_mutex_clear(&fl->stats_lock);
    g_cond_clear(&fl->cond);
    g_free(fl);
    return NULL;
  }
  fl->thread = g_thread_new("stereod-gpu", loop_thread, fl);
  g_mutex_lock(&fl->lock);
  while (!fl->started)
    g_cond_wait(&fl->cond, &fl->lock);
  g_mutex_unlock(&fl->lock);
  if (fl->start_error) {
    g_propagate_error(error, g_steal_pointer(&fl->start_error));
    frame_loop_free(fl);
    return NULL;
  }
  return fl;
}

bool
frame_loop_failed(FrameLoop *fl)
{
  return g_atomic_int_get(&fl->stop) == 2;
}

int
frame_loop_exit_status(FrameLoop *fl)
{
  return g_atomic_int_get(&fl->exit_status);
}

void
frame_loop_free(FrameLoop *fl)
{
  if (!fl)
    return;
  if (!g_atomic_int_get(&fl->stop))
    g_atomic_int_set(&fl->stop, 1);
  capture_notifier_signal(fl->notifier);
  g_thread_join(fl->thread);
  daemon_metrics_free(fl->metrics);   /* after the loop: it updated the pairs' series */
  g_free(fl->pairs);
  capture_notifier_unref(fl->notifier);
  capture_timebase_unref(fl->timebase);
  stereod_config_free(fl->owned_config);
  stereod_config_free(fl->pending_config);
  stereod_config_free(fl->next_config);
  g_free(fl->status);
  g_mutex_clear(&fl->stats_lock);
  g_main_context_unref(fl->main_context);
  g_mutex_clear(&fl->lock);
  g_cond_clear(&fl->cond);
  g_free(fl);
}

void
frame_loop_reload(FrameLoop *fl, StereodConfig *config, guint32 engine_pairs)
{
  g_mutex_lock(&fl->lock);
  stereod_config_free(fl->pending_config);
  fl->pending_config = config;
  fl->pending_engines = engine_pairs;
  g_mutex_unlock(&fl->lock);
  capture_notifier_signal(fl->notifier);
}
