/* capture-private.h: the parts of the capture that the pair object is built from, kept
 * apart so that the tests can drive them without a pipeline:
 *  - the luma conversions and the per-side decoder (capture-decode.c),
 *  - the pure pairing logic (capture-pairing.c),
 *  - the time arithmetic of the capture clocks (capture-clock.c). */
#pragma once

#include "daemon/capture.h"

#include <gst/gst.h>

G_BEGIN_DECLS

#define CAPTURE_MAX_SIDE 16384
#define CAPTURE_MAX_PENDING 8

/* One pool buffer: the public frame plus its bookkeeping. */
typedef struct CaptureBuf CaptureBuf;
struct CaptureBuf {
  CaptureFrame frame;    /* frame.data points at mem */
  uint8_t *mem;          /* height * frame.stride bytes, owned by the pool */
  CaptureSide side;
  CaptureBuf *next;      /* free list link */
};

/* ---------------------------------------------------------------- luma conversion */

/* Y = 0.299 R + 0.587 G + 0.114 B, exact and rounded half up (as tools/imageio). */
static inline uint8_t
capture_luma_rgb(unsigned r, unsigned g, unsigned b)
{
  return (uint8_t)((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}

/* Copies an 8-bit plane row by row (strides in bytes). */
void capture_luma_copy(const uint8_t *src, size_t src_stride, uint8_t *dst,
                       size_t dst_stride, int width, int height);
/* Luma of packed 8-bit RGB-like pixels: each pixel is `pixel_stride` bytes, its R, G and
 * B at byte offsets r, g, b inside it. */
void capture_luma_from_packed(const uint8_t *src, size_t src_stride, int pixel_stride,
                              int r, int g, int b, uint8_t *dst, size_t dst_stride,
                              int width, int height);

/* ---------------------------------------------------------------- decoder */

typedef enum {
  CAPTURE_DECODE_OK,
  CAPTURE_DECODE_WRONG_SIZE,  /* another size than expected, or caps we cannot read */
  CAPTURE_DECODE_CORRUPT,     /* JPEG that does not decode, buffer smaller than its caps */
} CaptureDecodeResult;

/* Per side, used by that side's streaming thread only: the TurboJPEG handle (created
 * once) and the interpretation of the last caps seen. */
typedef struct CaptureDecoder CaptureDecoder;

CaptureDecoder *capture_decoder_new(GError **error);
void capture_decoder_free(CaptureDecoder *dec);  /* accepts NULL */
/* Converts one buffer with the given caps into luma at `dst` (rows `dst_stride` bytes
 * apart), expecting exactly width x height. When `why` is not NULL and the result is not
 * OK, *why receives a newly allocated one-line reason. Allocates nothing else. */
CaptureDecodeResult capture_decoder_run(CaptureDecoder *dec, GstCaps *caps, GstBuffer *buf,
                                        uint8_t *dst, size_t dst_stride, int width,
                                        int height, char **why);

/* ---------------------------------------------------------------- pairing */

/* Frames are keyed by frame.capture_ns; those of each side arrive in that order. At most
 * one side has waiting frames at any time (a frame that finds waiting frames on the other
 * side either pairs or proves that some of them, or itself, can never pair). Not thread
 * safe: the pair's lock guards it. */
typedef struct {
  int max_pending;
  uint64_t tolerance_ns;
  CaptureBuf *pending[CAPTURE_SIDE_COUNT][CAPTURE_MAX_PENDING];  /* oldest first */
  int n_pending[CAPTURE_SIDE_COUNT];
  uint64_t last[CAPTURE_SIDE_COUNT];   /* time of the latest frame pushed on each side */
  bool has_last[CAPTURE_SIDE_COUNT];
  /* The latest frame of each side whose nearest frame of the other side is not known
   * yet: the frame after it may be nearer than the one before (open_before, signed
   * left - right, when there was one). */
  bool open[CAPTURE_SIDE_COUNT], open_has_before[CAPTURE_SIDE_COUNT];
  int64_t open_before[CAPTURE_SIDE_COUNT];
} CaptureMatcher;

#define CAPTURE_MATCH_MAX_DROPS (2 * CAPTURE_MAX_PENDING + 1)

typedef struct {
  CaptureBuf *left, *right;                        /* the pair made, or both NULL */
  CaptureBuf *dropped[CAPTURE_MATCH_MAX_DROPS];    /* frames that can never pair */
  int n_dropped;
  /* Frames whose nearest frame of the other side became known with this push (the
   * pushed frame follows them), as the signed distance left - right of the two: what
   * tells an operator how far apart two cameras' frames are when they do not pair. */
  int n_offsets;
  int64_t offset_ns[2];
} CaptureMatchResult;

void capture_matcher_init(CaptureMatcher *m, int max_pending, uint64_t tolerance_ns);
/* Offers a converted frame (its side and frame.capture_ns set). The result says which pair
 * was made and which frames were given up; every other frame stays in the matcher. */
void capture_matcher_push(CaptureMatcher *m, CaptureBuf *buf, CaptureMatchResult *res);
/* Empties the matcher into `out` (room for 2 * CAPTURE_MAX_PENDING); returns the count. */
int capture_matcher_flush(CaptureMatcher *m, CaptureBuf **out);
/* Frames waiting on `side`. */
static inline int
capture_matcher_waiting(const CaptureMatcher *m, CaptureSide side)
{
  return m->n_pending[side];
}

/* ---------------------------------------------------------------- clock arithmetic */

/* Seconds from 1900-01-01 (NTP era 0) to 1970-01-01. */
#define CAPTURE_NTP_UNIX_OFFSET_S 2208988800ull

/* An NTP 32.32 fixed-point timestamp (RTCP sender report) in ns since 1970; 0 when it
 * lies before 1970 (not a time a camera can have). */
uint64_t capture_ntp64_to_unix_ns(uint64_t ntp);

/* The RTP timestamps of a side's video stream by PTS, as its rtpjitterbuffer outputs
 * them (one entry per RTP timestamp, the newest CAPTURE_RTP_HISTORY kept): the decoded
 * frame carries only the PTS, the sender report maps RTP time. Not thread safe. */
#define CAPTURE_RTP_HISTORY 64

typedef struct {
  uint64_t pts[CAPTURE_RTP_HISTORY];
  uint32_t rtp[CAPTURE_RTP_HISTORY];
  int head, count;           /* head: the next slot written */
} CaptureRtpHistory;

/* Adds a packet's PTS and RTP timestamp; a repeat of the latest RTP timestamp (the other
 * packets of a frame) is ignored. */
void capture_rtp_history_add(CaptureRtpHistory *h, uint64_t pts, uint32_t rtp);
/* The RTP timestamp whose PTS is nearest to `pts`, when that is within max_distance_ns. */
bool capture_rtp_history_find(const CaptureRtpHistory *h, uint64_t pts,
                              uint64_t max_distance_ns, uint32_t *rtp);

/* The sender's capture time of RTP timestamp `rtp` from a sender report (its RTP time and
 * its NTP time in ns since 1970): sr_unix + (rtp - sr_rtp) / clock_rate, the difference
 * taken as a signed 32-bit count of ticks (RFC 3550's wrap-around: valid within 2^31
 * ticks, 6.6 hours at 90 kHz, of the report). FALSE when clock_rate is 0 or the time
 * would be before 1970. */
bool capture_rtp_to_unix(uint64_t sr_unix_ns, uint32_t sr_rtp, uint32_t rtp,
                         unsigned clock_rate, uint64_t *capture_ns);

/* A side's RTCP sender reports. A report's mapping of RTP time to the sender's clock is
 * taken when it agrees with the report before it: its NTP time within
 * CAPTURE_SR_AGREE_NS + CAPTURE_SR_AGREE_PPM of the time between them of what the report
 * before it maps its RTP time to, at the same clock rate. A sender's first report can
 * be off by most of a frame (a GStreamer RTSP server's first reports of a stream lie
 * 20-95 ms from its later ones, which agree within 0.01 ms): taken alone it pairs
 * genlocked cameras one frame apart until the next report. A report that disagrees is
 * kept as the latest and the mapping in use stays until one agrees with it (a sender
 * whose clock was stepped: two reports confirm the step). Not thread safe. */
#define CAPTURE_SR_AGREE_NS 1000000ull
#define CAPTURE_SR_AGREE_PPM 500

typedef struct {
  uint64_t unix_ns;          /* the report's NTP time, ns since 1970 */
  uint32_t rtp;              /* its RTP time */
  unsigned clock_rate;
} CaptureSenderMapping;

typedef struct {
  bool valid;                /* a mapping in use: an agreed report */
  CaptureSenderMapping used;
  bool has_latest;           /* the latest report, agreed or not */
  CaptureSenderMapping latest;
} CaptureSenderClock;

typedef enum {
  CAPTURE_SR_FIRST,          /* no report before it: kept, not in use */
  CAPTURE_SR_AGREED,         /* agrees with the report before it: in use */
  CAPTURE_SR_DISAGREED,      /* disagrees: kept, the mapping in use stays */
} CaptureSenderReport;

void capture_sender_clock_reset(CaptureSenderClock *c);
/* A report (its NTP time in ns since 1970, its RTP time, the stream's clock rate, not 0).
 * *deviation_ns (may be NULL): its NTP time less what the report before it maps its RTP
 * time to (0 for the first). */
CaptureSenderReport capture_sender_clock_report(CaptureSenderClock *c, uint64_t unix_ns,
                                                uint32_t rtp, unsigned clock_rate,
                                                int64_t *deviation_ns);
/* Takes the latest report into use unconfirmed (a sender that sent one report only
 * within the start timeout). FALSE when there is none. */
bool capture_sender_clock_take_latest(CaptureSenderClock *c);
/* The sender's time of RTP timestamp `rtp` by the mapping in use (capture_rtp_to_unix);
 * FALSE without one. */
bool capture_sender_clock_map(const CaptureSenderClock *c, uint32_t rtp, uint64_t *capture_ns);

G_END_DECLS
