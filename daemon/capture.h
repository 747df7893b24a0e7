/* capture.h: camera capture of stereod: one GStreamer pipeline per camera pair, frames
 * turned into 8-bit luma, paired by timestamp, handed to the GPU thread.
 *
 * A CapturePair runs ONE GstPipeline holding both sources, so that both share one clock:
 *
 *   <left description>  ! queue max-size-buffers=2 leaky=downstream ! appsink name=left
 *   <right description> ! queue max-size-buffers=2 leaky=downstream ! appsink name=right
 *
 * (appsinks: max-buffers=2 drop=true sync=false async=false). Each description is a
 * gst-launch fragment, parsed together with its queue by gst_parse_bin_from_description()
 * (so it may end in caps, "... ! video/x-raw,format=GRAY8", as in gst-launch); it must
 * end in an element with a source pad and leave no sink pad free. Examples:
 *   "v4l2src device=/dev/video0 ! image/jpeg,width=1280,height=720,framerate=30/1"
 *   "rtspsrc location=rtsp://cam1/stream ! rtph264depay ! avdec_h264"
 *   "imagesequencesrc location=left/%05d.jpg framerate=30/1" (timestamped file sequences)
 * The appsinks accept:
 *   video/x-raw GRAY8, I420, NV12 (the luma plane is taken as is: limited-range sources
 *     give 16..235; the stereo filter is insensitive to gain and offset),
 *   video/x-raw RGB, BGR, RGBx, BGRx, xRGB, xBGR (Y = 0.299 R + 0.587 G + 0.114 B computed
 *     exactly in integers and rounded half up, the same as tools/imageio),
 *   image/jpeg (decoded by TurboJPEG straight to gray: the JPEG's own Y channel).
 * A source that delivers anything else needs a converter in its description
 * ("... ! videoconvert", or "... ! jpegdec" for other codecs via their decoders).
 * Strides and plane offsets come from GstVideoMeta or the caps, never assumed.
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
 * Pairing: frames are matched by running-time PTS (the buffer's PTS in the pipeline's
 * running time; the PTS itself in a segment that is not in TIME format, as GstBaseSink
 * does; the arrival time when the buffer has none: multifilesrc gives none, so two
 * multifilesrc sides pair by arrival unless something like "identity datarate=N"
 * timestamps them). Up to params.max_pending
 * unmatched frames per side wait for a partner; a frame pairs with the partner nearest in
 * time within params.tolerance_ns. Pairs are produced in order: a waiting frame that can
 * no longer find a partner (the other side has moved past it, or it was pushed out of
 * the waiting list) is dropped and counted (unpaired). A completed pair goes into the
 * "latest pair" mailbox of one slot; a pair still there when the next one completes is
 * released and counted (overwritten).
 *
 * Timestamps of a pair: seq, a number counting delivered pairs from 1, monotonic over the
 * pair's whole life (reconnects included); capture_ns, the left frame's capture time on
 * CLOCK_REALTIME in ns = PTS + base time (the pipeline clock's time of the frame) + the
 * offset realtime - pipeline clock measured once per pipeline run, at its first frame.
 *
 * Failure: a bus ERROR from any element of the pipeline, an end of stream on either
 * appsink, or a refused state change puts the pair into CAPTURE_STATE_RECONNECTING: one
 * warning "pair NAME: source failed: MSG; reconnecting in N ms", the pipeline is set to
 * NULL and dropped, and after the backoff a new one is built from the same descriptions
 * and started. Backoff: params.backoff_min_ms, doubled after each failure up to
 * backoff_max_ms, back to the minimum when the pair had been running for
 * backoff_reset_ms before it failed. Failed restarts while reconnecting are logged at
 * debug level only. When the first pair flows again the state becomes RUNNING and one
 * message "pair NAME: capture running" is logged. Pairs are independent: each has its
 * own pipeline and control thread.
 *
 * Threads: a pair has one control thread (its own GMainContext: bus watch, EOS
 * notices, restart timers) and the two streaming threads of its queues, which run the
 * appsink callbacks: luma conversion and JPEG decode happen there, outside any lock.
 * None of them touches GL. All functions below are thread safe unless said otherwise;
 * capture_pair_take/release are meant for the one consumer (GPU) thread, which waits
 * for pairs of all CapturePairs on one shared CaptureNotifier (a GMutex + GCond + counter;
 * no polling).
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
  CAPTURE_STATE_COUNT
} CaptureState;

const char *capture_state_to_string(CaptureState state);  /* "running", ... */

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

/* ---------------------------------------------------------------- pair */

typedef struct {
  const char *name;              /* for logs ("north-1"); copied */
  const char *left;              /* source descriptions (see above); copied */
  const char *right;
  int width, height;             /* expected frame size in px, 1..16384 */
  uint64_t tolerance_ns;         /* pairing tolerance; 0 = 5 ms */
  int max_pending;               /* unmatched frames kept per side, 1..8; 0 = 2 */
  int held_pairs;                /* pairs the consumer may hold at once, 1..8; 0 = 1 */
  /* The frame pool's memory: NULL = allocated by the pair; else capture_pair_pool_bytes()
   * bytes the caller owns, keeps valid and leaves alone until capture_pair_free(), aligned
   * to 64 bytes (the buffers inside start at multiples of 64 from it). */
  uint8_t *pool_memory;
  unsigned backoff_min_ms;       /* reconnect backoff; 0 = 500 */
  unsigned backoff_max_ms;       /* 0 = 30000; raised to backoff_min_ms if lower */
  unsigned backoff_reset_ms;     /* running time that resets the backoff; 0 = 10000 */
  CaptureNotifier *notifier;     /* signalled on each delivered pair; may be NULL; ref'd */
} CapturePairParams;

/* One luma frame. Owned by the pair's pool; read-only for the consumer between
 * capture_pair_take() and capture_pair_release(). */
typedef struct {
  const uint8_t *data;           /* height rows of width bytes, rows stride bytes apart */
  int width, height;             /* px */
  size_t stride;                 /* bytes, width rounded up to 4 */
  uint64_t pts_ns;               /* running time used for pairing */
  uint64_t capture_ns;           /* CLOCK_REALTIME */
  uint64_t number;               /* frames received on this side before this one */
} CaptureFrame;

typedef struct {
  uint64_t frames[CAPTURE_SIDE_COUNT];      /* samples received from each appsink */
  uint64_t corrupt[CAPTURE_SIDE_COUNT];     /* JPEG that did not decode */
  uint64_t wrong_size[CAPTURE_SIDE_COUNT];  /* frames of another size, or bad caps */
  uint64_t starved[CAPTURE_SIDE_COUNT];     /* no free buffer (consumer holds too many) */
  uint64_t unpaired[CAPTURE_SIDE_COUNT];    /* converted, never paired (given up, or
                                             * waiting when the pipeline stopped) */
  uint64_t pairs;                           /* pairs put into the mailbox */
  uint64_t overwritten;                     /* pairs replaced before the consumer took them */
  uint64_t taken;                           /* pairs the consumer took */
  uint64_t failures;                        /* errors/EOS that started a reconnect */
  uint64_t reconnects;                      /* pipelines rebuilt and restarted */
} CaptureStats;

typedef struct CapturePair CapturePair;

/* Validates the parameters and builds the pipeline (both descriptions are parsed here:
 * a description that does not parse, has no free source pad, has a free sink pad or
 * cannot link to the appsink's caps is CAPTURE_ERROR_DESCRIPTION, naming the pair and
 * the side: a configuration error, never retried), allocates the frame pool. A source
 * that parses but cannot start (a camera that is not there) is not an error here: it
 * fails after capture_pair_start() and reconnects. Nothing runs until
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

const char *capture_pair_get_name(CapturePair *pair);
CaptureState capture_pair_get_state(CapturePair *pair);
/* Each counter is read atomically; the set is not one instant's snapshot. */
void capture_pair_get_stats(CapturePair *pair, CaptureStats *stats);

/* Non-blocking: takes the latest pair out of the mailbox. Returns FALSE when it is empty.
 * `capture_ns` (left frame, CLOCK_REALTIME) and `seq` may be NULL. The frames stay valid
 * and unchanged until given back with capture_pair_release(); at most
 * params.held_pairs pairs may be held at a time (more only starves the capture). */
bool capture_pair_take(CapturePair *pair, const CaptureFrame **left,
                       const CaptureFrame **right, uint64_t *capture_ns, uint64_t *seq);
/* Gives a taken pair back to the pool. */
void capture_pair_release(CapturePair *pair, const CaptureFrame *left,
                          const CaptureFrame *right);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CaptureNotifier, capture_notifier_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(CapturePair, capture_pair_free)

G_END_DECLS
