/* test-capture-clock.c: the pure parts of the capture clocks and health (unit): NTP
 * timestamps, the sender-report mapping, the shared replay start under concurrent first
 * frames, the nearest-frame distances of the matcher, and the health states and their
 * messages. */
#include "capture-test-util.h"
#include "daemon/capture-private.h"

#include <string.h>

#define MS 1000000ll
#define S 1000000000ll

static void
test_ntp(void)
{
  /* 2026-12-01 00:00:00 UTC = 1796083200 s since 1970; + 0.25 s */
  uint64_t unix_s = 1796083200ull;
  uint64_t ntp = ((unix_s + CAPTURE_NTP_UNIX_OFFSET_S) << 32) | 0x40000000u;
  g_assert_cmpuint(capture_ntp64_to_unix_ns(ntp), ==, unix_s * S + 250 * MS);
  /* the largest fraction stays below the next second */
  ntp = ((unix_s + CAPTURE_NTP_UNIX_OFFSET_S) << 32) | 0xffffffffu;
  g_assert_cmpuint(capture_ntp64_to_unix_ns(ntp), ==, unix_s * S + 999999999ull);
  /* before 1970: not a camera's time */
  g_assert_cmpuint(capture_ntp64_to_unix_ns((uint64_t)1000 << 32), ==, 0);
  g_assert_cmpuint(capture_ntp64_to_unix_ns(0), ==, 0);
}

static void
test_sender_mapping(void)
{
  uint64_t cap, sr_unix = 1796083200ull * S;
  /* 0.5 s (45000 ticks at 90 kHz) after the report, and before it */
  g_assert_true(capture_rtp_to_unix(sr_unix, 1000000, 1045000, 90000, &cap));
  g_assert_cmpuint(cap, ==, sr_unix + 500 * MS);
  g_assert_true(capture_rtp_to_unix(sr_unix, 1045000, 1000000, 90000, &cap));
  g_assert_cmpuint(cap, ==, sr_unix - 500 * MS);
  /* across the 32-bit wrap of the RTP clock */
  g_assert_true(capture_rtp_to_unix(sr_unix, 0xffffff00u, 0x00000100u, 90000, &cap));
  g_assert_cmpuint(cap, ==, sr_unix + 512 * S / 90000);
  g_assert_false(capture_rtp_to_unix(sr_unix, 0, 0, 0, &cap));             /* no rate */
  g_assert_false(capture_rtp_to_unix(1 * S, 90000 * 2, 0, 90000, &cap));  /* before 1970 */

  /* RTP timestamps by PTS: one entry per timestamp, the nearest PTS within the limit */
  CaptureRtpHistory h = { 0 };
  uint32_t rtp = 0;
  g_assert_false(capture_rtp_history_find(&h, 0, 1 * S, &rtp));
  for (int k = 0; k < 100; k++)
    for (int packet = 0; packet < 3; packet++)   /* three packets per frame */
      capture_rtp_history_add(&h, (uint64_t)(k * 40 * MS + packet * 100000), 3600u * k);
  g_assert_cmpint(h.count, ==, CAPTURE_RTP_HISTORY);
  g_assert_true(capture_rtp_history_find(&h, 99 * 40 * MS + 150000, 20 * MS, &rtp));
  g_assert_cmpuint(rtp, ==, 3600u * 99);
  g_assert_true(capture_rtp_history_find(&h, 60 * 40 * MS - 5 * MS, 20 * MS, &rtp));
  g_assert_cmpuint(rtp, ==, 3600u * 60);
  g_assert_false(capture_rtp_history_find(&h, 10 * 40 * MS, 20 * MS, &rtp));  /* too old */
  g_assert_false(capture_rtp_history_find(&h, 200 * 40 * MS, 20 * MS, &rtp));
}

/* The sender reports: a mapping is used once a second report agrees with it; a report
 * off by most of a frame (a sender's first) is never used; a clock step is taken when
 * the next report confirms it, the mapping before it kept meanwhile. */
static void
test_sender_clock(void)
{
  CaptureSenderClock c;
  capture_sender_clock_reset(&c);
  uint64_t cap, t0 = 1796083200ull * S;
  int64_t dev = 1;
  g_assert_false(capture_sender_clock_map(&c, 0, &cap));
  g_assert_false(capture_sender_clock_take_latest(&c));
  /* the first report 93 ms late for its RTP time: kept, not used */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 93 * MS, 900000, 90000, &dev), ==,
                  CAPTURE_SR_FIRST);
  g_assert_cmpint(dev, ==, 0);
  g_assert_false(capture_sender_clock_map(&c, 900000, &cap));
  /* the second (0.5 s on, on time) disagrees by 93 ms: still nothing in use */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 500 * MS, 945000, 90000, &dev), ==,
                  CAPTURE_SR_DISAGREED);
  g_assert_cmpint(dev, ==, -93 * (int64_t)MS);
  g_assert_false(capture_sender_clock_map(&c, 945000, &cap));
  /* the third agrees with the second (within 1 ms + 500 ppm: 0.4 ms off after 1 s) */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 1500 * MS + 400000, 1035000, 90000,
                                              &dev), ==, CAPTURE_SR_AGREED);
  g_assert_cmpint(dev, ==, 400000);
  g_assert_true(capture_sender_clock_map(&c, 1035000 + 9000, &cap));   /* 0.1 s on */
  g_assert_cmpuint(cap, ==, t0 + 1600 * MS + 400000);
  /* 1.6 ms off after 1 s: outside 1 ms + 0.5 ms; the mapping in use stays */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 2500 * MS + 2000000, 1125000, 90000,
                                              &dev), ==, CAPTURE_SR_DISAGREED);
  g_assert_cmpint(dev, ==, 1600000);
  g_assert_true(capture_sender_clock_map(&c, 1125000, &cap));
  g_assert_cmpuint(cap, ==, t0 + 2500 * MS + 400000);
  /* a step of the sender's clock (+40 ms), confirmed by the next report: taken */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 3540 * MS, 1215000, 90000, &dev), ==,
                  CAPTURE_SR_DISAGREED);
  g_assert_true(capture_sender_clock_map(&c, 1215000, &cap));
  g_assert_cmpuint(cap, ==, t0 + 3500 * MS + 400000);
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 4540 * MS, 1305000, 90000, &dev), ==,
                  CAPTURE_SR_AGREED);
  g_assert_true(capture_sender_clock_map(&c, 1305000, &cap));
  g_assert_cmpuint(cap, ==, t0 + 4540 * MS);
  /* another clock rate never agrees */
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 5540 * MS, 1395000, 48000, &dev), ==,
                  CAPTURE_SR_DISAGREED);
  g_assert_cmpint(capture_sender_clock_report(&c, t0 + 6540 * MS, 1443000, 48000, &dev), ==,
                  CAPTURE_SR_AGREED);
  g_assert_true(capture_sender_clock_map(&c, 1443000 + 4800, &cap));
  g_assert_cmpuint(cap, ==, t0 + 6640 * MS);
  /* one report only: taken unconfirmed on request (the start timeout) */
  capture_sender_clock_reset(&c);
  capture_sender_clock_report(&c, t0, 0xfffff000u, 90000, NULL);
  g_assert_false(capture_sender_clock_map(&c, 0xfffff000u, &cap));
  g_assert_true(capture_sender_clock_take_latest(&c));
  g_assert_true(capture_sender_clock_map(&c, 0x00001000u, &cap));   /* across the wrap */
  g_assert_cmpuint(cap, ==, t0 + 8192ull * S / 90000);
}

typedef struct {
  CaptureTimebase *tb;
  uint64_t proposal, got;
} Racer;

static gpointer
race(gpointer data)
{
  Racer *r = data;
  r->got = capture_timebase_start(r->tb, r->proposal);
  return NULL;
}

/* The first frame of any pair sets the start; every other pair gets the same. */
static void
test_timebase(void)
{
  for (int round = 0; round < 50; round++) {
    g_autoptr(CaptureTimebase) tb = capture_timebase_new();
    Racer r[8];
    GThread *t[8];
    for (int i = 0; i < 8; i++) {
      r[i] = (Racer){ tb, 1000 + (uint64_t)i, 0 };
      t[i] = g_thread_new("racer", race, &r[i]);
    }
    for (int i = 0; i < 8; i++)
      g_thread_join(t[i]);
    for (int i = 1; i < 8; i++)
      g_assert_cmpuint(r[i].got, ==, r[0].got);
    g_assert_cmpuint(r[0].got, >=, 1000);
    g_assert_cmpuint(r[0].got, <, 1008);
    g_assert_cmpuint(capture_timebase_start(tb, 5), ==, r[0].got);
  }
}

/* ---------------------------------------------------------------- nearest frames */

typedef struct {
  CaptureMatcher m;
  CaptureBuf bufs[64];
  int n;
  int64_t sum;
  int count;
} Offsets;

static void
push(Offsets *t, CaptureSide side, int64_t ms)
{
  CaptureBuf *b = &t->bufs[t->n++];
  memset(b, 0, sizeof *b);
  b->side = side;
  b->frame.capture_ns = (uint64_t)(10 * S + ms * MS);
  CaptureMatchResult res;
  capture_matcher_push(&t->m, b, &res);
  for (int i = 0; i < res.n_offsets; i++) {
    t->sum += res.offset_ns[i];
    t->count++;
  }
}

/* Right frames 90 ms after the left ones at 10 frames/s: the nearest left frame of every
 * right frame is the next left one, 10 ms later, and the other way round. */
static void
test_offsets(void)
{
  Offsets t = { 0 };
  capture_matcher_init(&t.m, 2, 5 * MS);
  push(&t, CAPTURE_SIDE_RIGHT, -10);   /* so that every frame has frames on both sides */
  for (int k = 0; k < 10; k++) {
    push(&t, CAPTURE_SIDE_LEFT, 100 * k);
    push(&t, CAPTURE_SIDE_RIGHT, 100 * k + 90);
  }
  g_assert_cmpint(t.count, ==, 20);   /* all but the last frame */
  g_assert_cmpint(t.sum / t.count, ==, 10 * MS);   /* left 10 ms after the nearest right */

  /* In step within 1 ms: the nearest is the partner. */
  t = (Offsets){ 0 };
  capture_matcher_init(&t.m, 2, 5 * MS);
  for (int k = 0; k < 10; k++) {
    push(&t, CAPTURE_SIDE_RIGHT, 100 * k);
    push(&t, CAPTURE_SIDE_LEFT, 100 * k + 1);
  }
  g_assert_cmpint(t.sum / t.count, ==, 1 * MS);
}

/* ---------------------------------------------------------------- health */

static void
interval(CaptureStats *before, CaptureStats *now, uint64_t left, uint64_t right,
         uint64_t pairs, int64_t offset_ms)
{
  *before = *now;
  now->frames[0] += left;
  now->frames[1] += right;
  now->pairs += pairs;
  now->unpaired[0] += left - pairs;
  now->unpaired[1] += right - pairs;
  now->offset_sum_ns += offset_ms * MS * (int64_t)(left + right);
  now->offset_count += left + right;
}

static int
update(CaptureHealth *h, const CaptureStats *a, const CaptureStats *b, bool judge,
       const char *want0, const char *want1)
{
  CaptureHealthMessage m[CAPTURE_HEALTH_MAX_MESSAGES];
  int n = capture_health_update(h, "p", a, b, 10.0, 25.0, 5 * MS, judge, m);
  const char *want[2] = { want0, want1 };
  for (int i = 0; i < n; i++) {
    g_test_message("%s", m[i].text);
    if (i < 2 && want[i])
      g_assert_nonnull(strstr(m[i].text, want[i]));
    g_free(m[i].text);
  }
  return n;
}

static void
test_health(void)
{
  CaptureHealth h = { 0 };
  CaptureStats a = { 0 }, b = { 0 };
  /* good: 25 fps both, all paired */
  interval(&a, &b, 250, 250, 250, 0);
  g_assert_cmpint(update(&h, &a, &b, true, NULL, NULL), ==, 0);
  /* pairs under half: one warning with the distance, once */
  interval(&a, &b, 250, 250, 60, -12);
  g_assert_cmpint(update(&h, &a, &b, true, "only 24 % of the frames pair",
                         NULL), ==, 1);
  interval(&a, &b, 250, 250, 60, -12);
  g_assert_cmpint(update(&h, &a, &b, true, NULL, NULL), ==, 0);
  g_assert_true(h.low_pairing);
  interval(&a, &b, 250, 250, 240, 0);
  g_assert_cmpint(update(&h, &a, &b, true, "pairing recovered", NULL), ==, 1);
  g_assert_false(h.low_pairing);
  /* the right camera at 20 fps (20 % off): judged only when asked */
  interval(&a, &b, 250, 200, 200, 0);
  g_assert_cmpint(update(&h, &a, &b, false, NULL, NULL), ==, 0);
  g_assert_cmpint(update(&h, &a, &b, true, "right camera delivers 20.0 frames/s", NULL),
                  ==, 1);
  interval(&a, &b, 250, 200, 200, 0);
  g_assert_cmpint(update(&h, &a, &b, true, NULL, NULL), ==, 0);
  /* 9 % off is within the 10 % */
  interval(&a, &b, 250, 228, 228, 0);
  g_assert_cmpint(update(&h, &a, &b, true, "right camera back at 22.8", NULL), ==, 1);
  /* too few frames to judge the pairing (a stalled camera has its own warning) */
  interval(&a, &b, 250, 2, 0, 0);
  g_assert_cmpint(update(&h, &a, &b, false, NULL, NULL), ==, 0);
  g_assert_false(h.low_pairing);
  /* both low pairing and a slow camera: two messages in one interval */
  interval(&a, &b, 100, 250, 20, 30);
  g_assert_cmpint(update(&h, &a, &b, true, "only 8 %", "left camera delivers 10.0"), ==, 2);
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  ct_add_func("/capture/clock/ntp", test_ntp);
  ct_add_func("/capture/clock/sender-mapping", test_sender_mapping);
  ct_add_func("/capture/clock/sender-clock", test_sender_clock);
  ct_add_func("/capture/clock/timebase", test_timebase);
  ct_add_func("/capture/clock/offsets", test_offsets);
  ct_add_func("/capture/health", test_health);
  return g_test_run();
}
