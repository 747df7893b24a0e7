/* frame-loop-private.h: what frame-loop.c (the GPU thread, stats, reload),
 * frame-groups.c (the engine groups, their batches and the hand-over of frames) and
 * frame-flow.c (the pairs' optical flow) share.
 * Internal to daemon/. Everything here belongs to the GPU thread unless a field says
 * otherwise. */
#pragma once

#include "client/ring-writer.h"
#include "daemon/capture.h"
#include "daemon/config.h"
#include "daemon/frame-loop.h"
#include "daemon/frame-publish.h"
#include "daemon/metrics.h"
#include "gpu/gpu.h"
#include "kernels/flow.h"
#include "kernels/stereo.h"

#define MAX_LATENCIES 4096     /* latency samples kept per pair and stats interval */
#define MAX_HELD 8             /* capture pairs a pair may hold (the capture's limit) */
/* latency histogram: bin i covers [0.01 ms * 1.01^i, 0.01 ms * 1.01^(i+1)), up to 116 s */
#define LATENCY_BINS 1640
#define LATENCY_BIN0_MS 0.01

/* A pair taken from its capture: held until the GPU has uploaded it. */
typedef struct {
  uint64_t submission;
  const CaptureFrame *left, *right;
} HeldPair;

typedef struct {
  const StereodPairConfig *cfg;
  RingWriter *ring;
  CapturePair *capture;
  int group, pos;            /* its engine group and its position (StereoInput.pair) there */
  HeldPair held[MAX_HELD];   /* oldest first */
  int n_held;
  uint64_t last_seq;         /* of the last frame handed to the publisher */
  /* taken for the current round of one instant (live: the group's; offline: all
   * pairs'), not submitted yet */
  const CaptureFrame *pending_left, *pending_right;
  uint64_t pending_ns, pending_seq;
  /* written by the publishers: under FrameLoop.stats_lock */
  uint64_t published;        /* frames published over the loop's life */
  /* since the last stats line (under FrameLoop.stats_lock) */
  uint64_t in, out;
  double gpu_ms;
  double latency_ms[MAX_LATENCIES];
  int n_latency;
  /* the GPU thread's */
  CaptureStats last_capture;
  CaptureState last_state;   /* at the last stats line */
  CaptureHealth health;
  double out_fps;            /* of the last interval, for STATUS= */
  DaemonPairMetrics *metrics;   /* NULL without [daemon] metrics= (any thread may call it) */
  /* flow=true (frame-flow.c); flow NULL otherwise */
  FlowEngine *flow;          /* the flow pairs of its size share it (FrameLoop owns it) */
  int flow_index;            /* its pair in that engine */
  int16_t *flow_unknown;     /* width * height FLOW_S16_UNKNOWN: a frame without flow */
  uint64_t flow_seq;         /* the frame last given to the flow engine (0: none) */
  uint64_t flow_capture_ns;  /* and its capture time */
} LoopPair;

typedef struct LoopGroup LoopGroup;

/* A frame handed to a publisher. */
typedef struct {
  struct LoopBatch *batch;
  int k;
} LoopJob;

/* A submitted batch: what the loop keeps of it until its frames are published. */
typedef struct LoopBatch {
  LoopGroup *group;
  uint64_t id;               /* the engine's submission id; 0 = record free */
  int n;
  int pairs[STEREO_MAX_BATCH];             /* loop pair index per position */
  uint64_t seq[STEREO_MAX_BATCH], capture_ns[STEREO_MAX_BATCH];
  StereoFrame frames[STEREO_MAX_BATCH];
  bool has_flow[STEREO_MAX_BATCH];         /* a flow was queued for the position's frame */
  uint64_t flow_submission;                /* the flow submission of the batch's flow pairs */
  int flow_index[STEREO_MAX_BATCH];        /* the position's input in it */
  FlowFrame flows[STEREO_MAX_BATCH];       /* collected with the frame, when has_flow */
  LoopJob jobs[STEREO_MAX_BATCH];
  int64_t submit_us;
  int collected;
  gint unpublished;          /* frames collected and not yet published (atomic) */
  double gpu_ms;             /* the batch's GPU time */
  double flow_ms;            /* the GPU time of its pairs' flows (queued before it) */
} LoopBatch;

/* The pairs of equal size and filter parameters: one engine, one batch per submission. */
struct LoopGroup {
  FrameLoop *fl;
  StereoEngine *engine;
  int pairs[STEREO_MAX_BATCH];   /* loop pair index per position */
  int n;
  LoopBatch batches[STEREO_MAX_IN_FLIGHT];
  int queued;                    /* batches submitted and not all collected */
  double last_gpu_ms;            /* of its last finished batch, with its pairs' flows */
  int last_n;                    /* the pairs of that batch */
};

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
  StereodConfig *next_config;        /* reload: waiting for its engines to be built */

  GpuContext *gpu;
  CaptureNotifier *notifier;
  CaptureTimebase *timebase;   /* the replay start shared by the pairs */
  int64_t started_us;          /* when the pipelines started (offline summary) */
  int64_t last_stats_us;       /* the last stats lines (the GPU thread's) */
  gint exit_status;            /* atomic: what the daemon exits with once the loop is done */
  GpuBuffer *arena;          /* the capture pools of every pair (persistent upload map) */
  FramePublisher *publisher;
  LoopPair *pairs;
  int n_pairs;
  FlowEngine *flow_engines[STEREOD_CONFIG_MAX_PAIRS];   /* frame-flow.c */
  int n_flow_engines;
  LoopGroup *groups, *next_groups;   /* next: reload, being built */
  int n_groups, n_next_groups;
  int in_flight;             /* batches on the GPU at most, the whole daemon (K) */
  int queued;                /* batches on the GPU now */
  int rr;                    /* the group that submits first next time */
  /* offline_speed > 0: the replay's clock, set by its first round (capture time of the
   * first frames, monotonic time then) */
  uint64_t replay_first_ns;
  int64_t replay_start_us;   /* 0 until the first round */
  GMutex stats_lock;
  int publish_error;         /* the first failed ring_writer_publish (negative errno) */
  /* totals for frame_loop_get_stats, under stats_lock */
  int64_t totals_since_us;
  uint64_t total_submitted, total_published, total_batches;
  double total_gpu_ms, total_latency_max_ms;
  uint32_t latency_hist[LATENCY_BINS];
  CaptureStats capture_base[STEREOD_CONFIG_MAX_PAIRS];   /* capture counters at the reset */
  char *status;              /* under lock */
  GMainContext *main_context;
  DaemonMetrics *metrics;    /* [daemon] metrics=: its HTTP thread reads only atomics */
  GSourceFunc on_done;
  gpointer on_done_data;
};

/* frame-stats.c */

/* One stats line per pair for the last `seconds`, the capture's health warnings when they
 * change, offline a progress line; the STATUS= text for frame_loop_status(). */
void frame_stats_log(FrameLoop *fl, double seconds);
/* The [daemon] metrics= server for the pairs of `config` (before the GPU thread: a port
 * that cannot be bound is a start-up failure). */
DaemonMetrics *frame_stats_metrics_start(const StereodConfig *config, GError **error);
/* The captures' counts and states into the metrics (daemon_metrics_set_collector, on the
 * HTTP thread before each scrape; `data` is the FrameLoop). */
void frame_stats_metrics_collect(gpointer data);
/* Offline, at the end (everything published): what was published, the exit status. */
void frame_stats_offline_summary(FrameLoop *fl);

/* frame-groups.c */

/* Groups the pairs of `config` by engine (size, filter parameters except the noise floor,
 * calibration or none, depth) and creates one engine per group. `async`: the programs
 * build in the background (reload). */
bool frame_groups_build(FrameLoop *fl, const StereodConfig *config, bool async,
                        LoopGroup **groups, int *n_groups, GError **error);
void frame_groups_free(LoopGroup *groups, int n_groups);
/* Runs one batch of a blank pair through every engine and waits for it: the drivers that
 * compile a program at its first dispatch (Mesa) do it now, not on the first frames. */
bool frame_groups_warm_up(LoopGroup *groups, int n_groups, GError **error);
/* Whether two pairs have the same filter, noise floor included. */
bool frame_groups_same_filter(const StereodPairConfig *a, const StereodPairConfig *b);
/* Whether two configs group the pairs alike (then a reload changes no engine). */
bool frame_groups_same(const StereodConfig *a, const StereodConfig *b);
/* Live, the pairs a batch may hold so that it takes at most a frame period (of the
 * fastest member, `fps`) divided by the batches allowed on the GPU (`in_flight`, K): a
 * round's pairs go to the GPU in batches of at most this many, back to back: the first
 * batches of a round are published within about two frame periods of the capture, the
 * last after the round's whole GPU time (the round stays one instant). From
 * the group's last batch (`last_batch_ms` of GPU time for `last_n` pairs; a batch's fixed
 * cost makes that an overestimate for small batches); `members` before any batch. 1..members. */
int frame_groups_batch_cap(double last_batch_ms, int last_n, double fps, int in_flight,
                           int members);
/* Gives back the capture pairs whose uploads are done. */
void frame_groups_release_uploaded(FrameLoop *fl);
/* Collects the finished batches (wait: the oldest one, blocking) and hands their frames
 * to the publishers. TRUE when a frame was collected. */
bool frame_groups_collect(FrameLoop *fl, bool wait, GError **error);
/* Submits batches while fewer than fl->in_flight are on the GPU: per group, the newest
 * captured pair of every member that has one. TRUE when a batch was submitted. */
bool frame_groups_submit(FrameLoop *fl, GError **error);
/* Offline: one round of one instant. Every pair that can still deliver takes its next
 * pair; once all hold one (a pair whose streams ended holds none), those within their
 * tolerance of the earliest capture time are submitted in their groups' batches and all
 * are collected before it returns. TRUE when a round ran. */
bool frame_groups_offline_round(FrameLoop *fl, GError **error);
/* Offline: whether a pair holds a pair taken for a round that has not run. */
bool frame_groups_pending(FrameLoop *fl);
/* Waits for everything on the GPU and in the publishers, and gives every held capture
 * pair back. */
bool frame_groups_drain(FrameLoop *fl, GError **error);
/* When the loop expects the oldest batch on the GPU to finish (monotonic us), or 0. */
int64_t frame_groups_expected_done(FrameLoop *fl);

/* frame-flow.c: the flow=true pairs' FlowEngines (one per image size, a pair each), fed
 * with the left frames their batches take, a stereo batch's flow pairs in one submission:
 * one flow per frame whose previous frame was the one before it: consecutive capture
 * sequence numbers, capture times at most FRAME_FLOW_MAX_GAP frame periods apart (a
 * reconnect keeps the numbers consecutive). After a gap the pair's previous frame is
 * forgotten and that frame has no flow. A flow is collected with its frame's disparity
 * and published in the same slot. */
#define FRAME_FLOW_MAX_GAP 2.5

/* Creates the engines (in_flight submissions, the loop's in_flight) and the pairs'
 * unknown planes, and runs two blank frames through each so that the drivers compile
 * their programs now. */
bool frame_flow_open(FrameLoop *fl, GError **error);
/* Frees them (before the GPU context); accepts a loop without flow pairs. */
void frame_flow_close(FrameLoop *fl);
/* Whether the pair's engine has a free submission slot now (every slot holds flows that
 * are queued on the GPU or still being copied by a publisher). TRUE without flow. */
bool frame_flow_can_take(LoopPair *p);
/* The input of the left frame `seq` (reset after a gap); the pair's next frame follows
 * this one. */
void frame_flow_input(LoopPair *p, const CaptureFrame *left, uint64_t seq,
                      uint64_t capture_ns, FlowInput *in);
/* Submits the inputs of the loop pairs `pairs` (n, all of engine e): the frames are
 * copied by the call (their memory may be reused at once); queued[i]: a flow from the
 * previous frame will come for input i, from submission *id. On failure the pairs'
 * next frames start again. */
bool frame_flow_submit(FrameLoop *fl, const int *pairs, FlowEngine *e, const FlowInput *in,
                       int n, bool *queued, uint64_t *id, GError **error);
/* The flow planes for frame `seq`: its flow (input `index` of `submission`, collected
 * into *frame, waiting for the GPU) when `queued`, else the unknown planes. */
bool frame_flow_collect(LoopPair *p, uint64_t submission, int index, uint64_t seq,
                        bool queued, FlowFrame *frame, const void **u, const void **v,
                        GError **error);
/* A publisher has copied the frame: its flow slot may be written again. Any thread. */
void frame_flow_published(LoopPair *p, FlowFrame *frame, bool queued);
