/* hm-test-ring.c: see hm-test-ring.h. */
#include "hm-test-ring.h"
#include "ring-private.h"

#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define FOCAL 50.0
#define BASELINE 1.0
#define HEIGHT_M 10.0

struct HmTestRing {
  RingWriter *writer;
  StereodRingHeader *header;   /* our own read-write mapping, for the faults */
  uint32_t width, height;
  int16_t *disparity;
  uint8_t *confidence;
  char *moved_path;            /* an over-size ring: where it was moved to, else NULL */
};

HmTestRing *
hm_test_ring_new(const char *name, uint32_t width, uint32_t height, bool pose)
{
  HmTestRing *r = g_new0(HmTestRing, 1);
  r->width = width;
  r->height = height;
  double cx = (width - 1) / 2.0, cy = (height - 1) / 2.0;
  RingWriterParams p = {
    .name = name, .width = width, .height = height,
    .formats = STEREOD_RING_FORMAT_DISPARITY | STEREOD_RING_FORMAT_CONFIDENCE,
    .calibration = { .fx = FOCAL, .fy = FOCAL, .cx = cx, .cy = cy, .baseline = BASELINE,
                     .q = { 1, 0, 0, -cx, 0, 1, 0, -cy, 0, 0, 0, FOCAL, 0, 0, 1 / BASELINE, 0 } },
    /* camera -> pitch: half a turn about x (camera y = -pitch y, optical axis down) */
    .producer = { pose ? 1.0 : 0.0, 0, 1, 0, 0, 0, 0, HEIGHT_M },
  };
  /* A ring wider than any writer makes (a hostile or foreign one) is made at the widest
   * size in a private directory, its header then claims `width`, and only then is it
   * moved under its name: no reader ever sees it with its true width. */
  g_autofree char *private_dir = NULL;
  if (width > STEREOD_RING_MAX_DIM) {
    private_dir = g_strdup_printf("%s/hmtest-XXXXXX", ring_dir_default());
    g_assert_nonnull(g_mkdtemp_full(private_dir, 0700));
    p.dir = private_dir;
    p.width = STEREOD_RING_MAX_DIM;
  }
  int e = ring_writer_new(&p, &r->writer);
  if (e < 0)
    g_error("ring %s: %s", name, g_strerror(-e));
  size_t n = (size_t) width * height;
  r->disparity = g_new(int16_t, n);
  r->confidence = g_new(uint8_t, n);
  int16_t ground = (int16_t) lround(FOCAL * BASELINE / HEIGHT_M * 32);
  for (size_t i = 0; i < n; i++) {
    r->disparity[i] = ground;
    r->confidence[i] = 200;
  }
  int fd = open(ring_writer_get_path(r->writer), O_RDWR | O_CLOEXEC);
  g_assert_cmpint(fd, >=, 0);
  r->header = mmap(NULL, sizeof *r->header, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  g_assert_true(r->header != MAP_FAILED);
  close(fd);
  if (private_dir) {
    r->header->width = width;
    char final[RING_PATH_MAX];
    g_assert_cmpint(ring_path_format(final, sizeof final, NULL, name, NULL), ==, 0);
    g_assert_cmpint(rename(ring_writer_get_path(r->writer), final), ==, 0);
    g_assert_cmpint(rmdir(private_dir), ==, 0);
    r->moved_path = g_strdup(final);
  }
  return r;
}

void
hm_test_ring_free(HmTestRing *r)
{
  if (!r)
    return;
  munmap(r->header, sizeof *r->header);
  ring_writer_free(r->writer);
  if (r->moved_path)
    unlink(r->moved_path);
  g_free(r->moved_path);
  g_free(r->disparity);
  g_free(r->confidence);
  g_free(r);
}

void
hm_test_ring_publish(HmTestRing *r, uint64_t capture_ns)
{
  const void *planes[STEREOD_RING_PLANE_COUNT] = {
    [STEREOD_RING_PLANE_DISPARITY] = r->disparity,
    [STEREOD_RING_PLANE_CONFIDENCE] = r->confidence,
  };
  RingWriterMeta meta = { .frame_number = ring_writer_get_counter(r->writer),
                          .capture_ns = capture_ns };
  g_assert_cmpint(ring_writer_publish(r->writer, &meta, planes), ==, 0);
}

void
hm_test_ring_publish_bare(HmTestRing *r, uint64_t capture_ns)
{
  RingWriterSlot slot;
  g_assert_cmpint(ring_writer_begin(r->writer, &slot), ==, 0);
  RingWriterMeta meta = { .frame_number = ring_writer_get_counter(r->writer),
                          .capture_ns = capture_ns };
  g_assert_cmpint(ring_writer_commit(r->writer, &meta), ==, 0);
}

void
hm_test_ring_rewrite(HmTestRing *r)
{
  StereodRingHeader *h = r->header;
  h->height = r->height * 2;
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    StereodRingPlane *desc = (StereodRingPlane *) stereod_ring_header_plane(h, k);
    if (!desc->offset)
      continue;
    desc->stride *= 4;
    desc->size = desc->stride * h->height;
  }
}

static void
wake(StereodRingHeader *h)
{
  atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
  ring_futex_wake_all(&h->futex);
}

void
hm_test_ring_announce_odd(HmTestRing *r)
{
  RingWriterSlot slot;
  g_assert_cmpint(ring_writer_begin(r->writer, &slot), ==, 0);
  atomic_store_explicit(RING_A64(&r->header->counter), slot.counter, memory_order_release);
  wake(r->header);
}

void
hm_test_ring_counter_zero(HmTestRing *r)
{
  atomic_store_explicit(RING_A64(&r->header->counter), 0, memory_order_release);
  wake(r->header);
}

void
hm_test_ring_mark_closed(HmTestRing *r)
{
  atomic_store_explicit(RING_A32(&r->header->closed), 1, memory_order_release);
  wake(r->header);
}

uint64_t
hm_test_ring_get_counter(HmTestRing *r)
{
  return ring_load64(&r->header->counter, memory_order_acquire);
}

uint64_t
hm_test_capture_ns(uint64_t period_ns)
{
  uint64_t now = (uint64_t) g_get_real_time() * 1000u;
  return now / period_ns * period_ns;
}
