/* test-capture.c: CapturePairs over real pipelines of videotestsrc (integration):
 * every format taken as it is and some converted (YUY2, UYVY, v308, GRAY16) with known
 * luma and odd widths, JPEG from jpegenc, pairing of
 * live sources within the tolerance, different frame rates, the mailbox, frames of the
 * wrong size, descriptions that do not parse, and offline back-pressure outside the
 * sinks. */
#include "capture-test-util.h"
#include "daemon/capture-pair.h"

#include <math.h>
#include <string.h>

static char *
src(const char *extra, const char *format, int w, int h, int fps)
{
  return g_strdup_printf("videotestsrc is-live=true %s ! video/x-raw,format=%s,width=%d,"
                         "height=%d,framerate=%d/1", extra, format, w, h, fps);
}

/* One pair of a source description on both sides. */
static void
first_pair(const char *desc, int w, int h, void (*check)(const CaptureFrame *, void *),
           void *data)
{
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) pair = ct_pair_start("fmt", desc, desc, w, h, n);
  const CaptureFrame *l, *r;
  g_assert_true(ct_take(pair, n, 20000, &l, &r, NULL, NULL));
  for (int i = 0; i < 2; i++) {
    const CaptureFrame *f = i ? r : l;
    g_assert_cmpint(f->width, ==, w);
    g_assert_cmpint(f->height, ==, h);
    g_assert_cmpuint(f->stride, ==, ((size_t)w + 3) / 4 * 4);
    check(f, data);
  }
  capture_pair_release(pair, l, r);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_assert_cmpuint(st.corrupt[0] + st.corrupt[1] + st.wrong_size[0] + st.wrong_size[1], ==, 0);
}

/* solid-color 0xffc86420 = RGB (200, 100, 32); exact luma 122.148. */
#define SOLID_R 200
#define SOLID_G 100
#define SOLID_B 32

static void
check_uniform(const CaptureFrame *f, void *data)
{
  double want = *(double *)data;
  for (int y = 0; y < f->height; y++)
    for (int x = 0; x < f->width; x++) {
      double v = f->data[(size_t)y * f->stride + x];
      if (fabs(v - want) > 1.0)
        g_error("pixel (%d,%d) = %.0f, want %.2f", x, y, v, want);
    }
}

static void
test_solid(gconstpointer data)
{
  const char *format = data;
  double y = 0.299 * SOLID_R + 0.587 * SOLID_G + 0.114 * SOLID_B;
  /* RGB formats: our exact conversion. Y formats: videotestsrc paints limited range. */
  bool rgb = strchr(format, 'R') != NULL;
  double want = rgb ? floor(y + 0.5) : 16.0 + 219.0 * y / 255.0;
  g_autofree char *desc = src("pattern=solid-color foreground-color=0xffc86420",
                                      format, 64, 48, 30);
  first_pair(desc, 64, 48, check_uniform, &want);
}

/* checkers-8 at 63 px wide: two levels in 8x8 squares. A stride error shears the
 * squares, a channel error changes nothing here but is caught by test_solid. */
static void
check_checkers(const CaptureFrame *f, void *data)
{
  uint8_t a = f->data[0], b = f->data[8];
  g_assert_cmpint(abs((int)a - (int)b), >, 20);
  for (int y = 0; y < f->height; y++)
    for (int x = 0; x < f->width; x++) {
      uint8_t want = ((x / 8 + y / 8) & 1) ? b : a;
      uint8_t v = f->data[(size_t)y * f->stride + x];
      if (abs((int)v - (int)want) > 1)
        g_error("pixel (%d,%d) = %u, want %u", x, y, v, want);
    }
}

static void
test_odd_width(gconstpointer data)
{
  g_autofree char *desc = src("pattern=checkers-8", data, 63, 47, 30);
  first_pair(desc, 63, 47, check_checkers, NULL);
}

/* JPEG: jpegenc's output decoded to gray matches the I420 luma it was made from. */
static void
test_jpeg(gconstpointer data)
{
  const int *size = data;
  int w = size[0], h = size[1];
  g_autofree char *raw = src("pattern=smpte", "I420", w, h, 30);
  g_autofree char *jpg = g_strdup_printf("%s ! jpegenc quality=95", raw);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) pair = ct_pair_start("jpeg", raw, jpg, w, h, n);
  const CaptureFrame *l, *r;
  g_assert_true(ct_take(pair, n, 20000, &l, &r, NULL, NULL));
  double mean;
  int max;
  ct_compare(l->data, l->stride, r->data, r->stride, w, h, &mean, &max);
  g_test_message("jpegenc q95 %dx%d decoded vs I420 luma: mean |d| %.2f, max %d", w, h,
                 mean, max);
  g_assert_cmpfloat(mean, <, 1.5);
  g_assert_cmpint(max, <=, 40);  /* smpte has hard edges: ringing */
  capture_pair_release(pair, l, r);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_assert_cmpuint(st.corrupt[1], ==, 0);
}

static uint64_t
absdiff(uint64_t a, uint64_t b)
{
  return a > b ? a - b : b - a;
}

/* Two live sources of one pipeline pair within the tolerance, in order, at their rate,
 * with capture times on CLOCK_REALTIME; a consumer that does not take loses only to
 * "overwritten". */
static void
test_pairing_live(void)
{
  g_autofree char *desc = src("pattern=ball", "GRAY8", 64, 48, 30);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = "live", .left = desc, .right = desc, .width = 64, .height = 48,
    .tolerance_ns = CT_LIVE_TOLERANCE_NS, .notifier = n,
  };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_STOPPED);
  capture_pair_start(pair);

  uint64_t last_seq = 0, last_cap = 0, max_dt = 0, sum_dt = 0;
  double sum_latency = 0, max_latency = 0;
  double sum_period = 0;
  int periods = 0, want = 20;
  for (int i = 0; i < want; i++) {
    const CaptureFrame *l, *r;
    uint64_t cap, seq;
    g_assert_true(ct_take(pair, n, 10000, &l, &r, &cap, &seq));
    uint64_t now = (uint64_t)g_get_real_time() * 1000;
    g_assert_cmpuint(cap, <=, now + 1000000);
    g_assert_cmpuint(cap, >=, now - 500000000ull);
    g_assert_cmpuint(cap, ==, l->capture_ns);
    double latency = ((double)now - (double)cap) / 1e6;
    sum_latency += latency;
    max_latency = MAX(max_latency, latency);
    uint64_t dt = absdiff(l->capture_ns, r->capture_ns);
    g_assert_cmpuint(dt, <=, CT_LIVE_TOLERANCE_NS);
    max_dt = MAX(max_dt, dt);
    sum_dt += dt;
    g_assert_cmpuint(seq, >, last_seq);
    if (last_seq && seq == last_seq + 1) {
      sum_period += (double)(cap - last_cap) / 1e6;
      periods++;
    }
    last_seq = seq;
    last_cap = cap;
    capture_pair_release(pair, l, r);
  }
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_RUNNING);
  g_assert_cmpint(periods, >=, want / 2);
  double period = sum_period / periods;
  g_test_message("live pairs: |PTS left - right| mean %.1f us, max %.1f us; "
                 "period %.2f ms over %d pairs; capture to take %.2f ms mean, %.2f max",
                 (double)sum_dt / want / 1000.0, (double)max_dt / 1000.0, period, periods,
                 sum_latency / want, max_latency);
  g_assert_cmpfloat(fabs(period - 1000.0 / 30.0), <, 3.0);

  /* Not taking: the mailbox keeps only the newest pair. */
  CaptureStats a, b;
  capture_pair_get_stats(pair, &a);
  g_usleep(300000);
  capture_pair_get_stats(pair, &b);
  g_assert_cmpuint(b.pairs - a.pairs, >=, 5);
  g_assert_cmpuint(b.overwritten - a.overwritten, >=, b.pairs - a.pairs - 1);
  const CaptureFrame *l, *r;
  uint64_t seq;
  g_assert_true(capture_pair_take(pair, &l, &r, NULL, &seq));
  g_assert_cmpuint(seq, >=, last_seq + 5);
  capture_pair_release(pair, l, r);
  capture_pair_get_stats(pair, &b);
  g_assert_cmpuint(b.unpaired[0] + b.unpaired[1], <=, 4);
  g_assert_cmpuint(b.frames[0], >=, b.pairs);
  capture_pair_stop(pair);
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_STOPPED);
}

/* 30 fps left, 10 fps right: every third left frame has a partner; the others are
 * counted as unpaired. */
static void
test_pairing_rates(void)
{
  g_autofree char *left = src("", "GRAY8", 64, 48, 30);
  g_autofree char *right = src("", "GRAY8", 64, 48, 10);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) pair = ct_pair_start("rates", left, right, 64, 48, n);
  int got = 0;
  while (got < 8) {
    const CaptureFrame *l, *r;
    g_assert_true(ct_take(pair, n, 10000, &l, &r, NULL, NULL));
    g_assert_cmpuint(absdiff(l->capture_ns, r->capture_ns), <=, CT_LIVE_TOLERANCE_NS);
    capture_pair_release(pair, l, r);
    got++;
  }
  capture_pair_stop(pair);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_test_message("30/10 fps: %" G_GUINT64_FORMAT " pairs, unpaired left %" G_GUINT64_FORMAT
                 " right %" G_GUINT64_FORMAT, st.pairs, st.unpaired[0], st.unpaired[1]);
  g_assert_cmpuint(st.unpaired[1], <=, 1);
  g_assert_cmpuint(st.unpaired[0] + 4, >=, 2 * st.pairs);
  g_assert_cmpuint(st.unpaired[0], <=, 2 * st.pairs + 4);
}

/* Frames of another size than configured: dropped, counted, logged once per side. */
static void
test_wrong_size(void)
{
  ct_log_clear();
  g_autofree char *desc = src("", "GRAY8", 32, 24, 30);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) pair = ct_pair_start("size", desc, desc, 64, 48, n);
  const CaptureFrame *l, *r;
  g_assert_false(ct_take(pair, n, 400, &l, &r, NULL, NULL));
  capture_pair_stop(pair);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_assert_cmpuint(st.wrong_size[0], >=, 5);
  g_assert_cmpuint(st.wrong_size[1], >=, 5);
  g_assert_cmpuint(st.pairs, ==, 0);
  g_assert_cmpint(ct_log_count("frame is 32x24, expected 64x48"), ==, 2);
}

static void
expect_new_error(const char *left, const char *right, int width, int code,
                 const char *needle)
{
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = { .name = "bad", .left = left, .right = right, .width = width,
                            .height = 48 };
  CapturePair *pair = capture_pair_new(&prm, &error);
  g_assert_null(pair);
  g_assert_error(error, CAPTURE_ERROR, code);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, needle));
}

static void
test_bad_description(void)
{
  const char *ok = "videotestsrc";
  expect_new_error("videotestsrc ! nosuchelement", ok, 64, CAPTURE_ERROR_DESCRIPTION,
                   "pair bad: left source");
  expect_new_error(ok, "videotestsrc ! video/x-raw,format=GRAY8 ! ! fakesink", 64,
                   CAPTURE_ERROR_DESCRIPTION, "pair bad: right source");
  expect_new_error(ok, "videotestsrc ! fakesink", 64, CAPTURE_ERROR_DESCRIPTION,
                   "must end in an element whose output is video");
  expect_new_error(ok, "videoconvert", 64, CAPTURE_ERROR_DESCRIPTION, "leaves a sink pad free");
  expect_new_error(ok, "videotestsrc nosuchproperty=1", 64, CAPTURE_ERROR_DESCRIPTION,
                   "right source");
  expect_new_error(ok, "audiotestsrc", 64, CAPTURE_ERROR_DESCRIPTION,
                   "could not link audiotestsrc");
  expect_new_error(ok, "videotestsrc ! audioconvert", 64, CAPTURE_ERROR_DESCRIPTION,
                   "pair bad: right source");
  expect_new_error(ok, ok, 0, CAPTURE_ERROR_INVALID, "width and height");
}

/* A pool in the caller's memory (the GPU upload buffer in stereod): the frames lie in it,
 * 64-byte aligned, hold the source's pixels, and the bytes outside the pool's size are
 * never written. */
static void
test_external_pool(void)
{
  const int w = 63, h = 47;
  g_autofree char *desc = src("pattern=checkers-8", "GRAY8", w, h, 30);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  /* This is about the pool, not about pairing or stalls on a loaded machine: the two
   * sides' timestamps may be far apart there (CT_LIVE_TOLERANCE_NS and a waiting list of
   * 8), and pauses long (stall_ms far beyond them). */
  CapturePairParams prm = { .name = "pool", .left = desc, .right = desc, .width = w,
                            .height = h, .held_pairs = 2, .notifier = n, .stall_ms = 10000,
                            .max_pending = 8,
                            .tolerance_ns = CT_LIVE_TOLERANCE_NS };
  size_t bytes = capture_pair_pool_bytes(&prm);
  g_assert_cmpuint(bytes, ==, 2 * (2 + 8 + 2) * ((64 * 47 + 63) / 64 * 64));
  uint8_t *mem = g_aligned_alloc(bytes + 256, 1, 64);
  memset(mem, 0xa5, bytes + 256);
  prm.pool_memory = mem;
  GError *error = NULL;
  CapturePair *pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  for (int k = 0; k < 3; k++) {
    const CaptureFrame *l, *r;
    /* a deadline far beyond the 33 ms of a frame: the first test of the program also
     * waits for GStreamer's registry on a busy machine */
    g_assert_true(ct_take(pair, n, 30000, &l, &r, NULL, NULL));
    for (int i = 0; i < 2; i++) {
      const CaptureFrame *f = i ? r : l;
      g_assert_true(f->data >= mem && f->data + f->stride * (size_t)h <= mem + bytes);
      g_assert_cmpuint((uintptr_t)(f->data - mem) % 64, ==, 0);
      check_checkers(f, NULL);
    }
    capture_pair_release(pair, l, r);
  }
  capture_pair_free(pair);
  for (size_t i = bytes; i < bytes + 256; i++)
    g_assert_cmpuint(mem[i], ==, 0xa5);
  g_aligned_free(mem);
}

/* Offline back-pressure waits before the appsink, not in its render callback, which the
 * sink calls with its preroll lock held: a state change of the sink takes that lock, and
 * a wait there held the pipeline's change to PLAYING (a sink that prerolled while the
 * change was under way renders at once) and with it both cameras, for ever. The left
 * camera delivers nothing (its frames dropped, its stream not ended), so the right one's
 * third frame waits for a partner; the right sink is then paused and played again from
 * another thread, which must return. */
typedef struct {
  GstElement *sink;
  _Atomic int done;   /* 1: both state changes returned, 2: one failed */
} CycleSink;

static gpointer
cycle_sink(gpointer data)
{
  CycleSink *c = data;
  bool ok = gst_element_set_state(c->sink, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE &&
            gst_element_set_state(c->sink, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
  atomic_store(&c->done, ok ? 1 : 2);
  return NULL;
}

static void
test_offline_wait_outside_sink(void)
{
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  const char *caps = "video/x-raw,format=GRAY8,width=64,height=48,framerate=25/1";
  g_autofree char *left = g_strdup_printf("videotestsrc ! %s ! identity sleep-time=2000 "
                                          "drop-probability=1", caps);
  g_autofree char *right = g_strdup_printf("videotestsrc ! %s", caps);
  CapturePairParams prm = { .name = "outside", .left = left, .right = right, .width = 64,
                            .height = 48, .fps = 25, .mode = CAPTURE_MODE_OFFLINE,
                            .notifier = n, .start_timeout_ms = 60000 };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  Side *s = &pair->side[CAPTURE_SIDE_RIGHT];
  int64_t deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
  while (atomic_load(&s->blocked) == 0) {
    g_assert_cmpint(g_get_monotonic_time(), <, deadline);
    g_usleep(10000);
  }
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_assert_cmpuint(st.frames[CAPTURE_SIDE_LEFT], ==, 0);
  g_assert_cmpuint(st.pairs, ==, 0);
  CycleSink c = { .sink = gst_bin_get_by_name(GST_BIN(pair->pipeline), "right") };
  g_assert_nonnull(c.sink);
  GThread *t = g_thread_new("cycle-sink", cycle_sink, &c);
  /* the thread cannot be interrupted: if the state change hangs, fail (the process ends) */
  deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
  while (atomic_load(&c.done) == 0) {
    if (g_get_monotonic_time() > deadline)
      g_error("the right sink's state change did not return in 20 s: a frame waits for "
              "back-pressure inside its render callback");
    g_usleep(10000);
  }
  g_thread_join(t);
  g_assert_cmpint(atomic_load(&c.done), ==, 1);
  g_assert_cmpint(atomic_load(&s->blocked), >, 0);   /* still waiting, before the sink */
  gst_object_unref(c.sink);
  capture_pair_stop(pair);
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  ct_add_func("/capture/external-pool", test_external_pool);
  /* the formats taken as they are, then some that videoconvert turns into one of them */
  static const char *const formats[] = { "GRAY8", "I420", "NV12", "NV21", "Y42B", "Y444",
                                         "RGB", "BGR", "RGBx", "BGRx", "xRGB", "xBGR",
                                         "RGBA", "BGRA", "ARGB", "ABGR",
                                         "YUY2", "UYVY", "v308", "GRAY16_LE" };
  for (guint i = 0; i < G_N_ELEMENTS(formats); i++) {
    g_autofree char *a = g_strdup_printf("/capture/format/solid/%s", formats[i]);
    g_autofree char *b = g_strdup_printf("/capture/format/odd-width/%s", formats[i]);
    ct_add(a, formats[i], test_solid);
    ct_add(b, formats[i], test_odd_width);
  }
  static const int even[2] = { 64, 48 }, odd[2] = { 63, 47 };
  ct_add("/capture/jpeg/64x48", even, test_jpeg);
  ct_add("/capture/jpeg/63x47", odd, test_jpeg);
  ct_add_func("/capture/pairing/live", test_pairing_live);
  ct_add_func("/capture/pairing/rates", test_pairing_rates);
  ct_add_func("/capture/wrong-size", test_wrong_size);
  ct_add_func("/capture/bad-description", test_bad_description);
  ct_add_func("/capture/offline/wait-outside-sink", test_offline_wait_outside_sink);
  return g_test_run();
}
