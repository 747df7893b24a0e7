/* capture-pair.h: the CapturePair object's state, shared by capture.c (the object, its
 * pipeline and control thread) and capture-stream.c (the streaming threads: frame pool,
 * conversion, pairing). Internal to daemon/. See capture.c for the locking rules. */
#pragma once

#include "daemon/capture-private.h"

#include <gst/app/gstappsink.h>
#include <stdatomic.h>

#define CAPTURE_EOS_MESSAGE "stereod-capture-eos"

typedef struct {
  CapturePair *pair;
  GstElement *bin;           /* the parsed description in the current pipeline */
  CaptureSide side;
  CaptureDecoder *dec;       /* streaming thread of this side only */
  unsigned run;              /* run of the pipeline that feeds this side */
  uint64_t count;            /* frames received (streaming thread only) */
  /* Measured at the first frame of each run (streaming thread only). */
  unsigned clock_run;
  int64_t base_time;         /* pipeline base time, clock ns */
  int64_t realtime_offset;   /* CLOCK_REALTIME ns - pipeline clock ns */
  bool logged_size, logged_corrupt;  /* once per run */
} Side;

struct CapturePair {
  char *name;
  char *desc[CAPTURE_SIDE_COUNT];
  int width, height;
  size_t stride;
  uint64_t tolerance_ns;
  int max_pending, held_pairs;
  unsigned backoff_min, backoff_max, backoff_reset;
  CaptureNotifier *notifier;

  Side side[CAPTURE_SIDE_COUNT];

  GMutex lock;
  uint8_t *pool_mem;
  bool pool_external;             /* pool_mem is the caller's (params.pool_memory) */
  CaptureBuf *pool;          /* all buffers, both sides */
  int pool_size;
  CaptureBuf *free_list[CAPTURE_SIDE_COUNT];
  CaptureMatcher matcher;
  CaptureBuf *mail_left, *mail_right;
  uint64_t mail_seq, mail_capture_ns;
  uint64_t seq;
  unsigned run, next_run;
  _Atomic int state;
  _Atomic int64_t running_since_us;

  /* Control thread. */
  GMainContext *ctx;
  GMainLoop *loop;
  GThread *thread;
  GstElement *pipeline;
  GSource *bus_source;
  GSource *retry_source;
  unsigned backoff_next;
  bool stopping;

  struct {
    _Atomic uint64_t frames[CAPTURE_SIDE_COUNT], corrupt[CAPTURE_SIDE_COUNT],
      wrong_size[CAPTURE_SIDE_COUNT], starved[CAPTURE_SIDE_COUNT],
      unpaired[CAPTURE_SIDE_COUNT], pairs, overwritten, taken, failures, reconnects;
  } stats;
};

#define COUNT(p, field) atomic_fetch_add_explicit(&(p)->stats.field, 1, memory_order_relaxed)

extern const char *const capture_side_names[CAPTURE_SIDE_COUNT];

/* Frame pool, `lock` held. */
CaptureBuf *capture_pool_get(CapturePair *p, CaptureSide side);
void capture_pool_put(CapturePair *p, CaptureBuf *b);
/* appsink callbacks, on the streaming thread of their side (data = the Side). */
GstFlowReturn capture_on_new_sample(GstAppSink *sink, gpointer data);
void capture_on_eos(GstAppSink *sink, gpointer data);
