/* ring-test-hostile.c: a writer that breaks the ring protocol on purpose, for the fault
 * tests of the readers (test-ring-hostile.c).
 *
 *   ring-test-hostile PAIR MODE
 *
 * Creates a 64 x 48 ring PAIR with every plane in the ring directory (ring.h rule),
 * publishes 3 frames of the ring-test-util pattern, prints "hostile ready", and waits
 * for a line on stdin. Then it breaks the ring as MODE says, prints "hostile done" and
 * holds it until its stdin closes (120 s at most). Modes:
 *   slot-count-zero, header-size, slot-size, width, height, plane-offset
 *       rewrites that header field to a hostile value, then publishes 3 more frames
 *       with the layout the ring was created with (a reader that kept trusting its
 *       first look would read them as if nothing happened)
 *   truncate-zero   ftruncate(0): nothing of the object is left
 *   truncate-half   ftruncate(total / 2), then announces frame 4 (counter, futex wake)
 *   seq-odd         announces frame 4 with its slot's seq left odd, forever
 *   slot-counter-zero  announces frame 4 with a complete slot whose counter is 0
 * and two whose object is broken from the start (it prints "hostile ready" and holds,
 * nothing is read from stdin): sparse objects whose header is consistent with their
 * size but declares a 4 GiB FLOAT32 plane:
 *   sparse-width    65536 x 16383 px (beyond STEREOD_RING_MAX_DIM)
 *   sparse-stride   16384 x 16383 px with a 256 KiB stride (beyond a page-rounded row)
 * Exit status 0; 2 for bad usage or a ring that could not be made.
 */
#include "ring-test-util.h"
#include "ring-private.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define WIDTH 64
#define HEIGHT 48

/* Publishes frame k by hand with the layout `geo` (the one the ring was made with):
 * seq odd, pattern, metadata, then (unless leave_odd) seq even; counter; futex. */
static void
publish_raw(uint8_t *map, const StereodRingHeader *geo, uint64_t k, gboolean leave_odd,
            uint64_t slot_counter)
{
  StereodRingHeader *h = (StereodRingHeader *) map;
  uint8_t *slot = map + geo->header_size + ((k - 1) % geo->slot_count) * (uint64_t) geo->slot_size;
  StereodRingSlot *s = (StereodRingSlot *) slot;
  uint64_t seq = ring_load64(&s->seq, memory_order_relaxed);
  seq = (seq & 1u) ? seq + 2 : seq + 1;
  atomic_store_explicit(RING_A64(&s->seq), seq, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  uint64_t f = k + RING_TEST_FRAME_OFFSET;
  for (uint32_t y = 0; y < geo->height; y++) {
    for (uint32_t x = 0; x < geo->width; x++) {
      const StereodRingPlane *p = geo->planes;
      ((int16_t *) (slot + p[0].offset + y * p[0].stride))[x] = ring_pattern_disparity(f, x, y);
      ((uint16_t *) (slot + p[1].offset + y * p[1].stride))[x] = ring_pattern_depth(f, x, y);
      (slot + p[2].offset + y * p[2].stride)[x] = ring_pattern_confidence(f, x, y);
      ((float *) (slot + p[3].offset + y * p[3].stride))[x] = ring_pattern_float(f, x, y);
    }
  }
  s->counter = slot_counter;
  s->frame_number = f;
  s->capture_ns = ring_pattern_capture_ns(f);
  s->publish_ns = ring_now_ns(CLOCK_REALTIME);
  s->flags = (uint32_t) (f & 1u);
  if (!leave_odd)
    atomic_store_explicit(RING_A64(&s->seq), seq + 1, memory_order_release);
  atomic_store_explicit(RING_A64(&h->counter), k, memory_order_release);
  atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
  ring_futex_wake_all(&h->futex);
}

/* A sparse object with a consistent header declaring one FLOAT32 plane of
 * height x stride bytes (about 4 GiB). */
static int
make_sparse(const char *name, uint32_t width, uint32_t stride)
{
  const uint32_t height = 16383;
  StereodRingHeader h = { 0 };
  memcpy(h.magic, STEREOD_RING_MAGIC, STEREOD_RING_MAGIC_SIZE);
  h.version = STEREOD_RING_VERSION;
  h.header_size = STEREOD_RING_PAGE;
  h.slot_count = 1;
  uint64_t size = (uint64_t) stride * height;
  uint64_t slot = (64 + size + STEREOD_RING_PAGE - 1) / STEREOD_RING_PAGE * STEREOD_RING_PAGE;
  g_assert_cmpuint(slot, <, UINT32_MAX);
  h.slot_size = (uint32_t) slot;
  h.total_size = h.header_size + slot;
  h.width = width;
  h.height = height;
  h.formats = STEREOD_RING_FORMAT_FLOAT32;
  h.writer_pid = getpid();
  snprintf(h.name, sizeof h.name, "%s", name);
  h.planes[STEREOD_RING_PLANE_FLOAT32] = (StereodRingPlane) {
    .offset = 64, .stride = stride, .size = (uint32_t) size };
  h.disparity_scale = 1.0 / 32;
  h.counter = 1;   /* "a frame is there": a reader that accepted it would copy 4 GiB */

  g_autofree char *path = ring_test_path(name);
  int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0 || ftruncate(fd, (off_t) h.total_size) < 0
      || pwrite(fd, &h, sizeof h, 0) != (ssize_t) sizeof h) {
    fprintf(stderr, "ring-test-hostile: %s: %s\n", path, strerror(errno));
    return 2;
  }
  close(fd);
  return 0;
}

static void
hold(void)
{
  alarm(120);    /* bounded, whatever the test does */
  char buf[64];
  while (read(STDIN_FILENO, buf, sizeof buf) > 0)
    ;
}

int
main(int argc, char **argv)
{
  if (argc != 3) {
    fprintf(stderr, "usage: ring-test-hostile PAIR MODE\n");
    return 2;
  }
  const char *name = argv[1], *mode = argv[2];
  setvbuf(stdout, NULL, _IOLBF, 0);

  if (g_str_has_prefix(mode, "sparse-")) {
    int r = strcmp(mode, "sparse-width") == 0 ? make_sparse(name, 65536, 65536 * 4)
            : strcmp(mode, "sparse-stride") == 0 ? make_sparse(name, 16384, 262144) : 2;
    if (r != 0)
      return r;
    printf("hostile ready\n");
    hold();
    g_autofree char *path = ring_test_path(name);
    unlink(path);
    return 0;
  }

  RingWriterParams p;
  ring_test_params(&p, name, WIDTH, HEIGHT);
  p.keep_on_close = FALSE;
  RingWriter *w = NULL;
  if (ring_writer_new(&p, &w) < 0)
    return 2;
  for (int i = 0; i < 3; i++)
    ring_test_publish(w);

  int fd = open(ring_writer_get_path(w), O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return 2;
  uint8_t *map = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED)
    return 2;
  StereodRingHeader geo;
  memcpy(&geo, map, sizeof geo);
  StereodRingHeader *h = (StereodRingHeader *) map;

  printf("hostile ready\n");
  char line[64];
  if (fgets(line, sizeof line, stdin) == NULL)
    return 0;

  gboolean republish = TRUE;
  if (strcmp(mode, "slot-count-zero") == 0)
    h->slot_count = 0;
  else if (strcmp(mode, "header-size") == 0)
    h->header_size = 1u << 30;
  else if (strcmp(mode, "slot-size") == 0)
    h->slot_size = UINT32_MAX & ~(STEREOD_RING_PAGE - 1);
  else if (strcmp(mode, "width") == 0)
    h->width = 1u << 20;
  else if (strcmp(mode, "height") == 0)
    h->height = 1u << 20;
  else if (strcmp(mode, "plane-offset") == 0)
    h->planes[STEREOD_RING_PLANE_FLOAT32].offset = 0xfffff000u;
  else
    republish = FALSE;

  if (republish) {
    for (uint64_t k = 4; k <= 6; k++)
      publish_raw(map, &geo, k, FALSE, k);
  } else if (strcmp(mode, "truncate-zero") == 0) {
    if (ftruncate(fd, 0) < 0)
      return 2;
  } else if (strcmp(mode, "truncate-half") == 0) {
    if (ftruncate(fd, (off_t) (geo.total_size / 2)) < 0)
      return 2;
    /* The header page is still there: announce a frame whose slot is gone. */
    atomic_store_explicit(RING_A64(&h->counter), 4, memory_order_release);
    atomic_fetch_add_explicit(RING_A32(&h->futex), 1, memory_order_release);
    ring_futex_wake_all(&h->futex);
  } else if (strcmp(mode, "seq-odd") == 0) {
    publish_raw(map, &geo, 4, TRUE, 4);
  } else if (strcmp(mode, "slot-counter-zero") == 0) {
    publish_raw(map, &geo, 4, FALSE, 0);
  } else {
    fprintf(stderr, "ring-test-hostile: unknown mode %s\n", mode);
    return 2;
  }
  printf("hostile done\n");
  hold();
  /* Leaves without ring_writer_free(): it would read the broken header. */
  unlink(ring_writer_get_path(w));
  return 0;
}
