/* ring-read.c: waiting for frames and copying them out of the ring (reader protocol of
 * <stereod/ring.h>), every access bounded by the private header, checked and guarded
 * (ring-map.c, ring-guard.h). */
#include "ring-reader-impl.h"
#include "ring-guard.h"

#include <stdlib.h>

/* Waits on the ring's futex word while it still holds `word`, until the absolute
 * monotonic `until` (ns, < 0 = forever). 0 (look again), -ETIMEDOUT, -EINTR, or the
 * object's error when the word cannot be read any more (truncated: EFAULT). */
static int
futex_wait(RingMap *m, uint32_t word, int64_t until)
{
  struct timespec ts = ring_timespec_from_ns(until);
  int r = ring_futex_wait_until(ring_map_futex(m), word, until < 0 ? NULL : &ts);
  if (r == -EFAULT) {
    r = ring_map_check_size(m);
    return r < 0 ? r : ring_map_break(m, -EIO);
  }
  return r;
}

/* The periodic look at the object while waiting: its size, its fixed header, and
 * whether its name moved to another object. */
static int
check_while_waiting(RingMap *m)
{
  int r = ring_map_check_header(m);
  if (r < 0)
    return r;
  return ring_map_name_moved(m) ? -ESTALE : 0;
}

/* stereod_client_wait until an absolute deadline (ns, < 0 forever, 0 = check once);
 * *word gets the futex word read with the counter it returns. */
static int
wait_until(RingMap *m, uint64_t last, int64_t deadline, uint64_t *counter, uint32_t *word)
{
  for (;;) {
    RingLive live;
    int r = ring_map_load_live(m, &live);
    if (r < 0)
      return r;
    *word = live.futex;
    if (live.counter != last) {
      *counter = live.counter;
      return 0;
    }
    if (live.closed)
      return -EPIPE;
    if (ring_deadline_passed(deadline)) {
      r = check_while_waiting(m);
      return r < 0 ? r : -ETIMEDOUT;
    }
    int64_t now = ring_mono_ns();
    int64_t slice = now + CLIENT_SLICE_NS;
    r = futex_wait(m, live.futex, deadline < 0 || slice < deadline ? slice : deadline);
    if (r == -ETIMEDOUT) {
      /* Not a result yet: the loop looks at the counter once more, so a frame
       * published right at the deadline is not lost. */
      r = check_while_waiting(m);
      if (r < 0)
        return r;
      if (ring_deadline_passed(deadline))
        deadline = 0;
      continue;
    }
    if (r < 0)
      return r;
  }
}

int
stereod_client_wait(StereodClient *c, uint64_t last_counter, int64_t timeout_ns,
                    uint64_t *counter)
{
  if (c == NULL)
    return -EINVAL;
  uint64_t now;
  uint32_t word;
  int r = wait_until(&c->ring, last_counter, ring_deadline_after(timeout_ns), &now, &word);
  if (r == 0 && counter != NULL)
    *counter = now;
  return r;
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
frame_fill(const RingMap *m, StereodFrame *f)
{
  const StereodRingHeader *h = &m->hdr;
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
    const StereodRingPlane *p = stereod_ring_header_plane(h, k);
    planes[k] = p->offset ? base + p->offset : NULL;
    f->strides[k] = p->stride;
  }
  f->disparity = planes[STEREOD_RING_PLANE_DISPARITY];
  f->depth = planes[STEREOD_RING_PLANE_DEPTH];
  f->confidence = planes[STEREOD_RING_PLANE_CONFIDENCE];
  f->float32 = planes[STEREOD_RING_PLANE_FLOAT32];
  f->flow_u = planes[STEREOD_RING_PLANE_FLOW_U];
  f->flow_v = planes[STEREOD_RING_PLANE_FLOW_V];
}

typedef enum {
  COPY_OK,
  COPY_NODATA,      /* counter 0 */
  COPY_ODD,         /* the slot is being written (or was left half-written) */
  COPY_TORN,        /* seq changed during the copy */
  COPY_INVALID,     /* complete, but its counter is not the announced frame's */
  COPY_FAULT,       /* the object shrank during the copy */
} CopyResult;

/* One attempt of the reader protocol; *counter and *seq get what it saw. */
static CopyResult
copy_once(StereodClient *c, unsigned attempt, uint8_t *buf, uint64_t *counter, uint64_t *seq)
{
  RingMap *m = &c->ring;
  const StereodRingHeader *h = &m->hdr;
  const uint8_t *base = m->map;
  const StereodRingHeader *live = m->map;
  size_t half = m->copy_size / 2;
  CopyResult result = COPY_OK;

  RingGuard g;
  ring_guard_begin(&g, m->map, m->map_size);
  uint64_t n = ring_load64(&live->counter, memory_order_acquire);
  *counter = n;
  if (n == 0) {
    result = COPY_NODATA;
    goto out;
  }
  /* Index and offsets from the private header only: whatever the mapping says now,
   * the copy stays inside [slot, slot + copy_size) of the validated layout. */
  const uint8_t *slot = base + h->header_size + ((n - 1) % h->slot_count) * (uint64_t) h->slot_size;
  const uint64_t *seqp = &((const StereodRingSlot *) slot)->seq;
  uint64_t s1 = ring_load64(seqp, memory_order_acquire);
  *seq = s1;
  if ((s1 & 1u) != 0) {
    result = COPY_ODD;
    goto out;
  }
  memcpy(buf, slot, half);
  if (c->hook != NULL)
    c->hook(c, attempt, c->hook_data);
  memcpy(buf + half, slot + half, m->copy_size - half);
  /* Keeps the copy's loads before the second look at seq. */
  atomic_thread_fence(memory_order_acquire);
  uint64_t s2 = ring_load64(seqp, memory_order_relaxed);
  if (s1 != s2) {
    result = COPY_TORN;
    goto out;
  }
  /* The slot of counter n holds frame n, or n + k * slot_count after laps. */
  uint64_t got = ((const StereodRingSlot *) buf)->counter;
  if (got < n || (got - n) % h->slot_count != 0)
    result = COPY_INVALID;
out:
  if (ring_guard_end(&g))
    result = COPY_FAULT;
  return result;
}

/* read_latest's attempts, after the checks. */
static int
read_attempts(StereodClient *c, StereodFrame *f)
{
  RingMap *m = &c->ring;
  bool progress = false;
  uint64_t first_counter = 0, first_seq = 0;
  for (unsigned attempt = 0; attempt < STEREOD_CLIENT_READ_ATTEMPTS; attempt++) {
    if (attempt > 0) {
      int r = ring_map_check_size(m);
      if (r < 0)
        return r;
    }
    uint64_t counter = 0, seq = 0;
    CopyResult res = copy_once(c, attempt, f->priv_buffer, &counter, &seq);
    if (res == COPY_FAULT)
      return ring_map_break(m, -EIO);
    if (res == COPY_NODATA)
      return -ENODATA;
    m->last_counter = counter;
    if (res == COPY_OK) {
      frame_fill(m, f);
      c->stats.reads++;
      return 0;
    }
    /* Torn, or the newest slot odd / invalid. A writer that is alive moves the counter
     * or the slot's seq meanwhile; one that left the slot so does not. */
    c->stats.torn++;
    if (res == COPY_TORN || (attempt > 0 && (counter != first_counter || seq != first_seq)))
      progress = true;
    if (attempt == 0) {
      first_counter = counter;
      first_seq = seq;
    }
  }
  c->stats.failed++;
  return progress ? -EAGAIN : -EBADMSG;
}

int
stereod_client_read_latest(StereodClient *c, StereodFrame *f)
{
  if (c == NULL || f == NULL)
    return -EINVAL;
  int r = frame_reserve(f, c->ring.copy_size);
  if (r < 0)
    return r;
  r = ring_map_check_header(&c->ring);
  if (r < 0)
    return r;
  return read_attempts(c, f);
}

/* Follows the writer to a new ring under the pair's name, until the deadline. */
static int
follow(StereodClient *c, int64_t deadline)
{
  RingDirWatch w;
  ring_dir_watch_start(&w, client_dir(c));
  int r;
  for (;;) {
    r = client_reopen(c);
    if (r == 0 || (r != -ENOENT && r != -EALREADY))
      break;
    r = ring_dir_watch_wait(&w, deadline);
    if (r < 0)
      break;
    ring_dir_watch_update(&w, client_dir(c));
  }
  ring_dir_watch_stop(&w);
  return r;
}

int
stereod_client_read_next(StereodClient *c, uint64_t last_counter, int64_t timeout_ns,
                         StereodFrame *f)
{
  if (c == NULL || f == NULL)
    return -EINVAL;
  int64_t deadline = ring_deadline_after(timeout_ns);
  int64_t backoff = CLIENT_BACKOFF_MIN_NS;
  uint64_t last = last_counter;
  for (;;) {
    uint64_t counter;
    uint32_t word;
    int r = wait_until(&c->ring, c->reset_pending ? 0 : last, deadline, &counter, &word);
    if ((r == -EPIPE || r == -ESTALE) && c->follow) {
      r = follow(c, deadline);
      if (r < 0)
        return r;
      continue;
    }
    if (r < 0)
      return r;

    r = frame_reserve(f, c->ring.copy_size);
    if (r == 0)
      r = ring_map_check_header(&c->ring);
    if (r == 0)
      r = read_attempts(c, f);
    if (r == 0 && (c->reset_pending || f->counter != last)) {
      if (c->reset_pending)
        f->flags |= STEREOD_FRAME_FLAG_DISCONT;
      c->reset_pending = false;
      return 0;
    }
    if (r == -ENODATA) {
      last = 0;     /* the counter went back to 0: wait for it to move */
      continue;
    }
    if (r != 0 && r != -EBADMSG && r != -EAGAIN)
      return r;
    /* The newest slot did not validate (or holds the frame we had): back off on the
     * futex word, which the writer bumps when it completes a slot. */
    if (ring_deadline_passed(deadline))
      return r != 0 ? r : -ETIMEDOUT;
    int64_t now = ring_mono_ns();
    int64_t until = now + backoff;
    if (deadline > 0 && until > deadline)
      until = deadline;
    r = futex_wait(&c->ring, word, until);
    if (r < 0 && r != -ETIMEDOUT)
      return r;
    backoff = backoff * 2 < CLIENT_BACKOFF_MAX_NS ? backoff * 2 : CLIENT_BACKOFF_MAX_NS;
  }
}

void
stereod_frame_clear(StereodFrame *f)
{
  if (f == NULL)
    return;
  free(f->priv_buffer);
  memset(f, 0, sizeof *f);
}
