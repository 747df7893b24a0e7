/* test-ring-guard.c: what libstereod-client trusts, in one process: the limits a header
 * must keep to be opened, a header rewritten after the open, an object truncated before
 * and during a copy (the SIGBUS guard, and that faults elsewhere still reach the
 * process's own handling), and a newest slot that never validates (bounded back-off,
 * -EBADMSG at the deadline, woken at once when the writer completes it). */
#include "ring-test-util.h"
#include "ring-reader-impl.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t
round_up(uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

/* A consistent header (every size agreeing with every other) for a FLOAT32 ring. */
typedef struct {
  uint32_t width, height, slots;
  uint32_t stride_extra;        /* bytes added to the row, rounded to the element */
  uint32_t slot_extra_pages;    /* pages beyond the planes' end */
  uint32_t header_size;
} Shape;

static StereodRingHeader
shape_header(const char *name, Shape s)
{
  StereodRingHeader h = { 0 };
  memcpy(h.magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE);
  h.version = STEREOD_RING_VERSION;
  h.header_size = s.header_size ? s.header_size : STEREOD_RING_PAGE;
  h.slot_count = s.slots;
  uint32_t stride = s.width * 4 + s.stride_extra;
  uint64_t size = (uint64_t) stride * s.height;
  h.planes[STEREOD_RING_PLANE_FLOAT32] = (StereodRingPlane) {
    .offset = 64, .stride = stride, .size = (uint32_t) size };
  uint64_t slot = round_up(64 + size, STEREOD_RING_PAGE) + (uint64_t) s.slot_extra_pages * STEREOD_RING_PAGE;
  g_assert_cmpuint(slot, <=, UINT32_MAX);
  h.slot_size = (uint32_t) slot;
  h.total_size = h.header_size + (uint64_t) s.slots * slot;
  h.width = s.width;
  h.height = s.height;
  h.formats = STEREOD_RING_FORMAT_FLOAT32;
  h.writer_pid = getpid();
  snprintf(h.name, sizeof h.name, "%s", name);
  h.disparity_scale = 1.0 / 32;
  return h;
}

/* Writes h as the (sparse) object of `name`. */
static void
write_header_object(const char *name, const StereodRingHeader *h)
{
  g_autofree char *path = ring_test_path(name);
  unlink(path);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  g_assert_cmpint(fd, >=, 0);
  g_assert_cmpint(ftruncate(fd, (off_t) h->total_size), ==, 0);
  g_assert_cmpint(pwrite(fd, h, sizeof *h, 0), ==, (ssize_t) sizeof *h);
  close(fd);
}

static int
open_shape(const char *name, const StereodRingHeader *h)
{
  write_header_object(name, h);
  StereodClient *c = NULL;
  int r = stereod_client_open(name, &c);
  g_assert_true((r == 0) == (c != NULL));
  stereod_client_close(c);
  return r;
}

static void
test_limits(void)
{
  g_autofree char *name = ring_test_pair_name("limits");
  /* Each limit of ring.h (READER LIMITS): the largest accepted value opens, the next
   * one is refused, in a header that is otherwise consistent with its object. */
  StereodRingHeader h = shape_header(name, (Shape) { .width = STEREOD_RING_MAX_DIM, .height = 4, .slots = 1 });
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  h = shape_header(name, (Shape) { .width = STEREOD_RING_MAX_DIM + 1, .height = 4, .slots = 1 });
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = shape_header(name, (Shape) { .width = 4, .height = STEREOD_RING_MAX_DIM, .slots = 1 });
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  h = shape_header(name, (Shape) { .width = 4, .height = STEREOD_RING_MAX_DIM + 1, .slots = 1 });
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);

  /* Stride: up to the row rounded up to a page (a 100 px float row is 400 bytes). */
  h = shape_header(name, (Shape) { .width = 100, .height = 8, .slots = 2, .stride_extra = 4096 - 400 });
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  h = shape_header(name, (Shape) { .width = 100, .height = 8, .slots = 2, .stride_extra = 4096 - 400 + 4 });
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);

  /* slot_size: up to the planes' end rounded up to a page, plus one page. */
  h = shape_header(name, (Shape) { .width = 100, .height = 8, .slots = 2, .slot_extra_pages = 1 });
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  h = shape_header(name, (Shape) { .width = 100, .height = 8, .slots = 2, .slot_extra_pages = 2 });
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);

  /* header_size. */
  h = shape_header(name, (Shape) { .width = 8, .height = 8, .slots = 2, .header_size = STEREOD_RING_MAX_HEADER_SIZE });
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  h = shape_header(name, (Shape) { .width = 8, .height = 8, .slots = 2,
                                   .header_size = STEREOD_RING_MAX_HEADER_SIZE + STEREOD_RING_PAGE });
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);

  /* total_size: 64 slots of a 16384 x 16384 float plane are just above 64 GiB (a
   * sparse object: nothing is allocated). */
  h = shape_header(name, (Shape) { .width = 16384, .height = 16384, .slots = 64 });
  g_assert_cmpuint(h.total_size, >, STEREOD_RING_MAX_TOTAL_SIZE);
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = shape_header(name, (Shape) { .width = 16384, .height = 16384, .slots = 63 });
  g_assert_cmpuint(h.total_size, <=, STEREOD_RING_MAX_TOTAL_SIZE);
  g_assert_cmpint(open_shape(name, &h), ==, 0);

  /* An object shorter than the header says. */
  h = shape_header(name, (Shape) { .width = 8, .height = 8, .slots = 2 });
  h.total_size += STEREOD_RING_PAGE;
  h.slot_size += STEREOD_RING_PAGE / 2;
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);

  /* Fields without a size. */
  StereodRingHeader good = shape_header(name, (Shape) { .width = 8, .height = 8, .slots = 2 });
  h = good;
  h.planes[STEREOD_RING_PLANE_DEPTH].stride = 16;      /* an absent plane with a stride */
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = good;
  h.disparity_scale = __builtin_inf();
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = good;
  memset(h.name, 'x', sizeof h.name);                  /* no terminating NUL */
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = good;
  h.planes[STEREOD_RING_PLANE_FLOAT32].size -= 4;      /* size != stride * height */
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h = good;                                            /* FLOW_U without FLOW_V */
  h.formats |= STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_U);
  h.flow_planes[0] = (StereodRingPlane) {
    .offset = h.planes[STEREOD_RING_PLANE_FLOAT32].offset, .stride = 2 * h.width,
    .size = 2 * h.width * h.height,
  };
  g_assert_cmpint(open_shape(name, &h), ==, -EPROTO);
  h.formats |= STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_V);   /* both: a valid layout */
  h.flow_planes[1] = h.flow_planes[0];
  g_assert_cmpint(open_shape(name, &h), ==, 0);
  g_assert_cmpint(open_shape(name, &good), ==, 0);

  /* The writer keeps to the same limits. */
  RingWriterParams p;
  ring_test_params(&p, name, STEREOD_RING_MAX_DIM + 1, 4);
  RingWriter *w = NULL;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, -EINVAL);
  ring_test_params(&p, name, 16384, 16384);
  p.slot_count = 64;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, -EFBIG);
  g_autofree char *path = ring_test_path(name);
  unlink(path);
}

/* A read-write mapping of the ring object, as a (hostile) writer could make. */
static uint8_t *
map_object(const char *name, size_t *size, int *fd_out)
{
  g_autofree char *path = ring_test_path(name);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  g_assert_cmpint(fd, >=, 0);
  struct stat st;
  g_assert_cmpint(fstat(fd, &st), ==, 0);
  *size = (size_t) st.st_size;
  uint8_t *map = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true(map != MAP_FAILED);
  if (fd_out != NULL)
    *fd_out = fd;
  else
    close(fd);
  return map;
}

static void
test_header_rewritten(void)
{
  struct { const char *what; size_t off; uint32_t value; } patches[] = {
    { "slot_count 0", offsetof(StereodRingHeader, slot_count), 0 },
    { "header_size", offsetof(StereodRingHeader, header_size), 1u << 30 },
    { "slot_size", offsetof(StereodRingHeader, slot_size), 0xfffff000u },
    { "width", offsetof(StereodRingHeader, width), 1u << 20 },
    { "height", offsetof(StereodRingHeader, height), 1u << 20 },
    { "plane offset", offsetof(StereodRingHeader, planes[STEREOD_RING_PLANE_FLOAT32].offset), 0xfffff000u },
    { "plane stride", offsetof(StereodRingHeader, planes[STEREOD_RING_PLANE_DEPTH].stride), 1u << 30 },
    { "formats", offsetof(StereodRingHeader, formats), 0 },
    { "magic", 0, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS(patches); i++) {
    g_test_message("rewriting %s", patches[i].what);
    g_autofree char *name = ring_test_pair_name("rewrite");
    g_autoptr(RingWriter) w = ring_test_writer_new(name, 32, 24);
    ring_test_publish(w);
    g_autoptr(StereodClient) c = NULL;
    g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
    StereodFrame f = STEREOD_FRAME_INIT;
    g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
    StereodRingHeader before = *stereod_client_get_header(c);

    size_t size;
    uint8_t *map = map_object(name, &size, NULL);
    uint32_t orig;
    memcpy(&orig, map + patches[i].off, 4);
    memcpy(map + patches[i].off, &patches[i].value, 4);
    /* The writer's own copy of the layout still publishes correctly. */
    ring_test_publish(w);
    g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EPROTO);
    g_assert_cmpint(stereod_client_read_next(c, 1, 0, &f), ==, -EPROTO);
    g_assert_cmpint(stereod_client_wait(c, 2, 0, NULL), ==, -EPROTO);
    /* The frame kept what it had; the header the client gives is the one it checked. */
    g_assert_cmpuint(f.counter, ==, 1);
    g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
    g_assert_cmpmem(stereod_client_get_header(c), sizeof before, &before, sizeof before);
    /* Putting it back does not make the ring trusted again. */
    memcpy(map + patches[i].off, &orig, 4);
    g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EPROTO);
    /* A new client of the repaired ring reads it. */
    g_autoptr(StereodClient) c2 = NULL;
    g_assert_cmpint(stereod_client_open(name, &c2), ==, 0);
    g_assert_cmpint(stereod_client_read_latest(c2, &f), ==, 0);
    g_assert_cmpuint(f.counter, ==, 2);
    munmap(map, size);
    stereod_frame_clear(&f);
  }
}

static void
test_truncated(void)
{
  g_autofree char *name = ring_test_pair_name("trunc");
  RingWriter *w = ring_test_writer_new(name, 32, 24);
  ring_test_publish(w);
  ring_test_publish(w);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  g_assert_cmpuint(stereod_client_get_counter(c), ==, 2);
  g_autofree char *path = ring_test_path(name);
  g_assert_cmpint(truncate(path, 0), ==, 0);

  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_wait(c, 2, 0, NULL), ==, -EIO);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EIO);
  g_assert_cmpint(stereod_client_read_next(c, 0, 1000000000, &f), ==, -EIO);
  g_assert_true(stereod_client_is_closed(c));
  g_assert_cmpuint(stereod_client_get_counter(c), ==, 2);   /* the last value it read */
  /* Grown back (zeros), the object is still not trusted by the client that saw it
   * shrink; the writer's mapping is usable again, so it can be freed. */
  g_assert_cmpint(truncate(path, (off_t) stereod_client_get_header(c)->total_size), ==, 0);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EIO);
  stereod_frame_clear(&f);
  ring_writer_free(w);
}

typedef struct {
  int fd;
  off_t to;
  gboolean done;
} TruncateHook;

static void
truncate_hook(StereodClient *c, unsigned attempt, void *data)
{
  TruncateHook *t = data;
  if (!t->done)
    g_assert_cmpint(ftruncate(t->fd, t->to), ==, 0);
  t->done = TRUE;
}

static void
test_truncated_mid_copy(void)
{
  g_autofree char *name = ring_test_pair_name("trunc-copy");
  RingWriter *w = ring_test_writer_new(name, 320, 240);
  ring_test_publish(w);
  g_autofree char *other = ring_test_pair_name("trunc-other");
  g_autoptr(RingWriter) w2 = ring_test_writer_new(other, 16, 16);
  ring_test_publish(w2);
  g_autoptr(StereodClient) c = NULL;
  g_autoptr(StereodClient) c2 = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  g_assert_cmpint(stereod_client_open(other, &c2), ==, 0);

  /* After the fstat check and half of the copy, the object loses its slots: the
   * second half of the copy faults (SIGBUS), the guard turns that into -EIO. */
  size_t size;
  int fd;
  uint8_t *map = map_object(name, &size, &fd);
  munmap(map, size);
  TruncateHook t = { .fd = fd, .to = STEREOD_RING_PAGE };
  stereod_client_set_copy_hook(c, truncate_hook, &t);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EIO);
  g_assert_true(t.done);
  /* The guard answered the fault: it mapped zeros over the client's mapping, where the
   * file (whose first page is still there) would show the header. */
  const StereodRingHeader *mapped = c->ring.map;
  static const char zeros[STEREOD_RING_MAGIC_SIZE];
  g_assert_cmpmem(mapped->magic, sizeof zeros, zeros, sizeof zeros);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EIO);
  g_assert_cmpint(stereod_client_wait(c, 0, 0, NULL), ==, -EIO);

  /* Another client of another ring in the same process is not affected. */
  g_assert_cmpint(stereod_client_read_latest(c2, &f), ==, 0);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  stereod_frame_clear(&f);
  g_assert_cmpint(ftruncate(fd, (off_t) size), ==, 0);   /* so that the writer can close */
  close(fd);
  ring_writer_free(w);
}

static void
on_bus_exit(int sig)
{
  _exit(42);
}

/* In a child: opens a client (which installs the guard), then faults on a mapping of
 * its own outside any guard. It must not survive that. */
static void
child_fault(const char *name, gboolean own_handler)
{
  if (own_handler) {
    struct sigaction sa = { .sa_handler = on_bus_exit };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
  }
  StereodClient *c = NULL;
  if (stereod_client_open(name, &c) != 0)
    _exit(3);
  char tmpl[] = "/dev/shm/ring-guard-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0 || ftruncate(fd, 8192) < 0)
    _exit(4);
  unlink(tmpl);
  volatile uint8_t *p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED || ftruncate(fd, 0) < 0)
    _exit(5);
  uint8_t v = p[4096];   /* SIGBUS: not ours to recover */
  (void) v;
  _exit(0);              /* survived: the guard swallowed a foreign fault */
}

static void
test_foreign_fault(void)
{
  g_autofree char *name = ring_test_pair_name("foreign");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 16, 16);
  for (int own = 0; own < 2; own++) {
    pid_t pid = fork();
    g_assert_cmpint(pid, >=, 0);
    if (pid == 0)
      child_fault(name, own);
    int status;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_test_message("child with%s a handler of its own: %s %d", own ? "" : "out",
                   WIFSIGNALED(status) ? "signal" : "exit",
                   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    if (own) {
      /* Chained to the handler that was there before the client's. */
      g_assert_true(WIFEXITED(status));
      g_assert_cmpint(WEXITSTATUS(status), ==, 42);
    } else {
#if defined(__SANITIZE_ADDRESS__)
      /* AddressSanitizer's own SIGBUS handler was there first: it reports and exits. */
      g_assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#else
      g_assert_true(WIFSIGNALED(status));
      g_assert_cmpint(WTERMSIG(status), ==, SIGBUS);
#endif
    }
  }
}

/* Announces frame `k` in the header (counter and futex word) by hand. */
static void
announce(uint8_t *map, uint64_t k)
{
  StereodRingHeader *h = (StereodRingHeader *) map;
  atomic_store_explicit(RING_A64(&h->counter), k, memory_order_release);
  atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
  ring_futex_wake_all(&h->futex);
}

typedef struct {
  RingWriter *w;
  gint64 committed_us;
} CommitLater;

static gpointer
commit_later(gpointer data)
{
  CommitLater *cl = data;
  g_usleep(100 * 1000);
  cl->committed_us = g_get_monotonic_time();
  RingWriterMeta meta = { .frame_number = 4 + RING_TEST_FRAME_OFFSET,
                          .capture_ns = ring_pattern_capture_ns(4 + RING_TEST_FRAME_OFFSET),
                          .flags = (4 + RING_TEST_FRAME_OFFSET) & 1u };
  g_assert_cmpint(ring_writer_commit(cl->w, &meta), ==, 0);
  return NULL;
}

static void
test_incomplete_slot(void)
{
  g_autofree char *name = ring_test_pair_name("odd");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 32, 24);
  for (int i = 0; i < 3; i++)
    ring_test_publish(w);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  size_t size;
  uint8_t *map = map_object(name, &size, NULL);

  /* Frame 4 announced while its slot is still odd (begun, never committed). */
  RingWriterSlot s;
  g_assert_cmpint(ring_writer_begin(w, &s), ==, 0);
  announce(map, 4);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EBADMSG);
  StereodClientStats st0, st1;
  stereod_client_get_stats(c, &st0);
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(stereod_client_read_next(c, 3, 300 * 1000000ll, &f), ==, -EBADMSG);
  gint64 took = g_get_monotonic_time() - t0;
  stereod_client_get_stats(c, &st1);
  g_test_message("gave up after %.3f s, %" G_GUINT64_FORMAT " attempts", took / 1e6,
                 st1.torn - st0.torn);
  g_assert_cmpint(took, >=, 300 * 1000);
  /* Bounded back-off: 1, 2, 4, ... ms, each after at most 16 attempts. */
  g_assert_cmpuint(st1.torn - st0.torn, <=, 16 * STEREOD_CLIENT_READ_ATTEMPTS);
  g_assert_cmpint(stereod_client_read_next(c, 3, 0, &f), ==, -EBADMSG);

  /* The writer completes the slot while the reader backs off: the commit's futex wake
   * ends the back-off, and frame 4 comes back (long before the 60 s deadline). */
  CommitLater cl = { .w = w };
  for (uint32_t y = 0; y < s.height; y++)
    for (uint32_t x = 0; x < s.width; x++) {
      uint64_t fn = 4 + RING_TEST_FRAME_OFFSET;
      ((int16_t *) ((uint8_t *) s.planes[0] + y * s.strides[0]))[x] = ring_pattern_disparity(fn, x, y);
      ((uint16_t *) ((uint8_t *) s.planes[1] + y * s.strides[1]))[x] = ring_pattern_depth(fn, x, y);
      ((uint8_t *) s.planes[2] + y * s.strides[2])[x] = ring_pattern_confidence(fn, x, y);
      ((float *) ((uint8_t *) s.planes[3] + y * s.strides[3]))[x] = ring_pattern_float(fn, x, y);
      ((int16_t *) ((uint8_t *) s.planes[4] + y * s.strides[4]))[x] = ring_pattern_flow_u(fn, x, y);
      ((int16_t *) ((uint8_t *) s.planes[5] + y * s.strides[5]))[x] = ring_pattern_flow_v(fn, x, y);
    }
  GThread *th = g_thread_new("commit", commit_later, &cl);
  g_assert_cmpint(stereod_client_read_next(c, 3, 60 * 1000000000ll, &f), ==, 0);
  gint64 got_us = g_get_monotonic_time();
  g_thread_join(th);
  g_assert_cmpuint(f.counter, ==, 4);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  g_assert_cmpint(got_us, >=, cl.committed_us);

  /* A complete slot whose counter is not the announced frame's. */
  ring_test_publish(w);                       /* frame 5, slot 0 */
  StereodRingSlot *slot1 = (StereodRingSlot *) (map + STEREOD_RING_PAGE
                                                + 1 * (size_t) stereod_client_get_header(c)->slot_size);
  slot1->counter = 0;                         /* slot of frame 6 says 0 */
  announce(map, 6);
  g_assert_cmpint(stereod_client_read_next(c, 5, 200 * 1000000ll, &f), ==, -EBADMSG);
  slot1->counter = 3;                         /* an older frame than announced */
  g_assert_cmpint(stereod_client_read_next(c, 5, 0, &f), ==, -EBADMSG);
  munmap(map, size);
  stereod_frame_clear(&f);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/ring/guard/limits", test_limits);
  g_test_add_func("/ring/guard/header-rewritten", test_header_rewritten);
  g_test_add_func("/ring/guard/truncated", test_truncated);
  g_test_add_func("/ring/guard/truncated-mid-copy", test_truncated_mid_copy);
  g_test_add_func("/ring/guard/foreign-fault", test_foreign_fault);
  g_test_add_func("/ring/guard/incomplete-slot", test_incomplete_slot);
  return g_test_run();
}
