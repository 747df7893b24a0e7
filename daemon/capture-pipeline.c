/* capture-pipeline.c: building one side of a pair's pipeline (capture.h, "Sources"): the
 * description parsed with stereod's tail, the checks that can be made before anything
 * plays, the link of decodebin's pad when it appears, and the hooks on elements that the
 * sources create while they run (RTP jitterbuffers, reference timestamps). */
#include "daemon/capture-pair.h"

#include <gst/rtp/gstrtcpbuffer.h>
#include <gst/rtp/gstrtpbuffer.h>
#include <string.h>

/* What the capsfilter after a description lets through when the description's last
 * element links at run time: the first pad that carries video. Compressed types not
 * listed here still work behind their decoder in the description, whose output is raw. */
static const char video_caps[] =
  "video/x-raw(ANY); image/jpeg; image/png; video/x-h264; video/x-h265; video/x-vp8; "
  "video/x-vp9; video/x-av1; video/mpeg; video/x-h263; video/x-theora; video/x-divx; "
  "video/x-xvid; video/x-msmpeg; video/x-wmv; video/x-dv; video/x-prores; "
  "video/x-huffyuv; video/x-ffv; image/x-j2c; image/x-jpc; "
  "application/x-rtp, media=(string)video";

/* What the appsink takes (capture-decode.c converts each). */
static const char accepted_caps[] =
  "video/x-raw, format=(string){ GRAY8, I420, YV12, NV12, NV21, NV16, NV61, NV24, Y41B, "
  "Y42B, Y444, A420, RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR }; "
  "image/jpeg";

/* ---------------------------------------------------------------- element hooks */

static Side *
side_of(CapturePair *p, GstElement *el)
{
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++) {
    GstElement *bin = p->side[s].bin;
    if (bin && gst_object_has_as_ancestor(GST_OBJECT(el), GST_OBJECT(bin)))
      return &p->side[s];
  }
  return NULL;
}

static bool
is_video_rtp(GstElement *jb)
{
  GstPad *pad = gst_element_get_static_pad(jb, "sink");
  if (!pad)
    return false;
  GstCaps *caps = gst_pad_get_current_caps(pad);
  gst_object_unref(pad);
  if (!caps)
    return false;
  const char *media = gst_structure_get_string(gst_caps_get_structure(caps, 0), "media");
  bool video = media && strcmp(media, "video") == 0;
  gst_caps_unref(caps);
  return video;
}

/* rtpjitterbuffer's handle-sync (its RTCP streaming thread): a sender report arrived.
 * Its RTP time, NTP time and the clock rate map the RTP timestamps of the frames to the
 * sender's clock (capture.h, SENDER) once a second report agrees with it
 * (CaptureSenderClock). */
static void
on_handle_sync(GstElement *jb, GstStructure *st, gpointer data)
{
  Side *s = data;
  guint clock_rate = 0;
  const GValue *v = gst_structure_get_value(st, "sr-buffer");
  GstBuffer *sr = v && G_VALUE_HOLDS(v, GST_TYPE_BUFFER) ? gst_value_get_buffer(v) : NULL;
  if (!sr || !gst_structure_get_uint(st, "clock-rate", &clock_rate) || !clock_rate ||
      !is_video_rtp(jb))
    return;
  GstRTCPBuffer rtcp = GST_RTCP_BUFFER_INIT;
  GstRTCPPacket packet;
  guint64 ntp = 0;
  guint32 rtptime = 0;
  if (!gst_rtcp_buffer_map(sr, GST_MAP_READ, &rtcp))
    return;
  bool found = false;
  for (bool more = gst_rtcp_buffer_get_first_packet(&rtcp, &packet); more && !found;
       more = gst_rtcp_packet_move_to_next(&packet)) {
    if (gst_rtcp_packet_get_type(&packet) == GST_RTCP_TYPE_SR) {
      gst_rtcp_packet_sr_get_sender_info(&packet, NULL, &ntp, &rtptime, NULL, NULL);
      found = true;
    }
  }
  gst_rtcp_buffer_unmap(&rtcp);
  uint64_t sr_unix = found ? capture_ntp64_to_unix_ns(ntp) : 0;
  if (!sr_unix)
    return;
  CapturePair *p = s->pair;
  int64_t dev = 0;
  g_mutex_lock(&p->lock);
  bool in_use = s->sr.valid;
  CaptureSenderReport r = capture_sender_clock_report(&s->sr, sr_unix, rtptime, clock_rate, &dev);
  bool warn = in_use && r == CAPTURE_SR_DISAGREED && !s->warned_sr_step;
  s->warned_sr_step |= warn;
  g_mutex_unlock(&p->lock);
  if (warn)
    g_warning("pair %s: %s camera: a sender report (RTCP) puts its clock %+.1f ms from the "
              "report before it: the clock in use stays until a report agrees (logged "
              "once per run)", p->name, capture_side_names[s->side], dev / 1e6);
  else
    g_debug("pair %s: %s camera: sender report %s (%+.3f ms from the one before)", p->name,
            capture_side_names[s->side],
            r == CAPTURE_SR_FIRST ? "first" : r == CAPTURE_SR_AGREED ? "agreed" : "disagreed",
            dev / 1e6);
}

/* The jitterbuffer's output (its streaming thread): keep the RTP timestamp of each PTS,
 * once per RTP timestamp (once per frame), of the video stream. */
static GstPadProbeReturn
on_rtp_out(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
  Side *s = data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
  GstRTPBuffer rtp = GST_RTP_BUFFER_INIT;
  if (!buf || !GST_BUFFER_PTS_IS_VALID(buf) || !gst_rtp_buffer_map(buf, GST_MAP_READ, &rtp))
    return GST_PAD_PROBE_OK;
  uint32_t ts = gst_rtp_buffer_get_timestamp(&rtp);
  gst_rtp_buffer_unmap(&rtp);
  CapturePair *p = s->pair;
  /* the other packets of the frame just added: nothing to do (the cheap test first) */
  g_mutex_lock(&p->lock);
  const CaptureRtpHistory *h = &s->rtp;
  bool known = h->count > 0 &&
               h->rtp[(h->head + CAPTURE_RTP_HISTORY - 1) % CAPTURE_RTP_HISTORY] == ts;
  g_mutex_unlock(&p->lock);
  if (known)
    return GST_PAD_PROBE_OK;
  GstElement *jb = gst_pad_get_parent_element(pad);
  bool video = jb && is_video_rtp(jb);
  g_clear_object(&jb);
  if (!video)
    return GST_PAD_PROBE_OK;
  g_mutex_lock(&p->lock);
  capture_rtp_history_add(&s->rtp, GST_BUFFER_PTS(buf), ts);
  g_mutex_unlock(&p->lock);
  return GST_PAD_PROBE_OK;
}

static void
hook_element(CapturePair *p, GstElement *el)
{
  /* Sources that can timestamp buffers with the sender's clock do so (rtspsrc, rtpbin,
   * rtpjitterbuffer: RFC 7273 media clocks, and RTCP sender reports from GStreamer 1.24). */
  GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(el),
                                                "add-reference-timestamp-meta");
  if (ps && ps->value_type == G_TYPE_BOOLEAN && (ps->flags & G_PARAM_WRITABLE))
    g_object_set(el, "add-reference-timestamp-meta", TRUE, NULL);
  GstElementFactory *f = gst_element_get_factory(el);
  Side *s = f ? side_of(p, el) : NULL;
  if (!s)
    return;
  if (strcmp(GST_OBJECT_NAME(f), "rtpjitterbuffer") == 0) {
    atomic_store(&s->has_jitterbuffer, true);
    g_signal_connect(el, "handle-sync", G_CALLBACK(on_handle_sync), s);
    GstPad *src = gst_element_get_static_pad(el, "src");
    if (src) {
      gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, on_rtp_out, s, NULL);
      gst_object_unref(src);
    }
  }
  const char *klass = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
  if (klass && strstr(klass, "Source") && strstr(klass, "Network"))
    atomic_store(&s->has_network, true);
}

static void
on_deep_element_added(GstBin *pipe, GstBin *sub, GstElement *el, gpointer data)
{
  hook_element(data, el);
}

void
capture_pipeline_hook(CapturePair *p, GstElement *pipe)
{
  GstIterator *it = gst_bin_iterate_recurse(GST_BIN(pipe));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
    hook_element(p, g_value_get_object(&v));
    g_value_reset(&v);
  }
  g_value_unset(&v);
  gst_iterator_free(it);
  g_signal_connect(pipe, "deep-element-added", G_CALLBACK(on_deep_element_added), p);
}

/* ---------------------------------------------------------------- decodebin's pad */

/* decodebin exposes the decoded stream (a streaming thread): JPEG goes to the queue as it
 * is, raw video through the videoconvert (a pass-through for the formats the appsink
 * takes), both made with the pipeline, so that nothing changes state here. Only the first
 * video pad is linked. */
static void
on_decoded_pad(GstElement *dec, GstPad *pad, gpointer data)
{
  Side *s = data;
  GstElement *queue = s->queue;
  if (!queue || GST_PAD_DIRECTION(pad) != GST_PAD_SRC)
    return;
  GstPad *qsink = gst_element_get_static_pad(queue, "sink");
  GstCaps *caps = gst_pad_get_current_caps(pad);
  if (!caps)
    caps = gst_pad_query_caps(pad, NULL);
  const char *kind = caps && !gst_caps_is_empty(caps) && !gst_caps_is_any(caps)
                       ? gst_structure_get_name(gst_caps_get_structure(caps, 0)) : "";
  if (gst_pad_is_linked(qsink)) {
    g_debug("pair %s: %s: a second video stream (%s) is left unlinked", s->pair->name,
            capture_side_names[s->side], kind);
  } else if (strcmp(kind, "image/jpeg") == 0) {
    gst_pad_link(pad, qsink);
  } else {
    g_autofree char *cname = g_strdup_printf("stereod-convert-%s", capture_side_names[s->side]);
    GstElement *convert = gst_bin_get_by_name(GST_BIN(s->bin), cname);
    GstPad *csink = convert ? gst_element_get_static_pad(convert, "sink") : NULL;
    GstPad *csrc = convert ? gst_element_get_static_pad(convert, "src") : NULL;
    if (csink && csrc && gst_pad_link(csrc, qsink) == GST_PAD_LINK_OK)
      gst_pad_link(pad, csink);
    g_clear_object(&csink);
    g_clear_object(&csrc);
    g_clear_object(&convert);
  }
  gst_clear_caps(&caps);
  gst_object_unref(qsink);
}

/* ---------------------------------------------------------------- one side */

/* A sink pad of the description that nothing will link: the description needs a source
 * before it. After the parse, an unlinked sink pad is either free or the target of a
 * link the parser makes when a pad appears (the element before it has sometimes pads:
 * "qtdemux ! h264parse"); each such delayed link is a "pad-added" handler on its source
 * element, and targets one element. So there is a free sink pad when more elements wait
 * with unlinked sink pads (our capsfilter included) than there are delayed links. The one
 * named is the first such element of the description (the iteration goes from the last
 * element added to the first). */
static char *
free_sink_pad(GstElement *bin)
{
  char *first = NULL;
  int waiting = 0, delayed = 0;
  guint pad_added = g_signal_lookup("pad-added", GST_TYPE_ELEMENT);
  GstIterator *it = gst_bin_iterate_elements(GST_BIN(bin));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
    GstElement *el = g_value_get_object(&v);
    delayed += g_signal_has_handler_pending(el, pad_added, 0, FALSE);
    GstIterator *pads = gst_element_iterate_sink_pads(el);
    GValue pv = G_VALUE_INIT;
    bool unlinked = false;
    while (gst_iterator_next(pads, &pv) == GST_ITERATOR_OK) {
      GstPad *pad = g_value_get_object(&pv);
      if (!unlinked && !gst_pad_is_linked(pad)) {
        unlinked = true;
        g_free(first);
        first = g_strdup_printf("%s:%s", GST_ELEMENT_NAME(el), GST_PAD_NAME(pad));
      }
      g_value_reset(&pv);
    }
    g_value_unset(&pv);
    gst_iterator_free(pads);
    waiting += unlinked;
    g_value_reset(&v);
  }
  g_value_unset(&v);
  gst_iterator_free(it);
  if (waiting > delayed)
    return first;
  g_free(first);
  return NULL;
}

static GstElement *
make(const char *factory, const char *name, GError **error)
{
  GstElement *el = gst_element_factory_make(factory, name);
  if (!el)
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_FAILED,
                "the GStreamer element %s is missing (gstreamer1.0-plugins-base)", factory);
  return el;
}

bool
capture_side_build(CapturePair *p, GstElement *pipe, CaptureSide side, bool callbacks,
                   GError **error)
{
  Side *s = &p->side[side];
  const char *sname = capture_side_names[side];
  g_autofree char *desc = g_strdup_printf(
    "%s ! capsfilter name=stereod-in-%s caps=\"%s\" ! decodebin name=stereod-decode-%s "
    "caps=\"video/x-raw(ANY); image/jpeg\"", p->desc[side], sname, video_caps, sname);
  GError *perr = NULL;
  GstElement *bin = gst_parse_bin_from_description_full(desc, FALSE, NULL,
                                                        GST_PARSE_FLAG_FATAL_ERRORS, &perr);
  if (!bin) {
    bool link = g_error_matches(perr, GST_PARSE_ERROR, GST_PARSE_ERROR_LINK);
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION, "%s%s",
                perr ? perr->message : "does not parse",
                link ? " (the description must end in an element whose output is video: a "
                       "source, a demuxer, a decoder, caps)" : "");
    g_clear_error(&perr);
    return false;
  }
  gst_object_ref_sink(bin);
  g_autofree char *sink_name = g_strdup_printf("stereod-in-%s", sname);
  g_autofree char *dec_name = g_strdup_printf("stereod-decode-%s", sname);
  GstElement *in = gst_bin_get_by_name(GST_BIN(bin), sink_name);
  GstElement *dec = gst_bin_get_by_name(GST_BIN(bin), dec_name);
  g_assert(in && dec);
  g_autofree char *free_pad = free_sink_pad(bin);
  if (free_pad) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION,
                "\"%s\" leaves a sink pad free (%s): it needs a source element",
                p->desc[side], free_pad);
    gst_object_unref(in);
    gst_object_unref(dec);
    gst_object_unref(bin);
    return false;
  }
  /* A static link needs no choice among pads: let anything through (decodebin typefinds
   * what a bare filesrc reads). */
  GstPad *in_sink = gst_element_get_static_pad(in, "sink");
  if (gst_pad_is_linked(in_sink)) {
    GstCaps *any = gst_caps_new_any();
    g_object_set(in, "caps", any, NULL);
    gst_caps_unref(any);
  }
  gst_object_unref(in_sink);
  gst_object_unref(in);

  /* The tail. Live: a leaky queue and a dropping appsink (the newest frame wins). Offline:
   * neither drops, the streaming threads wait (capture-stream.c). */
  bool offline = p->mode == CAPTURE_MODE_OFFLINE;
  g_autofree char *qname = g_strdup_printf("queue-%s", sname);
  g_autofree char *cname = g_strdup_printf("stereod-convert-%s", sname);
  GstElement *queue = make("queue", qname, error);
  GstElement *convert = queue ? make("videoconvert", cname, error) : NULL;
  GstElement *sink = convert ? make("appsink", sname, error) : NULL;
  if (!sink) {
    g_clear_object(&queue);
    g_clear_object(&convert);
    gst_object_unref(dec);
    gst_object_unref(bin);
    return false;
  }
  g_object_set(queue, "max-size-buffers", 2u, "max-size-bytes", 0u, "max-size-time",
               (guint64)0, "leaky", offline ? 0 : 2 /* downstream */, NULL);
  GstCaps *caps = gst_caps_from_string(accepted_caps);
  g_object_set(sink, "caps", caps, "max-buffers", 2u, "drop", !offline, "sync", FALSE,
               "enable-last-sample", FALSE, "emit-signals", FALSE, "async", FALSE, NULL);
  gst_caps_unref(caps);
  gst_bin_add_many(GST_BIN(bin), queue, convert, sink, NULL);
  if (!gst_element_link(queue, sink)) {
    g_set_error(error, CAPTURE_ERROR, CAPTURE_ERROR_FAILED, "cannot link stereod's tail");
    gst_object_unref(dec);
    gst_object_unref(bin);
    return false;
  }
  s->bin = bin;
  s->queue = queue;
  g_signal_connect(dec, "pad-added", G_CALLBACK(on_decoded_pad), s);
  gst_object_unref(dec);
  if (callbacks) {
    GstAppSinkCallbacks cb = { .eos = capture_on_eos, .new_sample = capture_on_new_sample };
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &cb, s, NULL);
    if (offline) {
      GstPad *in = gst_element_get_static_pad(sink, "sink");
      gst_pad_add_probe(in, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                        capture_on_offline_buffer, s, NULL);
      gst_object_unref(in);
    }
  }
  gst_bin_add(GST_BIN(pipe), bin);   /* the pipeline holds the bin from here on */
  gst_object_unref(bin);
  return true;
}

const char *
capture_message_side(CapturePair *p, GstMessage *msg)
{
  for (int side = 0; side < CAPTURE_SIDE_COUNT; side++) {
    GstObject *bin = GST_OBJECT(p->side[side].bin);
    if (bin && (GST_MESSAGE_SRC(msg) == bin ||
                gst_object_has_as_ancestor(GST_MESSAGE_SRC(msg), bin)))
      return capture_side_names[side];
  }
  return "pipeline";
}
