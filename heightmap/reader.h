/* reader.h: one pair's ring as the height map reads it (private to heightmap/).
 *
 * Everything stereod-heightmap knows about libstereod-client is in reader.c: the open,
 * the wait and read, and the checks that make a frame safe to upload. The ring is
 * another process's memory, writable by its writer at any time, so nothing it claims is
 * trusted: at open the header is copied once and that copy is validated (sizes within
 * the sanity bounds below, planes inside the slot, Q and the pose finite); every frame
 * read afterwards must match that copy exactly (size, formats, strides, plane offsets,
 * disparity scale) and its planes must lie inside the frame's own copy buffer. A ring
 * whose header changes while it is open is bad, not followed.
 *
 * Not thread safe: one reader is used by one waiter thread (sources.c).
 */
#pragma once

#include <stereod/client.h>

#include "heightmap/heightmap.h"

G_BEGIN_DECLS

/* Sanity bounds of a pair's frame. 16384 px a side is the least GL_MAX_TEXTURE_SIZE an
 * OpenGL 4.5 implementation may have, so every frame within the bounds fits any GPU
 * the builder runs on; 64 Mpx bounds the copies (3 per pair, 3 bytes a pixel). */
#define HEIGHTMAP_MAX_INPUT_SIDE 16384
#define HEIGHTMAP_MAX_INPUT_PIXELS (8192 * 8192)

/* A ring that says it has a new frame but gives none (its newest slot stays odd, holds
 * counter 0, or the header's counter goes back) for this long is bad. */
#define HEIGHTMAP_READ_STALL_MS 2000
/* The waits between such attempts: from the first to the last, doubling. */
#define HEIGHTMAP_READ_RETRY_MIN_MS 1
#define HEIGHTMAP_READ_RETRY_MAX_MS 100

typedef struct HeightmapReader HeightmapReader;

typedef enum {
  HEIGHTMAP_READ_FRAME,     /* a new frame, checked, in *frame */
  HEIGHTMAP_READ_NONE,      /* nothing new within the timeout */
  HEIGHTMAP_READ_RETRY,     /* a frame was announced but could not be read: wait *retry_ms
                               (the caller's wait, so that it can stop), then call again */
  HEIGHTMAP_READ_REOPEN,    /* the writer closed or replaced the ring: close, open again */
  HEIGHTMAP_READ_BAD,       /* the ring is not usable: *why (new string) says why */
  HEIGHTMAP_READ_COUNT
} HeightmapReadResult;

typedef enum {
  HEIGHTMAP_OPEN_OK,        /* the reader is in *out */
  HEIGHTMAP_OPEN_ABSENT,    /* the ring cannot be opened (not there, no permission), or
                               its writer closed it (-EPIPE): the errno in *err; the
                               writer may come later */
  HEIGHTMAP_OPEN_BAD,       /* it is there but not usable: *why (new string) says why */
  HEIGHTMAP_OPEN_COUNT
} HeightmapOpenResult;

/* Opens the ring of `pair`. BAD: not a ring this version reads, over the sanity bounds
 * ("16400x16 px: over the 16384 px a side ..."), without the disparity plane, planes
 * that do not fit their slot, no Q or pose and no calibration=, a calibration= made for
 * another image size. *ring_id (OK and BAD; 0 when unknown) tells one ring object from
 * the next under the same name (the inode of /dev/shm/stereod.RING): a writer that
 * restarts makes a new one. */
HeightmapOpenResult heightmap_reader_open(const HeightmapPairConfig *pair,
                                          HeightmapReader **out, int *err, char **why,
                                          uint64_t *ring_id);
/* Accepts NULL. */
void heightmap_reader_close(HeightmapReader *reader);

/* Waits up to timeout_ns for a frame newer than the last one returned and copies it into
 * `frame` (reused between calls). REOPEN stores the errno (-EPIPE, -ESTALE, ...) in *err.
 * BAD is returned for a frame that does not match the geometry copied at open, a header
 * that changed, or a ring that announced frames it did not give for
 * HEIGHTMAP_READ_STALL_MS. Never spins: RETRY asks the caller to wait first. */
HeightmapReadResult heightmap_reader_next(HeightmapReader *reader, int64_t timeout_ns,
                                          StereodFrame *frame, int *retry_ms, int *err,
                                          char **why);

/* The geometry (calibration= file, else the ring header's Q and pose, copied at open). */
const HeightmapPairGeometry *heightmap_reader_get_geometry(const HeightmapReader *reader);
int heightmap_reader_get_width(const HeightmapReader *reader);
int heightmap_reader_get_height(const HeightmapReader *reader);
uint64_t heightmap_reader_get_ring_id(const HeightmapReader *reader);   /* as at open */

/* The planes of a frame that heightmap_reader_next returned, with the bytes readable at
 * each pointer (the fusion checks its uploads against them). */
void heightmap_reader_frame_input(const StereodFrame *frame, HeightmapInput *input);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapReader, heightmap_reader_close)

G_END_DECLS
