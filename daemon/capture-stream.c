/* capture-stream.c: the streaming threads of a CapturePair: taking a buffer from the
 * frame pool, timestamps, conversion to luma (unlocked), pairing and the mailbox
 * (see capture.c for the locking rules). */
#include "daemon/capture-pair.h"

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
}

/* ---------------------------------------------------------------- streaming threads */

/* The frame's running time (its PTS, or the arrival time when it has none) and its
 * CLOCK_REALTIME capture time. The clock offset is measured once per run. */
static void
frame_times(Side *s, GstElement *sink, GstSample *sample, GstBuffer *buf, uint64_t *pts_ns,
            uint64_t *capture_ns)
{
  if (s->clock_run != s->run) {
    GstClock *clock = gst_element_get_clock(sink);
    if (clock) {
      s->base_time = (int64_t)gst_element_get_base_time(sink);
      int64_t now = (int64_t)gst_clock_get_time(clock);
      s->realtime_offset = g_get_real_time() * 1000 - now;
      s->clock_run = s->run;
      gst_object_unref(clock);
    }
  }
  GstClockTime running = GST_CLOCK_TIME_NONE;
  const GstSegment *seg = gst_sample_get_segment(sample);
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
      running = gst_clock_get_time(clock) - (GstClockTime)s->base_time;
      gst_object_unref(clock);
    } else {
      running = (GstClockTime)g_get_monotonic_time() * 1000;
    }
  }
  *pts_ns = running;
  *capture_ns = s->clock_run == s->run
                  ? (uint64_t)((int64_t)running + s->base_time + s->realtime_offset)
                  : (uint64_t)g_get_real_time() * 1000;
}

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

GstFlowReturn
capture_on_new_sample(GstAppSink *sink, gpointer data)
{
  Side *s = data;
  CapturePair *p = s->pair;
  GstSample *sample = gst_app_sink_pull_sample(sink);
  if (!sample)
    return GST_FLOW_OK;
  COUNT(p, frames[s->side]);
  uint64_t number = s->count++;

  g_mutex_lock(&p->lock);
  bool stale = s->run != p->run;
  CaptureBuf *b = stale ? NULL : capture_pool_get(p, s->side);
  g_mutex_unlock(&p->lock);
  if (!b) {
    if (!stale)
      COUNT(p, starved[s->side]);
    gst_sample_unref(sample);
    return GST_FLOW_OK;
  }

  GstBuffer *buf = gst_sample_get_buffer(sample);
  char *why = NULL;
  CaptureDecodeResult r = CAPTURE_DECODE_CORRUPT;
  if (buf) {
    bool want_why = !s->logged_corrupt || !s->logged_size;
    r = capture_decoder_run(s->dec, gst_sample_get_caps(sample), buf, b->mem, p->stride,
                            p->width, p->height, want_why ? &why : NULL);
    if ((r == CAPTURE_DECODE_CORRUPT && s->logged_corrupt) ||
        (r == CAPTURE_DECODE_WRONG_SIZE && s->logged_size))
      g_clear_pointer(&why, g_free);
  }
  if (r == CAPTURE_DECODE_OK) {
    frame_times(s, GST_ELEMENT(sink), sample, buf, &b->frame.pts_ns, &b->frame.capture_ns);
    b->frame.number = number;
  }
  gst_sample_unref(sample);

  CaptureMatchResult res = { 0 };
  bool now_running = false;
  g_mutex_lock(&p->lock);
  if (r != CAPTURE_DECODE_OK || s->run != p->run) {
    capture_pool_put(p, b);
  } else {
    capture_matcher_push(&p->matcher, b, &res);
    for (int i = 0; i < res.n_dropped; i++) {
      COUNT(p, unpaired[res.dropped[i]->side]);
      capture_pool_put(p, res.dropped[i]);
    }
    if (res.left) {
      if (p->mail_left) {
        capture_pool_put(p, p->mail_left);
        capture_pool_put(p, p->mail_right);
        COUNT(p, overwritten);
      }
      p->mail_left = res.left;
      p->mail_right = res.right;
      p->mail_seq = ++p->seq;
      p->mail_capture_ns = res.left->frame.capture_ns;
      COUNT(p, pairs);
      if (atomic_load(&p->state) != CAPTURE_STATE_RUNNING) {
        atomic_store(&p->state, CAPTURE_STATE_RUNNING);
        atomic_store(&p->running_since_us, g_get_monotonic_time());
        now_running = true;
      }
    }
  }
  g_mutex_unlock(&p->lock);

  if (r != CAPTURE_DECODE_OK)
    frame_rejected(s, r, why);
  if (now_running)
    g_message("pair %s: capture running", p->name);
  if (res.left && p->notifier)
    capture_notifier_signal(p->notifier);
  return GST_FLOW_OK;
}

/* An appsink's end of stream does not reach the bus while the other side still runs (a
 * pipeline posts EOS when all its sinks are done): tell the control thread directly. */
void
capture_on_eos(GstAppSink *sink, gpointer data)
{
  Side *s = data;
  GstStructure *st = gst_structure_new(CAPTURE_EOS_MESSAGE, "side", G_TYPE_INT,
                                       (int)s->side, NULL);
  gst_element_post_message(GST_ELEMENT(sink),
                           gst_message_new_application(GST_OBJECT(sink), st));
}

