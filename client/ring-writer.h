/* ring-writer.h: the writer side of the stereod shared-memory ring (<stereod/ring.h>).
 *
 * Used by the stereod daemon (one writer per camera pair) and by the height-map
 * builder. Plain libc; errors are negative errno values. A RingWriter is used by one
 * thread at a time (the GPU thread in stereod); it is not thread safe.
 *
 * Publishing never waits for readers: it writes the next slot in turn, whatever the
 * readers are doing, and wakes every reader blocked in FUTEX_WAIT. Publishing costs one
 * futex syscall besides the copy; nothing is allocated after ring_writer_new().
 *
 * When glib.h is included before this header, g_autoptr(RingWriter) works.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <stereod/ring.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct RingWriter RingWriter;

typedef struct {
  const char *name;              /* pair name, [A-Za-z0-9._-]{1,63}, not starting with '.' */
  uint32_t width, height;        /* px, 1..STEREOD_RING_MAX_DIM (16384) */
  uint32_t formats;              /* STEREOD_RING_FORMAT_* bits, at least one */
  uint32_t slot_count;           /* 0 = STEREOD_RING_DEFAULT_SLOTS; 2..STEREOD_RING_MAX_SLOTS */
  double disparity_scale;        /* px per unit; 0 = STEREOD_RING_DEFAULT_DISPARITY_SCALE */
  StereodRingCalibration calibration;
  double producer[8];            /* copied to the header's producer[] */
  mode_t mode;                   /* 0 = 0640 */
  bool keep_on_close;            /* do not unlink the name in ring_writer_free() */
  const char *dir;               /* ring directory; NULL = the rule of ring.h (OBJECT) */
} RingWriterParams;

/* Where a frame goes: the plane pointers of the slot being written (NULL for absent
 * planes) and their strides. Valid between ring_writer_begin() and the matching
 * ring_writer_commit(). */
typedef struct {
  void *planes[STEREOD_RING_PLANE_COUNT];
  uint32_t strides[STEREOD_RING_PLANE_COUNT];   /* bytes per row */
  uint32_t width, height;
  uint64_t counter;              /* the publish counter this frame will get */
} RingWriterSlot;

typedef struct {
  uint64_t frame_number;
  uint64_t capture_ns;           /* CLOCK_REALTIME ns */
  uint32_t flags;                /* STEREOD_FRAME_FLAG_* */
} RingWriterMeta;

/* Creates DIR/stereod.<name> (DIR: params->dir, else the rule of ring.h; mode 0640
 * unless params->mode), laid out for the parameters, and makes it visible atomically:
 * built under a temporary name opened O_CREAT|O_EXCL|O_NOFOLLOW, then renamed over the
 * final name. What may already be under the final name:
 *   - nothing: the ring appears;
 *   - a ring of our uid whose writer died (or closed): replaced, its readers are told it
 *     closed (closed = 1 and a wake) so they can reopen;
 *   - a ring of our uid whose writer is alive: -EBUSY;
 *   - anything owned by another uid, or that is not a regular file (a symlink, a
 *     directory): -EPERM, never replaced, followed or written into.
 * Returns 0 and the new writer in *out, or a negative errno (-EINVAL for bad parameters,
 * -EFBIG for a ring above STEREOD_RING_MAX_TOTAL_SIZE, -ENAMETOOLONG) with *out NULL. */
int ring_writer_new(const RingWriterParams *params, RingWriter **out);

/* As ring_writer_new(), and on failure writes one line for the operator into `error`
 * (error_size bytes, NUL-terminated; may be NULL), e.g. "ring /dev/shm/stereod.north-1
 * belongs to uid 1000 (alice), not to us (uid 995): remove it, or choose another pair
 * name". */
int ring_writer_new_with_error(const RingWriterParams *params, RingWriter **out,
                               char *error, size_t error_size);

/* Marks the ring closed, wakes the readers, unlinks the name (unless keep_on_close)
 * and unmaps. Accepts NULL. Readers still mapping the ring can read its last frames. */
void ring_writer_free(RingWriter *writer);

/* Step 1 of publishing: marks the next slot as being written (its seq becomes odd)
 * and returns where to write. Must be followed by ring_writer_commit(); a second
 * begin without a commit returns -EBUSY. */
int ring_writer_begin(RingWriter *writer, RingWriterSlot *slot);

/* Step 2: stores the metadata and the publish time, makes the slot readable, bumps the
 * counter and wakes readers. Returns 0 or -EINVAL when no slot was begun. */
int ring_writer_commit(RingWriter *writer, const RingWriterMeta *meta);

/* begin + copy of the given planes (tightly packed rows, width * element size; NULL
 * leaves a plane as it was) + commit. */
int ring_writer_publish(RingWriter *writer, const RingWriterMeta *meta,
                        const void *const planes[STEREOD_RING_PLANE_COUNT]);

uint64_t ring_writer_get_counter(const RingWriter *writer);  /* frames published */
const char *ring_writer_get_path(const RingWriter *writer);  /* DIR/stereod.<name> */

#ifdef __cplusplus
}
#endif

#ifdef G_DEFINE_AUTOPTR_CLEANUP_FUNC
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RingWriter, ring_writer_free)
#endif
