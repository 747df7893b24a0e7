/* capture.c: the CapturePair object: its pipeline runs, failures and reconnects, the
 * health timer, the end of offline streams, and the public API (see capture.h for the
 * contract).
 *
 * Locking: `lock` guards the free lists, the matcher, the mailbox, `run`, the replay and
 * arrival clocks, the sender reports and the state transitions; `cond` (with `lock`) is
 * what offline streaming threads wait on. Streaming threads hold `lock` only to take a
 * buffer, to read a clock and to hand a converted frame to the matcher; conversion runs
 * unlocked. The control thread owns `pipeline` and the sources on `ctx`; it never holds
 * `lock` while changing the pipeline's state (that waits for the streaming threads, which
 * may want `lock`), and it wakes every waiting streaming thread (run 0, broadcast) before
 * it does.
 *
 * Runs: each pipeline built gets a fresh run number. A failure sets `run` to 0 under the
 * lock, so frames still in flight from the dying pipeline are returned to the pool
 * instead of being paired, and cannot flip the state back to RUNNING.
 */
#include "daemon/capture-pair.h"

#include <string.h>

G_DEFINE_QUARK(stereod-capture-error-quark, capture_error)

const char *const capture_side_names[CAPTURE_SIDE_COUNT] = { "left", "right" };

const char *
capture_state_to_string(CaptureState state)
{
  static const char *const names[CAPTURE_STATE_COUNT] = {
    "stopped", "starting", "running", "reconnecting", "stalled", "ended", "failed",
  };
  return state < CAPTURE_STATE_COUNT ? names[state] : "invalid";
}

const char *
capture_clock_to_string(CaptureClockMode clock)
{
  static const char *const names[CAPTURE_CLOCK_COUNT] = {
    "auto", "sender", "arrival", "replay",
  };
  return clock < CAPTURE_CLOCK_COUNT ? names[clock] : "invalid";
}

/* State changes wake the consumer (it ends an offline run when every pair ended). */
static void
set_state(CapturePair *p, CaptureState state)
{
  atomic_store(&p->state, state);
  if (p->notifier)
    capture_notifier_signal(p->notifier);
}

/* ---------------------------------------------------------------- pipeline */

/* Builds a pipeline for a new run (nothing runs yet). Control thread, or capture_pair_new. */
static bool
pipeline_build(CapturePair *p, GError **error)
{
  g_assert(!p->pipeline);
  GstElement *pipe = gst_pipeline_new(p->name);
  /* Offline: no clock, so that nothing in the description waits for real time. */
  if (p->mode == CAPTURE_MODE_OFFLINE)
    gst_pipeline_use_clock(GST_PIPELINE(pipe), NULL);
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    GError *local = NULL;
    if (!capture_side_build(p, pipe, side, true, &local)) {
      if (local->code == CAPTURE_ERROR_DESCRIPTION)
        g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION, "pair %s: %s source: %s",
                    p->name, capture_side_names[side], local->message);
      else
        g_set_error(error, CAPTURE_ERROR, local->code, "pair %s: %s", p->name, local->message);
      g_error_free(local);
      for (int s = 0; s < CAPTURE_SIDE_COUNT; s++)
        p->side[s].bin = p->side[s].queue = NULL;
      gst_object_unref(pipe);
      return false;
    }
  }
  g_mutex_lock(&p->lock);
  p->run = ++p->next_run;
  capture_stream_new_run(p);
  g_mutex_unlock(&p->lock);
  capture_pipeline_hook(p, pipe);
  p->gst_warnings = 0;   /* the last text stays: a retry's same warning is not repeated */
  p->pipeline = pipe;
  return true;
}

/* Ends the run (`lock` held): frames in flight are no longer paired, and offline
 * streaming threads waiting on back-pressure return. */
static void
end_run_locked(CapturePair *p)
{
  p->run = 0;
  g_cond_broadcast(&p->cond);
}

/* Stops and drops the pipeline; frames waiting for a partner go back to the pool (counted
 * as unpaired). The caller has ended the run first. */
static void
pipeline_teardown(CapturePair *p)
{
  if (p->bus_source) {
    g_source_destroy(p->bus_source);
    g_clear_pointer(&p->bus_source, g_source_unref);
  }
  if (p->pipeline) {
    gst_element_set_state(p->pipeline, GST_STATE_NULL);
    g_clear_pointer(&p->pipeline, gst_object_unref);
  }
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++)
    p->side[s].bin = p->side[s].queue = NULL;
  CaptureBuf *out[2 * CAPTURE_MAX_PENDING];
  g_mutex_lock(&p->lock);
  int n = capture_matcher_flush(&p->matcher, out);
  for (int i = 0; i < n; i++) {
    COUNT(p, unpaired[out[i]->side]);
    capture_pool_put(p, out[i]);
  }
  g_mutex_unlock(&p->lock);
}

static void pair_play(CapturePair *p);

static gboolean
on_retry(gpointer data)
{
  CapturePair *p = data;
  g_clear_pointer(&p->retry_source, g_source_unref);
  COUNT(p, reconnects);
  pair_play(p);
  return G_SOURCE_REMOVE;
}

/* Control thread: a source failed, stalled, or a restart did. Live: reconnect after the
 * backoff; offline: the pair is FAILED. */
static void
pair_fail(CapturePair *p, const char *why, bool stalled)
{
  if (p->stopping)
    return;
  COUNT(p, failures);
  if (stalled)
    COUNT(p, stalls);
  g_mutex_lock(&p->lock);
  CaptureState old = atomic_load(&p->state);
  end_run_locked(p);
  g_mutex_unlock(&p->lock);

  if (p->mode == CAPTURE_MODE_OFFLINE) {
    g_warning("pair %s: source failed: %s; offline, so the pair ends here", p->name, why);
    pipeline_teardown(p);
    set_state(p, CAPTURE_STATE_FAILED);
    return;
  }
  set_state(p, stalled ? CAPTURE_STATE_STALLED
                       : old == CAPTURE_STATE_STALLED ? old : CAPTURE_STATE_RECONNECTING);

  int64_t ran_us = g_get_monotonic_time() - atomic_load(&p->running_since_us);
  if (old == CAPTURE_STATE_RUNNING && ran_us >= (int64_t)p->backoff_reset * 1000)
    p->backoff_next = p->backoff_min;
  unsigned delay = p->backoff_next;
  p->backoff_next = (unsigned)MIN((uint64_t)p->backoff_max, 2 * (uint64_t)delay);

  if (old == CAPTURE_STATE_STARTING || old == CAPTURE_STATE_RUNNING)
    g_warning("pair %s: %s%s; reconnecting in %u ms", p->name,
              stalled ? "" : "source failed: ", why, delay);
  else
    g_debug("pair %s: restart failed: %s; retrying in %u ms", p->name, why, delay);

  pipeline_teardown(p);
  g_assert(!p->retry_source);
  p->retry_source = g_timeout_source_new(delay);
  g_source_set_callback(p->retry_source, on_retry, p, NULL);
  g_source_attach(p->retry_source, p->ctx);
}

/* Offline, control thread: both sides reached their end of stream. */
static void
pair_end(CapturePair *p)
{
  g_mutex_lock(&p->lock);
  end_run_locked(p);
  g_mutex_unlock(&p->lock);
  pipeline_teardown(p);
  g_message("pair %s: end of stream after %" G_GUINT64_FORMAT " pairs", p->name,
            atomic_load(&p->stats.pairs));
  set_state(p, CAPTURE_STATE_ENDED);
}

/* "left: videotestsrc0: Internal data stream error (streaming stopped, reason
 * not-negotiated (-4))": the element's message plus the last line of its debug text,
 * which is where GStreamer puts the reason. */
static char *
message_text(CapturePair *p, GstMessage *msg)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *debug = NULL;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR)
    gst_message_parse_error(msg, &err, &debug);
  else
    gst_message_parse_warning(msg, &err, &debug);
  const char *reason = debug ? strrchr(debug, '\n') : NULL;
  reason = reason ? reason + 1 : NULL;
  return g_strdup_printf("%s: %s: %s%s%s%s", capture_message_side(p, msg),
                         GST_MESSAGE_SRC_NAME(msg), err ? err->message : "unknown error",
                         reason && *reason ? " (" : "", reason && *reason ? reason : "",
                         reason && *reason ? ")" : "");
}

/* GStreamer warnings: logged, the first CAPTURE_MAX_GST_WARNINGS different ones of a
 * run; the rest at debug level. */
static void
log_gst_warning(CapturePair *p, GstMessage *msg)
{
  g_autofree char *text = message_text(p, msg);
  if (p->last_gst_warning && strcmp(p->last_gst_warning, text) == 0) {
    g_debug("pair %s: GStreamer warning: %s", p->name, text);
    return;
  }
  if (p->gst_warnings < CAPTURE_MAX_GST_WARNINGS)
    g_warning("pair %s: GStreamer warning: %s%s", p->name, text,
              ++p->gst_warnings == CAPTURE_MAX_GST_WARNINGS
                ? " (further warnings of this run at debug level)" : "");
  else
    g_debug("pair %s: GStreamer warning: %s", p->name, text);
  g_free(p->last_gst_warning);
  p->last_gst_warning = g_steal_pointer(&text);
}

static bool
both_ended(CapturePair *p)
{
  return atomic_load(&p->side[0].ended) && atomic_load(&p->side[1].ended);
}

static gboolean
on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
  CapturePair *p = data;
  g_autofree char *why = NULL;
  bool offline = p->mode == CAPTURE_MODE_OFFLINE;
  switch (GST_MESSAGE_TYPE(msg)) {
  case GST_MESSAGE_ERROR:
    why = message_text(p, msg);
    break;
  case GST_MESSAGE_EOS:
    if (offline) {
      pair_end(p);   /* destroys this source */
      return G_SOURCE_REMOVE;
    }
    why = g_strdup("end of stream");
    break;
  case GST_MESSAGE_APPLICATION: {
    const GstStructure *st = gst_message_get_structure(msg);
    int side = 0;
    if (!st || !gst_structure_has_name(st, CAPTURE_EOS_MESSAGE) ||
        !gst_structure_get_int(st, "side", &side))
      break;
    if (offline) {
      if (!both_ended(p))
        break;
      pair_end(p);
      return G_SOURCE_REMOVE;
    }
    why = g_strdup_printf("%s: end of stream", capture_side_names[side != 0]);
    break;
  }
  case GST_MESSAGE_WARNING:
    log_gst_warning(p, msg);
    break;
  default:
    break;
  }
  if (!why)
    return G_SOURCE_CONTINUE;
  pair_fail(p, why, false);  /* destroys this source */
  return G_SOURCE_REMOVE;
}

/* The health timer (control thread): a side that sent nothing for stall_ms, or no first
 * frame within start_timeout_ms of the run's start. A side waiting on offline
 * back-pressure, or past its end of stream, is neither. */
static gboolean
on_health(gpointer data)
{
  CapturePair *p = data;
  if (!p->pipeline)
    return G_SOURCE_CONTINUE;
  int64_t now = g_get_monotonic_time();
  for (int i = 0; i < CAPTURE_SIDE_COUNT; i++) {
    Side *s = &p->side[i];
    if (atomic_load(&s->ended) || atomic_load(&s->blocked) > 0)
      continue;
    /* frames waiting in the tail's queue after the first one: the camera delivers, this
     * machine is slow. Before the first one they do not excuse the start timeout: a sink
     * that has not taken a frame in that time is stuck (its pipeline never reached
     * PLAYING), and a new run is what frees it. */
    int64_t last = atomic_load(&s->last_frame_us);
    guint queued = 0;
    if (last && s->queue)
      g_object_get(s->queue, "current-level-buffers", &queued, NULL);
    if (queued > 0)
      continue;
    g_autofree char *why = NULL;
    bool stalled = false;
    if (!last && now - p->run_started_us > (int64_t)p->start_timeout_ms * 1000) {
      why = g_strdup_printf("%s: no frame within %u ms of the start", capture_side_names[i],
                            p->start_timeout_ms);
    } else if (last && now - last > (int64_t)p->stall_ms * 1000) {
      why = g_strdup_printf("%s camera stalled: no frame for %" G_GINT64_FORMAT " ms",
                            capture_side_names[i], (now - last) / 1000);
      stalled = true;
    }
    if (why) {
      pair_fail(p, why, stalled);
      break;
    }
  }
  return G_SOURCE_CONTINUE;
}

/* Control thread: builds the pipeline when there is none and sets it playing. */
static void
pair_play(CapturePair *p)
{
  if (!p->pipeline) {
    g_autoptr(GError) err = NULL;
    if (!pipeline_build(p, &err)) {
      pair_fail(p, err->message, false);
      return;
    }
  }
  GstBus *bus = gst_element_get_bus(p->pipeline);
  p->bus_source = gst_bus_create_watch(bus);
  g_source_set_callback(p->bus_source, G_SOURCE_FUNC(on_bus), p, NULL);
  g_source_attach(p->bus_source, p->ctx);
  p->run_started_us = g_get_monotonic_time();
  if (gst_element_set_state(p->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    /* The element that refused usually posted an ERROR saying why. */
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    g_autofree char *why = msg ? message_text(p, msg)
                               : g_strdup("the pipeline refused to start");
    g_clear_pointer(&msg, gst_message_unref);
    gst_object_unref(bus);
    pair_fail(p, why, false);
    return;
  }
  gst_object_unref(bus);
}

/* ---------------------------------------------------------------- control thread */

static gpointer
control_thread(gpointer data)
{
  CapturePair *p = data;
  g_main_context_push_thread_default(p->ctx);
  unsigned tick = CLAMP(MIN(p->stall_ms, p->start_timeout_ms) / 4, 10, 250);
  p->health_source = g_timeout_source_new(tick);
  g_source_set_callback(p->health_source, on_health, p, NULL);
  g_source_attach(p->health_source, p->ctx);
  pair_play(p);
  g_main_loop_run(p->loop);
  g_main_context_pop_thread_default(p->ctx);
  return NULL;
}

static gboolean
on_stop(gpointer data)
{
  CapturePair *p = data;
  p->stopping = true;
  g_mutex_lock(&p->lock);
  end_run_locked(p);
  atomic_store(&p->state, CAPTURE_STATE_STOPPED);
  g_mutex_unlock(&p->lock);
  GSource **sources[] = { &p->retry_source, &p->health_source };
  for (guint i = 0; i < G_N_ELEMENTS(sources); i++)
    if (*sources[i]) {
      g_source_destroy(*sources[i]);
      g_clear_pointer(sources[i], g_source_unref);
    }
  pipeline_teardown(p);
  g_main_loop_quit(p->loop);
  return G_SOURCE_REMOVE;
}

/* ---------------------------------------------------------------- public */

static bool
check_params(const CapturePairParams *prm, GError **error)
{
  const char *bad = NULL;
  if (!prm->name || !*prm->name)
    bad = "a pair needs a name";
  else if (!prm->left || !prm->right)
    bad = "both source descriptions are needed";
  else if (prm->width < 1 || prm->width > CAPTURE_MAX_SIDE || prm->height < 1 ||
           prm->height > CAPTURE_MAX_SIDE)
    bad = "width and height must be 1..16384";
  else if (prm->max_pending < 0 || prm->max_pending > CAPTURE_MAX_PENDING)
    bad = "max_pending must be 0..8";
  else if (prm->held_pairs < 0 || prm->held_pairs > 8)
    bad = "held_pairs must be 0..8";
  else if (!(prm->fps >= 0.0 && prm->fps <= 1000.0))
    bad = "fps must be 0..1000";
  else if (prm->mode >= CAPTURE_MODE_COUNT || prm->clock >= CAPTURE_CLOCK_COUNT)
    bad = "unknown mode or clock";
  if (bad)
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_INVALID, "pair %s: %s",
                prm->name ? prm->name : "(null)", bad);
  return !bad;
}

/* The parameters' defaults (capture.h), for capture_pair_new and capture_check. */
static void
apply_params(CapturePair *p, const CapturePairParams *prm)
{
  p->name = g_strdup(prm->name);
  p->desc[CAPTURE_SIDE_LEFT] = g_strdup(prm->left);
  p->desc[CAPTURE_SIDE_RIGHT] = g_strdup(prm->right);
  p->width = prm->width;
  p->height = prm->height;
  p->stride = ((size_t)prm->width + 3) & ~(size_t)3;
  p->fps = prm->fps > 0.0 ? prm->fps : 25.0;
  p->period_ns = (uint64_t)(1e9 / p->fps + 0.5);
  p->tolerance_ns = prm->tolerance_ns ? prm->tolerance_ns : 5000000;
  p->max_pending = prm->max_pending ? prm->max_pending : 2;
  p->held_pairs = prm->held_pairs ? prm->held_pairs : 1;
  p->mode = prm->mode;
  p->clock = prm->clock;
  p->stall_ms = prm->stall_ms ? prm->stall_ms
                              : (unsigned)MAX(100.0, 3000.0 / p->fps + 0.5);
  p->start_timeout_ms = prm->start_timeout_ms ? prm->start_timeout_ms : 10000;
  /* Offline nothing is real time: a stall is a hang, not a late frame (a decoder that a
   * loaded machine slows down must not end the replay). */
  if (p->mode == CAPTURE_MODE_OFFLINE)
    p->stall_ms = MAX(p->stall_ms, p->start_timeout_ms);
  p->backoff_min = prm->backoff_min_ms ? prm->backoff_min_ms : 500;
  p->backoff_max = MAX(prm->backoff_max_ms ? prm->backoff_max_ms : 30000, p->backoff_min);
  p->backoff_reset = prm->backoff_reset_ms ? prm->backoff_reset_ms : 10000;
  p->backoff_next = p->backoff_min;
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    p->side[side].pair = p;
    p->side[side].side = side;
    p->side[side].warned_clock = -1;
  }
}

size_t
capture_pair_pool_bytes(const CapturePairParams *prm)
{
  size_t stride = ((size_t)prm->width + 3) & ~(size_t)3;
  size_t bytes = (stride * (size_t)prm->height + 63) & ~(size_t)63;
  int per_side = 2 + (prm->max_pending ? prm->max_pending : 2) +
                 (prm->held_pairs ? prm->held_pairs : 1);
  return (size_t)CAPTURE_SIDE_COUNT * per_side * bytes;
}

CapturePair *
capture_pair_new(const CapturePairParams *prm, GError **error)
{
  g_return_val_if_fail(prm, NULL);
  g_return_val_if_fail(!error || !*error, NULL);
  if (!check_params(prm, error))
    return NULL;

  g_autoptr(CapturePair) p = g_new0(CapturePair, 1);
  g_mutex_init(&p->lock);
  g_cond_init(&p->cond);
  apply_params(p, prm);
  p->notifier = prm->notifier ? capture_notifier_ref(prm->notifier) : NULL;
  p->timebase = prm->timebase ? capture_timebase_ref(prm->timebase) : capture_timebase_new();
  atomic_store(&p->state, CAPTURE_STATE_STOPPED);
  capture_matcher_init(&p->matcher, p->max_pending, p->tolerance_ns);

  /* Per side: one buffer being converted, the waiting ones, one in the mailbox, and the
   * ones the consumer holds (offline: a pair waiting for the mailbox takes one of the
   * waiting ones; capture_pair_pool_bytes() says the same). */
  int per_side = 2 + p->max_pending + p->held_pairs;
  size_t bytes = (p->stride * (size_t)p->height + 63) & ~(size_t)63;
  p->pool_size = CAPTURE_SIDE_COUNT * per_side;
  p->pool_external = prm->pool_memory != NULL;
  p->pool_mem = p->pool_external ? prm->pool_memory
                                 : g_aligned_alloc((gsize)p->pool_size, bytes, 64);
  p->pool = g_new0(CaptureBuf, p->pool_size);
  for (int i = 0; i < p->pool_size; i++) {
    CaptureBuf *b = &p->pool[i];
    b->mem = p->pool_mem + (size_t)i * bytes;
    b->side = i % CAPTURE_SIDE_COUNT;
    b->frame = (CaptureFrame){ .data = b->mem, .width = p->width, .height = p->height,
                               .stride = p->stride };
    capture_pool_put(p, b);
  }

  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++)
    if (!(p->side[side].dec = capture_decoder_new(error)))
      return NULL;
  p->ctx = g_main_context_new();
  p->loop = g_main_loop_new(p->ctx, FALSE);
  if (!pipeline_build(p, error))
    return NULL;
  return g_steal_pointer(&p);
}

bool
capture_check(const CapturePairParams *prm, CaptureSide *bad_side, GError **error)
{
  g_return_val_if_fail(prm, false);
  if (!check_params(prm, error))
    return false;
  CapturePair *p = g_new0(CapturePair, 1);
  g_mutex_init(&p->lock);
  apply_params(p, prm);
  GstElement *pipe = gst_pipeline_new(p->name);
  bool ok = true;
  for (int side = 0; ok && side < CAPTURE_SIDE_COUNT; side++) {
    ok = capture_side_build(p, pipe, side, false, error);
    if (!ok && bad_side)
      *bad_side = side;
  }
  gst_object_unref(pipe);   /* never left NULL state: nothing was opened */
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++)
    g_free(p->desc[side]);
  g_free(p->name);
  g_mutex_clear(&p->lock);
  g_free(p);
  return ok;
}

void
capture_pair_start(CapturePair *p)
{
  g_return_if_fail(p && !p->thread && !p->stopping && p->pipeline);
  set_state(p, CAPTURE_STATE_STARTING);
  g_autofree char *tname = g_strdup_printf("capture-%s", p->name);
  p->thread = g_thread_new(tname, control_thread, p);
}

void
capture_pair_stop(CapturePair *p)
{
  g_return_if_fail(p);
  if (p->thread) {
    g_main_context_invoke(p->ctx, on_stop, p);
    g_thread_join(g_steal_pointer(&p->thread));
  } else {
    p->stopping = true;
    g_mutex_lock(&p->lock);
    end_run_locked(p);
    g_mutex_unlock(&p->lock);
    pipeline_teardown(p);
  }
  atomic_store(&p->state, CAPTURE_STATE_STOPPED);
}

void
capture_pair_free(CapturePair *p)
{
  if (!p)
    return;
  if (p->ctx)
    capture_pair_stop(p);
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++)
    capture_decoder_free(p->side[side].dec);
  if (p->pool) {
    int free_bufs = 0;
    for (int side = 0; side < CAPTURE_SIDE_COUNT; side++)
      for (CaptureBuf *b = p->free_list[side]; b; b = b->next)
        free_bufs++;
    free_bufs += p->mail_left ? 2 : 0;
    if (free_bufs != p->pool_size)
      g_critical("pair %s: freed while %d frames are still taken", p->name,
                 p->pool_size - free_bufs);
  }
  g_free(p->pool);
  if (!p->pool_external)
    g_aligned_free(p->pool_mem);
  g_clear_pointer(&p->loop, g_main_loop_unref);
  g_clear_pointer(&p->ctx, g_main_context_unref);
  capture_notifier_unref(p->notifier);
  capture_timebase_unref(p->timebase);
  g_free(p->last_gst_warning);
  g_free(p->desc[CAPTURE_SIDE_LEFT]);
  g_free(p->desc[CAPTURE_SIDE_RIGHT]);
  g_free(p->name);
  g_cond_clear(&p->cond);
  g_mutex_clear(&p->lock);
  g_free(p);
}

const char *
capture_pair_get_name(CapturePair *p)
{
  g_return_val_if_fail(p, NULL);
  return p->name;
}

CaptureState
capture_pair_get_state(CapturePair *p)
{
  g_return_val_if_fail(p, CAPTURE_STATE_STOPPED);
  return atomic_load(&p->state);
}

CaptureClockMode
capture_pair_get_clock(CapturePair *p, CaptureSide side)
{
  g_return_val_if_fail(p && side < CAPTURE_SIDE_COUNT, CAPTURE_CLOCK_AUTO);
  return atomic_load(&p->side[side].clock);
}

#define LOAD(field) atomic_load_explicit(&p->stats.field, memory_order_relaxed)

void
capture_pair_get_stats(CapturePair *p, CaptureStats *st)
{
  g_return_if_fail(p && st);
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++) {
    st->frames[s] = LOAD(frames[s]);
    st->corrupt[s] = LOAD(corrupt[s]);
    st->wrong_size[s] = LOAD(wrong_size[s]);
    st->starved[s] = LOAD(starved[s]);
    st->untimed[s] = LOAD(untimed[s]);
    st->unpaired[s] = LOAD(unpaired[s]);
  }
  st->offset_sum_ns = LOAD(offset_sum_ns);
  st->offset_count = LOAD(offset_count);
  st->pairs = LOAD(pairs);
  st->backwards = LOAD(backwards);
  st->overwritten = LOAD(overwritten);
  st->taken = LOAD(taken);
  st->failures = LOAD(failures);
  st->stalls = LOAD(stalls);
  st->reconnects = LOAD(reconnects);
}

void
capture_pair_get_progress(CapturePair *p, int64_t *position_ns, int64_t *duration_ns)
{
  g_return_if_fail(p && position_ns && duration_ns);
  int64_t pos = -1, dur = -1;
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++) {
    int64_t ps = atomic_load(&p->side[s].position_ns), ds = atomic_load(&p->side[s].duration_ns);
    pos = s == 0 ? ps : MIN(pos, ps);
    if (ds >= 0)
      dur = dur < 0 ? ds : MIN(dur, ds);
  }
  *position_ns = pos;
  *duration_ns = dur;
}

bool
capture_pair_take(CapturePair *p, const CaptureFrame **left, const CaptureFrame **right,
                  uint64_t *capture_ns, uint64_t *seq)
{
  g_return_val_if_fail(p && left && right, false);
  g_mutex_lock(&p->lock);
  CaptureBuf *l = p->mail_left, *r = p->mail_right;
  if (l) {
    p->mail_left = p->mail_right = NULL;
    if (capture_ns)
      *capture_ns = p->mail_capture_ns;
    if (seq)
      *seq = p->mail_seq;
    if (p->mode == CAPTURE_MODE_OFFLINE)
      g_cond_broadcast(&p->cond);   /* a streaming thread may wait for the mailbox */
  }
  g_mutex_unlock(&p->lock);
  if (!l)
    return false;
  COUNT(p, taken);
  *left = &l->frame;
  *right = &r->frame;
  return true;
}

static bool
owns(CapturePair *p, const CaptureFrame *f)
{
  const CaptureBuf *b = (const CaptureBuf *)f;  /* frame is the first member */
  return b >= p->pool && b < p->pool + p->pool_size;
}

void
capture_pair_release(CapturePair *p, const CaptureFrame *left, const CaptureFrame *right)
{
  g_return_if_fail(p && left && right && owns(p, left) && owns(p, right));
  g_mutex_lock(&p->lock);
  capture_pool_put(p, (CaptureBuf *)left);
  capture_pool_put(p, (CaptureBuf *)right);
  g_mutex_unlock(&p->lock);
}
