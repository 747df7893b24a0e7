/* test-service-sources.c: stereod as a process on the sources of a stadium, read
 * through libstereod-client:
 *  - offline replay of a 50-frame recording pair (MKV, made here with gst-launch):
 *    50 pairs published, capture times 40 ms apart, exit 0; the same paced by
 *    [daemon] offline_speed (no faster than its lower bound);
 *  - the commented example groups of config/stereod.conf, run as written with only their
 *    addresses, paths and size replaced: [pair north-1] against the local RTSP test
 *    server (tests/capture/rtsp-server.py), [pair replay-west] offline on recordings;
 *  - a camera that cannot be reached at start: stereod runs on (its pair reconnects)
 *    while another pair publishes;
 *  - --check-config builds and links the pipelines: a missing element is exit 78 with
 *    "FILE: [pair NAME] right: ...".
 * The daemon's path comes from STEREOD, config/stereod.conf's from STEREOD_CONF. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <gio/gio.h>
#include <stereod/client.h>

#include "tests/capture/capture-test-util.h"

#define W 160
#define H 96

static char *tmp_dir;

static char *
tmp_path(const char *name)
{
  return g_build_filename(tmp_dir, name, NULL);
}

static void
gst_launch(const char *pipeline)
{
  g_autofree char *cmd = g_strdup_printf("gst-launch-1.0 -q %s", pipeline);
  g_autofree char *err = NULL;
  int status = 0;
  g_assert_true(g_spawn_command_line_sync(cmd, NULL, &err, &status, NULL));
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s failed: %s", cmd, err);
}

/* Two recordings of a textured clip (the same ball pattern on both sides, so the
 * filter has something to match): MKV and MP4, 50 frames at 25 frames/s. */
static void
make_recordings(void)
{
  const char *src = "videotestsrc num-buffers=50 pattern=ball ! "
                    "video/x-raw,format=I420,width=160,height=96,framerate=25/1";
  g_autofree char *mkv = tmp_path("left.mkv"), *mp4 = tmp_path("right.mp4");
  g_autofree char *a = g_strdup_printf("%s ! x264enc ! matroskamux ! filesink location=%s",
                                       src, mkv);
  g_autofree char *b = g_strdup_printf("%s ! x264enc ! mp4mux ! filesink location=%s", src, mp4);
  gst_launch(a);
  gst_launch(b);
}

/* ---------------------------------------------------------------- the daemon */

typedef struct {
  GSubprocess *proc;
  GInputStream *err;
  GString *log;
  pid_t pid;
} Daemon;

static void
child_setup(gpointer data)
{
  prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static void
daemon_read_log(Daemon *d)
{
  char buf[4096];
  for (;;) {
    gssize n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(d->err), buf,
                                                        sizeof buf, NULL, NULL);
    if (n <= 0)
      return;
    g_string_append_len(d->log, buf, n);
  }
}

static void
daemon_start(Daemon *d, const char *config_text, const char *name, const char *extra_arg)
{
  g_autofree char *conf = tmp_path(name);
  g_assert_true(g_file_set_contents(conf, config_text, -1, NULL));
  GError *error = NULL;
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup(l, child_setup, NULL, NULL);
  d->proc = g_subprocess_launcher_spawn(l, &error, g_getenv("STEREOD"), "--config", conf,
                                        extra_arg, NULL);
  g_assert_no_error(error);
  d->pid = (pid_t)g_ascii_strtoll(g_subprocess_get_identifier(d->proc), NULL, 10);
  d->err = g_subprocess_get_stderr_pipe(d->proc);
  d->log = g_string_new(NULL);
}

static void
on_exited(GObject *proc, GAsyncResult *res, gpointer data)
{
  g_subprocess_wait_finish(G_SUBPROCESS(proc), res, NULL);
  *(bool *)data = true;
}

/* Waits for the daemon to exit (after SIGTERM when `term`), `seconds` at most, and
 * returns its exit status. */
static int
daemon_wait(Daemon *d, bool term, double seconds)
{
  if (term)
    g_subprocess_send_signal(d->proc, SIGTERM);
  bool done = false;
  g_subprocess_wait_async(d->proc, NULL, on_exited, &done);
  int64_t end = g_get_monotonic_time() + (int64_t)(seconds * G_USEC_PER_SEC);
  while (!done && g_get_monotonic_time() < end) {
    daemon_read_log(d);
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(10000);
  }
  if (!done) {
    g_subprocess_force_exit(d->proc);
    g_error("stereod did not exit in %.0f s; log:\n%s", seconds, d->log->str);
  }
  daemon_read_log(d);
  g_test_message("stereod log:\n%s", d->log->str);
  return g_subprocess_get_if_exited(d->proc) ? g_subprocess_get_exit_status(d->proc) : -1;
}

static void
daemon_free(Daemon *d)
{
  g_clear_object(&d->proc);
  g_string_free(d->log, TRUE);
}

/* The ring of `pair` written by `d`, waiting up to 60 s for it. */
static StereodClient *
open_ring(Daemon *d, const char *pair)
{
  int64_t end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  for (;;) {
    StereodClient *c = NULL;
    if (stereod_client_open(pair, &c) == 0) {
      if (stereod_client_get_writer_pid(c) == d->pid)
        return c;
      stereod_client_close(c);
    }
    daemon_read_log(d);
    if (g_get_monotonic_time() > end)
      g_error("no ring %s; log:\n%s", pair, d->log->str);
    g_usleep(20000);
  }
}

/* Reads the ring until it closes or `seconds` pass: frame numbers and capture times
 * grow; returns how many were read, the last frame number in *last. */
static int
read_ring(Daemon *d, StereodClient *c, double seconds, uint64_t *last_number,
          uint64_t *min_step_ns)
{
  StereodFrame f = STEREOD_FRAME_INIT;
  uint64_t counter = 0, number = 0, capture = 0;
  int n = 0;
  *min_step_ns = UINT64_MAX;
  int64_t end = g_get_monotonic_time() + (int64_t)(seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    daemon_read_log(d);
    int r = stereod_client_wait(c, counter, 100000000, &counter);
    if (r == -ETIMEDOUT)
      continue;
    if (r == -EPIPE)
      break;
    g_assert_cmpint(r, ==, 0);
    r = stereod_client_read_latest(c, &f);
    if (r == -EPIPE)
      break;
    g_assert_cmpint(r, ==, 0);
    counter = f.counter;
    g_assert_cmpuint(f.frame_number, >, number);
    g_assert_cmpuint(f.capture_ns, >, capture);
    if (number && f.frame_number == number + 1)
      *min_step_ns = MIN(*min_step_ns, f.capture_ns - capture);
    number = f.frame_number;
    capture = f.capture_ns;
    n++;
  }
  stereod_frame_clear(&f);
  *last_number = number;
  return n;
}

static char *
group(const char *name, const char *left, const char *right, const char *extra)
{
  return g_strdup_printf("[pair %s]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\nfps=25\n"
                         "max_disparity=30\n%s", name, left, right, W, H, extra);
}

/* ---------------------------------------------------------------- tests */

/* The 50-frame recording pair offline, `daemon_keys` added to [daemon]: every frame
 * published, in order, 40 ms of capture time apart; returns the seconds from the
 * daemon's start to its exit. */
static double
run_offline(const char *daemon_keys)
{
  g_autofree char *mkv = tmp_path("left.mkv"), *mp4 = tmp_path("right.mp4");
  g_autofree char *left = g_strdup_printf("filesrc location=%s ! matroskademux", mkv);
  g_autofree char *right = g_strdup_printf("filesrc location=%s ! qtdemux", mp4);
  g_autofree char *g = group("svc-offline", left, right, "");
  g_autofree char *conf = g_strdup_printf("[daemon]\nmode=offline\nstats_interval=2\n%s%s",
                                          daemon_keys, g);
  Daemon d;
  int64_t t0 = g_get_monotonic_time();
  daemon_start(&d, conf, "offline.conf", NULL);
  StereodClient *c = open_ring(&d, "svc-offline");
  uint64_t last, step;
  int read = read_ring(&d, c, 170.0, &last, &step);
  int status = daemon_wait(&d, false, 30.0);
  double wall_s = (g_get_monotonic_time() - t0) * 1e-6;
  uint64_t published = stereod_client_get_counter(c);
  g_test_message("offline: %" G_GUINT64_FORMAT " frames published, %d read, last frame %"
                 G_GUINT64_FORMAT ", smallest capture step %.1f ms", published, read, last,
                 step == UINT64_MAX ? -1.0 : step * 1e-6);
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpuint(published, ==, 50);
  g_assert_cmpuint(last, ==, 50);
  if (step != UINT64_MAX)
    g_assert_cmpuint(step, ==, 40000000);   /* the recording's 25 frames/s */
  g_assert_true(stereod_client_is_closed(c));
  g_assert_nonnull(strstr(d.log->str, "offline: every stream ended"));
  g_assert_nonnull(strstr(d.log->str, "svc-offline 50 pairs published"));
  stereod_client_close(c);
  daemon_free(&d);
  return wall_s;
}

static void
test_offline(void)
{
  run_offline("");
}

/* offline_speed=0.4: the 49 frame steps of 40 ms take at least 49 x 40 / 0.4 ms = 4.9 s
 * (as fast as it goes, the same replay takes about 2 s on the 2-core machine; a lower
 * bound only, which no slow machine can break) */
static void
test_offline_paced(void)
{
  double wall_s = run_offline("offline_speed=0.4\n");
  g_test_message("offline_speed=0.4: %.2f s from start to exit", wall_s);
  g_assert_cmpfloat(wall_s, >=, 49 * 0.040 / 0.4);
}

/* The lines of config/stereod.conf's commented group `header` ("#[pair north-1]" up to
 * the next blank line), uncommented. */
static char *
example_group(const char *header)
{
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(g_getenv("STEREOD_CONF"), &text, NULL, NULL));
  const char *start = strstr(text, header);
  g_assert_nonnull(start);
  GString *out = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(start, "\n", -1);
  for (int i = 0; lines[i] && lines[i][0] == '#'; i++)
    g_string_append_printf(out, "%s\n", lines[i] + 1);
  return g_string_free(out, FALSE);
}

static char *
replace(const char *text, const char *from, const char *to)
{
  g_assert_nonnull(strstr(text, from));
  g_auto(GStrv) parts = g_strsplit(text, from, -1);
  return g_strjoinv(to, parts);
}

static char *
small(const char *text)
{
  g_autofree char *a = replace(text, "width=1920", "width=" G_STRINGIFY(W));
  g_autofree char *b = replace(a, "height=1080", "height=" G_STRINGIFY(H));
  return g_strdup_printf("%smax_disparity=30\n", b);
}

static void
test_example_rtsp(void)
{
  const char *args[] = { "--size", G_STRINGIFY(W) "x" G_STRINGIFY(H), "--fps", "25",
                         "cam21", "cam22,delay=60", NULL };
  CtRtsp server = { 0 };
  ct_rtsp_start(&server, args);
  g_autofree char *group = example_group("#[pair north-1]");
  g_autofree char *u21 = ct_rtsp_url(&server, "cam21"), *u22 = ct_rtsp_url(&server, "cam22");
  g_autofree char *a = replace(group, "rtsp://192.0.2.21/stream1", u21);
  g_autofree char *b = replace(a, "rtsp://192.0.2.22/stream1", u22);
  g_autofree char *c = small(b);
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=2\n%s", c);
  g_test_message("config:\n%s", conf);
  Daemon d;
  daemon_start(&d, conf, "rtsp.conf", NULL);
  StereodClient *ring = open_ring(&d, "north-1");
  uint64_t last, step;
  int read = read_ring(&d, ring, 8.0, &last, &step);
  int status = daemon_wait(&d, true, 20.0);
  g_test_message("north-1: %d frames read in 8 s, last frame %" G_GUINT64_FORMAT, read, last);
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpint(read, >=, 5);
  g_assert_nonnull(strstr(d.log->str, "clock sender/sender"));
  stereod_client_close(ring);
  daemon_free(&d);
  ct_rtsp_stop(&server);
}

static void
test_example_recording(void)
{
  g_autofree char *group = example_group("#[pair replay-west]");
  g_autofree char *mkv = tmp_path("left.mkv"), *mp4 = tmp_path("right.mp4");
  g_autofree char *uri = g_strdup_printf("file://%s", mp4);
  g_autofree char *a = replace(group, "/srv/match/west-left.mkv", mkv);
  g_autofree char *b = replace(a, "file:///srv/match/west-right.mp4", uri);
  g_autofree char *c = small(b);
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=5\n%s", c);
  Daemon d;
  daemon_start(&d, conf, "recording.conf", "--offline");
  StereodClient *ring = open_ring(&d, "replay-west");
  uint64_t last, step;
  read_ring(&d, ring, 170.0, &last, &step);
  int status = daemon_wait(&d, false, 30.0);
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpuint(stereod_client_get_counter(ring), ==, 50);
  g_assert_nonnull(strstr(d.log->str, "clock replay/replay"));
  stereod_client_close(ring);
  daemon_free(&d);
}

static void
test_unreachable(void)
{
  g_autofree char *mkv = tmp_path("left.mkv");
  g_autofree char *live = g_strdup_printf(
    "filesrc location=%s ! matroskademux ! identity sync=true", mkv);
  /* nothing listens on port 9 of 127.0.0.1 (discard is not served in tests) */
  const char *dead = "rtspsrc location=rtsp://127.0.0.1:9/none protocols=tcp";
  g_autofree char *ga = group("svc-up", live, live, "reconnect_min_ms=100\n");
  g_autofree char *gb = group("svc-dead", dead, dead,
                              "reconnect_min_ms=100\nreconnect_max_ms=400\n");
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=1\n%s%s", ga, gb);
  Daemon d;
  daemon_start(&d, conf, "dead.conf", NULL);
  StereodClient *ring = open_ring(&d, "svc-up");
  uint64_t last, step;
  int read = read_ring(&d, ring, 4.0, &last, &step);
  /* still running: SIGTERM ends it cleanly (an exit on its own would be status 1) */
  int status = daemon_wait(&d, true, 20.0);
  g_assert_cmpint(status, ==, 0);
  g_assert_cmpint(read, >, 0);
  g_assert_nonnull(strstr(d.log->str, "pair svc-dead: source failed"));
  g_assert_nonnull(strstr(d.log->str, "pair svc-dead: capture reconnecting"));
  stereod_client_close(ring);
  daemon_free(&d);
}

static void
test_check_config(void)
{
  g_autofree char *path = tmp_path("check.conf");
  g_autofree char *mkv = tmp_path("left.mkv");
  g_autofree char *good = g_strdup_printf("filesrc location=%s ! matroskademux", mkv);
  g_autofree char *g = group("svc-check", good, "videotestsrc ! nosuchelement", "");
  g_assert_true(g_file_set_contents(path, g, -1, NULL));
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) p = g_subprocess_new(G_SUBPROCESS_FLAGS_STDERR_PIPE |
                                              G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                                              g_getenv("STEREOD"), "--config", path,
                                              "--check-config", NULL);
  g_assert_no_error(error);
  g_autofree char *err = NULL;
  g_assert_true(g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &err, &error));
  g_test_message("%s", err);
  g_assert_cmpint(g_subprocess_get_exit_status(p), ==, 78);
  g_autofree char *want = g_strdup_printf("%s: [pair svc-check] right: ", path);
  g_assert_nonnull(strstr(err, want));
  g_assert_nonnull(strstr(err, "nosuchelement"));

  /* the new keys are checked like the others */
  static const struct { const char *text, *want; } bad[] = {
    { "[daemon]\nmode=fast\n", "[daemon] mode: 'fast' is not" },
    { "clock=bogus\n", "[pair svc-check] clock: 'bogus' is not" },
    { "stall_ms=5\n", "[pair svc-check] stall_ms: " },
    { "start_timeout_ms=abc\n", "[pair svc-check] start_timeout_ms: " },
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *gg = group("svc-check", good, good,
                                bad[i].text[0] == '[' ? "" : bad[i].text);
    g_autofree char *text = g_strdup_printf("%s%s", bad[i].text[0] == '[' ? bad[i].text : "",
                                            gg);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    g_autoptr(GSubprocess) b = g_subprocess_new(G_SUBPROCESS_FLAGS_STDERR_PIPE |
                                                G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                                                g_getenv("STEREOD"), "--config", path,
                                                "--check-config", NULL);
    g_autofree char *berr = NULL;
    g_assert_true(g_subprocess_communicate_utf8(b, NULL, NULL, NULL, &berr, &error));
    g_assert_cmpint(g_subprocess_get_exit_status(b), ==, 78);
    g_test_message("%s", berr);
    g_assert_nonnull(strstr(berr, bad[i].want));
  }

  /* a camera that is not there is no configuration error */
  g_autofree char *g2 = group("svc-check", good, "rtspsrc location=rtsp://127.0.0.1:9/none",
                              "");
  g_assert_true(g_file_set_contents(path, g2, -1, NULL));
  g_autoptr(GSubprocess) q = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                                              g_getenv("STEREOD"), "--config", path,
                                              "--check-config", NULL);
  g_assert_true(g_subprocess_wait(q, NULL, &error));
  g_assert_cmpint(g_subprocess_get_exit_status(q), ==, 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  gst_init(&argc, &argv);
  if (!g_getenv("STEREOD") || !g_getenv("STEREOD_CONF"))
    g_error("STEREOD and STEREOD_CONF are not set");
  tmp_dir = g_dir_make_tmp("stereod-sources-XXXXXX", NULL);
  make_recordings();
  g_test_add_func("/service/sources/check-config", test_check_config);
  g_test_add_func("/service/sources/offline", test_offline);
  g_test_add_func("/service/sources/offline-paced", test_offline_paced);
  g_test_add_func("/service/sources/example-recording", test_example_recording);
  g_test_add_func("/service/sources/example-rtsp", test_example_rtsp);
  g_test_add_func("/service/sources/unreachable", test_unreachable);
  int r = g_test_run();
  /* the rings stay after their writer stopped (readers may still map them) */
  static const char *const rings[] = { "svc-offline", "north-1", "replay-west", "svc-up",
                                       "svc-dead" };
  for (guint i = 0; i < G_N_ELEMENTS(rings); i++) {
    g_autofree char *shm = g_strdup_printf("/dev/shm/stereod.%s", rings[i]);
    unlink(shm);
  }
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0)
    g_warning("could not remove %s", tmp_dir);
  return r;
}
