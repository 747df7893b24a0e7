/* capture-pair.h: the CapturePair object's state, shared by capture.c (the object, its
 * control thread, failures and health timers), capture-pipeline.c (building and linking
 * the pipeline, the RTP hooks) and capture-stream.c (the streaming threads: frame pool,
 * capture times, conversion, pairing, the mailbox). Internal to daemon/. See capture.c for
 * the locking rules. */
#pragma once

#include "daemon/capture-private.h"

#include <gst/app/gstappsink.h>
#include <stdatomic.h>

#define CAPTURE_EOS_MESSAGE "stereod-capture-eos"
#define CAPTURE_MAX_GST_WARNINGS 5   /* different GStreamer warnings logged per run */

typedef struct {
  CapturePair *pair;
  CaptureSide side;
  CaptureDecoder *dec;       /* streaming thread of this side only */
  /* Elements of the current pipeline (control thread; NULL between runs). */
  GstElement *bin;           /* the parsed description and the tail */
  GstElement *queue;         /* where decodebin's pad is linked (directly or through a
                                videoconvert) */
  unsigned run;              /* run of the pipeline that feeds this side (under lock) */
  uint64_t count;            /* frames received (streaming thread only) */

  /* The clock of the run (capture-stream.c; streaming thread of this side, except
   * `clock`, read by anyone). */
  unsigned clock_run;        /* run the clock was decided for */
  _Atomic int clock;         /* CaptureClockMode in use; AUTO until the first frame */
  int64_t first_frame_us;    /* monotonic time of the run's first frame */
  bool network;              /* the side has a network source (warning for ARRIVAL) */
  int warned_clock;          /* the message given for this clock, or -1 */
  bool warned_no_sender;     /* the fallback to ARRIVAL was logged (once per pair) */
  /* Set by the pipeline hooks (any thread). */
  _Atomic bool has_jitterbuffer;
  _Atomic bool has_network;
  /* The RTCP sender reports of the side's video jitterbuffer (the mapping of RTP time to
   * the sender's clock in use: capture-private.h) and the RTP timestamps of the packets
   * it output, by PTS (under lock). */
  CaptureSenderClock sr;
  bool warned_sr_step;       /* a report that moved a sender's clock was logged (per run) */
  CaptureRtpHistory rtp;

  /* Health (capture.c's timer reads, streaming threads write). */
  _Atomic int64_t last_frame_us;  /* monotonic; 0 = no frame in this run yet */
  _Atomic int blocked;            /* > 0 while the streaming thread waits on back-pressure */
  _Atomic bool ended;             /* offline: end of stream reached */
  _Atomic int64_t position_ns, duration_ns;  /* offline progress; -1 unknown */
  bool logged_size, logged_corrupt;  /* once per run */
} Side;

struct CapturePair {
  char *name;
  char *desc[CAPTURE_SIDE_COUNT];
  int width, height;
  size_t stride;
  double fps;
  uint64_t period_ns;
  uint64_t tolerance_ns;
  int max_pending, held_pairs;
  CaptureMode mode;
  CaptureClockMode clock;
  unsigned stall_ms, start_timeout_ms;
  unsigned backoff_min, backoff_max, backoff_reset;
  CaptureNotifier *notifier;
  CaptureTimebase *timebase;

  Side side[CAPTURE_SIDE_COUNT];

  GMutex lock;
  GCond cond;                /* offline back-pressure: mailbox taken, matcher moved, run
                                ended */
  uint8_t *pool_mem;
  bool pool_external;             /* pool_mem is the caller's (params.pool_memory) */
  CaptureBuf *pool;          /* all buffers, both sides */
  int pool_size;
  CaptureBuf *free_list[CAPTURE_SIDE_COUNT];
  CaptureMatcher matcher;
  CaptureBuf *mail_left, *mail_right;
  uint64_t mail_seq, mail_capture_ns;
  uint64_t seq;
  uint64_t last_capture_ns;  /* of the latest pair delivered (monotonic check) */
  bool logged_backwards;     /* once per run */
  unsigned run, next_run;
  /* ARRIVAL: pipeline clock -> realtime, measured once per run for both sides. */
  unsigned arrival_run;
  int64_t base_time, realtime_offset;
  /* REPLAY: offset of this run, and the end of the stream seen so far in it. */
  uint64_t replay_offset, replay_end;
  _Atomic int state;
  _Atomic int64_t running_since_us;

  /* Control thread. */
  GMainContext *ctx;
  GMainLoop *loop;
  GThread *thread;
  GstElement *pipeline;
  GSource *bus_source;
  GSource *retry_source;
  GSource *health_source;
  int64_t run_started_us;    /* monotonic, when the current pipeline was set playing */
  unsigned backoff_next;
  bool stopping;
  int gst_warnings;          /* logged in this run */
  char *last_gst_warning;

  struct {
    _Atomic uint64_t frames[CAPTURE_SIDE_COUNT], corrupt[CAPTURE_SIDE_COUNT],
      wrong_size[CAPTURE_SIDE_COUNT], starved[CAPTURE_SIDE_COUNT],
      untimed[CAPTURE_SIDE_COUNT], unpaired[CAPTURE_SIDE_COUNT], offset_count, pairs,
      backwards, overwritten, taken, failures, stalls, reconnects;
    _Atomic int64_t offset_sum_ns;
  } stats;
};

#define COUNT(p, field) atomic_fetch_add_explicit(&(p)->stats.field, 1, memory_order_relaxed)

extern const char *const capture_side_names[CAPTURE_SIDE_COUNT];

/* capture-pipeline.c, control thread (or capture_pair_new/capture_check). */
/* Builds one side into `pipe`: the parsed description, the tail, the appsink and its
 * callbacks (when `callbacks`), the hooks on elements added later. */
bool capture_side_build(CapturePair *p, GstElement *pipe, CaptureSide side, bool callbacks,
                        GError **error);
/* Connects the pipeline's hooks (deep-element-added) after both sides are in it. */
void capture_pipeline_hook(CapturePair *p, GstElement *pipe);
/* Which side a bus message comes from: "left", "right" or "pipeline". */
const char *capture_message_side(CapturePair *p, GstMessage *msg);

/* Frame pool, `lock` held. */
CaptureBuf *capture_pool_get(CapturePair *p, CaptureSide side);
void capture_pool_put(CapturePair *p, CaptureBuf *b);
/* appsink callbacks, on the streaming thread of their side (data = the Side). */
GstFlowReturn capture_on_new_sample(GstAppSink *sink, gpointer data);
/* Offline: a buffer probe on the appsink's sink pad that holds each frame until its side
 * can take it in (capture-stream.c). */
GstPadProbeReturn capture_on_offline_buffer(GstPad *pad, GstPadProbeInfo *info,
                                            gpointer data);
void capture_on_eos(GstAppSink *sink, gpointer data);
/* A new run begins (lock held): per-run state of the streaming side reset. */
void capture_stream_new_run(CapturePair *p);
