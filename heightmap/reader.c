/* reader.c: one pair's ring through libstereod-client, checked (see reader.h).
 *
 * The library maps the ring and copies a slot into the frame's buffer; the header that
 * says where the planes are is the writer's memory. So the layout is copied once at
 * open and validated here, independently of the library's own check (the writer may
 * have changed it in between), and every frame is held against that copy and against
 * the bounds of the buffer it was copied into. This file is the one place that reads
 * StereodFrame's buffer fields; a reader call that returns the geometry it copied at
 * open can replace frame_check's bounds part, the comparison stays.
 */
#include "heightmap/reader.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* What a frame must match: the header's layout fields at open. */
typedef struct {
  uint32_t width, height, formats, slot_size;
  StereodRingPlane planes[STEREOD_RING_PLANE_COUNT];
  double disparity_scale;
} Layout;

struct HeightmapReader {
  StereodClient *client;
  uint64_t ring_id;
  Layout layout;
  HeightmapPairGeometry geometry;
  uint64_t last;             /* counter of the last frame returned */
  gint64 stall_since;        /* monotonic us of the first announced frame not given, 0 */
  int retry_ms;              /* the last RETRY wait */
};

static const char *const plane_names[STEREOD_RING_PLANE_COUNT] = {
  "disparity", "depth", "confidence", "float32", "flow_u", "flow_v",
};

static void
layout_from_header(Layout *l, const StereodRingHeader *h)
{
  *l = (Layout) { .width = h->width, .height = h->height, .formats = h->formats,
                  .slot_size = h->slot_size, .disparity_scale = h->disparity_scale };
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++)
    l->planes[k] = *stereod_ring_header_plane(h, k);
}

static bool
layout_equal(const Layout *a, const Layout *b)
{
  if (a->width != b->width || a->height != b->height || a->formats != b->formats ||
      a->slot_size != b->slot_size || a->disparity_scale != b->disparity_scale)
    return false;
  for (int k = 0; k < STEREOD_RING_PLANE_COUNT; k++)
    if (a->planes[k].offset != b->planes[k].offset || a->planes[k].stride != b->planes[k].stride)
      return false;
  return true;
}

/* NULL when the layout is usable, else why not (a new string). */
static char *
layout_check(const Layout *l)
{
  if (l->width < 1 || l->height < 1)
    return g_strdup_printf("%" PRIu32 "x%" PRIu32 " px: an empty frame", l->width, l->height);
  if (l->width > HEIGHTMAP_MAX_INPUT_SIDE || l->height > HEIGHTMAP_MAX_INPUT_SIDE)
    return g_strdup_printf("%" PRIu32 "x%" PRIu32 " px: over the %d px a side that every "
                           "OpenGL 4.5 GPU takes", l->width, l->height,
                           HEIGHTMAP_MAX_INPUT_SIDE);
  if ((uint64_t) l->width * l->height > HEIGHTMAP_MAX_INPUT_PIXELS)
    return g_strdup_printf("%" PRIu32 "x%" PRIu32 " px: over the sanity bound of %d pixels "
                           "a frame", l->width, l->height, HEIGHTMAP_MAX_INPUT_PIXELS);
  if (!(l->formats & STEREOD_RING_FORMAT_DISPARITY))
    return g_strdup_printf("no disparity plane (formats 0x%" PRIx32 "): nothing to "
                           "triangulate", l->formats);
  if (!(l->disparity_scale > 0.0) || !isfinite(l->disparity_scale))
    return g_strdup_printf("disparity scale %g is not a positive number", l->disparity_scale);
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    if (!(l->formats & STEREOD_RING_FORMAT(k)))
      continue;
    const StereodRingPlane *p = &l->planes[k];
    uint64_t elem = stereod_ring_plane_element_size(k);
    if (p->offset < sizeof(StereodRingSlot) || p->stride < l->width * elem ||
        p->stride % elem != 0 || (uint64_t) p->offset + (uint64_t) p->stride * l->height >
        l->slot_size)
      return g_strdup_printf("its %s plane (offset %" PRIu32 ", stride %" PRIu32 " for %" PRIu32
                             "x%" PRIu32 " px) does not fit its %" PRIu32 "-byte slot",
                             plane_names[k], p->offset, p->stride, l->width, l->height,
                             l->slot_size);
  }
  return NULL;
}

static bool
all_finite(const double *v, int n)
{
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return false;
  return true;
}

/* Q and the pose: the calibration file's, else the header's. NULL, or why not. */
static char *
geometry_of(const HeightmapPairConfig *pair, const StereodRingHeader *h,
            HeightmapPairGeometry *g)
{
  if (pair->has_calibration) {
    if ((uint32_t) pair->calib.width != h->width || (uint32_t) pair->calib.height != h->height)
      return g_strdup_printf("its %" PRIu32 "x%" PRIu32 " frames do not match calibration= %s "
                             "(%dx%d)", h->width, h->height, pair->calibration_path,
                             pair->calib.width, pair->calib.height);
    heightmap_geometry_from_calib(g, &pair->calib);
    return NULL;
  }
  bool has_q = false;
  for (int i = 0; i < 16; i++)
    has_q |= h->calibration.q[i] != 0.0;
  if (!has_q || h->producer[0] != 1.0)
    return g_strdup_printf("no %s in its header and no calibration= for the pair",
                           has_q ? "pose" : "calibration");
  const double *quat = &h->producer[1];
  double norm = quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3];
  if (!all_finite(h->calibration.q, 16) || !all_finite(&h->producer[1], 7) || !(norm > 0.5) ||
      !(norm < 2.0))
    return g_strdup("the Q or the pose in its header is not a valid one");
  memcpy(g->q, h->calibration.q, sizeof g->q);
  calib_rotation_from_quaternion(quat, g->rotation);
  memcpy(g->centre, &h->producer[5], sizeof g->centre);
  return NULL;
}

/* The inode under the ring's name now: the object opened, unless it was replaced in the
 * microseconds since (then the next read says -ESTALE and the ring is reopened). */
static uint64_t
ring_id_of(const char *ring)
{
  g_autofree char *path = g_strdup_printf(STEREOD_RING_SHM_DIR "/" STEREOD_RING_PREFIX "%s",
                                          ring);
  struct stat st;
  return stat(path, &st) == 0 ? (uint64_t) st.st_ino : 0;
}

HeightmapOpenResult
heightmap_reader_open(const HeightmapPairConfig *pair, HeightmapReader **out, int *err,
                      char **why, uint64_t *ring_id)
{
  g_return_val_if_fail(pair && out && err && why && ring_id, HEIGHTMAP_OPEN_ABSENT);
  *out = NULL;
  *err = 0;
  *why = NULL;
  *ring_id = 0;
  StereodClient *client = NULL;
  int r = stereod_client_open(pair->ring, &client);
  if (r == 0 || r == -EPROTO)
    *ring_id = ring_id_of(pair->ring);
  if (r == -EPROTO) {
    *why = g_strdup("not a ring this version reads (magic, version or layout)");
    return HEIGHTMAP_OPEN_BAD;
  }
  if (r == -EPERM) {
    *why = g_strdup(stereod_client_strerror(r));
    return HEIGHTMAP_OPEN_BAD;
  }
  if (r < 0) {
    *err = r;
    return HEIGHTMAP_OPEN_ABSENT;
  }
  if (stereod_client_is_closed(client)) {
    /* A writer that closed without removing the name (keep_on_close): its last frames
     * are old, and waiting on it would end at once, every time. Not there, for us. */
    stereod_client_close(client);
    *err = -EPIPE;
    return HEIGHTMAP_OPEN_ABSENT;
  }
  g_autoptr(HeightmapReader) rd = g_new0(HeightmapReader, 1);
  rd->client = client;
  rd->ring_id = *ring_id;
  /* One copy of the header, so that what is checked is what is kept. */
  StereodRingHeader h;
  memcpy(&h, stereod_client_get_header(client), sizeof h);
  layout_from_header(&rd->layout, &h);
  if ((*why = layout_check(&rd->layout)) || (*why = geometry_of(pair, &h, &rd->geometry)))
    return HEIGHTMAP_OPEN_BAD;
  *out = g_steal_pointer(&rd);
  return HEIGHTMAP_OPEN_OK;
}

void
heightmap_reader_close(HeightmapReader *rd)
{
  if (!rd)
    return;
  stereod_client_close(rd->client);
  g_free(rd);
}

static const void *
frame_plane(const StereodFrame *f, unsigned k)
{
  switch (k) {
  case STEREOD_RING_PLANE_DISPARITY: return f->disparity;
  case STEREOD_RING_PLANE_DEPTH: return f->depth;
  case STEREOD_RING_PLANE_CONFIDENCE: return f->confidence;
  case STEREOD_RING_PLANE_FLOW_U: return f->flow_u;
  case STEREOD_RING_PLANE_FLOW_V: return f->flow_v;
  default: return f->float32;
  }
}

/* NULL when the frame matches the layout copied at open and its planes lie inside its
 * buffer; else why not. The library fills the frame's size, strides and plane pointers
 * from the live header, which the writer can rewrite at any time. */
static char *
frame_check(const HeightmapReader *rd, const StereodFrame *f)
{
  const Layout *l = &rd->layout;
  if (f->width != l->width || f->height != l->height || f->formats != l->formats ||
      f->disparity_scale != l->disparity_scale)
    return g_strdup_printf("a frame of %" PRIu32 "x%" PRIu32 " px (formats 0x%" PRIx32
                           ", scale %g) does not match the ring's %" PRIu32 "x%" PRIu32
                           " (0x%" PRIx32 ", %g) at open", f->width, f->height, f->formats,
                           f->disparity_scale, l->width, l->height, l->formats,
                           l->disparity_scale);
  uintptr_t base = (uintptr_t) f->priv_buffer;
  size_t capacity = f->priv_capacity;
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    uintptr_t p = (uintptr_t) frame_plane(f, k);
    if (!(l->formats & STEREOD_RING_FORMAT(k))) {
      if (p)
        return g_strdup_printf("a frame has a %s plane its ring does not have", plane_names[k]);
      continue;
    }
    const StereodRingPlane *lp = &l->planes[k];
    uint64_t end = (uint64_t) lp->offset + (uint64_t) lp->stride * (l->height - 1) +
                   (uint64_t) l->width * stereod_ring_plane_element_size(k);
    if (!p || f->strides[k] != lp->stride || p < base || p - base != lp->offset ||
        end > capacity)
      return g_strdup_printf("a frame's %s plane (stride %" PRIu32 ") is not where the ring "
                             "put it at open (offset %" PRIu32 ", stride %" PRIu32 ", %zu "
                             "bytes copied)", plane_names[k], f->strides[k], lp->offset,
                             lp->stride, capacity);
  }
  return NULL;
}

static char *
header_check(const HeightmapReader *rd)
{
  Layout now;
  layout_from_header(&now, stereod_client_get_header(rd->client));
  if (layout_equal(&now, &rd->layout))
    return NULL;
  return g_strdup_printf("its header changed while open (%" PRIu32 "x%" PRIu32 ", formats 0x%"
                         PRIx32 ", was %" PRIu32 "x%" PRIu32 ", 0x%" PRIx32 ")", now.width,
                         now.height, now.formats, rd->layout.width, rd->layout.height,
                         rd->layout.formats);
}

HeightmapReadResult
heightmap_reader_next(HeightmapReader *rd, int64_t timeout_ns, StereodFrame *frame,
                      int *retry_ms, int *err, char **why)
{
  g_return_val_if_fail(rd && frame && retry_ms && err && why, HEIGHTMAP_READ_NONE);
  *retry_ms = 0;
  *err = 0;
  *why = NULL;
  uint64_t counter = 0;
  int r = stereod_client_wait(rd->client, rd->last, timeout_ns, &counter);
  if (r == -ETIMEDOUT || r == -EINTR) {
    rd->stall_since = 0;   /* nothing announced: nothing owed */
    rd->retry_ms = 0;
    return HEIGHTMAP_READ_NONE;
  }
  if (r < 0) {
    *err = r;
    return HEIGHTMAP_READ_REOPEN;
  }
  r = stereod_client_read_latest(rd->client, frame);
  if (r == 0 && frame->counter > rd->last) {
    if ((*why = frame_check(rd, frame)) || (*why = header_check(rd)))
      return HEIGHTMAP_READ_BAD;
    rd->last = frame->counter;
    rd->stall_since = 0;
    rd->retry_ms = 0;
    return HEIGHTMAP_READ_FRAME;
  }
  if (r == -EPROTO || r == -EIO) {
    /* the client checks the object before every copy: a header rewritten or an object
     * truncated since the open is a broken ring, not a restarted writer */
    *why = g_strdup(stereod_client_strerror(r));
    return HEIGHTMAP_READ_BAD;
  }
  if (r < 0 && r != -EAGAIN && r != -ENODATA && r != -EBADMSG) {
    *err = r;
    return HEIGHTMAP_READ_REOPEN;
  }
  /* The counter says there is a frame newer than the last, but the read gave none: the
   * newest slot is being written (odd seq) or holds nothing (counter 0), every copy was
   * torn, or the counter went back. A writer that is merely busy finishes within
   * microseconds; wait a little longer each time, and give up after the stall time. */
  gint64 now = g_get_monotonic_time();
  if (!rd->stall_since)
    rd->stall_since = now;
  else if (now - rd->stall_since >= (gint64) HEIGHTMAP_READ_STALL_MS * 1000) {
    *why = g_strdup_printf("it announced frame %" PRIu64 " and gave no frame after %" PRIu64
                           " for %.1f s (%s)", counter, rd->last,
                           (double) (now - rd->stall_since) * 1e-6,
                           r == -EAGAIN || r == -EBADMSG ? "its newest slot never validated"
                           : r == -ENODATA ? "its counter went back to 0"
                           : "no newer frame in its newest slot");
    return HEIGHTMAP_READ_BAD;
  }
  rd->retry_ms = rd->retry_ms ? MIN(2 * rd->retry_ms, HEIGHTMAP_READ_RETRY_MAX_MS)
                              : HEIGHTMAP_READ_RETRY_MIN_MS;
  *retry_ms = rd->retry_ms;
  return HEIGHTMAP_READ_RETRY;
}

const HeightmapPairGeometry *
heightmap_reader_get_geometry(const HeightmapReader *rd)
{
  g_return_val_if_fail(rd, NULL);
  return &rd->geometry;
}

int
heightmap_reader_get_width(const HeightmapReader *rd)
{
  g_return_val_if_fail(rd, 0);
  return (int) rd->layout.width;
}

int
heightmap_reader_get_height(const HeightmapReader *rd)
{
  g_return_val_if_fail(rd, 0);
  return (int) rd->layout.height;
}

uint64_t
heightmap_reader_get_ring_id(const HeightmapReader *rd)
{
  g_return_val_if_fail(rd, 0);
  return rd->ring_id;
}

/* Bytes from a plane's first byte to the end of the frame's buffer (frame_check made
 * sure the plane is inside it). */
static size_t
readable(const StereodFrame *f, const void *plane)
{
  if (!plane)
    return 0;
  return f->priv_capacity - (size_t) ((uintptr_t) plane - (uintptr_t) f->priv_buffer);
}

void
heightmap_reader_frame_input(const StereodFrame *f, HeightmapInput *in)
{
  g_return_if_fail(f && in);
  *in = (HeightmapInput) {
    .width = (int) f->width, .height = (int) f->height,
    .disparity = f->disparity,
    .disparity_stride = f->strides[STEREOD_RING_PLANE_DISPARITY],
    .disparity_size = readable(f, f->disparity),
    .disparity_scale = f->disparity_scale,
    .confidence = f->confidence,
    .confidence_stride = f->strides[STEREOD_RING_PLANE_CONFIDENCE],
    .confidence_size = readable(f, f->confidence),
  };
  /* one stride for both flow planes (stereod writes them alike); a ring whose planes
   * differ gives no flow */
  if (f->flow_u && f->flow_v &&
      f->strides[STEREOD_RING_PLANE_FLOW_U] == f->strides[STEREOD_RING_PLANE_FLOW_V]) {
    in->flow_u = f->flow_u;
    in->flow_v = f->flow_v;
    in->flow_stride = f->strides[STEREOD_RING_PLANE_FLOW_U];
    in->flow_u_size = readable(f, f->flow_u);
    in->flow_v_size = readable(f, f->flow_v);
  }
}
