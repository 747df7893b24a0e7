/* capture.h: camera capture of stereod: one GStreamer pipeline per camera pair, frames
 * turned into 8-bit luma, timestamped with the time the camera captured them, paired by
 * that time, handed to the GPU thread.
 *
 * Sources. A CapturePair runs ONE GstPipeline holding both sides. Each side's description
 * is a gst-launch fragment, anything that plays in gst-launch-1.0 up to where video comes
 * out; stereod appends its own tail in the same parse (so a description may end in caps,
 * "... ! video/x-raw,format=GRAY8", as in gst-launch):
 *
 *   <description> ! capsfilter name=stereod-in-SIDE (video only, see below)
 *                 ! decodebin name=stereod-decode-SIDE caps="video/x-raw(ANY); image/jpeg"
 *   then, when decodebin's pad appears:
 *     raw video:  ! videoconvert ! queue ! appsink      (videoconvert is a pass-through
 *     JPEG:       ! queue ! appsink                      for the formats taken as they are)
 *
 * Examples (all tested, tests/capture/):
 *   "videotestsrc is-live=true ! video/x-raw,format=YUY2,width=640,height=360"
 *   "v4l2src device=/dev/video0 ! image/jpeg,width=1280,height=720,framerate=30/1"
 *   "rtspsrc location=rtsp://cam1/stream latency=100"     (H.264, H.265 or MJPEG)
 *   "uridecodebin uri=file:///srv/match/left.mkv", "filesrc location=left.mp4 ! qtdemux"
 *   "imagesequencesrc location=left/%05d.jpg framerate=30/1 ! identity sync=true"
 * Elements whose pads appear at run time (rtspsrc, decodebin, uridecodebin3, demuxers)
 * are linked when they appear: the capsfilter takes the first pad that carries video
 * (video/x-raw, image/jpeg, image/png, the usual compressed video types, RTP with
 * media=video), so the audio and metadata streams of a camera or a recording are left
 * unlinked. A static link needs no choice: the capsfilter then passes anything (a bare
 * "filesrc location=x.mkv" is typefound by decodebin). decodebin decodes what is not raw
 * video or JPEG with whatever decoder the machine has (avdec_h264, ...). The appsink takes:
 *   video/x-raw GRAY8 and the 8-bit planar YUV formats I420, YV12, NV12, NV21, NV16, NV61,
 *     NV24, Y41B, Y42B, Y444, A420: plane 0, the luma, is copied as it is (limited-range
 *     sources give 16..235; the stereo filter is insensitive to gain and offset);
 *   video/x-raw RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB, ABGR: Y = 0.299 R +
 *     0.587 G + 0.114 B computed exactly in integers and rounded half up, the same as
 *     tools/imageio;
 *   image/jpeg: decoded by TurboJPEG straight to gray (the JPEG's own Y channel);
 * and videoconvert turns any other raw format (YUY2, UYVY, 10-bit, ...) into the nearest
 * of these. Strides and plane offsets come from GstVideoMeta or the caps, never assumed.
 * What can be checked before anything plays (capture_check(), --check-config): that every
 * element exists, that the description parses with its properties, that its static links
 * link (a source whose output is not video, a description that ends in a sink), and that
 * it leaves no sink pad free. A source whose pads appear only when it plays (rtspsrc,
 * demuxers) cannot be link-checked before: what it carries is known once it plays, and a
 * stream that carries no video or needs a decoder the machine lacks fails then (reconnect,
 * with GStreamer's message).
 *
 * Frames: every frame is copied/decoded into a buffer of a pool allocated when the pair
 * is created (width x height luma, rows `stride` bytes apart, stride = width rounded up
 * to 4): nothing is allocated per frame in the steady state. The pool can be memory the
 * caller provides (params.pool_memory, capture_pair_pool_bytes() long), e.g. the
 * persistent map of a GPU upload buffer: a frame then lands, in its one copy from the
 * GstBuffer, where the GPU uploads it from, and stays there, unchanged, until the
 * consumer releases it. A frame of another size is
 * dropped and counted (wrong_size), logged once per pipeline run; a JPEG that does not
 * decode (corrupt header or data, truncated: TurboJPEG warnings count as errors) is
 * dropped and counted (corrupt), logged once per run. A frame that arrives while the
 * consumer holds more pairs than params.held_pairs finds no free buffer: dropped, counted
 * (starved).
 *
 * Capture time. Every frame gets capture_ns, the time its camera captured it on
 * CLOCK_REALTIME (ns since 1970), from one of these clocks (params.clock, per pair; with
 * CAPTURE_CLOCK_AUTO decided per side at the first frame of every pipeline run):
 *  - SENDER: the camera's own capture time: a GstReferenceTimestampMeta of reference
 *    timestamp/x-ntp or timestamp/x-unix on the buffer where a source adds one, else the
 *    frame's RTP timestamp mapped to the sender's NTP time by its latest RTCP sender
 *    report (every rtpjitterbuffer of the side is hooked, rtspsrc's and rtpbin's: its
 *    handle-sync gives the reports, a probe on its output the RTP timestamp of each PTS,
 *    as the decoded frame keeps only the PTS): capture_ns = SR NTP + (RTP - SR RTP) /
 *    clock rate, exact whatever the jitterbuffer's skew correction. A report is used once
 *    the next one agrees with it (within 1 ms + 500 ppm: a sender's first report can be
 *    off by most of a frame), and a report that moves the sender's clock is used once the
 *    next one confirms the step (a warning, once per run; the clock in use stays
 *    meanwhile). Frames before that are dropped (counted as untimed); when no report came
 *    within params.start_timeout_ms of the run's first frame, the side falls back to
 *    ARRIVAL for the rest of the run, with a warning (one report only: it is used
 *    unconfirmed, with a warning). Two cameras that are separate network devices
 *    pair when their clocks are synchronized (NTP, PTP), whatever their network delays.
 *  - ARRIVAL: the local pipeline clock: capture_ns = the buffer's running time + base time
 *    + (realtime - pipeline clock), the offset measured once per run for both sides. For
 *    a local camera (v4l2src) that is the driver's capture time; for a network source it
 *    is the arrival time (a warning says so when a network source runs on it).
 *  - REPLAY: recordings and files: capture_ns = start + offset + the buffer's stream time
 *    (its PTS in its segment's stream time), where start is one instant shared by every
 *    pair that shares a CaptureTimebase (taken at the first frame of any of them:
 *    realtime then - that frame's stream time), so frame k of every pair of a recorded
 *    clip carries the same capture time however the pipelines started. offset is 0 in the
 *    first run; each new run (the clip started again after its end, a reconnect) adds the
 *    end of the previous run's stream (its latest stream time + duration, one frame period
 *    when the buffers have none), so capture times go on growing.
 *  AUTO picks SENDER for a side with a reference timestamp meta or an rtpjitterbuffer,
 *  else ARRIVAL for a live source (latency query), else REPLAY.
 * The capture times of the pairs delivered by a CapturePair only grow: a pair whose time
 * is not after the previous one (a camera clock stepped back) is dropped and counted
 * (backwards), with a warning once per run.
 *
 * Pairing: frames are matched by capture_ns. Up to params.max_pending unmatched frames
 * per side wait for a partner; a frame pairs with the partner nearest in time within
 * params.tolerance_ns. Pairs are produced in order: a waiting frame that can no longer
 * find a partner (the other side has moved past it, or it was pushed out of the waiting
 * list) is dropped and counted (unpaired). For every frame the matcher records how far
 * the nearest frame of the other side is (offset_sum_ns/offset_count in the stats: the
 * mean signed left - right distance), which is what tells why two cameras do not pair.
 * Two sources that are not synchronized are a random fraction of a frame apart in every
 * run: a live GstBaseSrc that makes up its timestamps (videotestsrc is-live=true) offsets
 * them by the running time at which its thread produced its first buffer, so the two
 * sides of one pipeline differ by how far apart their threads started (tens of ms on a
 * loaded machine). Such pairs need a tolerance of about half the frame period.
 *
 * Delivery, live mode (CAPTURE_MODE_LIVE): appsinks max-buffers=2 drop=true, queues
 * leaky; a completed pair goes into the "latest pair" mailbox of one slot; a pair still
 * there when the next one completes is released and counted (overwritten): the newest
 * wins. Offline mode (CAPTURE_MODE_OFFLINE, for recordings): the pipeline runs without a
 * clock (nothing waits for real time: "identity sync=true" does not throttle), appsinks
 * and queues never drop, and nothing is lost: a streaming thread that completes a pair
 * while the mailbox is full waits until the consumer takes it, and a side whose waiting
 * list is full waits for the other side; these waits end when the run ends (stop,
 * failure), so they never outlive the pipeline. The end of stream of a side ends that
 * side; when both sides ended the pair is ENDED (no reconnect; frames still waiting for a
 * partner are counted as unpaired; the mailbox keeps its last pair for the consumer). A
 * source error or a stall in offline mode makes the pair FAILED (no reconnect either:
 * replaying a recording from its start would deliver its frames twice).
 *
 * Timestamps of a pair: seq, a number counting delivered pairs from 1, monotonic over the
 * pair's whole life (reconnects included); capture_ns, the left frame's capture time.
 *
 * Health. A side that delivers no frame for params.stall_ms (default 3 frame periods)
 * while its pipeline runs, and has none waiting in its tail's queue, is stalled: one
 * warning "pair NAME: left camera
 * stalled: no frame for N ms; reconnecting in M ms", the state STALLED, the pipeline torn
 * down and rebuilt with the backoff below. A run whose side delivers no first frame
 * within params.start_timeout_ms of its start (a camera that accepts the connection and
 * sends nothing, an RTSP server that does not answer, a sink that never takes the frames
 * waiting in its queue) fails the same way (RECONNECTING).
 * In offline mode a side waiting on back-pressure is never stalled, and stall_ms is at
 * least start_timeout_ms (nothing is real time there: only a hang is a stall; a stall or
 * a failure ends the pair as FAILED). Offline, a frame waits for room (its side's waiting
 * list, a free buffer, the mailbox) on the appsink's sink pad, before the sink: a wait in
 * the sink's render callback would hold its preroll lock, which the pipeline's change to
 * PLAYING needs. GStreamer warnings of
 * the pipeline are logged (the first 5 of a run, a warning that repeats the one before
 * not again, also across runs; the rest at debug level).
 * capture_health_update() turns the stats of an interval into the operator's warnings
 * (pairing rate, camera rate), once per state change.
 *
 * Failure (live mode): a bus ERROR from any element of the pipeline, an end of stream on
 * either appsink, a refused state change, a stall or a start-up timeout puts the pair
 * into RECONNECTING (STALLED for a stall): one warning "pair NAME: source failed: MSG;
 * reconnecting in N ms", the pipeline is set to NULL and dropped, and after the backoff a
 * new one is built from the same descriptions and started. Backoff: params.backoff_min_ms,
 * doubled after each failure up to backoff_max_ms, back to the minimum when the pair had
 * been running for backoff_reset_ms before it failed. Failed restarts while reconnecting
 * are logged at debug level only. When the first pair flows again the state becomes
 * RUNNING and one message "pair NAME: capture running" is logged. Pairs are independent:
 * each has its own pipeline and control thread.
 *
 * Threads: a pair has one control thread (its own GMainContext: bus watch, EOS
 * notices, restart and health timers) and the streaming threads of its pipeline, which
 * run the appsink callbacks: luma conversion and JPEG decode happen there, outside any
 * lock. None of them touches GL. All functions below are thread safe unless said
 * otherwise; capture_pair_take/release are meant for the one consumer (GPU) thread, which
 * waits for pairs of all CapturePairs on one shared CaptureNotifier (a GMutex + GCond +
 * counter; no polling); the notifier is also signalled when a pair's state changes.
 *
 * gst_init() is the caller's job, before capture_pair_new(). Logging goes through g_log
 * with the domain "stereod-capture".
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define CAPTURE_ERROR (capture_error_quark())
GQuark capture_error_quark(void);

typedef enum {
  CAPTURE_ERROR_INVALID,      /* a parameter out of range */
  CAPTURE_ERROR_DESCRIPTION,  /* a source description does not parse or does not fit */
  CAPTURE_ERROR_FAILED,       /* GStreamer refused to build the pipeline */
  CAPTURE_ERROR_COUNT
} CaptureErrorCode;

typedef enum {
  CAPTURE_SIDE_LEFT,
  CAPTURE_SIDE_RIGHT,
  CAPTURE_SIDE_COUNT
} CaptureSide;

typedef enum {
  CAPTURE_STATE_STOPPED,       /* created but not started, or stopped */
  CAPTURE_STATE_STARTING,      /* started, no pair delivered yet */
  CAPTURE_STATE_RUNNING,       /* pairs are flowing */
  CAPTURE_STATE_RECONNECTING,  /* a source failed; waiting for the backoff or a restart */
  CAPTURE_STATE_STALLED,       /* a camera sent nothing for stall_ms; reconnecting */
  CAPTURE_STATE_ENDED,         /* offline: both sides reached their end of stream */
  CAPTURE_STATE_FAILED,        /* offline: a source failed or stalled; no reconnect */
  CAPTURE_STATE_COUNT
} CaptureState;

const char *capture_state_to_string(CaptureState state);  /* "running", ... */

typedef enum {
  CAPTURE_MODE_LIVE,           /* real time: newest pair wins, reconnect on failure */
  CAPTURE_MODE_OFFLINE,        /* recordings: every frame, back-pressure, end at EOS */
  CAPTURE_MODE_COUNT
} CaptureMode;

typedef enum {
  CAPTURE_CLOCK_AUTO,          /* per side and run: SENDER, ARRIVAL or REPLAY (above) */
  CAPTURE_CLOCK_SENDER,
  CAPTURE_CLOCK_ARRIVAL,
  CAPTURE_CLOCK_REPLAY,
  CAPTURE_CLOCK_COUNT
} CaptureClockMode;

const char *capture_clock_to_string(CaptureClockMode clock);  /* "auto", "sender", ... */

/* ---------------------------------------------------------------- notifier */

/* A wake-up shared by several pairs and one consumer: each delivered pair bumps its
 * counter and signals it. The consumer never sleep-polls:
 *
 *   for (;;) {
 *     uint64_t seen = capture_notifier_get(n);
 *     bool any = false;
 *     for (each pair) any |= capture_pair_take(pair, ...) ...;
 *     if (!any) capture_notifier_wait(n, seen, deadline);
 *   }
 *
 * Reading the counter before looking at the mailboxes makes a pair delivered in between
 * end the wait at once (no lost wake-up). Reference counted; thread safe. */
typedef struct CaptureNotifier CaptureNotifier;

CaptureNotifier *capture_notifier_new(void);
CaptureNotifier *capture_notifier_ref(CaptureNotifier *n);
void capture_notifier_unref(CaptureNotifier *n);          /* accepts NULL */
uint64_t capture_notifier_get(CaptureNotifier *n);
/* Bumps the counter and wakes the waiters (for other events of the consumer: stop,
 * reload). */
void capture_notifier_signal(CaptureNotifier *n);
/* Waits until the counter differs from `seen` or until `deadline_us` on the
 * g_get_monotonic_time() clock. Returns TRUE when the counter changed. */
bool capture_notifier_wait(CaptureNotifier *n, uint64_t seen, int64_t deadline_us);

/* ---------------------------------------------------------------- timebase */

/* The start of the replay clock, shared by the pairs that replay recordings together
 * (one per daemon): set once, by the first frame of any of them. Reference counted;
 * thread safe (one atomic compare-and-swap). */
typedef struct CaptureTimebase CaptureTimebase;

CaptureTimebase *capture_timebase_new(void);
CaptureTimebase *capture_timebase_ref(CaptureTimebase *tb);
void capture_timebase_unref(CaptureTimebase *tb);         /* accepts NULL */
/* The start in ns (CLOCK_REALTIME): `proposal` when no start was set yet (it becomes the
 * start), else the start set before. `proposal` must not be 0. */
uint64_t capture_timebase_start(CaptureTimebase *tb, uint64_t proposal);

/* ---------------------------------------------------------------- pair */

typedef struct {
  const char *name;              /* for logs ("north-1"); copied */
  const char *left;              /* source descriptions (see above); copied */
  const char *right;
  int width, height;             /* expected frame size in px, 1..16384 */
  double fps;                    /* expected frame rate, 0..1000; 0 = 25 (stall_ms
                                    default, replay end of buffers without duration) */
  uint64_t tolerance_ns;         /* pairing tolerance; 0 = 5 ms */
  int max_pending;               /* unmatched frames kept per side, 1..8; 0 = 2 */
  int held_pairs;                /* pairs the consumer may hold at once, 1..8; 0 = 1 */
  CaptureMode mode;              /* 0 = CAPTURE_MODE_LIVE */
  CaptureClockMode clock;        /* 0 = CAPTURE_CLOCK_AUTO */
  unsigned stall_ms;             /* 0 = 3 frame periods, at least 100 ms; offline at
                                    least start_timeout_ms */
  unsigned start_timeout_ms;     /* first frame of a run, and the first sender report;
                                    0 = 10000 */
  /* The frame pool's memory: NULL = allocated by the pair; else capture_pair_pool_bytes()
   * bytes the caller owns, keeps valid and leaves alone until capture_pair_free(), aligned
   * to 64 bytes (the buffers inside start at multiples of 64 from it). */
  uint8_t *pool_memory;
  unsigned backoff_min_ms;       /* reconnect backoff; 0 = 500 */
  unsigned backoff_max_ms;       /* 0 = 30000; raised to backoff_min_ms if lower */
  unsigned backoff_reset_ms;     /* running time that resets the backoff; 0 = 10000 */
  CaptureNotifier *notifier;     /* signalled on each delivered pair and state change;
                                    may be NULL; ref'd */
  CaptureTimebase *timebase;     /* replay start shared with other pairs; NULL = the pair
                                    has its own; ref'd */
} CapturePairParams;

/* One luma frame. Owned by the pair's pool; read-only for the consumer between
 * capture_pair_take() and capture_pair_release(). */
typedef struct {
  const uint8_t *data;           /* height rows of width bytes, rows stride bytes apart */
  int width, height;             /* px */
  size_t stride;                 /* bytes, width rounded up to 4 */
  uint64_t pts_ns;               /* the buffer's running time (the arrival time when it
                                    had no PTS) */
  uint64_t capture_ns;           /* CLOCK_REALTIME capture time (see above): pairing key */
  uint64_t number;               /* frames received on this side before this one */
} CaptureFrame;

typedef struct {
  uint64_t frames[CAPTURE_SIDE_COUNT];      /* samples received from each appsink */
  uint64_t corrupt[CAPTURE_SIDE_COUNT];     /* JPEG that did not decode */
  uint64_t wrong_size[CAPTURE_SIDE_COUNT];  /* frames of another size, or bad caps */
  uint64_t starved[CAPTURE_SIDE_COUNT];     /* no free buffer (consumer holds too many) */
  uint64_t untimed[CAPTURE_SIDE_COUNT];     /* SENDER: before the first sender report */
  uint64_t unpaired[CAPTURE_SIDE_COUNT];    /* converted, never paired (given up, or
                                             * waiting when the pipeline stopped) */
  int64_t offset_sum_ns;                    /* sum over frames of the signed distance
                                             * left - right to the nearest frame of the
                                             * other side */
  uint64_t offset_count;                    /* frames in offset_sum_ns */
  uint64_t pairs;                           /* pairs put into the mailbox */
  uint64_t backwards;                       /* pairs dropped: capture time not after
                                             * the previous pair's */
  uint64_t overwritten;                     /* pairs replaced before the consumer took them */
  uint64_t taken;                           /* pairs the consumer took */
  uint64_t failures;                        /* errors/EOS/stalls that started a reconnect */
  uint64_t stalls;                          /* of which stalls */
  uint64_t reconnects;                      /* pipelines rebuilt and restarted */
} CaptureStats;

typedef struct CapturePair CapturePair;

/* Validates the parameters and builds the pipeline (both descriptions are parsed and
 * linked here, as capture_check() does: a failure there is CAPTURE_ERROR_DESCRIPTION,
 * naming the pair and the side: a configuration error, never retried), allocates the
 * frame pool. A source that parses but cannot start (a camera that is not there) is not
 * an error here: it fails after capture_pair_start() and reconnects. Nothing runs until
 * capture_pair_start(). Returns NULL and sets `error` on failure. */
CapturePair *capture_pair_new(const CapturePairParams *params, GError **error);
/* The bytes of pool_memory a pair with these parameters needs (width, height,
 * max_pending, held_pairs; the parameters need not be valid otherwise). */
size_t capture_pair_pool_bytes(const CapturePairParams *params);
/* Starts the control thread and sets the pipeline to PLAYING (a refused state change is
 * a source failure: reconnect). Call once. */
void capture_pair_start(CapturePair *pair);
/* Stops: pipeline to NULL, control thread joined, frames waiting for a partner released;
 * the mailbox keeps its pair. State STOPPED. Idempotent. */
void capture_pair_stop(CapturePair *pair);
/* Stops and frees. The consumer must have released every frame it took. Accepts NULL. */
void capture_pair_free(CapturePair *pair);

/* Builds both sides' pipeline from `params` (names, sizes and descriptions; nothing is
 * allocated for frames), links it, and destroys it without changing its state: nothing
 * plays, no device or file is opened. Returns FALSE with CAPTURE_ERROR_DESCRIPTION (the
 * message says what is wrong with the description, without the pair's name) and the side
 * in *bad_side (may be NULL), or CAPTURE_ERROR_INVALID/FAILED. For --check-config. */
bool capture_check(const CapturePairParams *params, CaptureSide *bad_side, GError **error);

const char *capture_pair_get_name(CapturePair *pair);
CaptureState capture_pair_get_state(CapturePair *pair);
/* The clock a side runs on in the current run (CAPTURE_CLOCK_AUTO until its first frame
 * decided it). */
CaptureClockMode capture_pair_get_clock(CapturePair *pair, CaptureSide side);
/* Each counter is read atomically; the set is not one instant's snapshot. */
void capture_pair_get_stats(CapturePair *pair, CaptureStats *stats);
/* Offline progress: the latest stream time received (the lesser of the two sides) and
 * the stream's duration (the lesser known one), ns; -1 when not known. */
void capture_pair_get_progress(CapturePair *pair, int64_t *position_ns, int64_t *duration_ns);

/* Non-blocking: takes the latest pair out of the mailbox. Returns FALSE when it is empty.
 * `capture_ns` (left frame, CLOCK_REALTIME) and `seq` may be NULL. The frames stay valid
 * and unchanged until given back with capture_pair_release(); at most
 * params.held_pairs pairs may be held at a time (more only starves the capture). In
 * offline mode taking a pair lets a waiting streaming thread go on. */
bool capture_pair_take(CapturePair *pair, const CaptureFrame **left,
                       const CaptureFrame **right, uint64_t *capture_ns, uint64_t *seq);
/* Gives a taken pair back to the pool. */
void capture_pair_release(CapturePair *pair, const CaptureFrame *left,
                          const CaptureFrame *right);

/* ---------------------------------------------------------------- health */

/* The operator's view of one pair over a stats interval: whether it pairs at least half
 * of its frames, and whether each camera runs within 10 % of the expected rate. Kept by
 * the caller (zero-initialised), updated once per interval; pure, no locking. */
typedef struct {
  bool low_pairing;
  bool rate_off[CAPTURE_SIDE_COUNT];
} CaptureHealth;

#define CAPTURE_HEALTH_MAX_MESSAGES 3

typedef struct {
  GLogLevelFlags level;          /* G_LOG_LEVEL_WARNING for a problem, MESSAGE for a
                                    recovery */
  char *text;                    /* one line, "pair NAME: ..."; g_free it */
} CaptureHealthMessage;

/* Compares the counters of an interval of `seconds` (`before`, `now`). The pairing rate
 * (pairs / frames of the side with more frames) is judged when both sides delivered at
 * least 4 frames; below 50 % the pair is low, and the message gives the mean distance of
 * the nearest left and right frames against `tolerance_ns`. A camera's rate is judged
 * when `judge_rate` (live mode, the pair running through the whole interval without a
 * failure) and `fps` > 0: more than 10 % off is off. Fills `out` with the messages of the
 * state changes (a warning entering a bad state, a message leaving it) and returns how
 * many (at most CAPTURE_HEALTH_MAX_MESSAGES). */
int capture_health_update(CaptureHealth *health, const char *name, const CaptureStats *before,
                          const CaptureStats *now, double seconds, double fps,
                          uint64_t tolerance_ns, bool judge_rate,
                          CaptureHealthMessage out[CAPTURE_HEALTH_MAX_MESSAGES]);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureNotifier, capture_notifier_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureTimebase, capture_timebase_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CapturePair, capture_pair_free)

G_END_DECLS
