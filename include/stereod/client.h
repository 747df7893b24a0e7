/* stereod/client.h: libstereod-client, the C reader of stereod's shared-memory rings.
 *
 * Link with `pkg-config --cflags --libs stereod-client`. Plain libc, no GLib, no
 * threads of its own. The layout it reads is specified in <stereod/ring.h>.
 *
 * A StereodClient maps one ring (DIR/stereod.<pair>, DIR by the rule of ring.h, OBJECT:
 * $STEREOD_RING_DIR, else /run/stereod when it exists, else /dev/shm) read-only. Readers
 * never write to the ring and never make the writer wait: a reader that is slow, stopped
 * or killed costs the writer nothing. A reader that falls behind skips frames; the
 * counters in StereodFrame tell it how many it missed.
 *
 * What a reader trusts. At open the client checks the owner of the object (see
 * StereodClientOwner), copies the header into its own memory, checks it against the
 * limits of ring.h (READER LIMITS) and the object's size, and from then on never reads a
 * layout field from the shared mapping again: every copy is bounded by that private
 * header. A writer that rewrites the header, truncates the object or leaves a slot
 * half-written gets an error code back, never a crash, an overflow or a spin: the size
 * is checked with fstat before each access, and an access that faults all the same
 * (the object shrank in between) is caught by a SIGBUS handler the library installs
 * once per process (it chains to the handler that was there before for every other
 * fault; see client/ring-guard.h). Applications that install their own SIGBUS handler
 * after opening a client must chain to the previous one.
 *
 * Errors are negative errno values (0 = success), as in systemd and PipeWire;
 * stereod_client_strerror() words them for a log line:
 *   -ENOENT  no ring of that name (writer not running)
 *   -EINVAL  bad argument (pair name not [A-Za-z0-9._-]{1,63}, NULL pointers)
 *   -EPROTO  the object is not a ring of a layout version this library reads, or breaks
 *            the limits of ring.h; from a read: a header field that never changes has
 *            changed since the open (a broken or hostile writer)
 *   -EPERM   the ring's owner is not a trusted writer (StereodClientOwner); also from
 *            open(2) when the object's mode does not let us read it (-EACCES)
 *   -EIO     the object shrank below the ring's size after the open (truncated); the
 *            client stays unusable (reopen, or close it)
 *   -EBADMSG the writer never completed the newest slot: its seq stayed odd, or its
 *            frame counter did not match, until the timeout (a dead or broken writer)
 *   -ETIMEDOUT  no new frame within the timeout
 *   -EPIPE   the writer closed the ring and no newer frame is left to read
 *   -ESTALE  the name now refers to another ring (the writer restarted): reopen
 *   -ENODATA nothing published yet
 *   -EAGAIN  every copy attempt was overwritten by the writer (reader far too slow)
 *   -EALREADY  stereod_client_reopen(): the name still refers to the ring already read
 *   -EINTR   a signal interrupted the wait
 *   -ENAMETOOLONG  the ring directory makes a path longer than 4095 bytes
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
 * fill with stereod_client_read_next() or stereod_client_read_latest() as often as
 * needed (the copy buffer is allocated at the first read and reused), release with
 * stereod_frame_clear(). The plane pointers point into the frame's own buffer: they
 * stay valid until the next read into this frame or stereod_frame_clear(). Absent
 * planes are NULL. A read that fails may have copied into the buffer already: the
 * fields still describe the previous frame, but its plane bytes are then unspecified
 * (read into a second frame to keep one). width, height and the strides are those of the ring the frame came
 * from (they change when a following client moved to a restarted writer). */
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
  const int16_t *flow_u;      /* optical flow of the left camera from the previous frame, */
  const int16_t *flow_v;      /* STEREOD_RING_FLOW_SCALE px, INT16_MIN = unknown (ring.h) */
  uint32_t strides[STEREOD_RING_PLANE_COUNT];  /* bytes per row, by plane kind */
  /* private */
  void *priv_buffer;
  size_t priv_capacity;
} StereodFrame;

#define STEREOD_FRAME_INIT { 0 }

/* Counters of one client, for diagnostics. */
typedef struct {
  uint64_t reads;             /* successful reads */
  uint64_t torn;              /* copies rejected (seqlock, odd seq, bad counter), retried */
  uint64_t failed;            /* reads that gave up (-EAGAIN, -EBADMSG) */
} StereodClientStats;

/* Whose rings a reader accepts (the owner uid of the object, fstat at open). */
typedef enum {
  STEREOD_CLIENT_OWNER_DEFAULT = 0,  /* the reader's effective uid, root, or the system
                                        user "stereod" when it exists */
  STEREOD_CLIENT_OWNER_UID,          /* only owner_uid */
  STEREOD_CLIENT_OWNER_ANY,          /* any owner (only where nobody else can create
                                        files in the ring directory) */
  STEREOD_CLIENT_OWNER_COUNT
} StereodClientOwner;

/* How to open a ring. Zero-initialise (designated initialisers) and set what differs. */
typedef struct {
  const char *pair;           /* pair name, [A-Za-z0-9._-]{1,63}, not starting with '.' */
  const char *dir;            /* ring directory; NULL = the rule of ring.h, applied again
                                 at every reopen */
  StereodClientOwner owner;
  uid_t owner_uid;            /* with STEREOD_CLIENT_OWNER_UID */
  bool follow;                /* stereod_client_read_next() follows the pair's writer
                                 across restarts (see there) */
} StereodClientOpenParams;

/* Opens the ring of `pair` with the default rules (ring directory of ring.h, owner
 * STEREOD_CLIENT_OWNER_DEFAULT, no follow). Same as stereod_client_open_with(). */
STEREOD_CLIENT_API int stereod_client_open(const char *pair, StereodClient **out);

/* Opens DIR/stereod.<pair> (O_NOFOLLOW), checks its owner, maps it read-only, copies and
 * validates the header. The client keeps a copy of the parameters (the strings are
 * copied). On success stores a new client in *out (free with stereod_client_close) and
 * returns 0; on failure returns a negative errno (-ENOENT, -EINVAL, -EPROTO, -EPERM, ...)
 * and leaves *out NULL. */
STEREOD_CLIENT_API int stereod_client_open_with(const StereodClientOpenParams *params,
                                                StereodClient **out);

/* As stereod_client_open_with(), but while the name does not exist, waits for it to
 * appear (inotify on the ring directory, no polling) up to timeout_ns (< 0 forever,
 * 0 = one try). -ETIMEDOUT when it did not; -EINTR when a signal interrupted the wait. */
STEREOD_CLIENT_API int stereod_client_open_wait(const StereodClientOpenParams *params,
                                                int64_t timeout_ns, StereodClient **out);

/* Sets params->owner and params->owner_uid from a text: NULL, "" or "default" (the
 * default rule), "any", a numeric uid, or a user name (looked up). Returns 0, or -EINVAL
 * for a user that does not exist. The tools pass $STEREOD_RING_OWNER here. */
STEREOD_CLIENT_API int stereod_client_parse_owner(const char *spec,
                                                  StereodClientOpenParams *params);

/* Unmaps and frees. Accepts NULL. */
STEREOD_CLIENT_API void stereod_client_close(StereodClient *client);

/* Moves the client to the ring its name refers to now (a writer that restarted), with
 * the parameters it was opened with; does not wait. Returns 0 when the client now reads
 * another ring than before: the publish counter restarts with that ring (a new writer
 * publishes counter 1 first), so pass last_counter 0 to the next wait, and the header,
 * sizes and calibration may have changed (stereod_client_get_header() returns the new
 * copy; the previous pointer is invalid). Returns -EALREADY when the name still refers
 * to the ring being read and that ring is not closed, -ENOENT when there is no other
 * ring under the name yet (or only the closed one we read), or an error of
 * stereod_client_open_with(); on any error the client keeps reading its old ring. */
STEREOD_CLIENT_API int stereod_client_reopen(StereodClient *client);

/* Waits until the ring's publish counter differs from `last_counter` (pass 0, or the
 * counter of the last frame read). timeout_ns < 0 waits forever, 0 only checks.
 * Returns 0 and stores the current counter in *counter (may be NULL) when a newer frame
 * is there; -ETIMEDOUT, -EPIPE (writer closed, nothing newer), -ESTALE (the name was
 * taken over by a new writer; checked about once a second and when the wait times
 * out), -EIO (truncated), -EPROTO (header rewritten), -EINTR. Blocks in FUTEX_WAIT and
 * looks at the object again about once a second (the futex does not tell a truncated
 * object or a replaced name); never polls faster. */
STEREOD_CLIENT_API int stereod_client_wait(StereodClient *client, uint64_t last_counter,
                                           int64_t timeout_ns, uint64_t *counter);

/* Copies the newest complete frame into *frame, checked by the slot's seqlock; a copy
 * the writer overwrote meanwhile is detected and retried a bounded number of times,
 * without waiting. Returns 0, -ENODATA (nothing published yet), -EAGAIN (every attempt
 * was torn by a writer that kept publishing), -EBADMSG (the newest slot stayed
 * incomplete or invalid over every attempt while the counter did not move: a dead or
 * broken writer; stereod_client_read_next() waits for it instead), -EIO, -EPROTO,
 * -ENOMEM. Works after the writer closed (the last frames stay readable). */
STEREOD_CLIENT_API int stereod_client_read_latest(StereodClient *client, StereodFrame *frame);

/* Waits for and copies a frame whose counter differs from `last_counter`: the newest
 * complete one (frames in between are skipped). The one call a reading loop needs: it
 * never spins. A slot that does not validate (seq odd, frame counter wrong, torn) is
 * retried with a bounded back-off (FUTEX_WAIT on the ring's word, 1 ms doubling to
 * 100 ms, so a writer that finishes the slot wakes it at once) until the deadline.
 * timeout_ns < 0 waits forever, 0 tries once without waiting. Returns 0, -ETIMEDOUT (no
 * new frame), -EBADMSG (a new frame was announced but its slot never validated before
 * the deadline), -EAGAIN (every copy until the deadline was torn), -EPIPE, -ESTALE,
 * -EIO, -EPROTO, -EINTR, -ENOMEM.
 *
 * With params.follow the client follows its pair's writer: where the ring is closed (a
 * writer that stopped, or one that was killed and whose successor replaced the name) or
 * the name refers to another ring, it waits (inotify, within the same deadline) for the
 * name to name a new ring and reopens it, instead of returning -EPIPE or -ESTALE. The
 * first frame from the new ring is returned whatever last_counter is (its counter
 * restarts at the new ring's, usually 1) and carries STEREOD_FRAME_FLAG_DISCONT;
 * stereod_client_get_generation() counts the rings read. A writer that was killed
 * leaves its ring unclosed and its name in place: nothing new arrives until its
 * successor starts (or the name is removed and created again: seen within a second). */
STEREOD_CLIENT_API int stereod_client_read_next(StereodClient *client, uint64_t last_counter,
                                                int64_t timeout_ns, StereodFrame *frame);

/* Frees the frame's buffer and zeroes it. Accepts a zeroed frame. */
STEREOD_CLIENT_API void stereod_frame_clear(StereodFrame *frame);

/* Ring properties, from the client's private copy of the header: constant until
 * stereod_client_reopen() (or a following read_next()) moves the client to another ring. */
STEREOD_CLIENT_API const char *stereod_client_get_name(const StereodClient *client);
STEREOD_CLIENT_API const char *stereod_client_get_path(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_width(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_height(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_formats(const StereodClient *client);
STEREOD_CLIENT_API uint32_t stereod_client_get_slot_count(const StereodClient *client);
STEREOD_CLIENT_API double stereod_client_get_disparity_scale(const StereodClient *client);
STEREOD_CLIENT_API void stereod_client_get_calibration(const StereodClient *client,
                                                       StereodRingCalibration *out);
STEREOD_CLIENT_API pid_t stereod_client_get_writer_pid(const StereodClient *client);
STEREOD_CLIENT_API uid_t stereod_client_get_owner_uid(const StereodClient *client);
/* The validated copy of the header made at open, for fields without an accessor
 * (producer[]). Never the shared mapping: its live fields (closed, counter, futex) are
 * as they were at the open; use the calls below for those. Valid until the client is
 * closed or moves to another ring. */
STEREOD_CLIENT_API const StereodRingHeader *stereod_client_get_header(const StereodClient *client);
/* Rings this client has read: 1 after the open, +1 for every move to a new ring. */
STEREOD_CLIENT_API uint64_t stereod_client_get_generation(const StereodClient *client);

/* Live state. get_counter returns the last value it could read when the object is
 * gone or truncated; is_closed is true then too. */
STEREOD_CLIENT_API uint64_t stereod_client_get_counter(const StereodClient *client);
STEREOD_CLIENT_API bool stereod_client_is_closed(const StereodClient *client);
/* Whether the ring's writer process still exists (kill(pid, 0); a pid of another pid
 * namespace cannot be told and counts as alive). */
STEREOD_CLIENT_API bool stereod_client_writer_is_alive(const StereodClient *client);
STEREOD_CLIENT_API void stereod_client_get_stats(const StereodClient *client,
                                                 StereodClientStats *out);

/* "DIR/stereod.<pair>" into buf (size bytes) for `dir` (NULL = the rule of ring.h).
 * Returns 0, -EINVAL (bad pair name) or -ENAMETOOLONG. */
STEREOD_CLIENT_API int stereod_client_format_path(const char *dir, const char *pair,
                                                  char *buf, size_t size);

/* A static English sentence for an error of this library (negative errno), worded for
 * rings ("the writer never completed the newest slot"); strerror() for others. */
STEREOD_CLIENT_API const char *stereod_client_strerror(int error);

/* Disparity of a DISPARITY value in px; NaN for the invalid sentinel. */
static inline double
stereod_disparity_to_px(int16_t value, double scale)
{
  return value == STEREOD_RING_DISPARITY_INVALID ? __builtin_nan("") : value * scale;
}

#ifdef __cplusplus
}
#endif
