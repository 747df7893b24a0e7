/* ring-map.c: one ring as a reader maps it: opening with the owner check, the header
 * copied once and validated against ring.h, and every later access checked (fstat) and
 * guarded (SIGBUS, ring-guard.h). See ring-reader-impl.h. */
#include "ring-reader-impl.h"
#include "ring-guard.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

static inline uint64_t
round_up(uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

int
ring_header_validate(const StereodRingHeader *h, uint64_t object_size, uint32_t *copy_size)
{
  if (memcmp(h->magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE) != 0)
    return -EPROTO;
  if (h->version != STEREOD_RING_VERSION)
    return -EPROTO;
  if (h->header_size < sizeof *h || h->header_size % STEREOD_RING_PAGE != 0
      || h->header_size > STEREOD_RING_MAX_HEADER_SIZE)
    return -EPROTO;
  if (h->slot_count == 0 || h->slot_count > STEREOD_RING_MAX_SLOTS)
    return -EPROTO;
  if (h->slot_size < sizeof(StereodRingSlot) || h->slot_size % STEREOD_RING_PAGE != 0)
    return -EPROTO;
  if (h->width == 0 || h->height == 0 || h->width > STEREOD_RING_MAX_DIM
      || h->height > STEREOD_RING_MAX_DIM)
    return -EPROTO;
  if (h->formats == 0 || (h->formats & ~STEREOD_RING_FORMAT_ALL) != 0)
    return -EPROTO;
  uint32_t flow = h->formats & STEREOD_RING_FORMAT_FLOW;
  if (flow != 0 && flow != STEREOD_RING_FORMAT_FLOW)
    return -EPROTO;   /* FLOW_U and FLOW_V come together */
  if (!(h->disparity_scale > 0.0) || !__builtin_isfinite(h->disparity_scale))
    return -EPROTO;
  if (memchr(h->name, '\0', sizeof h->name) == NULL)
    return -EPROTO;

  /* All products in 64 bits: every factor is below 2^32, so none overflows. */
  uint64_t end = sizeof(StereodRingSlot);
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    const StereodRingPlane *p = stereod_ring_header_plane(h, k);
    if (!(h->formats & STEREOD_RING_FORMAT(k))) {
      if (p->offset != 0 || p->stride != 0 || p->size != 0)
        return -EPROTO;
      continue;
    }
    uint32_t es = stereod_ring_plane_element_size(k);
    uint64_t row = (uint64_t) h->width * es;
    if (p->offset < sizeof(StereodRingSlot) || p->offset % STEREOD_RING_ALIGN != 0)
      return -EPROTO;
    if (p->stride < row || p->stride % es != 0 || p->stride > round_up(row, STEREOD_RING_PAGE))
      return -EPROTO;
    if ((uint64_t) p->size != (uint64_t) p->stride * h->height)
      return -EPROTO;
    uint64_t plane_end = (uint64_t) p->offset + p->size;
    if (plane_end > h->slot_size)
      return -EPROTO;
    if (plane_end > end)
      end = plane_end;
  }
  if (h->slot_size > round_up(end, STEREOD_RING_PAGE) + STEREOD_RING_PAGE)
    return -EPROTO;
  uint64_t total = h->header_size + (uint64_t) h->slot_count * h->slot_size;
  if (h->total_size != total || total > STEREOD_RING_MAX_TOTAL_SIZE || total > object_size
      || total > SIZE_MAX)
    return -EPROTO;
  *copy_size = (uint32_t) end;
  return 0;
}

/* Whether uid may own a ring this client reads (StereodClientOwner). */
static bool
owner_is_trusted(const StereodClient *rules, uid_t uid)
{
  switch (rules->owner) {
  case STEREOD_CLIENT_OWNER_ANY:
    return true;
  case STEREOD_CLIENT_OWNER_UID:
    return uid == rules->owner_uid;
  default:
    break;
  }
  if (uid == geteuid() || uid == 0)
    return true;
  struct passwd pw, *found = NULL;
  char buf[1024];
  return getpwnam_r("stereod", &pw, buf, sizeof buf, &found) == 0 && found != NULL
         && found->pw_uid == uid;
}

int
ring_map_open(RingMap *m, const char *path, const StereodClient *rules)
{
  m->fd = -1;
  m->map = NULL;
  if (snprintf(m->path, sizeof m->path, "%s", path) >= (int) sizeof m->path)
    return -ENAMETOOLONG;
  int r = ring_guard_install();
  if (r < 0)
    return r;

  m->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (m->fd < 0)
    return errno == ELOOP ? -EPERM : -errno;   /* a symlink under the name: not a ring */
  struct stat st;
  if (fstat(m->fd, &st) < 0) {
    r = -errno;
    goto fail;
  }
  if (!S_ISREG(st.st_mode)) {
    r = -EPROTO;
    goto fail;
  }
  if (!owner_is_trusted(rules, st.st_uid)) {
    r = -EPERM;
    goto fail;
  }
  m->uid = st.st_uid;
  m->dev = st.st_dev;
  m->ino = st.st_ino;

  /* The header comes in by pread: nothing of the object is mapped before its size and
   * layout are known to agree, so a short or shrinking object cannot fault here. */
  ssize_t n = pread(m->fd, &m->hdr, sizeof m->hdr, 0);
  if (n < 0) {
    r = -errno;
    goto fail;
  }
  if ((size_t) n < sizeof m->hdr) {
    r = -EPROTO;
    goto fail;
  }
  r = ring_header_validate(&m->hdr, (uint64_t) st.st_size, &m->copy_size);
  if (r < 0)
    goto fail;
  m->map_size = (size_t) m->hdr.total_size;
  void *map = mmap(NULL, m->map_size, PROT_READ, MAP_SHARED, m->fd, 0);
  if (map == MAP_FAILED) {
    r = -errno;
    goto fail;
  }
  m->map = map;
  m->last_counter = m->hdr.counter;
  /* The mapping must show the header that was validated: a writer that changed it
   * between the pread and the mmap is caught here already. */
  r = ring_map_check_header(m);
  if (r < 0)
    goto fail;
  return 0;

fail:
  ring_map_close(m);
  return r;
}

void
ring_map_close(RingMap *m)
{
  if (m->map != NULL)
    munmap(m->map, m->map_size);
  if (m->fd >= 0)
    close(m->fd);
  m->map = NULL;
  m->fd = -1;
}

int
ring_map_break(RingMap *m, int error)
{
  if (m->broken == 0)
    m->broken = error;
  return m->broken;
}

int
ring_map_check_size(RingMap *m)
{
  if (m->broken != 0)
    return m->broken;
  struct stat st;
  if (fstat(m->fd, &st) < 0)
    return -errno;
  if ((uint64_t) st.st_size < m->hdr.total_size)
    return ring_map_break(m, -EIO);
  return 0;
}

/* The bytes of the header that never change after the writer made the object visible:
 * everything before `counter` except `closed`. */
#define HEADER_FIXED_A offsetof(StereodRingHeader, closed)
#define HEADER_FIXED_B offsetof(StereodRingHeader, reserved0)
#define HEADER_FIXED_END offsetof(StereodRingHeader, counter)

int
ring_map_check_header(RingMap *m)
{
  int r = ring_map_check_size(m);
  if (r < 0)
    return r;
  const uint8_t *live = m->map;
  const uint8_t *mine = (const uint8_t *) &m->hdr;
  RingGuard g;
  ring_guard_begin(&g, m->map, m->map_size);
  bool same = memcmp(live, mine, HEADER_FIXED_A) == 0
              && memcmp(live + HEADER_FIXED_B, mine + HEADER_FIXED_B,
                        HEADER_FIXED_END - HEADER_FIXED_B) == 0;
  if (ring_guard_end(&g))
    return ring_map_break(m, -EIO);
  return same ? 0 : ring_map_break(m, -EPROTO);
}

int
ring_map_load_live(RingMap *m, RingLive *live)
{
  int r = ring_map_check_size(m);
  if (r < 0)
    return r;
  const StereodRingHeader *h = m->map;
  RingGuard g;
  ring_guard_begin(&g, m->map, m->map_size);
  /* The futex word first: the writer stores the counter (or closed) before it bumps
   * the word, so a publish after these loads changes the word and FUTEX_WAIT returns
   * at once instead of sleeping through it. */
  live->futex = ring_load32(&h->futex, memory_order_acquire);
  live->counter = ring_load64(&h->counter, memory_order_acquire);
  live->closed = ring_load32(&h->closed, memory_order_acquire) != 0;
  if (ring_guard_end(&g))
    return ring_map_break(m, -EIO);
  m->last_counter = live->counter;
  return 0;
}

bool
ring_map_name_moved(const RingMap *m)
{
  struct stat st;
  if (lstat(m->path, &st) < 0)
    return false;   /* gone without a clean close: the writer may come back */
  return st.st_ino != m->ino || st.st_dev != m->dev;
}
