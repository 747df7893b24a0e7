/* frame-stats.c: what the GPU thread reports (see frame-loop.h): the stats line per pair
 * and interval with the capture's health warnings and STATUS=, the offline summary, the
 * Prometheus metrics' collector, and the totals of frame_loop_get_stats(). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/frame-loop-private.h"

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

static bool
running_through(CaptureState before, CaptureState now)
{
  return before == CAPTURE_STATE_RUNNING && now == CAPTURE_STATE_RUNNING;
}

/* One line per pair with the rates and drops of the interval, the health warnings (on a
 * change), the offline progress, and the STATUS= summary. */
void
frame_stats_log(FrameLoop *fl, double seconds)
{
  GString *status = g_string_new(NULL);
  GString *progress = g_string_new(NULL);
  bool offline = fl->config->offline;
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    CaptureStats cs;
    capture_pair_get_stats(p->capture, &cs);
    CaptureState state = capture_pair_get_state(p->capture);
    const CaptureStats *o = &p->last_capture;
    uint64_t unpaired = cs.unpaired[0] + cs.unpaired[1] - o->unpaired[0] - o->unpaired[1];
    uint64_t untimed = cs.untimed[0] + cs.untimed[1] - o->untimed[0] - o->untimed[1];
    uint64_t corrupt = cs.corrupt[0] + cs.corrupt[1] - o->corrupt[0] - o->corrupt[1];
    uint64_t wrong = cs.wrong_size[0] + cs.wrong_size[1] - o->wrong_size[0] - o->wrong_size[1];
    uint64_t overwritten = cs.overwritten - o->overwritten;
    uint64_t backwards = cs.backwards - o->backwards;
    uint64_t reconnects = cs.reconnects - o->reconnects;
    uint64_t stalls = cs.stalls - o->stalls;
    uint64_t frames = MAX(cs.frames[0] - o->frames[0], cs.frames[1] - o->frames[1]);
    double paired = frames ? 100.0 * (double)(cs.pairs - o->pairs) / (double)frames : 0.0;
    g_mutex_lock(&fl->stats_lock);   /* the publishers count in, out, gpu_ms, latency */
    qsort(p->latency_ms, p->n_latency, sizeof(double), cmp_double);
    p->out_fps = p->out / seconds;
    g_message("pair %s: capture %s, clock %s/%s, camera %.1f/%.1f fps, paired %.0f %%, "
              "in %.1f fps, out %.1f fps, dropped %" G_GUINT64_FORMAT " (unpaired %"
              G_GUINT64_FORMAT ", gpu behind %" G_GUINT64_FORMAT ", untimed %" G_GUINT64_FORMAT
              ", backwards %" G_GUINT64_FORMAT ", corrupt %" G_GUINT64_FORMAT ", wrong size %"
              G_GUINT64_FORMAT "), gpu %.2f ms, latency p50 %.1f ms p99 %.1f ms, reconnects %"
              G_GUINT64_FORMAT ", stalls %" G_GUINT64_FORMAT,
              p->cfg->name, capture_state_to_string(state),
              capture_clock_to_string(capture_pair_get_clock(p->capture, CAPTURE_SIDE_LEFT)),
              capture_clock_to_string(capture_pair_get_clock(p->capture, CAPTURE_SIDE_RIGHT)),
              (double)(cs.frames[0] - o->frames[0]) / seconds,
              (double)(cs.frames[1] - o->frames[1]) / seconds, paired, p->in / seconds,
              p->out_fps, unpaired + untimed + overwritten + backwards + corrupt + wrong,
              unpaired, overwritten, untimed, backwards, corrupt, wrong,
              p->out ? p->gpu_ms / (double)p->out : 0.0,
              quantile(p->latency_ms, p->n_latency, 0.5),
              quantile(p->latency_ms, p->n_latency, 0.99), reconnects, stalls);
    CaptureHealthMessage msgs[CAPTURE_HEALTH_MAX_MESSAGES];
    bool judge_rate = !offline && running_through(p->last_state, state) &&
                      cs.failures == o->failures;
    int n = capture_health_update(&p->health, p->cfg->name, o, &cs, seconds, p->cfg->fps,
                                  (uint64_t)p->cfg->tolerance_ns, judge_rate, msgs);
    for (int k = 0; k < n; k++) {
      g_log(G_LOG_DOMAIN, msgs[k].level, "%s", msgs[k].text);
      g_free(msgs[k].text);
    }
    g_string_append_printf(status, "%s%s %s %.1f fps, %" G_GUINT64_FORMAT " dropped",
                           i ? ", " : "", p->cfg->name, capture_state_to_string(state),
                           p->out_fps, unpaired + untimed + overwritten + backwards + corrupt +
                           wrong);
    if (p->metrics)
      daemon_metrics_rates(p->metrics, (double)(cs.frames[0] - o->frames[0]) / seconds,
                           p->in / seconds, p->out_fps);
    if (offline) {
      int64_t pos, dur;
      capture_pair_get_progress(p->capture, &pos, &dur);
      g_string_append_printf(progress, "%s%s %" G_GUINT64_FORMAT " pairs", i ? ", " : "",
                             p->cfg->name, p->published);
      if (pos >= 0 && dur > 0)
        g_string_append_printf(progress, " (%.1f of %.1f s, %.0f %%)", pos * 1e-9, dur * 1e-9,
                               100.0 * (double)pos / (double)dur);
      else if (pos >= 0)
        g_string_append_printf(progress, " (%.1f s)", pos * 1e-9);
      g_string_append_printf(progress, " %s", capture_state_to_string(state));
    }
    p->last_capture = cs;
    p->last_state = state;
    p->in = p->out = 0;
    p->gpu_ms = 0.0;
    p->n_latency = 0;
    g_mutex_unlock(&fl->stats_lock);
  }
  if (offline)
    g_message("offline: %s", progress->str);
  g_string_free(progress, TRUE);
  g_mutex_lock(&fl->lock);
  g_free(fl->status);
  fl->status = g_string_free(status, FALSE);
  g_mutex_unlock(&fl->lock);
}

/* The capture's counts and states into the metrics: on the HTTP thread before each
 * scrape (daemon_metrics_set_collector), from the captures' own atomic counters, so that
 * they stay current while this loop waits on the GPU. */
void
frame_stats_metrics_collect(gpointer data)
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
        [DAEMON_DROP_UNTIMED] = cs.untimed[0] + cs.untimed[1],
        [DAEMON_DROP_BACKWARDS] = cs.backwards,
        [DAEMON_DROP_STARVED] = cs.starved[0] + cs.starved[1],
      },
      .reconnects = cs.reconnects,
      .stalls = cs.stalls,
    };
    daemon_metrics_capture(p->metrics, &c);
    daemon_metrics_state(p->metrics,
                         capture_state_to_string(capture_pair_get_state(p->capture)));
  }
}

DaemonMetrics *
frame_stats_metrics_start(const StereodConfig *config, GError **error)
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

/* Offline, at the end (everything published): what was published, and whether a pair
 * failed. */
void
frame_stats_offline_summary(FrameLoop *fl)
{
  GString *s = g_string_new(NULL);
  bool failed = false;
  g_mutex_lock(&fl->stats_lock);
  for (int i = 0; i < fl->n_pairs; i++) {
    LoopPair *p = &fl->pairs[i];
    CaptureState st = capture_pair_get_state(p->capture);
    failed |= st == CAPTURE_STATE_FAILED;
    g_string_append_printf(s, "%s%s %" G_GUINT64_FORMAT " pairs%s", i ? ", " : "",
                           p->cfg->name, p->published,
                           st == CAPTURE_STATE_FAILED ? " (failed)" : "");
  }
  g_mutex_unlock(&fl->stats_lock);
  double secs = (double)(g_get_monotonic_time() - fl->started_us) * 1e-6;
  g_message("offline: every stream ended after %.1f s: %s published", secs, s->str);
  g_string_free(s, TRUE);
  g_atomic_int_set(&fl->exit_status, failed ? 1 : 0);
}

void
frame_loop_reset_stats(FrameLoop *fl)
{
  g_return_if_fail(fl);
  g_mutex_lock(&fl->stats_lock);
  fl->totals_since_us = g_get_monotonic_time();
  fl->total_submitted = fl->total_published = fl->total_batches = 0;
  fl->total_gpu_ms = fl->total_latency_max_ms = 0.0;
  memset(fl->latency_hist, 0, sizeof fl->latency_hist);
  for (int i = 0; i < fl->n_pairs; i++)
    capture_pair_get_stats(fl->pairs[i].capture, &fl->capture_base[i]);
  g_mutex_unlock(&fl->stats_lock);
}

static double
hist_quantile(const uint32_t *hist, uint64_t n, double q)
{
  if (n == 0)
    return NAN;
  uint64_t want = (uint64_t)ceil(q * (double)n), seen = 0;
  for (int i = 0; i < LATENCY_BINS; i++) {
    seen += hist[i];
    if (seen >= want)
      return LATENCY_BIN0_MS * pow(1.01, i + 1);   /* the bin's upper end */
  }
  return LATENCY_BIN0_MS * pow(1.01, LATENCY_BINS);
}

void
frame_loop_get_stats(FrameLoop *fl, FrameLoopStats *st)
{
  g_return_if_fail(fl && st);
  *st = (FrameLoopStats){ 0 };
  g_mutex_lock(&fl->stats_lock);
  st->seconds = (g_get_monotonic_time() - fl->totals_since_us) * 1e-6;
  for (int i = 0; i < fl->n_pairs; i++) {
    CaptureStats cs;
    capture_pair_get_stats(fl->pairs[i].capture, &cs);
    const CaptureStats *o = &fl->capture_base[i];
    st->captured += cs.pairs - o->pairs;
    st->dropped += cs.overwritten - o->overwritten;
    st->starved += cs.starved[0] - o->starved[0] + cs.starved[1] - o->starved[1];
    st->unpaired += cs.unpaired[0] - o->unpaired[0] + cs.unpaired[1] - o->unpaired[1];
  }
  st->submitted = fl->total_submitted;
  st->published = fl->total_published;
  st->batches = fl->total_batches;
  st->gpu_ms = fl->total_gpu_ms;
  /* a quantile is its bin's upper end, at most the largest sample */
  st->latency_p50_ms = MIN(hist_quantile(fl->latency_hist, fl->total_published, 0.5),
                           fl->total_latency_max_ms);
  st->latency_p99_ms = MIN(hist_quantile(fl->latency_hist, fl->total_published, 0.99),
                           fl->total_latency_max_ms);
  st->latency_max_ms = fl->total_latency_max_ms;
  g_mutex_unlock(&fl->stats_lock);
}

char *
frame_loop_status(FrameLoop *fl)
{
  g_mutex_lock(&fl->lock);
  char *s = g_strdup(fl->status ? fl->status : "starting");
  g_mutex_unlock(&fl->lock);
  return s;
}
