/* fuzz-ring.c: libFuzzer target for the ring reader (libstereod-client).
 *
 * The input is the whole ring object: it is written to DIR/stereod.fuzz in a private
 * directory on tmpfs (made once, removed at exit), then opened (the owner is us) and
 * read the ways a reading loop does: read_latest, read_next with timeout 0 (no waiting,
 * so every input finishes at once), wait with timeout 0, the accessors, close. Odd-sized
 * inputs open with .follow, so the follow path runs on closed rings too. Every byte of
 * every plane of a frame the reader returns is read, so the sanitizers see any copy
 * that a header could have pushed out of bounds.
 *
 * Build (clang, libFuzzer):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iinclude -Iclient \
 *     fuzz/fuzz-ring.c client/ring-reader.c client/ring-map.c client/ring-read.c \
 *     client/ring-follow.c client/ring-guard.c -o fuzz-ring
 *   ./fuzz-ring -max_total_time=120 fuzz/corpus/ring
 * The corpus (fuzz/corpus/ring/README) holds rings written by ring_writer and hostile
 * variants of them. */
#include <stereod/client.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static char path[128];

static void
remove_dir(void)
{
  unlink(path);
  rmdir(dir);
}

static int
setup(void)
{
  snprintf(dir, sizeof dir, "/dev/shm/fuzz-ring-XXXXXX");
  if (mkdtemp(dir) == NULL) {
    snprintf(dir, sizeof dir, "/tmp/fuzz-ring-XXXXXX");
    if (mkdtemp(dir) == NULL)
      return -1;
  }
  snprintf(path, sizeof path, "%s/stereod.fuzz", dir);
  atexit(remove_dir);
  return 0;
}

/* Reads every byte of every plane the frame says it has. */
static unsigned
touch_frame(const StereodFrame *f)
{
  const void *planes[STEREOD_RING_PLANE_COUNT] = { f->disparity, f->depth, f->confidence,
                                                   f->float32, f->flow_u, f->flow_v };
  unsigned sum = (unsigned) f->counter ^ f->flags;
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++) {
    if (planes[k] == NULL)
      continue;
    size_t row = (size_t) f->width * stereod_ring_plane_element_size(k);
    for (uint32_t y = 0; y < f->height; y++) {
      const uint8_t *p = (const uint8_t *) planes[k] + (size_t) y * f->strides[k];
      for (size_t x = 0; x < row; x++)
        sum += p[x];
    }
  }
  return sum;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int ready = 0;
  if (!ready) {
    if (setup() < 0)
      abort();
    ready = 1;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0)
      abort();
    done += (size_t) n;
  }
  close(fd);

  StereodClientOpenParams params = { .pair = "fuzz", .dir = dir, .follow = (size & 1) != 0 };
  StereodClient *c = NULL;
  if (stereod_client_open_with(&params, &c) != 0)
    return 0;
  volatile unsigned sink = 0;
  const StereodRingHeader *h = stereod_client_get_header(c);
  sink += h->width + h->height + stereod_client_get_slot_count(c);
  sink += (unsigned) strlen(stereod_client_get_name(c));
  StereodFrame f = STEREOD_FRAME_INIT;
  if (stereod_client_read_latest(c, &f) == 0)
    sink += touch_frame(&f);
  if (stereod_client_read_next(c, 0, 0, &f) == 0)
    sink += touch_frame(&f);
  if (stereod_client_read_next(c, f.counter, 0, &f) == 0)
    sink += touch_frame(&f);
  uint64_t counter = 0;
  sink += (unsigned) stereod_client_wait(c, 0, 0, &counter);
  sink += stereod_client_is_closed(c) + (unsigned) stereod_client_get_counter(c);
  stereod_frame_clear(&f);
  stereod_client_close(c);
  (void) sink;
  return 0;
}
