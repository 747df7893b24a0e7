/* ring-writer.c: creating and publishing into a stereod shm ring (see ring-writer.h,
 * and <stereod/ring.h> for the layout and the protocol). */
#include "ring-writer.h"
#include "ring-private.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

struct RingWriter {
  StereodRingHeader *header;     /* the whole object, mapped read-write */
  StereodRingHeader layout;      /* private copy: the layout is never read back from the
                                    shared mapping, whatever another process wrote there */
  size_t map_size;
  ino_t ino;                     /* of our object, to unlink only our own name */
  dev_t dev;
  bool keep_on_close;
  bool in_progress;              /* between begin and commit */
  uint64_t counter;              /* frames published (mirror of header->counter) */
  uint64_t pending_seq;          /* seq of the slot being written, odd */
  char path[RING_PATH_MAX];
};

static inline uint64_t
round_up(uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

static inline StereodRingSlot *
writer_slot(RingWriter *w, uint64_t index)
{
  uint8_t *base = (uint8_t *) w->header;
  return (StereodRingSlot *) (base + w->layout.header_size + index * w->layout.slot_size);
}

/* Fills `h` (zeroed) with the layout for the parameters. */
static int
layout_compute(const RingWriterParams *p, StereodRingHeader *h)
{
  if (!ring_name_is_valid(p->name))
    return -EINVAL;
  if (p->width == 0 || p->height == 0 || p->width > STEREOD_RING_MAX_DIM
      || p->height > STEREOD_RING_MAX_DIM)
    return -EINVAL;
  if (p->formats == 0 || (p->formats & ~STEREOD_RING_FORMAT_ALL) != 0)
    return -EINVAL;
  uint32_t flow = p->formats & STEREOD_RING_FORMAT_FLOW;
  if (flow != 0 && flow != STEREOD_RING_FORMAT_FLOW)
    return -EINVAL;   /* FLOW_U and FLOW_V come together (ring.h) */
  uint32_t slots = p->slot_count ? p->slot_count : STEREOD_RING_DEFAULT_SLOTS;
  if (slots < 2 || slots > STEREOD_RING_MAX_SLOTS)
    return -EINVAL;
  double scale = p->disparity_scale != 0.0 ? p->disparity_scale : STEREOD_RING_DEFAULT_DISPARITY_SCALE;
  if (!(scale > 0.0))
    return -EINVAL;

  uint64_t off = sizeof(StereodRingSlot);
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    if (!(p->formats & STEREOD_RING_FORMAT(k)))
      continue;
    uint64_t stride = (uint64_t) p->width * stereod_ring_plane_element_size(k);
    uint64_t size = stride * p->height;
    /* the header is ours: its descriptors are written here only */
    StereodRingPlane *desc = (StereodRingPlane *) stereod_ring_header_plane(h, k);
    desc->offset = (uint32_t) off;
    desc->stride = (uint32_t) stride;
    desc->size = (uint32_t) size;
    off = round_up(off + size, STEREOD_RING_ALIGN);
    if (off > UINT32_MAX / 2)
      return -EFBIG;
  }
  uint64_t slot_size = round_up(off, STEREOD_RING_PAGE);
  if (round_up(sizeof(StereodRingHeader), STEREOD_RING_PAGE) + slots * slot_size
      > STEREOD_RING_MAX_TOTAL_SIZE)
    return -EFBIG;   /* readers would refuse it (ring.h, READER LIMITS) */

  memcpy(h->magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE);
  h->version = STEREOD_RING_VERSION;
  h->header_size = (uint32_t) round_up(sizeof(StereodRingHeader), STEREOD_RING_PAGE);
  h->slot_count = slots;
  h->slot_size = (uint32_t) slot_size;
  h->total_size = h->header_size + slots * slot_size;
  h->width = p->width;
  h->height = p->height;
  h->formats = p->formats;
  h->writer_pid = (int32_t) getpid();
  h->created_ns = ring_now_ns(CLOCK_REALTIME);
  snprintf(h->name, sizeof h->name, "%s", p->name);
  h->disparity_scale = scale;
  h->calibration = p->calibration;
  memcpy(h->producer, p->producer, sizeof h->producer);
  return 0;
}

/* Whether process `pid` maps the object with inode `ino` (i.e. is its live writer).
 * When /proc cannot tell (another user's process), a live pid counts as a writer. */
static bool
pid_maps_object(pid_t pid, ino_t ino)
{
  if (pid <= 0)
    return false;
  if (kill(pid, 0) < 0 && errno == ESRCH)
    return false;
  char maps[64];
  snprintf(maps, sizeof maps, "/proc/%d/maps", (int) pid);
  FILE *f = fopen(maps, "re");
  if (f == NULL)
    return true;
  bool found = false;
  char line[512];
  while (!found && fgets(line, sizeof line, f) != NULL) {
    unsigned long long inode = 0;
    char perms[8];
    if (sscanf(line, "%*s %7s %*s %*s %llu", perms, &inode) == 2)
      found = inode == (unsigned long long) ino && strchr(perms, 's') != NULL;
  }
  fclose(f);
  return found;
}

/* Formats an error line into the caller's buffer (if any) and returns `r`. */
static int __attribute__((format(printf, 4, 5)))
fail_msg(char *msg, size_t size, int r, const char *fmt, ...)
{
  if (msg != NULL && size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
  }
  return r;
}

/* "ring P belongs to uid N (user), not to us (uid M): ..." */
static int
foreign_owner(const char *path, uid_t owner, char *msg, size_t size)
{
  char who[128], me[128];
  ring_user_name(owner, who, sizeof who);
  ring_user_name(geteuid(), me, sizeof me);
  return fail_msg(msg, size, -EPERM,
                  "ring %s belongs to uid %u (%s), not to us (uid %u, %s): remove it, or "
                  "choose another pair name", path, (unsigned) owner, who,
                  (unsigned) geteuid(), me);
}

/* Deals with an existing object under the final name: nothing there, or a ring of ours
 * whose writer is gone (told it is closed, so its readers can reopen) is fine;
 * -EBUSY when its writer is alive; -EPERM for anything not ours or not a regular file,
 * which is left exactly as it is. */
static int
retire_existing(const char *path, char *msg, size_t size)
{
  struct stat st;
  if (lstat(path, &st) < 0)
    return errno == ENOENT ? 0 : fail_msg(msg, size, -errno, "ring %s: %s", path, strerror(errno));
  if (st.st_uid != geteuid())
    return foreign_owner(path, st.st_uid, msg, size);
  if (!S_ISREG(st.st_mode))
    return fail_msg(msg, size, -EPERM, "ring %s exists and is not a regular file: remove it, "
                    "or choose another pair name", path);
  /* O_NOFOLLOW and the second fstat: what we write into is what we checked, even if
   * the name changed since the lstat. */
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return fail_msg(msg, size, -errno, "ring %s: %s", path, strerror(errno));
  }
  int r = 0;
  if (fstat(fd, &st) < 0) {
    r = fail_msg(msg, size, -errno, "ring %s: %s", path, strerror(errno));
  } else if (st.st_uid != geteuid()) {
    r = foreign_owner(path, st.st_uid, msg, size);
  } else if (!S_ISREG(st.st_mode)) {
    r = fail_msg(msg, size, -EPERM, "ring %s exists and is not a regular file: remove it, "
                 "or choose another pair name", path);
  } else if (st.st_size >= (off_t) sizeof(StereodRingHeader)) {
    StereodRingHeader *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h != MAP_FAILED) {
      if (memcmp(h->magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE) == 0) {
        bool closed = ring_load32(&h->closed, memory_order_acquire) != 0;
        pid_t pid = h->writer_pid;
        if (!closed && pid != getpid() && pid_maps_object(pid, st.st_ino)) {
          r = fail_msg(msg, size, -EBUSY, "ring %s is in use by its writer (pid %d): stop it "
                       "first, or choose another pair name", path, (int) pid);
        } else {
          atomic_store_explicit(RING_A32(&h->closed), 1, memory_order_release);
          atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
          ring_futex_wake_all(&h->futex);
        }
      }
      munmap(h, sizeof *h);
    }
  }
  close(fd);
  return r;
}

/* Creates the temporary object beside the final name: O_EXCL, never through a link.
 * A leftover of ours (a crashed process that had our pid) is removed; a name someone
 * else holds is skipped. */
static int
create_temporary(const char *dir, const char *name, mode_t mode, char *tmp, size_t tmp_size,
                 char *msg, size_t size)
{
  for (unsigned i = 0; i < 16; i++) {
    char suffix[48];
    snprintf(suffix, sizeof suffix, "~%d.%u.tmp", (int) getpid(), i);
    if (ring_path_format(tmp, tmp_size, dir, name, suffix) < 0)
      return fail_msg(msg, size, -ENAMETOOLONG, "ring directory %s: path too long", dir);
    for (int again = 0; again < 2; again++) {
      int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
      if (fd >= 0)
        return fd;
      if (errno != EEXIST)
        return fail_msg(msg, size, -errno, "cannot create %s: %s", tmp, strerror(errno));
      struct stat st;
      if (again || lstat(tmp, &st) < 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode))
        break;
      unlink(tmp);
    }
  }
  return fail_msg(msg, size, -EEXIST, "cannot create a temporary ring beside %s/%s%s: "
                  "every name is taken", dir, STEREOD_RING_PREFIX, name);
}

int
ring_writer_new_with_error(const RingWriterParams *params, RingWriter **out, char *msg,
                           size_t msg_size)
{
  if (msg != NULL && msg_size > 0)
    msg[0] = '\0';
  if (out == NULL || params == NULL)
    return fail_msg(msg, msg_size, -EINVAL, "no parameters");
  *out = NULL;

  StereodRingHeader layout = { 0 };
  int r = layout_compute(params, &layout);
  if (r < 0)
    return fail_msg(msg, msg_size, r, "ring %s: %s", params->name ? params->name : "(null)",
                    r == -EFBIG ? "larger than readers accept (ring.h, READER LIMITS)"
                                : "invalid parameters");

  RingWriter *w = calloc(1, sizeof *w);
  if (w == NULL)
    return fail_msg(msg, msg_size, -ENOMEM, "out of memory");
  w->keep_on_close = params->keep_on_close;
  const char *dir = params->dir != NULL ? params->dir : ring_dir_default();
  if (ring_path_format(w->path, sizeof w->path, dir, params->name, NULL) < 0) {
    free(w);
    return fail_msg(msg, msg_size, -ENAMETOOLONG, "ring directory %s: path too long", dir);
  }

  /* Built under a name no reader opens ('~' is not allowed in pair names), then
   * renamed over the final name: readers never see a half-written header, and an
   * object left by a dead writer is replaced in one step. */
  char tmp[RING_PATH_MAX];
  mode_t mode = params->mode ? params->mode : 0640;
  int fd = create_temporary(dir, params->name, mode, tmp, sizeof tmp, msg, msg_size);
  if (fd < 0) {
    free(w);
    return fd;
  }

  struct stat st;
  void *map = MAP_FAILED;
  w->map_size = layout.total_size;
  if (fchmod(fd, mode) < 0 || ftruncate(fd, (off_t) layout.total_size) < 0 || fstat(fd, &st) < 0)
    goto fail_errno;
  map = mmap(NULL, w->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    goto fail_errno;
  w->header = map;
  memcpy(w->header, &layout, sizeof layout);   /* slots are zero: seq 0, never written */
  w->layout = layout;
  w->ino = st.st_ino;
  w->dev = st.st_dev;

  r = retire_existing(w->path, msg, msg_size);
  if (r < 0)
    goto fail;
  if (rename(tmp, w->path) < 0)
    goto fail_errno;
  close(fd);
  *out = w;
  return 0;

fail_errno:
  r = fail_msg(msg, msg_size, -errno, "ring %s: %s", w->path, strerror(errno));
fail:
  if (map != MAP_FAILED)
    munmap(map, w->map_size);
  close(fd);
  unlink(tmp);
  free(w);
  return r;
}

int
ring_writer_new(const RingWriterParams *params, RingWriter **out)
{
  return ring_writer_new_with_error(params, out, NULL, 0);
}

void
ring_writer_free(RingWriter *w)
{
  if (w == NULL)
    return;
  if (w->header != NULL) {
    atomic_store_explicit(RING_A32(&w->header->closed), 1, memory_order_release);
    atomic_fetch_add_explicit(RING_A32(&w->header->futex), 1, memory_order_release);
    ring_futex_wake_all(&w->header->futex);
    struct stat st;
    /* Only our own name: a newer writer may have taken it over. */
    if (!w->keep_on_close && lstat(w->path, &st) == 0 && st.st_ino == w->ino && st.st_dev == w->dev)
      unlink(w->path);
    munmap(w->header, w->map_size);
  }
  free(w);
}

int
ring_writer_begin(RingWriter *w, RingWriterSlot *out)
{
  if (w == NULL || out == NULL)
    return -EINVAL;
  if (w->in_progress)
    return -EBUSY;
  const StereodRingHeader *h = &w->layout;
  StereodRingSlot *slot = writer_slot(w, w->counter % h->slot_count);
  uint64_t seq = ring_load64(&slot->seq, memory_order_relaxed);
  w->pending_seq = (seq & 1u) ? seq + 2 : seq + 1;   /* odd */
  atomic_store_explicit(RING_A64(&slot->seq), w->pending_seq, memory_order_relaxed);
  /* Orders the odd seq before every store into the slot that follows. */
  atomic_thread_fence(memory_order_release);
  w->in_progress = true;

  memset(out, 0, sizeof *out);
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    const StereodRingPlane *desc = stereod_ring_header_plane(h, k);
    if (desc->offset == 0)
      continue;
    out->planes[k] = (uint8_t *) slot + desc->offset;
    out->strides[k] = desc->stride;
  }
  out->width = h->width;
  out->height = h->height;
  out->counter = w->counter + 1;
  return 0;
}

int
ring_writer_commit(RingWriter *w, const RingWriterMeta *meta)
{
  if (w == NULL || meta == NULL || !w->in_progress)
    return -EINVAL;
  StereodRingHeader *h = w->header;
  StereodRingSlot *slot = writer_slot(w, w->counter % w->layout.slot_count);
  uint64_t k = w->counter + 1;
  slot->counter = k;
  slot->frame_number = meta->frame_number;
  slot->capture_ns = meta->capture_ns;
  slot->flags = meta->flags;
  slot->publish_ns = ring_now_ns(CLOCK_REALTIME);
  atomic_store_explicit(RING_A64(&slot->seq), w->pending_seq + 1, memory_order_release);
  atomic_store_explicit(RING_A64(&h->counter), k, memory_order_release);
  atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
  ring_futex_wake_all(&h->futex);
  w->counter = k;
  w->in_progress = false;
  return 0;
}

int
ring_writer_publish(RingWriter *w, const RingWriterMeta *meta,
                    const void *const planes[STEREOD_RING_PLANE_COUNT])
{
  RingWriterSlot slot;
  int r = ring_writer_begin(w, &slot);
  if (r < 0)
    return r;
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    if (planes != NULL && planes[k] != NULL && slot.planes[k] != NULL)
      memcpy(slot.planes[k], planes[k], (size_t) slot.strides[k] * slot.height);
  }
  return ring_writer_commit(w, meta);
}

uint64_t
ring_writer_get_counter(const RingWriter *w)
{
  return w != NULL ? w->counter : 0;
}

const char *
ring_writer_get_path(const RingWriter *w)
{
  return w != NULL ? w->path : NULL;
}
