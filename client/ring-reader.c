/* ring-reader.c: libstereod-client, the read-only side of the shm ring (see
 * <stereod/client.h>; layout and protocol in <stereod/ring.h>). Plain libc. */
#include <stereod/client.h>

#include "ring-private.h"
#include "ring-reader-private.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

struct StereodClient {
  const StereodRingHeader *header;   /* the whole object, PROT_READ */
  size_t map_size;
  dev_t dev;
  ino_t ino;
  uint32_t copy_size;                /* slot bytes a read copies: up to the last plane */
  StereodClientStats stats;
  StereodClientCopyHook hook;
  void *hook_data;
  char path[RING_PATH_MAX];
};

/* Checks everything a reader relies on before it trusts an offset in the header. */
static int
header_validate(const StereodRingHeader *h, uint64_t object_size, uint32_t *copy_size)
{
  if (memcmp(h->magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE) != 0)
    return -EPROTO;
  if (h->version != STEREOD_RING_VERSION)
    return -EPROTO;
  if (h->header_size < sizeof *h || h->header_size % STEREOD_RING_PAGE != 0)
    return -EPROTO;
  if (h->slot_count == 0 || h->slot_count > STEREOD_RING_MAX_SLOTS)
    return -EPROTO;
  if (h->slot_size < sizeof(StereodRingSlot) || h->slot_size % STEREOD_RING_PAGE != 0)
    return -EPROTO;
  uint64_t total = h->header_size + (uint64_t) h->slot_count * h->slot_size;
  if (h->total_size != total || total > object_size)
    return -EPROTO;
  if (h->width == 0 || h->height == 0 || h->formats == 0
      || (h->formats & ~STEREOD_RING_FORMAT_ALL) != 0)
    return -EPROTO;
  if (!(h->disparity_scale > 0.0))
    return -EPROTO;

  uint64_t end = sizeof(StereodRingSlot);
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    const StereodRingPlane *p = &h->planes[k];
    if (!(h->formats & STEREOD_RING_FORMAT(k))) {
      if (p->offset != 0 || p->size != 0)
        return -EPROTO;
      continue;
    }
    uint64_t row = (uint64_t) h->width * stereod_ring_plane_element_size(k);
    if (p->offset < sizeof(StereodRingSlot) || p->offset % STEREOD_RING_ALIGN != 0
        || p->stride < row || p->stride % stereod_ring_plane_element_size(k) != 0
        || p->size != (uint64_t) p->stride * h->height
        || (uint64_t) p->offset + p->size > h->slot_size)
      return -EPROTO;
    if (p->offset + p->size > end)
      end = p->offset + p->size;
  }
  *copy_size = (uint32_t) end;
  return 0;
}

int
stereod_client_open(const char *pair, StereodClient **out)
{
  if (out == NULL)
    return -EINVAL;
  *out = NULL;
  if (!ring_name_is_valid(pair))
    return -EINVAL;

  StereodClient *c = calloc(1, sizeof *c);
  if (c == NULL)
    return -ENOMEM;
  ring_path_format(c->path, sizeof c->path, pair, NULL);

  int r;
  int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    r = -errno;
    free(c);
    return r;
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    r = -errno;
    goto fail;
  }
  if (!S_ISREG(st.st_mode) || st.st_size < (off_t) sizeof(StereodRingHeader)) {
    r = -EPROTO;
    goto fail;
  }
  c->map_size = (size_t) st.st_size;
  void *map = mmap(NULL, c->map_size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    r = -errno;
    goto fail;
  }
  c->header = map;
  r = header_validate(c->header, (uint64_t) st.st_size, &c->copy_size);
  if (r < 0)
    goto fail;
  c->dev = st.st_dev;
  c->ino = st.st_ino;
  close(fd);
  *out = c;
  return 0;

fail:
  close(fd);
  stereod_client_close(c);
  return r;
}

void
stereod_client_close(StereodClient *c)
{
  if (c == NULL)
    return;
  if (c->header != NULL)
    munmap((void *) c->header, c->map_size);
  free(c);
}

/* Whether /dev/shm/stereod.<pair> now names another object than the one we mapped. */
static bool
client_is_stale(const StereodClient *c)
{
  struct stat st;
  if (stat(c->path, &st) < 0)
    return false;   /* gone without a clean close: the writer may come back */
  return st.st_ino != c->ino || st.st_dev != c->dev;
}

int
stereod_client_wait(StereodClient *c, uint64_t last_counter, int64_t timeout_ns,
                    uint64_t *counter)
{
  if (c == NULL)
    return -EINVAL;
  const StereodRingHeader *h = c->header;
  struct timespec deadline;
  if (timeout_ns > 0) {
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    int64_t ns = deadline.tv_nsec + timeout_ns % 1000000000;
    deadline.tv_sec += timeout_ns / 1000000000 + ns / 1000000000;
    deadline.tv_nsec = ns % 1000000000;
  }

  for (;;) {
    /* The futex word first: the writer stores the counter (or closed) before it bumps
     * the word, so a publish after these loads changes the word and FUTEX_WAIT
     * returns at once instead of sleeping through it. */
    uint32_t word = ring_load32(&h->futex, memory_order_acquire);
    uint64_t now = ring_load64(&h->counter, memory_order_acquire);
    if (now != last_counter) {
      if (counter != NULL)
        *counter = now;
      return 0;
    }
    if (ring_load32(&h->closed, memory_order_acquire) != 0)
      return -EPIPE;
    int r = timeout_ns == 0 ? -ETIMEDOUT
            : ring_futex_wait_until(&h->futex, word, timeout_ns < 0 ? NULL : &deadline);
    if (r == -ETIMEDOUT) {
      /* One last look, so a frame published right at the deadline is not lost. */
      now = ring_load64(&h->counter, memory_order_acquire);
      if (now != last_counter) {
        if (counter != NULL)
          *counter = now;
        return 0;
      }
      return client_is_stale(c) ? -ESTALE : -ETIMEDOUT;
    }
    if (r < 0)
      return r;
  }
}

static int
frame_reserve(StereodFrame *f, size_t size)
{
  if (f->priv_capacity >= size)
    return 0;
  void *buf = NULL;
  if (posix_memalign(&buf, STEREOD_RING_ALIGN, size) != 0)
    return -ENOMEM;
  free(f->priv_buffer);
  f->priv_buffer = buf;
  f->priv_capacity = size;
  return 0;
}

/* Fills the frame's public fields from its buffer (a consistent slot copy). */
static void
frame_fill(const StereodClient *c, StereodFrame *f)
{
  const StereodRingHeader *h = c->header;
  const StereodRingSlot *s = f->priv_buffer;
  const uint8_t *base = f->priv_buffer;
  f->counter = s->counter;
  f->frame_number = s->frame_number;
  f->capture_ns = s->capture_ns;
  f->publish_ns = s->publish_ns;
  f->flags = s->flags;
  f->width = h->width;
  f->height = h->height;
  f->formats = h->formats;
  f->disparity_scale = h->disparity_scale;
  f->calibration = h->calibration;
  const void *planes[STEREOD_RING_PLANE_COUNT] = { NULL };
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    planes[k] = h->planes[k].offset ? base + h->planes[k].offset : NULL;
    f->strides[k] = h->planes[k].stride;
  }
  f->disparity = planes[STEREOD_RING_PLANE_DISPARITY];
  f->depth = planes[STEREOD_RING_PLANE_DEPTH];
  f->confidence = planes[STEREOD_RING_PLANE_CONFIDENCE];
  f->float32 = planes[STEREOD_RING_PLANE_FLOAT32];
}

int
stereod_client_read_latest(StereodClient *c, StereodFrame *f)
{
  if (c == NULL || f == NULL)
    return -EINVAL;
  int r = frame_reserve(f, c->copy_size);
  if (r < 0)
    return r;
  const StereodRingHeader *h = c->header;
  const uint8_t *slots = (const uint8_t *) h + h->header_size;
  uint8_t *buf = f->priv_buffer;
  size_t half = c->copy_size / 2;

  for (unsigned attempt = 0; attempt < STEREOD_CLIENT_READ_ATTEMPTS; attempt++) {
    uint64_t counter = ring_load64(&h->counter, memory_order_acquire);
    if (counter == 0)
      return -ENODATA;
    const uint8_t *slot = slots + ((counter - 1) % h->slot_count) * (uint64_t) h->slot_size;
    const uint64_t *seq = &((const StereodRingSlot *) slot)->seq;
    uint64_t s1 = ring_load64(seq, memory_order_acquire);
    if ((s1 & 1u) != 0) {
      /* The writer lapped us and is rewriting this slot: take the newer counter. */
      c->stats.torn++;
      continue;
    }
    memcpy(buf, slot, half);
    if (c->hook != NULL)
      c->hook(c, attempt, c->hook_data);
    memcpy(buf + half, slot + half, c->copy_size - half);
    /* Keeps the copy's loads before the second look at seq. */
    atomic_thread_fence(memory_order_acquire);
    uint64_t s2 = ring_load64(seq, memory_order_relaxed);
    if (s1 != s2 || ((const StereodRingSlot *) buf)->counter == 0) {
      c->stats.torn++;
      continue;
    }
    frame_fill(c, f);
    c->stats.reads++;
    return 0;
  }
  c->stats.failed++;
  return -EAGAIN;
}

void
stereod_frame_clear(StereodFrame *f)
{
  if (f == NULL)
    return;
  free(f->priv_buffer);
  memset(f, 0, sizeof *f);
}

const char *
stereod_client_get_name(const StereodClient *c)
{
  return c->header->name;
}

uint32_t
stereod_client_get_width(const StereodClient *c)
{
  return c->header->width;
}

uint32_t
stereod_client_get_height(const StereodClient *c)
{
  return c->header->height;
}

uint32_t
stereod_client_get_formats(const StereodClient *c)
{
  return c->header->formats;
}

uint32_t
stereod_client_get_slot_count(const StereodClient *c)
{
  return c->header->slot_count;
}

double
stereod_client_get_disparity_scale(const StereodClient *c)
{
  return c->header->disparity_scale;
}

void
stereod_client_get_calibration(const StereodClient *c, StereodRingCalibration *out)
{
  *out = c->header->calibration;
}

pid_t
stereod_client_get_writer_pid(const StereodClient *c)
{
  return (pid_t) c->header->writer_pid;
}

const StereodRingHeader *
stereod_client_get_header(const StereodClient *c)
{
  return c->header;
}

uint64_t
stereod_client_get_counter(const StereodClient *c)
{
  return ring_load64(&c->header->counter, memory_order_acquire);
}

bool
stereod_client_is_closed(const StereodClient *c)
{
  return ring_load32(&c->header->closed, memory_order_acquire) != 0;
}

void
stereod_client_get_stats(const StereodClient *c, StereodClientStats *out)
{
  *out = c->stats;
}

void
stereod_client_set_copy_hook(StereodClient *c, StereodClientCopyHook hook, void *user_data)
{
  c->hook = hook;
  c->hook_data = user_data;
}
