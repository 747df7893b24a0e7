/* capture-stream.c: the streaming threads of a CapturePair: taking a buffer from the
 * frame pool, the capture time of each frame (capture.h, "Capture time"), conversion to
 * luma (unlocked), pairing, the mailbox, and offline back-pressure (see capture.c for the
 * locking rules). */
#include "daemon/capture-pair.h"

#include <gst/base/gstbasesrc.h>
#include <string.h>

/* ---------------------------------------------------------------- pool (lock held) */

CaptureBuf *
capture_pool_get(CapturePair *p, CaptureSide side)
{
  CaptureBuf *b = p->free_list[side];
  if (b)
    p->free_list[side] = b->next;
  return b;
}

void
capture_pool_put(CapturePair *p, CaptureBuf *b)
{
  if (!b)
    return;
  b->next = p->free_list[b->side];
  p->free_list[b->side] = b;
  if (p->mode == CAPTURE_MODE_OFFLINE)
    g_cond_broadcast(&p->cond);   /* a streaming thread may wait for a free buffer */
}

void
capture_stream_new_run(CapturePair *p)
{
  for (int i = 0; i < CAPTURE_SIDE_COUNT; i++) {
    Side *s = &p->side[i];
    s->run = p->run;
    s->logged_size = s->logged_corrupt = false;
    capture_sender_clock_reset(&s->sr);
    s->warned_sr_step = false;
    s->rtp.count = s->rtp.head = 0;
    atomic_store(&s->clock, CAPTURE_CLOCK_AUTO);
    atomic_store(&s->has_jitterbuffer, false);
    atomic_store(&s->has_network, false);
    atomic_store(&s->last_frame_us, 0);
    atomic_store(&s->ended, false);
    atomic_store(&s->position_ns, -1);
    atomic_store(&s->duration_ns, -1);
  }
  /* REPLAY: the new run's stream starts after everything the last one delivered. */
  p->replay_offset += p->replay_end;
  p->replay_end = 0;
  p->logged_backwards = false;
}

/* ---------------------------------------------------------------- capture times */

static GstCaps *ntp_caps, *unix_caps;

static void
init_reference_caps(void)
{
  static gsize once = 0;
  if (g_once_init_enter(&once)) {
    ntp_caps = gst_caps_new_empty_simple("timestamp/x-ntp");
    unix_caps = gst_caps_new_empty_simple("timestamp/x-unix");
    GST_MINI_OBJECT_FLAG_SET(ntp_caps, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);
    GST_MINI_OBJECT_FLAG_SET(unix_caps, GST_MINI_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave(&once, 1);
  }
}

/* The sender's capture time from a reference timestamp meta (ns since 1970), or 0. */
static uint64_t
reference_time(GstBuffer *buf)
{
  init_reference_caps();
  GstReferenceTimestampMeta *m = gst_buffer_get_reference_timestamp_meta(buf, unix_caps);
  if (m && GST_CLOCK_TIME_IS_VALID(m->timestamp))
    return m->timestamp;
  m = gst_buffer_get_reference_timestamp_meta(buf, ntp_caps);
  uint64_t epoch = CAPTURE_NTP_UNIX_OFFSET_S * GST_SECOND;
  if (m && GST_CLOCK_TIME_IS_VALID(m->timestamp) && m->timestamp > epoch)
    return m->timestamp - epoch;
  return 0;
}

/* A side is live when one of its elements says so: a GstBaseSrc that is live (v4l2src,
 * udpsrc, videotestsrc is-live=true, appsrc is-live=true) or an element with a true
 * is-live property (imagefreeze is-live=true). Not the latency query: "identity
 * sync=true", which plays files in real time, answers it as live, and a file played so is
 * a replay. */
static bool
side_is_live(Side *s)
{
  bool live = false;
  GstIterator *it = gst_bin_iterate_recurse(GST_BIN(s->bin));
  GValue v = G_VALUE_INIT;
  while (!live && gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
    GstElement *el = g_value_get_object(&v);
    if (GST_IS_BASE_SRC(el)) {
      live = gst_base_src_is_live(GST_BASE_SRC(el));
    } else {
      GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(el), "is-live");
      gboolean on = FALSE;
      if (ps && ps->value_type == G_TYPE_BOOLEAN && (ps->flags & G_PARAM_READABLE)) {
        g_object_get(el, "is-live", &on, NULL);
        live = on;
      }
    }
    g_value_reset(&v);
  }
  g_value_unset(&v);
  gst_iterator_free(it);
  return live;
}

/* The first frame of a run on this side: which clock (capture.h), and the stream's
 * duration for the offline progress. */
static void
decide_clock(Side *s, GstAppSink *sink, GstBuffer *buf)
{
  CapturePair *p = s->pair;
  const char *sname = capture_side_names[s->side];
  bool live = side_is_live(s);
  CaptureClockMode mode = p->clock;
  s->network = atomic_load(&s->has_network);
  if (mode == CAPTURE_CLOCK_AUTO) {
    if (reference_time(buf) || atomic_load(&s->has_jitterbuffer))
      mode = CAPTURE_CLOCK_SENDER;
    else
      mode = live ? CAPTURE_CLOCK_ARRIVAL : CAPTURE_CLOCK_REPLAY;
  }
  atomic_store(&s->clock, mode);
  s->first_frame_us = g_get_monotonic_time();
  if (mode == CAPTURE_CLOCK_ARRIVAL && s->network && s->warned_clock != (int)mode) {
    g_warning("pair %s: %s camera: the stream carries no sender timestamps (no RTCP "
              "sender reports, no reference timestamps): its frames are timestamped on "
              "arrival, so different network or encoder delays of the cameras count as "
              "capture-time differences", p->name, sname);
    s->warned_clock = (int)mode;
  } else if (s->warned_clock != (int)mode) {
    g_info("pair %s: %s camera: capture times from the %s clock", p->name, sname,
           capture_clock_to_string(mode));
    s->warned_clock = (int)mode;
  }
  if (p->mode == CAPTURE_MODE_OFFLINE && live && s->count == 0)
    g_warning("pair %s: %s camera is a live source: offline mode takes its frames as they "
              "come (it is meant for recordings)", p->name, sname);
  gint64 dur = -1;
  GstPad *pad = gst_element_get_static_pad(GST_ELEMENT(sink), "sink");
  if (!gst_pad_peer_query_duration(pad, GST_FORMAT_TIME, &dur))
    dur = -1;
  gst_object_unref(pad);
  atomic_store(&s->duration_ns, dur);
}

/* The buffer's running time (its PTS, or the arrival time when it has none). */
static GstClockTime
running_time(Side *s, GstElement *sink, const GstSegment *seg, GstBuffer *buf)
{
  GstClockTime running = GST_CLOCK_TIME_NONE;
  if (GST_BUFFER_PTS_IS_VALID(buf)) {
    /* In a segment of another format (BYTES from multifilesrc) timestamps are taken as
     * running time, as GstBaseSink does. */
    if (seg && seg->format == GST_FORMAT_TIME)
      running = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
    else
      running = GST_BUFFER_PTS(buf);
  }
  if (!GST_CLOCK_TIME_IS_VALID(running)) {
    GstClock *clock = gst_element_get_clock(sink);
    if (clock) {
      running = gst_clock_get_time(clock) - gst_element_get_base_time(sink);
      gst_object_unref(clock);
    } else {
      running = (GstClockTime)g_get_monotonic_time() * 1000;
    }
  }
  return running;
}

/* ARRIVAL (lock held): running time + base time + (realtime - clock), the offset measured
 * once per run for both sides so that their times compare exactly. */
static uint64_t
arrival_time(CapturePair *p, GstElement *sink, GstClockTime running)
{
  if (p->arrival_run != p->run) {
    GstClock *clock = gst_element_get_clock(sink);
    if (clock) {
      p->base_time = (int64_t)gst_element_get_base_time(sink);
      p->realtime_offset = g_get_real_time() * 1000 - (int64_t)gst_clock_get_time(clock);
      gst_object_unref(clock);
    } else {   /* no clock (offline): the times without PTS are monotonic (running_time) */
      p->base_time = 0;
      p->realtime_offset = (g_get_real_time() - g_get_monotonic_time()) * 1000;
    }
    p->arrival_run = p->run;
  }
  return (uint64_t)((int64_t)running + p->base_time + p->realtime_offset);
}

/* REPLAY (lock held): start + run offset + stream time; the run's stream end is kept for
 * the next run's offset. */
static uint64_t
replay_time(CapturePair *p, Side *s, const GstSegment *seg, GstBuffer *buf)
{
  GstClockTime st = GST_CLOCK_TIME_NONE;
  if (GST_BUFFER_PTS_IS_VALID(buf)) {
    if (seg && seg->format == GST_FORMAT_TIME)
      st = gst_segment_to_stream_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
    else
      st = GST_BUFFER_PTS(buf);
  }
  if (!GST_CLOCK_TIME_IS_VALID(st))   /* no timestamps at all: frame by frame */
    st = (s->count - 1) * p->period_ns;   /* s->count counts this frame already */
  uint64_t start = (uint64_t)g_get_real_time() * 1000;
  start = start > st ? start - st : 1;
  if (p->timebase)
    start = capture_timebase_start(p->timebase, start);
  uint64_t dur = GST_BUFFER_DURATION_IS_VALID(buf) ? GST_BUFFER_DURATION(buf) : p->period_ns;
  p->replay_end = MAX(p->replay_end, st + dur);
  atomic_store(&s->position_ns, (int64_t)st);
  return start + p->replay_offset + st;
}

/* The frame's times. FALSE when it has no capture time yet (SENDER before the first
 * sender report): the frame is dropped. */
static bool
frame_times(Side *s, GstAppSink *sink, GstSample *sample, GstBuffer *buf, uint64_t *pts_ns,
            uint64_t *capture_ns)
{
  CapturePair *p = s->pair;
  const GstSegment *seg = gst_sample_get_segment(sample);
  GstClockTime running = running_time(s, GST_ELEMENT(sink), seg, buf);
  *pts_ns = running;
  CaptureClockMode mode = atomic_load(&s->clock);
  if (mode == CAPTURE_CLOCK_SENDER) {
    uint64_t t = reference_time(buf);
    /* past the start timeout without a capture time of the sender's */
    bool late = !t && g_get_monotonic_time() - s->first_frame_us >=
                          (int64_t)p->start_timeout_ms * 1000;
    if (!t && GST_BUFFER_PTS_IS_VALID(buf)) {
      uint32_t rtp;
      g_mutex_lock(&p->lock);
      /* one report only within the start timeout: its mapping, unconfirmed */
      bool took = late && !s->sr.valid && capture_sender_clock_take_latest(&s->sr);
      if (s->sr.valid &&
          capture_rtp_history_find(&s->rtp, GST_BUFFER_PTS(buf), p->period_ns / 2, &rtp))
        capture_sender_clock_map(&s->sr, rtp, &t);
      g_mutex_unlock(&p->lock);
      if (took)
        g_warning("pair %s: %s camera: one sender report only (RTCP) within %u ms of its "
                  "first frame: its clock is used unconfirmed by a second", p->name,
                  capture_side_names[s->side], p->start_timeout_ms);
    }
    if (t) {
      *capture_ns = t;
      return true;
    }
    if (!late)
      return false;
    if (!s->warned_no_sender)
      g_warning("pair %s: %s camera: no sender timestamps (RTCP sender report) within %u "
                "ms of its first frame: its frames are timestamped on arrival for the rest "
                "of this run (and of the next runs that get none)", p->name,
                capture_side_names[s->side], p->start_timeout_ms);
    s->warned_no_sender = true;
    atomic_store(&s->clock, CAPTURE_CLOCK_ARRIVAL);
    mode = CAPTURE_CLOCK_ARRIVAL;
  }
  g_mutex_lock(&p->lock);
  if (mode == CAPTURE_CLOCK_REPLAY)
    *capture_ns = replay_time(p, s, seg, buf);
  else
    *capture_ns = arrival_time(p, GST_ELEMENT(sink), running);
  g_mutex_unlock(&p->lock);
  return true;
}

/* ---------------------------------------------------------------- streaming threads */

/* A frame that could not be converted: count it, log the first one of each run. */
static void
frame_rejected(Side *s, CaptureDecodeResult r, char *why)
{
  CapturePair *p = s->pair;
  if (r == CAPTURE_DECODE_CORRUPT) {
    COUNT(p, corrupt[s->side]);
    if (why)
      g_warning("pair %s: %s frame dropped: %s (logged once per run; counted as corrupt)",
                p->name, capture_side_names[s->side], why);
    s->logged_corrupt = true;
  } else {
    COUNT(p, wrong_size[s->side]);
    if (why)
      g_warning("pair %s: %s frame dropped: %s (logged once per run; counted as wrong size)",
                p->name, capture_side_names[s->side], why);
    s->logged_size = true;
  }
  g_free(why);
}

/* Offline back-pressure (lock held): waits on the pair's cond while `blocked_by` holds and
 * the run goes on; the stall timer does not count the wait. Returns FALSE when the run
 * ended meanwhile. */
static bool
wait_while(Side *s, bool (*blocked_by)(CapturePair *p, Side *s))
{
  CapturePair *p = s->pair;
  if (s->run != p->run || !blocked_by(p, s))
    return s->run == p->run;
  atomic_fetch_add(&s->blocked, 1);
  while (s->run == p->run && blocked_by(p, s))
    g_cond_wait(&p->cond, &p->lock);
  atomic_store(&s->last_frame_us, g_get_monotonic_time());
  atomic_fetch_sub(&s->blocked, 1);
  return s->run == p->run;
}

/* This side's waiting list is full and the other side can still deliver partners. */
static bool
pending_full(CapturePair *p, Side *s)
{
  return capture_matcher_waiting(&p->matcher, s->side) >= p->max_pending &&
         !atomic_load(&p->side[1 - s->side].ended);
}

static bool
mailbox_full(CapturePair *p, Side *s)
{
  return p->mail_left != NULL;
}

/* Offline, before a frame is taken in (lock held): room in this side's waiting list and
 * a free buffer. Waiting for room first keeps a buffer out of this thread's hands while
 * the other side's thread may hold a pair for the mailbox, so the pool is enough
 * (capture_pair_new). */
static bool
no_room(CapturePair *p, Side *s)
{
  return pending_full(p, s) || !p->free_list[s->side];
}

static bool
not_admitted(CapturePair *p, Side *s)
{
  return no_room(p, s) || mailbox_full(p, s);
}

/* Offline back-pressure on the appsink's sink pad (a buffer probe, before the sink): a
 * frame waits here, not in capture_on_new_sample, until its side has room and the
 * mailbox is empty. The sink calls new_sample with its preroll lock held, and the
 * pipeline's change to PLAYING takes that lock: a sink that prerolled its first frame
 * while the change was under way commits itself to PLAYING and renders at once, and a
 * wait there for the other camera's frames (whose sink the change has not reached yet)
 * would hold the change, and both cameras, for ever. The room it waits for stays until
 * this thread takes it (only this side's thread fills its waiting list and takes its
 * buffers); the mailbox may not (the other side's thread can fill it meanwhile), so
 * deliver() still waits for it, rarely; the run's end wakes both. */
GstPadProbeReturn
capture_on_offline_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Side *s = data;
  CapturePair *p = s->pair;
  g_mutex_lock(&p->lock);
  wait_while(s, not_admitted);
  g_mutex_unlock(&p->lock);
  return GST_PAD_PROBE_OK;
}

/* Lock held: hands a matched pair to the mailbox. Returns TRUE when it is delivered. */
static bool
deliver(Side *s, CaptureMatchResult *res)
{
  CapturePair *p = s->pair;
  if (p->seq > 0 && res->left->frame.capture_ns <= p->last_capture_ns) {
    if (!p->logged_backwards)
      g_warning("pair %s: capture time went back by %.1f ms: pairs dropped until it passes "
                "the last delivered one (logged once per run; counted as backwards)",
                p->name, (double)(p->last_capture_ns - res->left->frame.capture_ns) * 1e-6);
    p->logged_backwards = true;
    COUNT(p, backwards);
    capture_pool_put(p, res->left);
    capture_pool_put(p, res->right);
    return false;
  }
  if (p->mode == CAPTURE_MODE_OFFLINE && !wait_while(s, mailbox_full)) {
    COUNT(p, unpaired[CAPTURE_SIDE_LEFT]);
    COUNT(p, unpaired[CAPTURE_SIDE_RIGHT]);
    capture_pool_put(p, res->left);
    capture_pool_put(p, res->right);
    return false;
  }
  if (p->mail_left) {
    capture_pool_put(p, p->mail_left);
    capture_pool_put(p, p->mail_right);
    COUNT(p, overwritten);
  }
  p->mail_left = res->left;
  p->mail_right = res->right;
  p->mail_seq = ++p->seq;
  p->mail_capture_ns = res->left->frame.capture_ns;
  p->last_capture_ns = p->mail_capture_ns;
  COUNT(p, pairs);
  return true;
}

GstFlowReturn
capture_on_new_sample(GstAppSink *sink, gpointer data)
{
  Side *s = data;
  CapturePair *p = s->pair;
  GstSample *sample = gst_app_sink_pull_sample(sink);
  if (!sample)
    return GST_FLOW_OK;
  atomic_store(&s->last_frame_us, g_get_monotonic_time());
  COUNT(p, frames[s->side]);
  GstBuffer *buf = gst_sample_get_buffer(sample);

  /* offline, capture_on_offline_buffer let the frame in only with room for it, and only
   * this thread takes this side's room */
  g_mutex_lock(&p->lock);
  bool stale = s->run != p->run;
  bool first = !stale && s->clock_run != s->run;
  s->clock_run = s->run;
  CaptureBuf *b = stale || !buf ? NULL : capture_pool_get(p, s->side);
  g_mutex_unlock(&p->lock);
  if (first && buf)
    decide_clock(s, sink, buf);
  uint64_t number = s->count++;
  if (!b) {
    if (!stale && buf)
      COUNT(p, starved[s->side]);
    if (!buf)
      COUNT(p, corrupt[s->side]);
    gst_sample_unref(sample);
    return GST_FLOW_OK;
  }

  CaptureDecodeResult r = CAPTURE_DECODE_OK;
  char *why = NULL;
  if (!frame_times(s, sink, sample, buf, &b->frame.pts_ns, &b->frame.capture_ns)) {
    COUNT(p, untimed[s->side]);
    g_mutex_lock(&p->lock);
    capture_pool_put(p, b);
    g_mutex_unlock(&p->lock);
    gst_sample_unref(sample);
    return GST_FLOW_OK;
  }
  bool want_why = !s->logged_corrupt || !s->logged_size;
  r = capture_decoder_run(s->dec, gst_sample_get_caps(sample), buf, b->mem, p->stride,
                          p->width, p->height, want_why ? &why : NULL);
  if ((r == CAPTURE_DECODE_CORRUPT && s->logged_corrupt) ||
      (r == CAPTURE_DECODE_WRONG_SIZE && s->logged_size))
    g_clear_pointer(&why, g_free);
  b->frame.number = number;
  gst_sample_unref(sample);

  CaptureMatchResult res = { 0 };
  bool now_running = false, delivered = false;
  g_mutex_lock(&p->lock);
  if (r != CAPTURE_DECODE_OK || s->run != p->run) {
    capture_pool_put(p, b);
  } else {
    capture_matcher_push(&p->matcher, b, &res);
    for (int i = 0; i < res.n_offsets; i++) {
      atomic_fetch_add_explicit(&p->stats.offset_sum_ns, res.offset_ns[i],
                                memory_order_relaxed);
      COUNT(p, offset_count);
    }
    for (int i = 0; i < res.n_dropped; i++) {
      COUNT(p, unpaired[res.dropped[i]->side]);
      capture_pool_put(p, res.dropped[i]);
    }
    if (p->mode == CAPTURE_MODE_OFFLINE)
      g_cond_broadcast(&p->cond);   /* the other side's waiting list may have moved */
    if (res.left && (delivered = deliver(s, &res)) &&
        atomic_load(&p->state) != CAPTURE_STATE_RUNNING) {
      atomic_store(&p->state, CAPTURE_STATE_RUNNING);
      atomic_store(&p->running_since_us, g_get_monotonic_time());
      now_running = true;
    }
  }
  g_mutex_unlock(&p->lock);

  if (r != CAPTURE_DECODE_OK)
    frame_rejected(s, r, why);
  if (now_running)
    g_message("pair %s: capture running", p->name);
  if (delivered && p->notifier)
    capture_notifier_signal(p->notifier);
  return GST_FLOW_OK;
}

/* An appsink's end of stream does not reach the bus while the other side still runs (a
 * pipeline posts EOS when all its sinks are done): tell the control thread directly. In
 * offline mode the side is done: the other side no longer waits for its frames. */
void
capture_on_eos(GstAppSink *sink, gpointer data)
{
  Side *s = data;
  CapturePair *p = s->pair;
  if (p->mode == CAPTURE_MODE_OFFLINE) {
    g_mutex_lock(&p->lock);
    atomic_store(&s->ended, true);
    g_cond_broadcast(&p->cond);
    g_mutex_unlock(&p->lock);
  }
  GstStructure *st = gst_structure_new(CAPTURE_EOS_MESSAGE, "side", G_TYPE_INT,
                                       (int)s->side, NULL);
  gst_element_post_message(GST_ELEMENT(sink),
                           gst_message_new_application(GST_OBJECT(sink), st));
}
