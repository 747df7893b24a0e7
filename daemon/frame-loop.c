/* frame-loop.c: the GPU thread of stereod (see frame-loop.h). */
#include "daemon/frame-loop.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "client/ring-writer.h"
#include "daemon/capture.h"
#include "daemon/metrics.h"
#include "common/notify.h"
#include "gpu/gpu.h"
#include "kernels/stereo.h"

#define MAX_LATENCIES 4096     /* latency samples kept per pair and stats interval */
#define MAX_IN_FLIGHT 8

typedef struct {
  const StereodPairConfig *cfg;
  StereoEngine *engine;
  RingWriter *ring;
  CapturePair *capture;
  /* submitted pairs, oldest first (the engine returns them in order) */
  uint64_t seq[MAX_IN_FLIGHT], capture_ns[MAX_IN_FLIGHT];
  int64_t submit_us[MAX_IN_FLIGHT];
  int head, count;
  uint64_t last_seq;
  /* since the last stats line */
  uint64_t in, out;
  double gpu_ms;
  double latency_ms[MAX_LATENCIES];
  int n_latency;
  CaptureStats last_capture;
  double out_fps;            /* of the last interval, for STATUS= */
  DaemonPairMetrics *metrics;   /* NULL without [daemon] metrics= */
} LoopPair;

struct FrameLoop {
  GThread *thread;
  GMutex lock;
  GCond cond;
  bool started;              /* start-up finished (successfully or not) */
  GError *start_error;
  gint stop;                 /* atomic */

  const StereodConfig *config;
  StereodConfig *owned_config;       /* a reloaded config the loop owns */
  StereodConfig *pending_config;     /* handed over by frame_loop_reload, under lock */
  guint32 pending_engines;

  GpuContext *gpu;
  CaptureNotifier *notifier;
  LoopPair *pairs;
  int n_pairs;
  int in_flight;
  char *status;              /* under lock */
  GMainContext *main_context;
  DaemonMetrics *metrics;    /* [daemon] metrics=: its HTTP thread reads only atomics */
  GSourceFunc on_failure;
  gpointer on_failure_data;
};

static uint64_t
realtime_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static StereoEngine *
engine_new(FrameLoop *fl, const StereodPairConfig *pc, GError **error)
{
  StereoEngineParams ep = {
    .label = pc->name,
    .params = pc->params,
    .output = STEREO_OUTPUT_S16,
    .in_flight = fl->in_flight,
    .calib = pc->has_calibration ? &pc->calib : NULL,
    .depth = (pc->outputs & STEREOD_OUTPUT_DEPTH) != 0,
  };
  return stereo_engine_new(fl->gpu, &ep, error);
}

static bool
pair_open(FrameLoop *fl, LoopPair *p, const StereodPairConfig *pc, GError **error)
{
  p->cfg = pc;
  if (!(p->engine = engine_new(fl, pc, error)))
    return false;
  RingWriterParams rp = {
    .name = pc->name,
    .width = (uint32_t)pc->width,
    .height = (uint32_t)pc->height,
    .formats = pc->outputs,
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
  CapturePairParams cp = {
    .name = pc->name,
    .left = pc->left,
    .right = pc->right,
    .width = pc->width,
    .height = pc->height,
    .tolerance_ns = (uint64_t)pc->tolerance_ns,
    .held_pairs = 1,
    .backoff_min_ms = (unsigned)pc->reconnect_min_ms,
    .backoff_max_ms = (unsigned)pc->reconnect_max_ms,
    .notifier = fl->notifier,
  };
  if (!(p->capture = capture_pair_new(&cp, error)))
    return false;
  return true;
}

static void
pair_close(LoopPair *p)
{
  capture_pair_free(p->capture);
  p->capture = NULL;
  stereo_engine_free(p->engine);
  p->engine = NULL;
  ring_writer_free(p->ring);   /* marks the ring closed: readers see the end */
  p->ring = NULL;
}

/* Takes the oldest finished pair of `p` (waiting for it if asked) and publishes it. */
static bool
pair_collect(LoopPair *p, bool wait, GError **error)
{
  StereoFrame f;
  if (p->count == 0 || !stereo_engine_collect(p->engine, wait, &f, error))
    return false;
  int h = p->head;
  p->head = (p->head + 1) % MAX_IN_FLIGHT;
  p->count--;
  const void *planes[STEREOD_RING_PLANE_COUNT] = { 0 };
  if (p->cfg->outputs & STEREOD_OUTPUT_DISPARITY)
    planes[STEREOD_RING_PLANE_DISPARITY] = f.disparity;
  if (p->cfg->outputs & STEREOD_OUTPUT_CONFIDENCE)
    planes[STEREOD_RING_PLANE_CONFIDENCE] = f.confidence;
  if (p->cfg->outputs & STEREOD_OUTPUT_DEPTH)
    planes[STEREOD_RING_PLANE_DEPTH] = f.depth;
  RingWriterMeta meta = {
    .frame_number = p->seq[h],
    .capture_ns = p->capture_ns[h],
    .flags = p->seq[h] != p->last_seq + 1 ? STEREOD_FRAME_FLAG_DISCONT : 0,
  };
  p->last_seq = p->seq[h];
  int r = ring_writer_publish(p->ring, &meta, planes);
  stereo_engine_release(p->engine, &f);
  if (r < 0) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "pair %s: publish failed: %s",
                p->cfg->name, g_strerror(-r));
    return false;
  }
  p->out++;
  double gpu_ms = 0.0;
  for (int s = 0; s < STEREO_STAGE_COUNT; s++)
    gpu_ms += f.stage_ms[s];
  p->gpu_ms += gpu_ms;
  uint64_t now = realtime_ns();
  if (p->n_latency < MAX_LATENCIES && now > p->capture_ns[h])
    p->latency_ms[p->n_latency++] = (double)(now - p->capture_ns[h]) * 1e-6;
  if (p->metrics)
    daemon_metrics_published(p->metrics,
                             now > p->capture_ns[h] ? (double)(now - p->capture_ns[h]) * 1e-9
                                                    : 0.0, gpu_ms * 1e-3);
  return true;
}

/* Submits the newest captured pair of `p` if its engine has room. */
static bool
pair_submit(FrameLoop *fl, LoopPair *p, GError **error)
{
  if (p->count >= fl->in_flight)
    return false;
  const CaptureFrame *l, *r;
  uint64_t cns, seq;
  if (!capture_pair_take(p->capture, &l, &r, &cns, &seq))
    return false;
  /* the left picture for stereod-web, only while one is asked for (metrics.h) */
  int64_t now_us = g_get_monotonic_time();
  if (p->metrics && daemon_metrics_left_wanted(p->metrics, now_us))
    daemon_metrics_left_offer(p->metrics, l->data, l->width, l->height, l->stride, now_us);
  /* submit copies the planes into the engine's upload buffer: the capture buffers go
   * back to the pool at once */
  bool ok = stereo_engine_submit(p->engine, l->data, l->stride, r->data, r->stride, seq, error);
  capture_pair_release(p->capture, l, r);
  if (!ok)
    return false;
  if (p->metrics)
    daemon_metrics_submitted(p->metrics);
  int t = (p->head + p->count) % MAX_IN_FLIGHT;
  p->seq[t] = seq;
  p->capture_ns[t] = cns;
  p->submit_us[t] = g_get_monotonic_time();
  p->count++;
  p->in++;
  return true;
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
quantile(double *v, int n, double q)
{
  if (n == 0)
    return NAN;
  int i = (int)ceil(q * n) - 1;
  return v[CLAMP(i, 0, n - 1)];
}

/* One line per pair with the rates and drops of the interval, and the STATUS= summary. */
static void
log_stats(FrameLoop *fl, double seconds)
{
  GString *status = g_string_new(NULL);
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    CaptureStats cs;
    capture_pair_get_stats(p->capture, &cs);
    const CaptureStats *o = &p->last_capture;
    uint64_t unpaired = cs.unpaired[0] + cs.unpaired[1] - o->unpaired[0] - o->unpaired[1];
    uint64_t corrupt = cs.corrupt[0] + cs.corrupt[1] - o->corrupt[0] - o->corrupt[1];
    uint64_t wrong = cs.wrong_size[0] + cs.wrong_size[1] - o->wrong_size[0] - o->wrong_size[1];
    uint64_t overwritten = cs.overwritten - o->overwritten;
    uint64_t reconnects = cs.reconnects - o->reconnects;
    double cam_fps = (double)(cs.frames[0] - o->frames[0]) / seconds;
    qsort(p->latency_ms, p->n_latency, sizeof(double), cmp_double);
    p->out_fps = p->out / seconds;
    g_message("pair %s: camera %.1f fps, in %.1f fps, out %.1f fps, dropped %" G_GUINT64_FORMAT
              " (unpaired %" G_GUINT64_FORMAT ", gpu behind %" G_GUINT64_FORMAT
              ", corrupt %" G_GUINT64_FORMAT ", wrong size %" G_GUINT64_FORMAT
              "), gpu %.2f ms, latency p50 %.1f ms p99 %.1f ms, reconnects %" G_GUINT64_FORMAT
              ", capture %s",
              p->cfg->name, cam_fps, p->in / seconds, p->out_fps,
              unpaired + overwritten + corrupt + wrong, unpaired, overwritten, corrupt, wrong,
              p->out ? p->gpu_ms / (double)p->out : 0.0, quantile(p->latency_ms, p->n_latency, 0.5),
              quantile(p->latency_ms, p->n_latency, 0.99), reconnects,
              capture_state_to_string(capture_pair_get_state(p->capture)));
    g_string_append_printf(status, "%s%s %s %.1f fps, %" G_GUINT64_FORMAT " dropped",
                           i ? ", " : "", p->cfg->name,
                           capture_state_to_string(capture_pair_get_state(p->capture)),
                           p->out_fps, unpaired + overwritten + corrupt + wrong);
    if (p->metrics)
      daemon_metrics_rates(p->metrics, cam_fps, p->in / seconds, p->out_fps);
    p->last_capture = cs;
    p->in = p->out = 0;
    p->gpu_ms = 0.0;
    p->n_latency = 0;
  }
  g_mutex_lock(&fl->lock);
  g_free(fl->status);
  fl->status = g_string_free(status, FALSE);
  g_mutex_unlock(&fl->lock);
}

/* The capture's counts and states into the metrics: on the HTTP thread before each
 * scrape (daemon_metrics_set_collector), from the captures' own atomic counters, so that
 * they stay current while this loop waits on the GPU. */
static void
metrics_collect(gpointer data)
{
  FrameLoop *fl = data;
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    CaptureStats cs;
    capture_pair_get_stats(p->capture, &cs);
    DaemonCaptureCounts c = {
      .camera = { cs.frames[0], cs.frames[1] },
      .corrupt = { cs.corrupt[0], cs.corrupt[1] },
      .paired = cs.pairs,
      .dropped = {
        [DAEMON_DROP_UNPAIRED] = cs.unpaired[0] + cs.unpaired[1],
        [DAEMON_DROP_GPU_BEHIND] = cs.overwritten,
        [DAEMON_DROP_CORRUPT] = cs.corrupt[0] + cs.corrupt[1],
        [DAEMON_DROP_WRONG_SIZE] = cs.wrong_size[0] + cs.wrong_size[1],
        [DAEMON_DROP_STARVED] = cs.starved[0] + cs.starved[1],
      },
      .reconnects = cs.reconnects,
    };
    daemon_metrics_capture(p->metrics, &c);
    daemon_metrics_state(p->metrics,
                         capture_state_to_string(capture_pair_get_state(p->capture)));
  }
}

static DaemonMetrics *
metrics_start(const StereodConfig *config, GError **error)
{
  const char *names[STEREOD_CONFIG_MAX_PAIRS];
  int widths[STEREOD_CONFIG_MAX_PAIRS], heights[STEREOD_CONFIG_MAX_PAIRS];
  for (int i = 0; i < config->n_pairs; i++) {
    names[i] = config->pairs[i].name;
    widths[i] = config->pairs[i].width;
    heights[i] = config->pairs[i].height;
  }
  const char *states[CAPTURE_STATE_COUNT + 1] = { NULL };
  for (int s = 0; s < CAPTURE_STATE_COUNT; s++)
    states[s] = capture_state_to_string((CaptureState)s);
  DaemonMetricsParams mp = { .address = config->metrics, .n_pairs = config->n_pairs,
                             .pairs = names, .widths = widths, .heights = heights,
                             .states = states };
  DaemonMetrics *m = daemon_metrics_new(&mp, error);
  if (m) {
    g_autofree char *url = daemon_metrics_get_url(m);
    g_message("metrics on %s", url);
  }
  return m;
}

/* A reload handed over by the main thread: recreate the engines whose filter changed. */
static bool
apply_reload(FrameLoop *fl, GError **error)
{
  g_mutex_lock(&fl->lock);
  StereodConfig *cfg = g_steal_pointer(&fl->pending_config);
  guint32 engines = fl->pending_engines;
  g_mutex_unlock(&fl->lock);
  if (!cfg)
    return true;
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    const StereodPairConfig *pc = stereod_config_find_pair(cfg, p->cfg->name);
    g_assert(pc != NULL);   /* a reload that changes the pair set needs a restart */
    int idx = (int)(pc - cfg->pairs);
    if (engines & (1u << idx)) {
      /* finish what is in flight with the old engine, then swap */
      while (p->count > 0)
        if (!pair_collect(p, true, error))
          return false;
      StereoEngine *e = engine_new(fl, pc, error);
      if (!e)
        return false;
      stereo_engine_free(p->engine);
      p->engine = e;
      g_message("pair %s: filter parameters reloaded", pc->name);
    }
    p->cfg = pc;
  }
  stereod_config_free(fl->owned_config);
  fl->owned_config = cfg;
  fl->config = cfg;
  return true;
}

static bool
loop_run(FrameLoop *fl, GError **error)
{
  int64_t wd_us = stereod_watchdog_interval_us();
  int64_t now = g_get_monotonic_time();
  int64_t next_wd = wd_us > 0 ? now + wd_us / 2 : G_MAXINT64;
  int64_t last_stats = now;
  int rr = 0;
  while (!g_atomic_int_get(&fl->stop)) {
    if (!apply_reload(fl, error))
      return false;
    uint64_t seen = capture_notifier_get(fl->notifier);
    bool work = false;
    for (int i = 0; i < fl->n_pairs; i++)
      while (pair_collect(&fl->pairs[i], false, error))
        work = true;
    if (*error)
      return false;
    for (int k = 0; k < fl->n_pairs; k++) {
      if (pair_submit(fl, &fl->pairs[(rr + k) % fl->n_pairs], error))
        work = true;
      else if (*error)
        return false;
    }
    rr = (rr + 1) % fl->n_pairs;

    now = g_get_monotonic_time();
    if (now >= next_wd) {
      stereod_notify("WATCHDOG=1");
      next_wd = now + wd_us / 2;
    }
    int64_t interval_us = (int64_t)fl->config->stats_interval_s * G_USEC_PER_SEC;
    if (now - last_stats >= interval_us) {
      log_stats(fl, (now - last_stats) * 1e-6);
      g_autofree char *st = frame_loop_status(fl);
      g_autofree char *msg = g_strdup_printf("STATUS=%s", st);
      stereod_notify(msg);
      last_stats = now;
    }

    if (work)
      continue;
    /* Nothing new: wait for the oldest result on the GPU, or for the next captured pair. */
    LoopPair *oldest = NULL;
    for (int i = 0; i < fl->n_pairs; i++) {
      LoopPair *p = &fl->pairs[i];
      if (p->count && (!oldest || p->submit_us[p->head] < oldest->submit_us[oldest->head]))
        oldest = p;
    }
    if (oldest) {
      if (!pair_collect(oldest, true, error))
        return false;
    } else {
      int64_t deadline = MIN(next_wd, last_stats + interval_us);
      capture_notifier_wait(fl->notifier, seen, deadline);
    }
  }
  return true;
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
  for (int i = 0; i < fl->n_pairs; i++) {
    if (!pair_open(fl, &fl->pairs[i], &fl->config->pairs[i], error))
      return false;
    fl->pairs[i].metrics = fl->metrics ? daemon_metrics_pair(fl->metrics, i) : NULL;
  }
  if (fl->metrics)
    daemon_metrics_set_collector(fl->metrics, metrics_collect, fl);
  for (int i = 0; i < fl->n_pairs; i++) {
    capture_pair_start(fl->pairs[i].capture);
    g_message("pair %s: %dx%d, publishing to %s", fl->pairs[i].cfg->name,
              fl->pairs[i].cfg->width, fl->pairs[i].cfg->height,
              ring_writer_get_path(fl->pairs[i].ring));
  }
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
  if (ok && !loop_run(fl, &error)) {
    g_critical("GPU loop stopped: %s", error ? error->message : "unknown error");
    g_clear_error(&error);
    g_atomic_int_set(&fl->stop, 2);   /* 2: failed, the daemon exits with an error */
    if (fl->on_failure)
      g_main_context_invoke(fl->main_context, fl->on_failure, fl->on_failure_data);
  }
  if (fl->metrics)   /* before the captures go */
    daemon_metrics_set_collector(fl->metrics, NULL, NULL);
  for (int i = 0; fl->pairs && i < fl->n_pairs; i++)
    pair_close(&fl->pairs[i]);
  gpu_context_free(fl->gpu);
  fl->gpu = NULL;
  return NULL;
}

FrameLoop *
frame_loop_start(const StereodConfig *config, GSourceFunc on_failure, gpointer data,
                 GError **error)
{
  FrameLoop *fl = g_new0(FrameLoop, 1);
  fl->main_context = g_main_context_ref_thread_default();
  fl->on_failure = on_failure;
  fl->on_failure_data = data;
  g_mutex_init(&fl->lock);
  g_cond_init(&fl->cond);
  fl->config = config;
  fl->in_flight = CLAMP(config->in_flight, 1, MAX_IN_FLIGHT);
  fl->notifier = capture_notifier_new();
  /* before the GPU thread: a port that cannot be bound is a start-up failure */
  if (config->metrics && !(fl->metrics = metrics_start(config, error))) {
    capture_notifier_unref(fl->notifier);
    g_main_context_unref(fl->main_context);
    g_mutex_clear(&fl->lock);
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
  stereod_config_free(fl->owned_config);
  stereod_config_free(fl->pending_config);
  g_free(fl->status);
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

char *
frame_loop_status(FrameLoop *fl)
{
  g_mutex_lock(&fl->lock);
  char *s = g_strdup(fl->status ? fl->status : "starting");
  g_mutex_unlock(&fl->lock);
  return s;
}
