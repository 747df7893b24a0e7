/* test-daemon-metrics: stereod's metrics (daemon/metrics.h) served on an ephemeral port:
 * every family and series there, counters that follow the capture's counts and never go
 * back, the state gauge, the histograms; the left pictures: 404 for another pair, 503
 * before one was copied, wanted only after a request and not again within 0.1 s, a
 * frame of another size ignored, and, with a thread offering uniform frames as fast as
 * it can, every picture served is one whole frame (never two halves). */
#include <libsoup/soup.h>
#include <string.h>

#include "daemon/metrics.h"

static const char *const states[] = { "stopped", "starting", "running", "stalled", NULL };

static guint
get(SoupSession *session, const char *url, GBytes **body)
{
  g_autoptr(SoupMessage) msg = soup_message_new("GET", url);
  g_autoptr(GError) error = NULL;
  GBytes *b = soup_session_send_and_read(session, msg, NULL, &error);
  g_assert_no_error(error);
  if (body)
    *body = b;
  else
    g_bytes_unref(b);
  return soup_message_get_status(msg);
}

static char *
text_of(GBytes *b)
{
  return g_strndup(g_bytes_get_data(b, NULL), g_bytes_get_size(b));
}

typedef struct {
  DaemonPairMetrics *pair;
  gint stop;
  int offered;
} Offerer;

static gpointer
offer_loop(gpointer data)
{
  Offerer *o = data;
  uint8_t frame[64 * 48];
  for (int k = 0; !g_atomic_int_get(&o->stop); k++) {
    memset(frame, k % 251, sizeof frame);
    /* as if every offer were 0.1 s after the previous one */
    daemon_metrics_left_offer(o->pair, frame, 64, 48, 64,
                              g_get_monotonic_time() + (gint64)k * 100000);
    o->offered++;
  }
  return NULL;
}

static void
test_daemon_metrics(void)
{
  const char *names[] = { "west", "east" };
  const int w[] = { 64, 64 }, h[] = { 48, 48 };
  g_autoptr(GError) error = NULL;
  DaemonMetricsParams p = { .address = "0", .n_pairs = 2, .pairs = names, .widths = w,
                            .heights = h, .states = states };
  g_autoptr(DaemonMetrics) m = daemon_metrics_new(&p, &error);
  g_assert_no_error(error);
  g_autofree char *url = daemon_metrics_get_url(m);
  g_autoptr(SoupSession) session = soup_session_new_with_options("proxy-resolver", NULL, NULL);

  DaemonPairMetrics *west = daemon_metrics_pair(m, 0);
  DaemonCaptureCounts c = { .camera = { 10, 9 }, .corrupt = { 1, 0 }, .paired = 8,
                            .dropped = { [DAEMON_DROP_UNPAIRED] = 2 }, .reconnects = 1 };
  daemon_metrics_capture(west, &c);
  c.camera[0] = 5;   /* a smaller count (never: the capture's counts grow) is not taken */
  daemon_metrics_capture(west, &c);
  daemon_metrics_submitted(west);
  daemon_metrics_published(west, 0.04, 0.002);
  daemon_metrics_state(west, "running");
  daemon_metrics_rates(west, 25, 24.5, 24);
  GBytes *body = NULL;
  g_assert_cmpuint(get(session, url, &body), ==, 200);
  g_autofree char *text = text_of(body);
  g_bytes_unref(body);
  const char *expected[] = {
    "stereod_build_info{version=\"",
    "stereod_camera_frames_total{pair=\"west\",camera=\"left\"} 10\n",
    "stereod_camera_frames_total{pair=\"west\",camera=\"right\"} 9\n",
    "stereod_camera_frames_corrupt_total{pair=\"west\",camera=\"left\"} 1\n",
    "stereod_frames_paired_total{pair=\"west\"} 8\n",
    "stereod_frames_submitted_total{pair=\"west\"} 1\n",
    "stereod_frames_published_total{pair=\"west\"} 1\n",
    "stereod_frames_published_total{pair=\"east\"} 0\n",
    "stereod_frames_dropped_total{pair=\"west\",cause=\"unpaired\"} 2\n",
    "stereod_frames_dropped_total{pair=\"west\",cause=\"gpu_behind\"} 0\n",
    "stereod_frames_dropped_total{pair=\"east\",cause=\"starved\"} 0\n",
    "stereod_reconnects_total{pair=\"west\"} 1\n",
    "stereod_stalls_total{pair=\"west\"} 0\n",
    "stereod_pair_state{pair=\"west\",state=\"running\"} 1\n",
    "stereod_pair_state{pair=\"west\",state=\"stalled\"} 0\n",
    "stereod_frames_per_second{pair=\"west\",stage=\"out\"} 24\n",
    "stereod_capture_to_publish_seconds_count{pair=\"west\"} 1\n",
    "stereod_capture_to_publish_seconds_sum{pair=\"west\"} 0.04\n",
    "stereod_gpu_seconds_bucket{pair=\"west\",le=\"+Inf\"} 1\n",
    "# TYPE stereod_gpu_seconds histogram\n",
  };
  for (guint i = 0; i < G_N_ELEMENTS(expected); i++)
    if (!strstr(text, expected[i]))
      g_error("not served: %s", expected[i]);

  /* left pictures */
  g_autofree char *left_url = g_strdup_printf("%.*sleft.pgm?pair=west",
                                              (int)(strlen(url) - strlen("metrics")), url);
  g_autofree char *other_url = g_strdup_printf("%.*sleft.pgm?pair=north",
                                               (int)(strlen(url) - strlen("metrics")), url);
  gint64 now = g_get_monotonic_time();
  g_assert_false(daemon_metrics_left_wanted(west, now));
  g_assert_cmpuint(get(session, other_url, NULL), ==, 404);
  g_assert_cmpuint(get(session, left_url, NULL), ==, 503);
  now = g_get_monotonic_time();
  g_assert_true(daemon_metrics_left_wanted(west, now));
  uint8_t frame[64 * 48 + 64];
  memset(frame, 7, sizeof frame);
  daemon_metrics_left_offer(west, frame, 32, 48, 64, now);   /* another size: ignored */
  g_assert_cmpuint(get(session, left_url, NULL), ==, 503);
  daemon_metrics_left_offer(west, frame, 64, 48, 65, now);   /* rows 65 bytes apart */
  g_assert_false(daemon_metrics_left_wanted(west, now + 1000));
  g_assert_cmpuint(get(session, left_url, &body), ==, 200);
  gsize n;
  const char *pgm = g_bytes_get_data(body, &n);
  g_assert_cmpuint(n, ==, strlen("P5\n64 48\n255\n") + 64 * 48);
  g_assert_cmpmem(pgm, strlen("P5\n64 48\n255\n"), "P5\n64 48\n255\n", strlen("P5\n64 48\n255\n"));
  g_bytes_unref(body);

  /* whole frames only, while a thread offers as fast as it can */
  Offerer o = { .pair = west };
  GThread *t = g_thread_new("offer", offer_loop, &o);
  for (int k = 0; k < 200; k++) {
    g_assert_cmpuint(get(session, left_url, &body), ==, 200);
    const uint8_t *px = (const uint8_t *)g_bytes_get_data(body, &n) + strlen("P5\n64 48\n255\n");
    for (int i = 1; i < 64 * 48; i++)
      if (px[i] != px[0])
        g_error("request %d: a picture of two frames (%d and %d)", k, px[0], px[i]);
    g_bytes_unref(body);
  }
  g_atomic_int_set(&o.stop, 1);
  g_thread_join(t);
  g_assert_cmpint(o.offered, >, 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/daemon-metrics", test_daemon_metrics);
  return g_test_run();
}
