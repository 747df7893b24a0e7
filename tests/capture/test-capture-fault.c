/* test-capture-fault.c: what goes wrong in a stream: corrupt JPEG files in a sequence,
 * a source that ends (reconnect, while an independent pair keeps its rate), a source
 * that can never negotiate (reconnect loop, logged once), a consumer that holds too
 * many frames. */
#include "capture-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#define N_FILES 10
#define TRUNCATED 3
#define GARBAGE 6

static int
level_of(int i)
{
  return 20 + 20 * i;
}

static double
mean_of(const CaptureFrame *f)
{
  double sum = 0;
  for (int y = 0; y < f->height; y++)
    for (int x = 0; x < f->width; x++)
      sum += f->data[(size_t)y * f->stride + x];
  return sum / ((double)f->width * f->height);
}

/* Ten JPEG files of uniform gray levels, one truncated and one garbage, played on both
 * sides by multifilesrc (which gives no timestamps: `identity datarate` does, the same on
 * both sides since they read the same files; sleep-time paces them like a camera). */
static void
test_corrupt_jpeg(void)
{
  ct_log_clear();
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("capture-jpeg-XXXXXX", &error);
  g_assert_no_error(error);
  int w = 64, h = 48;
  g_autofree uint8_t *gray = g_malloc((size_t)w * h);
  GRand *rng = g_rand_new_with_seed(g_test_rand_int());
  for (int i = 0; i < N_FILES; i++) {
    memset(gray, level_of(i), (size_t)w * h);
    size_t size;
    g_autofree uint8_t *jpg = ct_jpeg_gray(gray, w, h, 90, &size);
    if (i == TRUNCATED)
      size /= 2;
    if (i == GARBAGE)
      for (size_t k = 0; k < size; k++)
        jpg[k] = (uint8_t)g_rand_int(rng);
    g_autofree char *path = g_strdup_printf("%s/%02d.jpg", dir, i);
    g_assert_true(g_file_set_contents(path, (const char *)jpg, (gssize)size, &error));
  }
  g_rand_free(rng);

  g_autofree char *desc = g_strdup_printf(
    "multifilesrc location=%s/%%02d.jpg stop-index=%d caps=\"image/jpeg,framerate=30/1\" ! "
    "identity datarate=10000 sleep-time=50000", dir, N_FILES - 1);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  /* max_pending 8: the two sides' streaming threads run apart by a few frames when the
   * machine is loaded; what is counted here is the corrupt files */
  CapturePairParams prm = {
    .name = "jpeg-files", .left = desc, .right = desc, .width = w, .height = h,
    .max_pending = 8, .notifier = n, .backoff_min_ms = 20000,
  };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);

  int taken = 0, last = -1;
  int64_t deadline = g_get_monotonic_time() + 8 * G_USEC_PER_SEC;
  while (g_get_monotonic_time() < deadline) {
    const CaptureFrame *l, *r;
    if (!ct_take(pair, n, 100, &l, &r, NULL, NULL)) {
      if (capture_pair_get_state(pair) == CAPTURE_STATE_RECONNECTING &&
          !capture_pair_take(pair, &l, &r, NULL, NULL))
        break;
      continue;
    }
    double ml = mean_of(l), mr = mean_of(r);
    int i = (int)lround((ml - 20.0) / 20.0);
    g_assert_cmpfloat(fabs(ml - level_of(i)), <=, 1.0);
    g_assert_cmpfloat(fabs(mr - level_of(i)), <=, 1.0);
    g_assert_cmpint(i, !=, TRUNCATED);
    g_assert_cmpint(i, !=, GARBAGE);
    g_assert_cmpint(i, >, last);
    last = i;
    taken++;
    capture_pair_release(pair, l, r);
  }
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_RECONNECTING);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_test_message("files: %d pairs taken of %" G_GUINT64_FORMAT "; frames %" G_GUINT64_FORMAT
                 "/%" G_GUINT64_FORMAT ", corrupt %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                 ", unpaired %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, taken, st.pairs,
                 st.frames[0], st.frames[1], st.corrupt[0], st.corrupt[1], st.unpaired[0],
                 st.unpaired[1]);
  /* The two sources end independently: when one's end of stream tears the pair down
   * before the other's last file has arrived, that last frame is never seen (a camera
   * that ends takes its pair down at once), and the other side's last frame, left without
   * a partner, counts as unpaired; when it arrived but was not matched yet, it is counted
   * as a frame and lost with the pair (at most one frame of one side). Everything before
   * it is counted exactly. */
  guint64 both = MIN(st.frames[0], st.frames[1]);
  guint64 lost = 0;
  for (int s = 0; s < 2; s++) {
    g_assert_cmpuint(st.frames[s], >=, N_FILES - 1);
    g_assert_cmpuint(st.frames[s], <=, N_FILES);
    g_assert_cmpuint(st.corrupt[s], ==, 2);
    g_assert_cmpuint(st.corrupt[s] + st.pairs + st.unpaired[s], <=, st.frames[s]);
    lost += st.frames[s] - (st.corrupt[s] + st.pairs + st.unpaired[s]);
  }
  g_assert_cmpuint(lost, <=, 1);
  g_assert_cmpuint(st.pairs + lost, ==, both - 2);
  g_assert_cmpuint(st.taken + st.overwritten, ==, st.pairs);
  g_assert_cmpuint(st.failures, ==, 1);
  g_assert_cmpint(ct_log_count("counted as corrupt"), ==, 2);
  g_assert_cmpint(ct_log_count("pair jpeg-files: source failed: "), ==, 1);
  g_assert_cmpint(ct_log_count("end of stream; reconnecting in 20000 ms"), ==, 1);
  /* Freed while waiting for the backoff: nothing hangs. */
  g_clear_pointer(&pair, capture_pair_free);

  for (int i = 0; i < N_FILES; i++) {
    g_autofree char *path = g_strdup_printf("%s/%02d.jpg", dir, i);
    g_unlink(path);
  }
  g_rmdir(dir);
}

static char *
live(int fps, const char *extra)
{
  return g_strdup_printf("videotestsrc is-live=true pattern=ball %s ! video/x-raw,"
                         "format=GRAY8,width=64,height=48,framerate=%d/1", extra, fps);
}

/* Pair A's left source ends after 15 frames, again and again; pair B runs beside it. */
static void
test_source_ends(void)
{
  ct_log_clear();
  g_autofree char *ending = live(30, "num-buffers=15");
  g_autofree char *steady = live(30, "");
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams pa = {
    .name = "A", .left = ending, .right = steady, .width = 64, .height = 48,
    .notifier = n, .backoff_min_ms = 300, .backoff_max_ms = 300,
    .tolerance_ns = CT_LIVE_TOLERANCE_NS,
  };
  CapturePairParams pb = pa;
  pb.name = "B";
  pb.left = steady;
  g_autoptr(CapturePair) a = capture_pair_new(&pa, &error);
  g_assert_no_error(error);
  g_autoptr(CapturePair) b = capture_pair_new(&pb, &error);
  g_assert_no_error(error);
  capture_pair_start(a);
  capture_pair_start(b);

  /* One consumer for both, as the GPU thread does it. */
  int64_t t0 = g_get_monotonic_time(), end = t0 + 2600 * 1000;
  int64_t last_b = 0, max_gap_b = 0, outage_us = 0, outage_start = 0;
  int pairs_a = 0, pairs_b = 0, pairs_b_in_outage = 0;
  for (;;) {
    int64_t now = g_get_monotonic_time();
    bool a_down = capture_pair_get_state(a) == CAPTURE_STATE_RECONNECTING;
    if (a_down && !outage_start)
      outage_start = now;
    if (!a_down && outage_start) {
      outage_us += now - outage_start;
      outage_start = 0;
    }
    if (now >= end)
      break;
    uint64_t seen = capture_notifier_get(n);
    const CaptureFrame *l, *r;
    bool any = false;
    if (capture_pair_take(a, &l, &r, NULL, NULL)) {
      pairs_a++;
      capture_pair_release(a, l, r);
      any = true;
    }
    if (capture_pair_take(b, &l, &r, NULL, NULL)) {
      if (last_b)
        max_gap_b = MAX(max_gap_b, now - last_b);
      last_b = now;
      pairs_b++;
      pairs_b_in_outage += a_down;
      capture_pair_release(b, l, r);
      any = true;
    }
    if (!any)
      capture_notifier_wait(n, seen, MIN(end, now + 20000));
  }
  if (outage_start)
    outage_us += g_get_monotonic_time() - outage_start;

  CaptureStats sa, sb;
  capture_pair_get_stats(a, &sa);
  capture_pair_get_stats(b, &sb);
  double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
  g_test_message("A: %d pairs, %" G_GUINT64_FORMAT " failures, %" G_GUINT64_FORMAT
                 " reconnects, down %.2f s of %.2f s", pairs_a, sa.failures, sa.reconnects,
                 (double)outage_us / 1e6, secs);
  g_test_message("B: %d pairs (%.1f/s), %d of them while A was down (%.1f/s), max gap "
                 "%.1f ms", pairs_b, pairs_b / secs, pairs_b_in_outage,
                 pairs_b_in_outage / ((double)outage_us / 1e6), (double)max_gap_b / 1000.0);

  g_assert_cmpuint(sa.failures, >=, 2);
  g_assert_cmpuint(sa.reconnects, >=, 2);
  /* every run that ended after it started paired most of its 15 frames (the right side's
   * thread may start a few frames late on a loaded machine), whatever the time a restart
   * takes there */
  int ended_runs = ct_log_count("pair A: source failed: left: end of stream; reconnecting "
                                "in 300 ms");
  g_assert_cmpint(ended_runs, >=, 1);
  g_assert_cmpint(pairs_a, >=, 8 * ended_runs);
  /* every failure is accounted for with its delay: a warning when it ended a run, a debug
   * line when a restart failed before its run started (a slow start: the short source
   * ended first) */
  g_assert_cmpint(ct_log_count("pair A: source failed: left: end of stream; reconnecting "
                               "in 300 ms") +
                  ct_log_count("pair A: restart failed: left: end of stream; retrying in "
                               "300 ms"), ==, (int)sa.failures);
  g_assert_cmpint(ct_log_count("pair A: capture running"), >=, (int)sa.reconnects);
  g_assert_cmpint(ct_log_count("pair B: source failed"), ==, 0);
  g_assert_cmpint(ct_log_count("pair B: capture running"), ==, 1);
  g_assert_cmpuint(sb.failures, ==, 0);
  /* B keeps its rate, also while A is down. */
  g_assert_cmpfloat(outage_us, >, 500000);
  g_assert_cmpfloat(pairs_b / secs, >, 25.0);
  g_assert_cmpfloat(pairs_b_in_outage / ((double)outage_us / 1e6), >, 22.0);
  g_assert_cmpint(max_gap_b, <, 200000);
}

/* The backoff doubles while runs stay short, and starts again from the minimum after a
 * run longer than backoff_reset_ms. Both pairs' left sources end after 12 frames (0.4 s).
 * A restart that fails before its run starts (a loaded machine: the 12 frames end first)
 * doubles the backoff too and is logged at debug level only, so the warnings show a
 * subsequence of the delays: checked as such, after enough failures. */
static void
test_backoff(void)
{
  ct_log_clear();
  g_autofree char *ending = live(30, "num-buffers=12");
  g_autofree char *steady = live(30, "");
  g_autoptr(GError) error = NULL;
  /* stall_ms far beyond a loaded machine's pauses: the failures are the ends of stream */
  CapturePairParams prm = {
    .name = "grow", .left = ending, .right = steady, .width = 64, .height = 48,
    .backoff_min_ms = 100, .backoff_max_ms = 400, .backoff_reset_ms = 5000,
    .stall_ms = 10000, .tolerance_ns = CT_LIVE_TOLERANCE_NS,
  };
  g_autoptr(CapturePair) grow = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  prm.name = "reset";
  prm.backoff_reset_ms = 200;
  g_autoptr(CapturePair) reset = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(grow);
  capture_pair_start(reset);
  /* Runs of 0.4 s: grow fails at about 0.4, 0.9, 1.5 (next 2.3) s; reset at 0.4, 0.9,
   * 1.4, 1.9 s. Wait for four failures of each and a logged one at the maximum (up to
   * 60 s: many times that on a loaded machine). */
  CaptureStats sg, sr;
  int64_t deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  do {
    g_usleep(50000);
    capture_pair_get_stats(grow, &sg);
    capture_pair_get_stats(reset, &sr);
  } while ((sg.failures < 4 || sr.failures < 4 ||
            ct_log_count("pair grow: source failed: left: end of stream; reconnecting in "
                         "400 ms") < 1 ||
            ct_log_count("pair reset: source failed") < 2) &&
           g_get_monotonic_time() < deadline);
  capture_pair_stop(grow);
  capture_pair_stop(reset);
  g_assert_cmpuint(sg.failures, >=, 4);
  g_assert_cmpuint(sr.failures, >=, 4);
  /* grow: the first failure ends a run, at the minimum; the logged delays grow and stop
   * at the maximum */
  int g100 = ct_log_count("pair grow: source failed: left: end of stream; reconnecting in 100 ms");
  int g200 = ct_log_count("pair grow: source failed: left: end of stream; reconnecting in 200 ms");
  int g400 = ct_log_count("pair grow: source failed: left: end of stream; reconnecting in 400 ms");
  g_assert_cmpint(g100, ==, 1);
  g_assert_cmpint(g200, <=, 1);
  g_assert_cmpint(g100 + g200 + g400, ==, ct_log_count("pair grow: source failed"));
  g_assert_cmpint(g400, >=, 1);   /* the fourth failure's delay is the maximum */
  /* reset: a run longer than 200 ms starts again from the minimum; only a restart that
   * failed before its run may have doubled it */
  int resets = ct_log_count("pair reset: source failed");
  g_assert_cmpint(resets, >=, 2);
  int r100 = ct_log_count("pair reset: source failed: left: end of stream; "
                          "reconnecting in 100 ms");
  g_assert_cmpint(r100, >=, resets - (int)(sr.failures - (uint64_t)resets));
  g_assert_cmpint(r100, >=, 1);
  g_assert_cmpint(capture_pair_get_state(grow), ==, CAPTURE_STATE_STOPPED);
}

/* A camera that is not there: every start fails; the pair retries with growing backoff
 * and says so once. */
static void
test_missing_camera(void)
{
  ct_log_clear();
  g_autofree char *good = live(30, "");
  const char *bad = "filesrc location=/nonexistent/stereod-camera.mjpg";
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = "missing", .left = bad, .right = good, .width = 64, .height = 48, .notifier = n,
    .backoff_min_ms = 40, .backoff_max_ms = 160,
  };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  const CaptureFrame *l, *r;
  g_assert_false(ct_take(pair, n, 1000, &l, &r, NULL, NULL));
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_test_message("missing camera: %" G_GUINT64_FORMAT " failures in 1 s",
                 st.failures);
  /* 40 + 80 + 160 + 160 + ... ms: at least 4 failures, at most ~10. */
  g_assert_cmpuint(st.failures, >=, 4);
  g_assert_cmpuint(st.failures, <=, 12);
  g_assert_cmpuint(st.reconnects + 1, >=, st.failures);
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_RECONNECTING);
  g_assert_cmpint(ct_log_count("pair missing: source failed: left: "), ==, 1);
  g_assert_cmpint(ct_log_count("stereod-camera.mjpg"), >=, 1);
  g_assert_cmpint(ct_log_count("pair missing: restart failed"), ==, (int)st.failures - 1);
  g_assert_cmpint(ct_log_count("retrying in 160 ms"), >=, 1);
}

/* A consumer that holds every frame: the capture drops (starved) instead of growing,
 * and recovers when the frames come back. */
static void
test_starved(void)
{
  g_autofree char *desc = live(30, "");
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) pair = ct_pair_start("greedy", desc, desc, 64, 48, n);
  const CaptureFrame *held[8][2];
  int k = 0;
  /* held_pairs = 1, max_pending = 2: 5 buffers per side, so 5 pairs drain the pool. */
  while (k < 5) {
    g_assert_true(ct_take(pair, n, 10000, &held[k][0], &held[k][1], NULL, NULL));
    k++;
  }
  g_usleep(400000);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_assert_cmpuint(st.starved[0], >=, 5);
  g_assert_cmpuint(st.starved[1], >=, 5);
  g_assert_false(capture_pair_take(pair, &held[k][0], &held[k][1], NULL, NULL));
  for (int i = 0; i < k; i++)
    capture_pair_release(pair, held[i][0], held[i][1]);
  const CaptureFrame *l, *r;
  g_assert_true(ct_take(pair, n, 10000, &l, &r, NULL, NULL));
  capture_pair_release(pair, l, r);
  g_assert_cmpint(capture_pair_get_state(pair), ==, CAPTURE_STATE_RUNNING);
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  ct_add_func("/capture/fault/corrupt-jpeg", test_corrupt_jpeg);
  ct_add_func("/capture/fault/source-ends", test_source_ends);
  ct_add_func("/capture/fault/backoff", test_backoff);
  ct_add_func("/capture/fault/missing-camera", test_missing_camera);
  ct_add_func("/capture/fault/starved", test_starved);
  return g_test_run();
}
