/* test-ring.c: the shm ring in one process: the documented byte layout, open errors,
 * publish/read/wait semantics, forced torn reads, close and stale-object handling. */
#include "ring-test-util.h"
#include "ring-reader-private.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char *
shm_path(const char *name)
{
  return ring_test_path(name);
}

/* Reads the object's bytes as a file, independently of the library. */
static GBytes *
object_bytes(const char *name)
{
  g_autofree char *path = shm_path(name);
  char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) error = NULL;
  g_file_get_contents(path, &data, &len, &error);
  g_assert_no_error(error);
  return g_bytes_new_take(data, len);
}

static uint32_t
u32_at(const uint8_t *b, size_t off)
{
  return b[off] | b[off + 1] << 8 | b[off + 2] << 16 | (uint32_t) b[off + 3] << 24;
}

static uint64_t
u64_at(const uint8_t *b, size_t off)
{
  return u32_at(b, off) | (uint64_t) u32_at(b, off + 4) << 32;
}

static double
f64_at(const uint8_t *b, size_t off)
{
  uint64_t v = u64_at(b, off);
  double d;
  memcpy(&d, &v, sizeof d);
  return d;
}

static void
test_layout(void)
{
  g_autofree char *name = ring_test_pair_name("layout");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 64, 48);
  g_autofree char *path = shm_path(name);
  struct stat st;
  g_assert_cmpint(stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 07777, ==, 0640);

  /* Expected layout worked out by hand from ring.h for 64 x 48, all planes. */
  const uint32_t off[6] = { 64, 64 + 6144, 64 + 2 * 6144, 64 + 2 * 6144 + 3072, 27712,
                            27712 + 6144 };
  const uint32_t stride[6] = { 128, 128, 64, 256, 128, 128 };
  const uint32_t slot_size = 40960;    /* 27712 + 2 * 6144 = 40000 rounded to 4096 */
  g_assert_cmpint(st.st_size, ==, 4096 + 4 * slot_size);

  ring_test_publish(w);
  g_autoptr(GBytes) bytes = object_bytes(name);
  const uint8_t *b = g_bytes_get_data(bytes, NULL);
  g_assert_cmpmem(b, 8, "STEREOD1", 8);
  g_assert_cmpuint(u32_at(b, 8), ==, 1);
  g_assert_cmpuint(u32_at(b, 12), ==, 4096);
  g_assert_cmpuint(u32_at(b, 16), ==, 4);
  g_assert_cmpuint(u32_at(b, 20), ==, slot_size);
  g_assert_cmpuint(u64_at(b, 24), ==, 4096 + 4 * slot_size);
  g_assert_cmpuint(u32_at(b, 32), ==, 64);
  g_assert_cmpuint(u32_at(b, 36), ==, 48);
  g_assert_cmpuint(u32_at(b, 40), ==, 0x3f);
  g_assert_cmpuint(u32_at(b, 44), ==, (uint32_t) getpid());
  g_assert_cmpuint(u32_at(b, 56), ==, 0);
  g_assert_cmpstr((const char *) b + 64, ==, name);
  for (int k = 0; k < 6; k++) {
    uint32_t desc = k < 4 ? 128 + 16 * k : 200 + 16 * (k - 4);   /* flow: after the scale */
    g_assert_cmpuint(stereod_ring_plane_descriptor_offset(k), ==, desc);
    g_assert_cmpuint(u32_at(b, desc), ==, off[k]);
    g_assert_cmpuint(u32_at(b, desc + 4), ==, stride[k]);
    g_assert_cmpuint(u32_at(b, desc + 8), ==, stride[k] * 48);
  }
  g_assert_cmpfloat(f64_at(b, 192), ==, 1.0 / 32.0);
  g_assert_cmpfloat(f64_at(b, 256), ==, 700.5);     /* fx */
  g_assert_cmpfloat(f64_at(b, 264), ==, 701.25);    /* fy */
  g_assert_cmpfloat(f64_at(b, 288), ==, 0.12);      /* baseline */
  g_assert_cmpfloat(f64_at(b, 296), ==, 3.5);       /* doffs */
  g_assert_cmpfloat(f64_at(b, 304 + 8 * 5), ==, 1.5);  /* Q[1][1] */
  g_assert_cmpuint(u64_at(b, 512), ==, 1);          /* counter */
  g_assert_cmpuint(u32_at(b, 520), ==, 1);          /* futex word */

  const uint8_t *s = b + 4096;                      /* slot 0 holds frame 1 */
  g_assert_cmpuint(u64_at(s, 0), ==, 2);            /* seq: one complete write */
  g_assert_cmpuint(u64_at(s, 8), ==, 1);
  g_assert_cmpuint(u64_at(s, 16), ==, 1 + RING_TEST_FRAME_OFFSET);
  g_assert_cmpuint(u64_at(s, 24), ==, ring_pattern_capture_ns(1 + RING_TEST_FRAME_OFFSET));
  g_assert_cmpuint(u64_at(s, 32), >, RING_TEST_CAPTURE_BASE);
  int16_t d;
  memcpy(&d, s + off[0] + 5 * stride[0] + 2 * 7, 2);
  g_assert_cmpint(d, ==, ring_pattern_disparity(1 + RING_TEST_FRAME_OFFSET, 7, 5));
  float v;
  memcpy(&v, s + off[3] + 3 * stride[3] + 4 * 9, 4);
  g_assert_cmpfloat(v, ==, ring_pattern_float(1 + RING_TEST_FRAME_OFFSET, 9, 3));
  int16_t fu, fv;
  memcpy(&fu, s + off[4] + 4 * stride[4] + 2 * 6, 2);
  memcpy(&fv, s + off[5] + 4 * stride[5] + 2 * 6, 2);
  g_assert_cmpint(fu, ==, ring_pattern_flow_u(1 + RING_TEST_FRAME_OFFSET, 6, 4));
  g_assert_cmpint(fv, ==, ring_pattern_flow_v(1 + RING_TEST_FRAME_OFFSET, 6, 4));
}

/* Writes `len` bytes of `data` as the ring object of `name`. */
static void
write_object(const char *name, const void *data, gsize len)
{
  g_autofree char *path = shm_path(name);
  g_autoptr(GError) error = NULL;
  g_file_set_contents(path, data, (gssize) len, &error);
  g_assert_no_error(error);
}

static void
test_open_errors(void)
{
  StereodClient *c = (StereodClient *) 1;
  g_autofree char *missing = ring_test_pair_name("missing");
  g_assert_cmpint(stereod_client_open(missing, &c), ==, -ENOENT);
  g_assert_null(c);
  const char *bad_names[] = { "", ".hidden", "a/b", "../x", "sp ace", "x~1.tmp" };
  for (guint i = 0; i < G_N_ELEMENTS(bad_names); i++)
    g_assert_cmpint(stereod_client_open(bad_names[i], &c), ==, -EINVAL);
  g_assert_cmpint(stereod_client_open(NULL, &c), ==, -EINVAL);
  char longname[65];
  memset(longname, 'a', 64);
  longname[64] = '\0';
  g_assert_cmpint(stereod_client_open(longname, &c), ==, -EINVAL);

  /* A valid ring, then one field at a time broken in a copy of it. */
  g_autofree char *name = ring_test_pair_name("proto");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 32, 16);
  g_autoptr(GBytes) good = object_bytes(name);
  gsize len;
  const uint8_t *orig = g_bytes_get_data(good, &len);
  g_autofree char *bad = ring_test_pair_name("proto-bad");
  struct { size_t off; uint32_t value; } patches[] = {
    { 0, 0x45544f4e },        /* magic */
    { 8, 2 },                 /* version */
    { 12, 100 },              /* header_size */
    { 16, 0 },                /* slot_count */
    { 16, 1000 },             /* slot_count beyond the limit */
    { 20, 8192 * 64 },        /* slot_size: total_size no longer matches */
    { 40, 0x10 },             /* unknown format bit */
    { 128, 8128 },            /* disparity plane beyond the 8192-byte slot */
    { 132, 2 },               /* disparity stride shorter than a row */
    { 128 + 16 * 2, 65 },     /* confidence plane misaligned */
  };
  g_autofree uint8_t *copy = g_memdup2(orig, len);
  for (guint i = 0; i < G_N_ELEMENTS(patches); i++) {
    memcpy(copy, orig, len);
    memcpy(copy + patches[i].off, &patches[i].value, 4);
    write_object(bad, copy, len);
    g_assert_cmpint(stereod_client_open(bad, &c), ==, -EPROTO);
    g_assert_null(c);
  }
  write_object(bad, orig, 300);            /* shorter than a header */
  g_assert_cmpint(stereod_client_open(bad, &c), ==, -EPROTO);
  write_object(bad, orig, len - 4096);     /* a slot missing */
  g_assert_cmpint(stereod_client_open(bad, &c), ==, -EPROTO);
  write_object(bad, orig, len);            /* the unbroken copy opens */
  g_assert_cmpint(stereod_client_open(bad, &c), ==, 0);
  stereod_client_close(c);
  g_autofree char *bad_path = shm_path(bad);
  unlink(bad_path);
}

static void
test_writer_params(void)
{
  g_autofree char *name = ring_test_pair_name("params");
  RingWriterParams p;
  RingWriter *w = (RingWriter *) 1;
  struct { const char *name; uint32_t width, formats, slots; } bad[] = {
    { "a/b", 8, STEREOD_RING_FORMAT_ALL, 4 },
    { name, 0, STEREOD_RING_FORMAT_ALL, 4 },
    { name, 8, 0, 4 },
    { name, 8, 1u << STEREOD_RING_PLANE_COUNT, 4 },            /* an unknown kind */
    { name, 8, STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_U), 4 },   /* u without v */
    { name, 8, STEREOD_RING_FORMAT_DISPARITY | STEREOD_RING_FORMAT(STEREOD_RING_PLANE_FLOW_V),
      4 },
    { name, 8, STEREOD_RING_FORMAT_ALL, 1 },
    { name, 8, STEREOD_RING_FORMAT_ALL, STEREOD_RING_MAX_SLOTS + 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    ring_test_params(&p, bad[i].name, bad[i].width, 8);
    p.formats = bad[i].formats;
    p.slot_count = bad[i].slots;
    g_assert_cmpint(ring_writer_new(&p, &w), ==, -EINVAL);
    g_assert_null(w);
  }

  /* A subset of planes and another mode and slot count. */
  ring_test_params(&p, name, 10, 6);
  p.formats = STEREOD_RING_FORMAT_DEPTH | STEREOD_RING_FORMAT_CONFIDENCE;
  p.slot_count = 3;
  p.mode = 0600;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  g_autofree char *path = shm_path(name);
  struct stat st;
  g_assert_cmpint(stat(path, &st), ==, 0);
  g_assert_cmpint(st.st_mode & 07777, ==, 0600);

  RingWriterSlot s;
  g_assert_cmpint(ring_writer_commit(w, &(RingWriterMeta) { 0 }), ==, -EINVAL);
  g_assert_cmpint(ring_writer_begin(w, &s), ==, 0);
  g_assert_null(s.planes[STEREOD_RING_PLANE_DISPARITY]);
  g_assert_null(s.planes[STEREOD_RING_PLANE_FLOAT32]);
  g_assert_cmpuint(s.strides[STEREOD_RING_PLANE_DEPTH], ==, 20);
  g_assert_cmpint(ring_writer_begin(w, &s), ==, -EBUSY);
  g_assert_cmpint(ring_writer_commit(w, &(RingWriterMeta) { .frame_number = 5 }), ==, 0);

  /* ring_writer_publish copies packed planes. */
  uint16_t depth[60];
  uint8_t conf[60];
  for (int i = 0; i < 60; i++) {
    depth[i] = (uint16_t) (1000 + i);
    conf[i] = (uint8_t) (i + 1);
  }
  const void *planes[STEREOD_RING_PLANE_COUNT] = { NULL, depth, conf, NULL };
  g_assert_cmpint(ring_writer_publish(w, &(RingWriterMeta) { .frame_number = 6 }, planes), ==, 0);
  g_assert_cmpuint(ring_writer_get_counter(w), ==, 2);

  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  g_assert_cmpuint(stereod_client_get_slot_count(c), ==, 3);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.frame_number, ==, 6);
  g_assert_null(f.disparity);
  g_assert_null(f.float32);
  g_assert_cmpmem(f.depth, sizeof depth, depth, sizeof depth);
  g_assert_cmpmem(f.confidence, sizeof conf, conf, sizeof conf);
  stereod_frame_clear(&f);
  ring_writer_free(w);
}

static void
test_publish_read(void)
{
  g_autofree char *name = ring_test_pair_name("pubread");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 40, 30);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);

  StereodFrame f = STEREOD_FRAME_INIT;
  uint64_t counter = 99;
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -ENODATA);
  g_assert_cmpint(stereod_client_wait(c, 0, 0, &counter), ==, -ETIMEDOUT);
  /* A timed wait never returns early; how much later it returns depends on the load of
   * the machine, so the upper bound is only "it did return". */
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(stereod_client_wait(c, 0, 30 * 1000 * 1000, &counter), ==, -ETIMEDOUT);
  gint64 waited = g_get_monotonic_time() - t0;
  g_assert_cmpint(waited, >=, 30 * 1000);
  g_assert_cmpint(waited, <, 20 * G_USEC_PER_SEC);

  ring_test_publish(w);
  g_assert_cmpint(stereod_client_wait(c, 0, -1, &counter), ==, 0);
  g_assert_cmpuint(counter, ==, 1);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 1);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  g_assert_cmpint(stereod_client_wait(c, 1, 0, &counter), ==, -ETIMEDOUT);

  for (int i = 0; i < 6; i++)     /* wraps the 4 slots */
    ring_test_publish(w);
  g_assert_cmpint(stereod_client_wait(c, 1, 0, &counter), ==, 0);
  g_assert_cmpuint(counter, ==, 7);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 7);
  g_assert_cmpuint(f.frame_number, ==, 7 + RING_TEST_FRAME_OFFSET);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  g_assert_cmpuint(f.width, ==, 40);
  g_assert_cmpuint(f.height, ==, 30);
  g_assert_cmpuint(f.formats, ==, STEREOD_RING_FORMAT_ALL);
  g_assert_cmpfloat(f.disparity_scale, ==, 1.0 / 32.0);
  g_assert_cmpfloat(f.calibration.fx, ==, 700.5);
  g_assert_cmpfloat(f.calibration.q[15], ==, 6.5);
  g_assert_cmpuint(f.publish_ns, >=, f.capture_ns);

  RingWriterParams p;
  ring_test_params(&p, name, 40, 30);
  StereodRingCalibration cal;
  stereod_client_get_calibration(c, &cal);
  g_assert_cmpmem(&cal, sizeof cal, &p.calibration, sizeof cal);
  g_assert_cmpstr(stereod_client_get_name(c), ==, name);
  g_assert_cmpuint(stereod_client_get_width(c), ==, 40);
  g_assert_cmpuint(stereod_client_get_height(c), ==, 30);
  g_assert_cmpuint(stereod_client_get_formats(c), ==, STEREOD_RING_FORMAT_ALL);
  g_assert_cmpuint(stereod_client_get_slot_count(c), ==, 4);
  g_assert_cmpfloat(stereod_client_get_disparity_scale(c), ==, 1.0 / 32.0);
  g_assert_cmpint(stereod_client_get_writer_pid(c), ==, getpid());
  g_assert_cmpuint(stereod_client_get_counter(c), ==, 7);
  g_assert_false(stereod_client_is_closed(c));
  g_assert_true(isnan(stereod_disparity_to_px(INT16_MIN, 1.0 / 32)));
  g_assert_cmpfloat(stereod_disparity_to_px(64, 1.0 / 32), ==, 2.0);

  StereodClientStats stats;
  stereod_client_get_stats(c, &stats);
  g_assert_cmpuint(stats.reads, ==, 2);
  g_assert_cmpuint(stats.torn, ==, 0);
  stereod_frame_clear(&f);
  g_assert_null(f.priv_buffer);
}

typedef struct {
  RingWriter *writer;
  guint frames;          /* to publish from the hook */
  guint on_attempts;     /* publish on attempts below this */
  uint64_t counter_seen; /* writer counter when the hook first ran */
} TornHook;

static void
torn_hook(StereodClient *c, unsigned attempt, void *data)
{
  TornHook *t = data;
  if (attempt == 0)
    t->counter_seen = ring_writer_get_counter(t->writer);
  if (attempt >= t->on_attempts)
    return;
  for (guint i = 0; i < t->frames; i++)
    ring_test_publish(t->writer);
}

static void
test_torn_forced(void)
{
  g_autofree char *name = ring_test_pair_name("torn");
  g_autoptr(RingWriter) w = ring_test_writer_new(name, 48, 32);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  for (int i = 0; i < 3; i++)
    ring_test_publish(w);
  StereodFrame f = STEREOD_FRAME_INIT;
  StereodClientStats stats;

  /* Fewer frames than slots during the copy: the slot copied is untouched, the copy
   * is kept, and it is the frame that was newest when the read started. */
  TornHook t = { .writer = w, .frames = 3, .on_attempts = 1 };
  stereod_client_set_copy_hook(c, torn_hook, &t);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 3);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  stereod_client_get_stats(c, &stats);
  g_assert_cmpuint(stats.torn, ==, 0);

  /* A full lap during the first copy: the slot is rewritten between the two halves of
   * the copy; the seqlock catches it and the retry returns the newest frame. */
  t = (TornHook) { .writer = w, .frames = 4, .on_attempts = 1 };
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(t.counter_seen, ==, 6);
  g_assert_cmpuint(f.counter, ==, 10);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  stereod_client_get_stats(c, &stats);
  g_assert_cmpuint(stats.torn, ==, 1);
  g_assert_cmpuint(stats.reads, ==, 2);

  /* Overwritten during every attempt: the reader gives up rather than return a torn
   * frame, after a bounded number of attempts. */
  t = (TornHook) { .writer = w, .frames = 4, .on_attempts = G_MAXUINT };
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, -EAGAIN);
  stereod_client_get_stats(c, &stats);
  g_assert_cmpuint(stats.torn, ==, 1 + STEREOD_CLIENT_READ_ATTEMPTS);
  g_assert_cmpuint(stats.failed, ==, 1);

  stereod_client_set_copy_hook(c, NULL, NULL);
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, ring_writer_get_counter(w));
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  stereod_frame_clear(&f);
}

typedef struct {
  StereodClient *client;
  uint64_t last;
  int result;
  pid_t tid;
  gint64 started_us, returned_us;   /* monotonic */
} WaitThread;

#define WAIT_THREAD_TIMEOUT_S 60

static gpointer
wait_thread(gpointer data)
{
  WaitThread *t = data;
  t->started_us = g_get_monotonic_time();
  g_atomic_int_set(&t->tid, (gint) syscall(SYS_gettid));
  t->result = stereod_client_wait(t->client, t->last,
                                  (int64_t) WAIT_THREAD_TIMEOUT_S * 1000000000, NULL);
  t->returned_us = g_get_monotonic_time();
  return NULL;
}

/* Until thread `tid` sleeps in FUTEX_WAIT (from /proc/self/task/TID/syscall), at most
 * 20 s. FALSE when /proc cannot tell (then the caller just gave it time). */
static gboolean
thread_in_futex_wait(pid_t tid)
{
  g_autofree char *path = g_strdup_printf("/proc/self/task/%d/syscall", (int) tid);
  gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
  while (g_get_monotonic_time() < end) {
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
      return FALSE;
    if (g_ascii_strtoll(text, NULL, 10) == SYS_futex)
      return TRUE;
    g_usleep(1000);
  }
  return FALSE;
}

/* Starts a waiter and returns once it is blocked in the wait (or, where /proc cannot
 * show that, after giving it 50 ms). */
static GThread *
start_waiter(WaitThread *t)
{
  GThread *th = g_thread_new("wait", wait_thread, t);
  while (g_atomic_int_get(&t->tid) == 0)
    g_usleep(1000);
  if (!thread_in_futex_wait(t->tid)) {
    g_test_message("cannot see the waiter's system call; giving it 50 ms");
    g_usleep(50 * 1000);
  }
  return th;
}

static void
test_wait_wakes(void)
{
  g_autofree char *name = ring_test_pair_name("wake");
  RingWriter *w = ring_test_writer_new(name, 16, 16);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);

  /* A publish wakes a blocked waiter: it returns after the publish and long before its
   * 60 s timeout (orders, not speeds: the machine may be loaded). */
  WaitThread t = { .client = c, .last = 0 };
  GThread *th = start_waiter(&t);
  gint64 published_us = g_get_monotonic_time();
  ring_test_publish(w);
  g_thread_join(th);
  g_assert_cmpint(t.result, ==, 0);
  g_assert_cmpint(t.returned_us, >=, published_us);
  g_assert_cmpint(t.returned_us - t.started_us, <, (WAIT_THREAD_TIMEOUT_S - 10) * G_USEC_PER_SEC);

  /* So does a close: -EPIPE. */
  t = (WaitThread) { .client = c, .last = 1 };
  th = start_waiter(&t);
  gint64 closed_us = g_get_monotonic_time();
  ring_writer_free(w);
  g_thread_join(th);
  g_assert_cmpint(t.result, ==, -EPIPE);
  g_assert_cmpint(t.returned_us, >=, closed_us);
  g_assert_cmpint(t.returned_us - t.started_us, <, (WAIT_THREAD_TIMEOUT_S - 10) * G_USEC_PER_SEC);
}

static void
test_closed(void)
{
  g_autofree char *name = ring_test_pair_name("closed");
  RingWriter *w = ring_test_writer_new(name, 16, 8);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  ring_test_publish(w);
  ring_test_publish(w);
  ring_writer_free(w);

  uint64_t counter = 0;
  g_assert_true(stereod_client_is_closed(c));
  g_assert_cmpint(stereod_client_wait(c, 2, -1, &counter), ==, -EPIPE);
  /* Frames published before the close are still delivered first. */
  g_assert_cmpint(stereod_client_wait(c, 0, -1, &counter), ==, 0);
  g_assert_cmpuint(counter, ==, 2);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_latest(c, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 2);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  stereod_frame_clear(&f);

  /* The name is gone: new readers get -ENOENT. */
  StereodClient *c2 = NULL;
  g_assert_cmpint(stereod_client_open(name, &c2), ==, -ENOENT);
}

static void
test_stale_writer(void)
{
  g_autofree char *name = ring_test_pair_name("stale");
  pid_t pid = ring_test_fork_writer(name, 16, 8, FALSE);
  g_autoptr(StereodClient) old = NULL;
  g_assert_cmpint(stereod_client_open(name, &old), ==, 0);
  g_assert_cmpint(stereod_client_get_writer_pid(old), ==, pid);

  /* Its writer is alive: a second writer is refused. */
  RingWriterParams p;
  ring_test_params(&p, name, 16, 8);
  RingWriter *w = NULL;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, -EBUSY);
  g_assert_null(w);

  /* It crashes: the object stays, unclosed; a new writer replaces it and tells the
   * readers of the old one, which then see the end instead of waiting forever. */
  kill(pid, SIGKILL);
  g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
  g_assert_false(stereod_client_is_closed(old));
  g_assert_cmpint(stereod_client_wait(old, 0, 0, NULL), ==, -ETIMEDOUT);
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  g_assert_true(stereod_client_is_closed(old));
  g_assert_cmpint(stereod_client_wait(old, 0, -1, NULL), ==, -EPIPE);

  g_autoptr(StereodClient) fresh = NULL;
  g_assert_cmpint(stereod_client_open(name, &fresh), ==, 0);
  g_assert_cmpint(stereod_client_get_writer_pid(fresh), ==, getpid());
  ring_test_publish(w);
  g_assert_cmpint(stereod_client_wait(fresh, 0, 0, NULL), ==, 0);

  /* Something else put under the name without closing ours (not done by writers, but
   * possible by hand): a waiting reader learns it at its timeout. */
  g_autofree char *other = ring_test_pair_name("stale-other");
  RingWriter *w2 = ring_test_writer_new(other, 8, 8);
  g_autofree char *other_path = shm_path(other);
  g_autofree char *path = shm_path(name);
  g_assert_cmpint(rename(other_path, path), ==, 0);
  g_assert_cmpint(stereod_client_wait(fresh, 1, 20 * 1000 * 1000, NULL), ==, -ESTALE);
  ring_writer_free(w);    /* the name is no longer its own: left alone */
  g_assert_cmpint(access(path, F_OK), ==, 0);
  ring_writer_free(w2);   /* renamed away from its name: nothing to unlink */
  unlink(path);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/ring/layout", test_layout);
  g_test_add_func("/ring/open-errors", test_open_errors);
  g_test_add_func("/ring/writer-params", test_writer_params);
  g_test_add_func("/ring/publish-read", test_publish_read);
  g_test_add_func("/ring/torn-forced", test_torn_forced);
  g_test_add_func("/ring/wait-wakes", test_wait_wakes);
  g_test_add_func("/ring/closed", test_closed);
  g_test_add_func("/ring/stale-writer", test_stale_writer);
  return g_test_run();
}
