/* stereod/client.h: libstereod-client, the C reader of stereod's shared-memory rings.
 *
 * Link with `pkg-config --cflags --libs stereod-client`. Plain libc, no GLib, no
 * threads of its own. The layout it reads is specified in <stereod/ring.h>.
 *
 * A StereodClient maps one ring (/dev/shm/stereod.<pair>) read-only. Readers never
 * write to the ring and never make the writer wait: a reader that is slow, stopped or
 * killed costs the writer nothing. A reader that falls behind skips frames; the
 * counters in StereodFrame tell it how many it missed.
 *
 * Errors are negative errno values (0 = success), as in systemd and PipeWire:
 *   -ENOENT  no ring of that name (writer not running)
 *   -EINVAL  bad argument (pair name not [A-Za-z0-9._-]{1,63}, NULL pointers)
 *   -EPROTO  the object is not a ring of a layout version this library reads
 *   -ETIMEDOUT  no new frame within the timeout
 *   -EPIPE   the writer closed the ring and no newer frame is left to read
 *   -ESTALE  the name now refers to another ring (the writer restarted): reopen
 *   -ENODATA nothing published yet
 *   -EAGAIN  every copy attempt was overwritten by the writer (reader far too slow)
 *   -EINTR   a signal interrupted the wait
 *   other    from open(2), fstat(2), mmap(2), malloc(3)
 *
 * Thread safety: a StereodClient may be used by one thread at a time; different
 * clients (even of the same ring) are independent. A StereodFrame is owned by the
 * caller and must not be shared between threads while it is being filled.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <stereod/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STEREOD_CLIENT_API __attribute__((visibility("default")))
#else
#define STEREOD_CLIENT_API
#endif

typedef struct StereodClient StereodClient;

/* One frame copied out of the ring. Initialise with STEREOD_FRAME_INIT (or zero it),
 * fill with stereod_client_read_latest() as often as needed (the copy buffer is
 * allocated at the first read and reused), release with stereod_frame_clear().
 * The plane pointers point into the frame's own buffer: they stay valid until the next
 * read into this frame or stereod_frame_clear(). Absent planes are NULL. */
typedef struct {
  uint64_t counter;           /* publish counter of this frame (1 = first published) */
  uint64_t frame_number;      /* the producer's frame number */
  uint64_t capture_ns;        /* capture time, CLOCK_REALTIME ns */
  uint64_t publish_ns;        /* publish time, CLOCK_REALTIME ns */
  uint32_t flags;             /* STEREOD_FRAME_FLAG_* */
  uint32_t width, height;     /* px */
  uint32_t formats;           /* STEREOD_RING_FORMAT_* bits present */
  double disparity_scale;     /* px per unit of `disparity` */
  StereodRingCalibration calibration;
  const int16_t *disparity;   /* INT16_MIN = invalid */
  const uint16_t *depth;      /* mm, 0 = invalid */
  const uint8_t *confidence;  /* 0 = invalid */
  const float *float32;       /* metres, NaN = invalid */
  uint32_t strides[STEREOD_RING_PLANE_COUNT];  /* bytes per row, by plane kind */
  /* private */
  void *priv_buffer;
  size_t priv_capacity;
} StereodFrame;

#define STEREOD_FRAME_INIT { 0 }

/* Counters of one client, for diagnostics. */
typedef struct {
  uint64_t reads;             /* successful stereod_client_read_latest() calls */
  uint64_t torn;              /* copies rejected by the seqlock and retried */
  uint64_t failed;            /* reads that gave up with -EAGAIN */
} StereodClientStats;

/* Opens the ring of `pair` ("north-1" -> /dev/shm/stereod.north-1), maps it read-only
 * and validates the header. On success stores a new client in *out (free with
 * stereod_client_close) and returns 0; on failure returns a negative errno and leaves
 * *out NULL. */
STEREOD_CLIENT_API int stereod_client_open(const char *pair, StereodClient **out);

/* Unmaps and frees. Accepts NULL. */
STEREOD_CLIENT_API void stereod_client_close(StereodClient *client);

/* Waits until the ring's publish counter differs from `last_counter` (pass 0, or the
 * counter of the last frame read). timeout_ns < 0 waits forever, 0 only checks.
 * Returns 0 and stores the current counter in *counter (may be NULL) when a newer frame
 * is there; -ETIMEDOUT, -EPIPE (writer closed, nothing newer), -ESTALE (the name was
 * taken over by a new writer; checked when the wait times out), -EINTR. Blocks in
 * FUTEX_WAIT, never polls. */
STEREOD_CLIENT_API int stereod_client_wait(StereodClient *client, uint64_t last_counter,
                                           int64_t timeout_ns, uint64_t *counter);

/* Copies the newest complete frame into *frame, checked by the slot's seqlock; a copy
 * the writer overwrote meanwhile is detected and retried a bounded number of times.
 * Returns 0, -ENODATA (nothing published yet), -EAGAIN (every attempt was torn),
 * -ENOMEM. Works after the writer closed (the last frames stay readable). */
STEREOD_CLIENT_API int stereod_client_read_latest(StereodClient *client, StereodFrame *frame);

/* Frees the frame's buffer and zeroes it. Accepts a zeroed frame. */
STEREOD_CLIENT_API void stereod_frame_clear(StereodFrame *frame);

/* Ring properties (constant for the life of the client). */
STEREOD_CLIENT_API const char *stereod_client_get_name(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_width(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_height(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_formats(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_slot_count(const StereodClient *client);
STEREOD_CLIENT_API double stereod_client_get_disparity_scale(const StereodClient *client);
STEREOD_CLIENT_API void stereod_client_get_calibration(const StereodClient *client,
                                                       StereodRingCalibration *out);
STEREOD_CLIENT_API pid_t stereod_client_get_writer_pid(const StereodClient *client);
/* The mapped header, read-only, for fields without an accessor (producer[]). */
STEREOD_CLIENT_API const StereodRingHeader *stereod_client_get_header(const StereodClient *client);

/* Live state. */
STEREOD_CLIENT_API uint64_t stereod_client_get_counter(const StereodClient *client);
STEREOD_CLIENT_API bool stereod_client_is_closed(const StereodClient *client);
STEREOD_CLIENT_API void stereod_client_get_stats(const StereodClient *client,
                                                 StereodClientStats *out);

/* Disparity of a DISPARITY value in px; NaN for the invalid sentinel. */
static inline double
stereod_disparity_to_px(int16_t value, double scale)
{
  return value == STEREOD_RING_DISPARITY_INVALID ? __builtin_nan("") : value * scale;
}

#ifdef __cplusplus
}
#endif
