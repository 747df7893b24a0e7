/* test-capture-network.c: network cameras that misbehave (fault), from the local RTSP
 * server rtsp-server.py on 127.0.0.1:
 *  - two senders whose frames of the same instant reach us 90 ms apart (one camera's
 *    encoder or network is slower) pair by their sender timestamps, frame for frame;
 *    on arrival time they do not, and the health message says how far apart they are;
 *  - a sender stopped (SIGSTOP) and resumed: its pair is stalled and reconnected, and
 *    the pair of another sender loses no frame meanwhile.
 * The numbers they print are the fault table of bench/RESULTS.md. */
#include "capture-test-util.h"

#include <math.h>
#include <signal.h>
#include <string.h>

#define FPS 10
#define MS 1000000ull

static char *
rtsp(const CtRtsp *server, const char *mount)
{
  g_autofree char *url = ct_rtsp_url(server, mount);
  return g_strdup_printf("rtspsrc location=%s latency=100 protocols=tcp", url);
}

typedef struct {
  int pairs, same_frame;
  double arrival_ms_sum;       /* left - right arrival (running time) of the pairs */
  CaptureStats before, after;  /* the measured window */
  double seconds;
} Window;

/* Takes every pair for `warmup` s, then measures `seconds` s. */
static void
measure(CapturePair *pair, CaptureNotifier *n, double warmup, double seconds, Window *w)
{
  memset(w, 0, sizeof *w);
  int64_t t0 = g_get_monotonic_time();
  int64_t start = t0 + (int64_t)(warmup * G_USEC_PER_SEC);
  int64_t end = start + (int64_t)(seconds * G_USEC_PER_SEC);
  bool started = false;
  for (;;) {
    int64_t now = g_get_monotonic_time();
    if (!started && now >= start) {
      capture_pair_get_stats(pair, &w->before);
      started = true;
    }
    if (now >= end)
      break;
    uint64_t seen = capture_notifier_get(n);
    const CaptureFrame *l, *r;
    if (!capture_pair_take(pair, &l, &r, NULL, NULL)) {
      capture_notifier_wait(n, seen, MIN(end, now + 50000));
      continue;
    }
    if (started) {
      w->pairs++;
      w->same_frame += fabs(ct_mean(l) - ct_mean(r)) < 4.0;
      w->arrival_ms_sum += ((double)l->pts_ns - (double)r->pts_ns) * 1e-6;
    }
    capture_pair_release(pair, l, r);
  }
  capture_pair_get_stats(pair, &w->after);
  w->seconds = (double)(end - start) / 1e6;
}

static double
pairing_rate(const Window *w)
{
  uint64_t f = MAX(w->after.frames[0] - w->before.frames[0],
                   w->after.frames[1] - w->before.frames[1]);
  return f ? (double)(w->after.pairs - w->before.pairs) / (double)f : 0.0;
}

static void
test_sender_offset(void)
{
  const char *args[] = { "--fps", "10", "L", "R,delay=90", NULL };
  CtRtsp server = { 0 };
  ct_rtsp_start(&server, args);
  g_autofree char *left = rtsp(&server, "L"), *right = rtsp(&server, "R");
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = "offset", .left = left, .right = right, .width = 64, .height = 48, .fps = FPS,
    .tolerance_ns = 5 * MS, .notifier = n,
  };
  /* by the senders' timestamps (clock=auto picks them for RTSP) */
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  const CaptureFrame *l, *r;
  g_assert_true(ct_take(pair, n, 20000, &l, &r, NULL, NULL));
  capture_pair_release(pair, l, r);
  Window w;
  measure(pair, n, 1.0, 6.0, &w);
  double rate = pairing_rate(&w);
  g_test_message("sender clock: %d pairs in %.1f s, %.1f %% of the frames paired, %d of "
                 "them the same frame; the right frames arrived %.1f ms after the left",
                 w.pairs, w.seconds, 100.0 * rate, w.same_frame,
                 w.pairs ? -w.arrival_ms_sum / w.pairs : 0.0);
  g_assert_cmpint(capture_pair_get_clock(pair, CAPTURE_SIDE_LEFT), ==, CAPTURE_CLOCK_SENDER);
  g_assert_cmpint(capture_pair_get_clock(pair, CAPTURE_SIDE_RIGHT), ==, CAPTURE_CLOCK_SENDER);
  g_assert_cmpfloat(rate, >=, 0.9);
  g_assert_cmpint(w.same_frame, ==, w.pairs);
  /* their arrival times (the jitterbuffer's PTS) are far beyond the tolerance */
  g_assert_cmpfloat(-w.arrival_ms_sum / w.pairs, >, 20.0);
  g_clear_pointer(&pair, capture_pair_free);

  /* the same cameras by arrival time: they do not pair, and the operator is told why */
  prm.name = "arrival";
  prm.clock = CAPTURE_CLOCK_ARRIVAL;
  pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  measure(pair, n, 2.0, 5.0, &w);
  rate = pairing_rate(&w);
  CaptureHealth h = { 0 };
  CaptureHealthMessage msgs[CAPTURE_HEALTH_MAX_MESSAGES];
  int k = capture_health_update(&h, "arrival", &w.before, &w.after, w.seconds, FPS, 5 * MS,
                                false, msgs);
  g_test_message("arrival clock: %.1f %% of the frames paired; %s", 100.0 * rate,
                 k ? msgs[0].text : "(no message)");
  g_assert_cmpfloat(rate, <, 0.5);
  g_assert_cmpint(k, ==, 1);
  g_assert_true(h.low_pairing);
  g_assert_nonnull(strstr(msgs[0].text, "ms apart on average"));
  g_free(msgs[0].text);
  g_clear_pointer(&pair, capture_pair_free);
  ct_rtsp_stop(&server);
}

static CapturePair *
start_pair(const char *name, const CtRtsp *server, CaptureNotifier *n)
{
  g_autofree char *left = rtsp(server, "L"), *right = rtsp(server, "R");
  g_autoptr(GError) error = NULL;
  /* max_pending 8: the waiting lists absorb the scheduling delays of a loaded machine
   * (a side's streaming thread held up 200 ms would otherwise cost a frame): what is
   * measured is what A's stall takes from B. */
  CapturePairParams prm = {
    .name = name, .left = left, .right = right, .width = 64, .height = 48, .fps = FPS,
    .tolerance_ns = 5 * MS, .max_pending = 8, .notifier = n, .backoff_min_ms = 100,
    .backoff_max_ms = 400,
  };
  CapturePair *pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  return pair;
}

/* Pair A's sender is stopped for 1.5 s and resumed; pair B, from another sender, runs
 * beside it. */
static void
test_stalled_sender(void)
{
  ct_log_clear();
  const char *args[] = { "--fps", "10", "L,codec=jpeg", "R,codec=jpeg", NULL };
  CtRtsp sa = { 0 }, sb = { 0 };
  ct_rtsp_start(&sa, args);
  ct_rtsp_start(&sb, args);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CapturePair) a = start_pair("A", &sa, n);
  g_autoptr(CapturePair) b = start_pair("B", &sb, n);
  g_assert_true(ct_wait_state(a, CAPTURE_STATE_RUNNING, 20000));
  g_assert_true(ct_wait_state(b, CAPTURE_STATE_RUNNING, 20000));
  /* a second of both running before B's counts are taken: a frame that its side's
   * first frames left without a partner (its partner's side started later, or was before
   * its first sender report) is given up within it, and is not A's doing */
  for (int64_t warm = g_get_monotonic_time() + G_USEC_PER_SEC; g_get_monotonic_time() < warm;) {
    uint64_t seen = capture_notifier_get(n);
    const CaptureFrame *l, *r;
    bool any = false;
    if (capture_pair_take(a, &l, &r, NULL, NULL)) {
      capture_pair_release(a, l, r);
      any = true;
    }
    if (capture_pair_take(b, &l, &r, NULL, NULL)) {
      capture_pair_release(b, l, r);
      any = true;
    }
    if (!any)
      capture_notifier_wait(n, seen, g_get_monotonic_time() + 10000);
  }

  int64_t t0 = g_get_monotonic_time();
  int64_t stop_at = t0 + 2 * G_USEC_PER_SEC, cont_at = stop_at + 1500 * 1000;
  int64_t end = cont_at + 5 * G_USEC_PER_SEC;
  int64_t stopped = 0, resumed = 0, stalled_at = 0, back_at = 0;
  uint64_t b_last_seq = 0;
  int b_pairs = 0, b_gaps = 0;
  CaptureStats b0, b1;
  capture_pair_get_stats(b, &b0);
  for (;;) {
    int64_t now = g_get_monotonic_time();
    if (!stopped && now >= stop_at) {
      g_assert_cmpint(kill(sa.pid, SIGSTOP), ==, 0);
      stopped = g_get_monotonic_time();
    }
    if (stopped && !resumed && now >= cont_at) {
      g_assert_cmpint(kill(sa.pid, SIGCONT), ==, 0);
      resumed = g_get_monotonic_time();
    }
    if (stopped && !stalled_at && capture_pair_get_state(a) == CAPTURE_STATE_STALLED)
      stalled_at = now;
    if (now >= end || (back_at && now >= back_at + 2 * G_USEC_PER_SEC))
      break;
    uint64_t seen = capture_notifier_get(n);
    const CaptureFrame *l, *r;
    uint64_t seq;
    bool any = false;
    if (capture_pair_take(a, &l, &r, NULL, NULL)) {
      if (resumed && !back_at)
        back_at = g_get_monotonic_time();
      capture_pair_release(a, l, r);
      any = true;
    }
    if (capture_pair_take(b, &l, &r, NULL, &seq)) {
      b_gaps += b_last_seq && seq != b_last_seq + 1;
      b_last_seq = seq;
      b_pairs++;
      capture_pair_release(b, l, r);
      any = true;
    }
    if (!any)
      capture_notifier_wait(n, seen, MIN(end, now + 10000));
  }
  capture_pair_get_stats(b, &b1);
  double secs = (double)(g_get_monotonic_time() - t0) / 1e6;
  uint64_t b_lost = b1.unpaired[0] + b1.unpaired[1] - b0.unpaired[0] - b0.unpaired[1] +
                    b1.overwritten - b0.overwritten;
  CaptureStats sa_st;
  capture_pair_get_stats(a, &sa_st);
  g_test_message("stalled sender: stall detected %.0f ms after SIGSTOP (stall_ms %d); pairs "
                 "again %.0f ms after SIGCONT (%.0f ms after SIGSTOP); A: %" G_GUINT64_FORMAT
                 " failures, %" G_GUINT64_FORMAT " stalls. B: %d pairs in %.1f s (%.1f/s), %d "
                 "gaps in its sequence, %" G_GUINT64_FORMAT " frames lost (unpaired %"
                 G_GUINT64_FORMAT "+%" G_GUINT64_FORMAT ", overwritten %" G_GUINT64_FORMAT ")",
                 stalled_at ? (stalled_at - stopped) / 1000.0 : -1.0, 3000 / FPS,
                 back_at ? (back_at - resumed) / 1000.0 : -1.0,
                 back_at ? (back_at - stopped) / 1000.0 : -1.0, sa_st.failures,
                 sa_st.stalls, b_pairs, secs, b_pairs / secs, b_gaps, b_lost,
                 b1.unpaired[0] - b0.unpaired[0], b1.unpaired[1] - b0.unpaired[1],
                 b1.overwritten - b0.overwritten);
  g_assert_cmpint(stalled_at, >, 0);
  g_assert_cmpint(stalled_at - stopped, <, 2 * G_USEC_PER_SEC);
  g_assert_cmpint(back_at, >, 0);
  g_assert_cmpint(back_at - resumed, <, 2 * G_USEC_PER_SEC);
  g_assert_cmpuint(sa_st.stalls, >=, 1);
  g_assert_cmpint(ct_log_count("pair A: left camera stalled: no frame for") +
                  ct_log_count("pair A: right camera stalled: no frame for"), ==, 1);
  g_assert_cmpint(ct_log_count("pair B: source failed"), ==, 0);
  g_assert_cmpint(ct_log_count("pair B: left camera stalled"), ==, 0);
  g_assert_cmpint(ct_log_count("pair B: right camera stalled"), ==, 0);
  /* B untouched: every pair taken, at its rate, and its frames paired: 0 lost in every run
   * on an idle machine (RESULTS.md's fault table); one frame in a run was once lost on a
   * loaded 2-core CI machine (unpaired 0+1: a frame late behind the 100 ms jitterbuffer
   * of one side, which no stall of A's causes), so one is allowed */
  g_assert_cmpint(b_gaps, ==, 0);
  g_assert_cmpuint(b_lost, <=, 1);
  g_assert_cmpuint(b1.failures, ==, 0);
  g_assert_cmpfloat(b_pairs / secs, >, 0.9 * FPS);
  g_clear_pointer(&a, capture_pair_free);
  g_clear_pointer(&b, capture_pair_free);
  ct_rtsp_stop(&sa);
  ct_rtsp_stop(&sb);
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  ct_add_func("/capture/network/sender-offset", test_sender_offset);
  ct_add_func("/capture/network/stalled-sender", test_stalled_sender);
  return g_test_run();
}
