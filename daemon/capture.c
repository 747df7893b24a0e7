/* capture.c: the CapturePair object: pipeline, frame pool, mailbox, reconnects
 * (see capture.h for the contract).
 *
 * Locking: `lock` guards the free lists, the matcher, the mailbox, `run` and the state
 * transitions. Streaming threads hold it only to take a buffer and to hand a converted
 * frame to the matcher; conversion runs unlocked. The control thread owns `pipeline`
 * and the sources on `ctx`; it never holds `lock` while changing the pipeline's state
 * (that waits for the streaming threads, which may want `lock`).
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
    "stopped", "starting", "running", "reconnecting",
  };
  return state < CAPTURE_STATE_COUNT ? names[state] : "invalid";
}

/* ---------------------------------------------------------------- pipeline */

static const char accepted_caps[] =
  "video/x-raw, format=(string){ GRAY8, NV12, I420, RGB, BGR, RGBx, BGRx, xRGB, xBGR }; "
  "image/jpeg";

/* The description with our queue appended inside the same parse: a description that
 * ends in caps ("... ! video/x-raw,format=GRAY8") then means a caps filter, as it does
 * in gst-launch; parsed alone it would not. */
static GstElement *
parse_side(CapturePair *p, CaptureSide side, GError **error)
{
  const char *sname = capture_side_names[side];
  g_autofree char *desc = g_strdup_printf(
    "%s ! queue name=queue-%s max-size-buffers=2 max-size-bytes=0 max-size-time=0 "
    "leaky=downstream", p->desc[side], sname);
  GError *perr = NULL;
  GstElement *bin = gst_parse_bin_from_description_full(desc, TRUE, NULL,
                                                        GST_PARSE_FLAG_FATAL_ERRORS, &perr);
  if (!bin) {
    bool link = g_error_matches(perr, GST_PARSE_ERROR, GST_PARSE_ERROR_LINK);
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION, "pair %s: %s source: %s%s",
                p->name, sname, perr ? perr->message : "does not parse",
                link ? " (a description must end in an element with a free source pad)"
                     : "");
    g_clear_error(&perr);
    return NULL;
  }
  GstPad *sinkpad = gst_element_get_static_pad(bin, "sink");
  if (sinkpad) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION,
                "pair %s: %s source: \"%s\" leaves a sink pad free: it needs a source "
                "element", p->name, sname, p->desc[side]);
    gst_object_unref(sinkpad);
    gst_object_unref(gst_object_ref_sink(bin));
    return NULL;
  }
  return bin;
}

static bool
add_side(CapturePair *p, GstElement *pipe, CaptureSide side, GError **error)
{
  GstElement *bin = parse_side(p, side, error);
  if (!bin)
    return false;
  GstElement *sink = gst_element_factory_make("appsink", capture_side_names[side]);
  if (!sink) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_FAILED,
                "pair %s: the GStreamer element appsink is missing", p->name);
    gst_object_unref(gst_object_ref_sink(bin));
    return false;
  }
  GstCaps *caps = gst_caps_from_string(accepted_caps);
  g_object_set(sink, "caps", caps, "max-buffers", 2u, "drop", TRUE, "sync", FALSE,
               "enable-last-sample", FALSE, "emit-signals", FALSE, "async", FALSE, NULL);
  gst_caps_unref(caps);
  gst_bin_add_many(GST_BIN(pipe), bin, sink, NULL);
  if (!gst_element_link(bin, sink)) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION,
                "pair %s: %s source \"%s\" cannot link to an appsink taking %s", p->name,
                capture_side_names[side], p->desc[side], accepted_caps);
    return false;
  }
  GstAppSinkCallbacks cb = { .eos = capture_on_eos, .new_sample = capture_on_new_sample };
  gst_app_sink_set_callbacks(GST_APP_SINK(sink), &cb, &p->side[side], NULL);
  p->side[side].bin = bin;
  return true;
}

/* Builds a pipeline for a new run (nothing runs yet). Control thread, or capture_pair_new. */
static bool
pipeline_build(CapturePair *p, GError **error)
{
  g_assert(!p->pipeline);
  GstElement *pipe = gst_pipeline_new(p->name);
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    if (!add_side(p, pipe, side, error)) {
      gst_object_unref(pipe);
      return false;
    }
  }
  g_mutex_lock(&p->lock);
  p->run = ++p->next_run;
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    p->side[side].run = p->run;
    p->side[side].logged_size = p->side[side].logged_corrupt = false;
  }
  g_mutex_unlock(&p->lock);
  p->pipeline = pipe;
  return true;
}

/* Stops and drops the pipeline; frames waiting for a partner go back to the pool (counted
 * as unpaired). The caller has set `run` to 0 first. */
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
  p->side[CAPTURE_SIDE_LEFT].bin = p->side[CAPTURE_SIDE_RIGHT].bin = NULL;
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

/* Control thread: a source failed (or a restart did). */
static void
pair_fail(CapturePair *p, const char *why)
{
  if (p->stopping)
    return;
  COUNT(p, failures);
  g_mutex_lock(&p->lock);
  CaptureState old = atomic_load(&p->state);
  p->run = 0;
  atomic_store(&p->state, CAPTURE_STATE_RECONNECTING);
  g_mutex_unlock(&p->lock);

  int64_t ran_us = g_get_monotonic_time() - atomic_load(&p->running_since_us);
  if (old == CAPTURE_STATE_RUNNING && ran_us >= (int64_t)p->backoff_reset * 1000)
    p->backoff_next = p->backoff_min;
  unsigned delay = p->backoff_next;
  p->backoff_next = (unsigned)MIN((uint64_t)p->backoff_max, 2 * (uint64_t)delay);

  if (old != CAPTURE_STATE_RECONNECTING)
    g_warning("pair %s: source failed: %s; reconnecting in %u ms", p->name, why, delay);
  else
    g_debug("pair %s: restart failed: %s; retrying in %u ms", p->name, why, delay);

  pipeline_teardown(p);
  g_assert(!p->retry_source);
  p->retry_source = g_timeout_source_new(delay);
  g_source_set_callback(p->retry_source, on_retry, p, NULL);
  g_source_attach(p->retry_source, p->ctx);
}

static const char *
message_side(CapturePair *p, GstMessage *msg)
{
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    GstObject *bin = GST_OBJECT(p->side[side].bin);
    if (bin && (GST_MESSAGE_SRC(msg) == bin ||
                gst_object_has_as_ancestor(GST_MESSAGE_SRC(msg), bin)))
      return capture_side_names[side];
  }
  return "pipeline";
}

/* "left: videotestsrc0: Internal data stream error (streaming stopped, reason
 * not-negotiated (-4))": the element's message plus the last line of its debug text,
 * which is where GStreamer puts the reason. */
static char *
error_text(CapturePair *p, GstMessage *msg)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *debug = NULL;
  gst_message_parse_error(msg, &err, &debug);
  const char *reason = debug ? strrchr(debug, '\n') : NULL;
  reason = reason ? reason + 1 : NULL;
  return g_strdup_printf("%s: %s: %s%s%s%s", message_side(p, msg), GST_MESSAGE_SRC_NAME(msg),
                         err ? err->message : "unknown error", reason && *reason ? " (" : "",
                         reason && *reason ? reason : "", reason && *reason ? ")" : "");
}

static gboolean
on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
  CapturePair *p = data;
  g_autofree char *why = NULL;
  switch (GST_MESSAGE_TYPE(msg)) {
  case GST_MESSAGE_ERROR:
    why = error_text(p, msg);
    break;
  case GST_MESSAGE_EOS:
    why = g_strdup("end of stream");
    break;
  case GST_MESSAGE_APPLICATION: {
    const GstStructure *st = gst_message_get_structure(msg);
    int side = 0;
    if (st && gst_structure_has_name(st, CAPTURE_EOS_MESSAGE) &&
        gst_structure_get_int(st, "side", &side))
      why = g_strdup_printf("%s: end of stream", capture_side_names[side != 0]);
    break;
  }
  case GST_MESSAGE_WARNING: {
    g_autoptr(GError) err = NULL;
    gst_message_parse_warning(msg, &err, NULL);
    g_debug("pair %s: %s: %s", p->name, GST_MESSAGE_SRC_NAME(msg),
            err ? err->message : "warning");
    break;
  }
  default:
    break;
  }
  if (!why)
    return G_SOURCE_CONTINUE;
  pair_fail(p, why);  /* destroys this source */
  return G_SOURCE_REMOVE;
}

/* Control thread: builds the pipeline when there is none and sets it playing. */
static void
pair_play(CapturePair *p)
{
  if (!p->pipeline) {
    g_autoptr(GError) err = NULL;
    if (!pipeline_build(p, &err)) {
      pair_fail(p, err->message);
      return;
    }
  }
  GstBus *bus = gst_element_get_bus(p->pipeline);
  p->bus_source = gst_bus_create_watch(bus);
  g_source_set_callback(p->bus_source, G_SOURCE_FUNC(on_bus), p, NULL);
  g_source_attach(p->bus_source, p->ctx);
  if (gst_element_set_state(p->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    /* The element that refused usually posted an ERROR saying why. */
    GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    g_autofree char *why = msg ? error_text(p, msg)
                               : g_strdup("the pipeline refused to start");
    g_clear_pointer(&msg, gst_message_unref);
    gst_object_unref(bus);
    pair_fail(p, why);
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
  p->run = 0;
  atomic_store(&p->state, CAPTURE_STATE_STOPPED);
  g_mutex_unlock(&p->lock);
  if (p->retry_source) {
    g_source_destroy(p->retry_source);
    g_clear_pointer(&p->retry_source, g_source_unref);
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
  if (bad)
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_INVALID, "pair %s: %s",
                prm->name ? prm->name : "(null)", bad);
  return !bad;
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
  p->name = g_strdup(prm->name);
  p->desc[CAPTURE_SIDE_LEFT] = g_strdup(prm->left);
  p->desc[CAPTURE_SIDE_RIGHT] = g_strdup(prm->right);
  p->width = prm->width;
  p->height = prm->height;
  p->stride = ((size_t)prm->width + 3) & ~(size_t)3;
  p->tolerance_ns = prm->tolerance_ns ? prm->tolerance_ns : 5000000;
  p->max_pending = prm->max_pending ? prm->max_pending : 2;
  p->held_pairs = prm->held_pairs ? prm->held_pairs : 1;
  p->backoff_min = prm->backoff_min_ms ? prm->backoff_min_ms : 500;
  p->backoff_max = MAX(prm->backoff_max_ms ? prm->backoff_max_ms : 30000, p->backoff_min);
  p->backoff_reset = prm->backoff_reset_ms ? prm->backoff_reset_ms : 10000;
  p->backoff_next = p->backoff_min;
  p->notifier = prm->notifier ? capture_notifier_ref(prm->notifier) : NULL;
  atomic_store(&p->state, CAPTURE_STATE_STOPPED);
  capture_matcher_init(&p->matcher, p->max_pending, p->tolerance_ns);

  /* Per side: one buffer being converted, the waiting ones, one in the mailbox, and the
   * ones the consumer holds (capture_pair_pool_bytes() says the same). */
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

  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    p->side[side].pair = p;
    p->side[side].side = side;
    if (!(p->side[side].dec = capture_decoder_new(error)))
      return NULL;
  }
  p->ctx = g_main_context_new();
  p->loop = g_main_loop_new(p->ctx, FALSE);
  if (!pipeline_build(p, error))
    return NULL;
  return g_steal_pointer(&p);
}

void
capture_pair_start(CapturePair *p)
{
  g_return_if_fail(p && !p->thread && !p->stopping && p->pipeline);
  atomic_store(&p->state, CAPTURE_STATE_STARTING);
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
    p->run = 0;
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
  g_free(p->desc[CAPTURE_SIDE_LEFT]);
  g_free(p->desc[CAPTURE_SIDE_RIGHT]);
  g_free(p->name);
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
    st->unpaired[s] = LOAD(unpaired[s]);
  }
  st->pairs = LOAD(pairs);
  st->overwritten = LOAD(overwritten);
  st->taken = LOAD(taken);
  st->failures = LOAD(failures);
  st->reconnects = LOAD(reconnects);
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
