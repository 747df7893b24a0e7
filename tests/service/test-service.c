/* test-service.c: the stereod daemon end to end, as a process, read through
 * libstereod-client.
 *
 *  - two pairs from still images played live through the real GStreamer path
 *    (filesrc ! pngdec ! imagefreeze is-live=true, 10 fps): both publish; rates, monotonic
 *    frame numbers and capture times; the published disparity is exactly the engine's
 *    output for the same pair;
 *  - a pair whose sources end every 1.5 s (EOS) goes into reconnect and comes back, while
 *    the other pair keeps its rate;
 *  - a JPEG stream with a corrupt file: the frame is dropped and counted, nothing crashes;
 *  - SIGHUP: a live change is applied, a change that needs a restart is refused;
 *  - SIGTERM: clean exit 0, readers see the ring closed;
 *  - a bad configuration: exit 78 with the file, group and key.
 * The daemon's path comes from STEREOD (set by meson).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <turbojpeg.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stereod/client.h>

#include "kernels/calib.h"
#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tests/common/texture.h"
#include "tools/imageio.h"

#define W 160
#define H 96
#define MAXD 30

static char *tmp_dir;
static uint8_t left_img[W * H], right_img[W * H];

static char *
tmp_path(const char *name)
{
  return g_build_filename(tmp_dir, name, NULL);
}

/* A textured pair with a nearer box, written as PNG files. */
static void
make_images(void)
{
  GRand *rng = g_rand_new_with_seed(42);
  TestTexture t;
  test_texture_init(&t, rng, 24, 0.15, 1.4, 0, G_PI, 0.25, 3.0);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      bool box = y > H / 4 && y < 3 * H / 4 && x > W / 3 && x < 2 * W / 3;
      left_img[y * W + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x, y));
      right_img[y * W + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x + (box ? 14.0 : 6.0), y));
    }
  g_rand_free(rng);
  g_autofree char *l = tmp_path("left.png"), *r = tmp_path("right.png");
  GError *error = NULL;
  g_assert_true(imageio_write_png8(l, left_img, W, H, W, &error));
  g_assert_true(imageio_write_png8(r, right_img, W, H, W, &error));
  g_assert_no_error(error);
}

static char *
still_source(const char *image, int num_buffers)
{
  g_autofree char *path = tmp_path(image);
  return g_strdup_printf("filesrc location=%s ! pngdec ! videoconvert ! "
                         "video/x-raw,format=GRAY8 ! imagefreeze is-live=true num-buffers=%d ! "
                         "video/x-raw,framerate=10/1", path, num_buffers);
}

static char *
pair_group(const char *name, const char *left, const char *right, const char *extra)
{
  return g_strdup_printf("[pair %s]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\nfps=10\n"
                         "max_disparity=%d\n%s", name, left, right, W, H, MAXD, extra);
}

typedef struct {
  GSubprocess *proc;
  GInputStream *err;
  GString *log;         /* everything the daemon wrote to stderr so far */
  pid_t pid;
} Daemon;

static void
daemon_read_log(Daemon *d)
{
  char buf[4096];
  for (;;) {
    GError *error = NULL;
    gssize n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(d->err), buf,
                                                        sizeof buf, NULL, &error);
    if (n <= 0) {
      g_clear_error(&error);
      return;
    }
    g_string_append_len(d->log, buf, n);
  }
}

/* The daemon stops (cleanly, closing its rings) if this test process dies first. */
static void
child_setup(gpointer data)
{
  prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static void
daemon_start(Daemon *d, const char *config_text, const char *name)
{
  g_autofree char *conf = tmp_path(name);
  g_assert_true(g_file_set_contents(conf, config_text, -1, NULL));
  GError *error = NULL;
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_child_setup(l, child_setup, NULL, NULL);
  d->proc = g_subprocess_launcher_spawn(l, &error, g_getenv("STEREOD"), "--config", conf, NULL);
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

/* Sends SIGTERM, waits (10 s at most) and returns the exit status. */
static int
daemon_stop(Daemon *d)
{
  g_subprocess_send_signal(d->proc, SIGTERM);
  bool done = false;
  g_subprocess_wait_async(d->proc, NULL, on_exited, &done);
  int64_t end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
  while (!done && g_get_monotonic_time() < end) {
    daemon_read_log(d);
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(10000);
  }
  if (!done) {
    g_subprocess_force_exit(d->proc);
    g_error("stereod did not stop in 10 s; log:\n%s", d->log->str);
  }
  daemon_read_log(d);
  g_test_message("stereod log:\n%s", d->log->str);
  int status = g_subprocess_get_if_exited(d->proc) ? g_subprocess_get_exit_status(d->proc) : -1;
  g_object_unref(d->proc);
  g_string_free(d->log, TRUE);
  return status;
}

/* Opens the ring of `pair` written by the daemon `d`, waiting up to 20 s for it (a ring
 * of the same name left by another process is not taken for it). */
static StereodClient *
open_ring(const Daemon *d, const char *pair)
{
  StereodClient *c = NULL;
  int64_t end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
  for (;;) {
    if (stereod_client_open(pair, &c) == 0) {
      if (stereod_client_get_writer_pid(c) == d->pid)
        return c;
      stereod_client_close(c);
      c = NULL;
    }
    g_assert_cmpint(g_get_monotonic_time(), <, end);
    g_usleep(50000);
  }
}

/* What watch_ring() saw. */
typedef struct {
  uint64_t first_number, last_number;   /* producer frame numbers of the first and last read */
  int64_t max_gap_us;                   /* longest wait between two frames read */
} RingWatch;

/* Reads frames of a ring for `seconds`: returns how many were published meanwhile and
 * checks that frame numbers and capture times only grow. `w` may be NULL. */
static uint64_t
watch_ring_full(StereodClient *c, double seconds, StereodFrame *last, RingWatch *w)
{
  uint64_t start = stereod_client_get_counter(c), counter = start;
  uint64_t last_number = 0, last_capture = 0;
  int64_t now = g_get_monotonic_time(), end = now + (int64_t)(seconds * G_USEC_PER_SEC);
  int64_t last_read = now;
  RingWatch seen = { 0 };
  while ((now = g_get_monotonic_time()) < end) {
    int r = stereod_client_wait(c, counter, 100000000, &counter);
    if (r == -ETIMEDOUT)
      continue;
    g_assert_cmpint(r, ==, 0);
    stereod_frame_clear(last);
    g_assert_cmpint(stereod_client_read_latest(c, last), ==, 0);
    counter = last->counter;   /* read_latest may have found a newer frame than the wait */
    g_assert_cmpuint(last->frame_number, >, last_number);
    g_assert_cmpuint(last->capture_ns, >, last_capture);
    g_assert_cmpuint(last->publish_ns, >=, last->capture_ns);
    if (!seen.first_number)
      seen.first_number = last->frame_number;
    seen.last_number = last_number = last->frame_number;
    last_capture = last->capture_ns;
    now = g_get_monotonic_time();
    seen.max_gap_us = MAX(seen.max_gap_us, now - last_read);
    last_read = now;
  }
  seen.max_gap_us = MAX(seen.max_gap_us, now - last_read);
  if (w)
    *w = seen;
  return stereod_client_get_counter(c) - start;
}

static uint64_t
watch_ring(StereodClient *c, double seconds, StereodFrame *last)
{
  return watch_ring_full(c, seconds, last, NULL);
}

/* `text` with every `from` replaced by `to`. */
static char *
replace(const char *text, const char *from, const char *to)
{
  g_auto(GStrv) parts = g_strsplit(text, from, -1);
  return g_strjoinv(to, parts);
}

static void
test_two_pairs(void)
{
  g_autofree char *sl = still_source("left.png", -1), *sr = still_source("right.png", -1);
  /* pair b: its sources end after 15 frames (1.5 s), then reconnect after 300 ms */
  g_autofree char *fl = still_source("left.png", 15), *fr = still_source("right.png", 15);
  g_autofree char *ga = pair_group("svc-a", sl, sr, "");
  g_autofree char *gb = pair_group("svc-b", fl, fr, "reconnect_min_ms=300\nreconnect_max_ms=300\n");
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=1\nin_flight=2\n%s%s", ga, gb);
  Daemon d;
  daemon_start(&d, conf, "two.conf");
  StereodClient *a = open_ring(&d, "svc-a"), *b = open_ring(&d, "svc-b");
  StereodFrame fa = { 0 }, fb = { 0 };
  /* let both start, then measure a over 6 s, during which b fails and recovers 3 times */
  watch_ring(a, 1.0, &fa);
  uint64_t b0 = stereod_client_get_counter(b);
  RingWatch wa;
  uint64_t na = watch_ring_full(a, 6.0, &fa, &wa);
  uint64_t b1 = stereod_client_get_counter(b);
  uint64_t nb = watch_ring(b, 2.0, &fb);
  daemon_read_log(&d);
  /* Frame numbers count the pairs a's capture delivered (published or dropped because
   * the GPU was behind): they measure the cameras, whatever the renderer's speed. */
  uint64_t delivered = wa.last_number - wa.first_number;
  g_test_message("pair a: %" G_GUINT64_FORMAT " pairs delivered, %" G_GUINT64_FORMAT
                 " published in 6 s, longest gap %.2f s; pair b: %" G_GUINT64_FORMAT
                 " frames in the same 6 s, %" G_GUINT64_FORMAT " in the next 2 s",
                 delivered, na, wa.max_gap_us * 1e-6, b1 - b0, nb);
  /* a's cameras keep their 10 fps (within 20 %) while b's sources fail and reconnect,
   * and a keeps publishing throughout (no gap near b's 1.5 s failure cycle) */
  g_assert_cmpuint(delivered, >=, 48);
  g_assert_cmpuint(delivered, <=, 66);
  g_assert_cmpuint(na, >, 0);
  g_assert_cmpint(wa.max_gap_us, <, G_USEC_PER_SEC);
  g_assert_cmpuint(nb, >, 0);   /* b is back */
  g_assert_nonnull(strstr(d.log->str, "pair svc-b: source failed"));
  g_assert_nonnull(strstr(d.log->str, "pair svc-b: capture running"));
  g_assert_null(strstr(d.log->str, "pair svc-a: source failed"));

  /* the published disparity is exactly what the engine computes for the same pair */
  GpuContext *ctx = gpu_test_context();
  if (ctx) {
    GError *error = NULL;
    StereoEngineParams ep = { .label = "check", .output = STEREO_OUTPUT_S16 };
    stereo_params_init(&ep.params, W, H);
    ep.params.max_disparity = MAXD;
    g_autoptr(StereoEngine) e = stereo_engine_new(ctx, &ep, &error);
    g_assert_no_error(error);
    g_assert_true(stereo_engine_submit(e, left_img, W, right_img, W, 0, &error));
    StereoFrame f;
    g_assert_true(stereo_engine_collect(e, true, &f, &error));
    g_assert_no_error(error);
    const int16_t *want = f.disparity;
    int valid = 0;
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        const int16_t *row = (const int16_t *)((const uint8_t *)fa.disparity +
                                               (size_t)y * fa.strides[STEREOD_RING_PLANE_DISPARITY]);
        g_assert_cmpint(row[x], ==, want[y * W + x]);
        valid += want[y * W + x] != STEREO_DISPARITY_INVALID;
      }
    g_assert_cmpint(valid, >, W * H / 2);
    stereo_engine_release(e, &f);
    g_clear_pointer(&e, stereo_engine_free);
    gpu_context_free(ctx);
  }
  g_assert_cmpint(daemon_stop(&d), ==, 0);
  /* the rings are closed: a reader sees the end */
  g_assert_true(stereod_client_is_closed(a));
  g_assert_cmpint(stereod_client_wait(a, stereod_client_get_counter(a), 0, NULL), ==, -EPIPE);
  stereod_frame_clear(&fa);
  stereod_frame_clear(&fb);
  stereod_client_close(a);
  stereod_client_close(b);
}

/* The depth planes against the formula of <stereod/ring.h>, computed from the ring
 * header's own fields: depth_mm = 1000 fx baseline / (d - doffs), d from the DISPARITY
 * plane times disparity_scale; the DEPTH plane holds it in mm (0 beyond 65535 mm), the
 * FLOAT32 plane (outputs depth_m) in metres, NaN where invalid, and both come from the
 * same depth (within the mm rounding). The calibration keeps a disparity offset
 * (cx' = cx - 4 px, doffs = 4) so that a sign error in the formula cannot pass. */
static void
test_depth_from_header(void)
{
  StereoCalib calib;
  const double identity[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, origin[3] = { 0, 0, 10 };
  calib_init_ideal(&calib, W, H, 200.0, (W - 1) / 2.0, (H - 1) / 2.0, 0.5, NULL, identity,
                   origin);
  calib.P2[2] = calib.P1[2] - 4.0;
  calib.Q[15] = (calib.P2[2] - calib.P1[2]) / 0.5;   /* (cx' - cx) / B */
  g_autofree char *calib_path = tmp_path("depth-calib.conf");
  GError *error = NULL;
  g_assert_true(calib_save(calib_path, &calib, &error));
  g_assert_no_error(error);

  g_autofree char *sl = still_source("left.png", -1), *sr = still_source("right.png", -1);
  g_autofree char *extra = g_strdup_printf("calibration=%s\noutputs=disparity;depth;depth_m;confidence\n",
                                           calib_path);
  g_autofree char *g = pair_group("svc-depth", sl, sr, extra);
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=1\n%s", g);
  Daemon d;
  daemon_start(&d, conf, "depth.conf");
  StereodClient *c = open_ring(&d, "svc-depth");
  StereodFrame f = { 0 };
  uint64_t n = 0;
  for (int64_t end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
       n == 0 && g_get_monotonic_time() < end;)
    n = watch_ring(c, 1.0, &f);
  g_assert_cmpuint(n, >, 0);
  g_assert_nonnull(f.disparity);
  g_assert_nonnull(f.depth);
  g_assert_nonnull(f.float32);
  g_assert_cmpuint(stereod_client_get_formats(c), ==,
                   STEREOD_RING_FORMAT_DISPARITY | STEREOD_RING_FORMAT_DEPTH |
                     STEREOD_RING_FORMAT_FLOAT32 | STEREOD_RING_FORMAT_CONFIDENCE);

  StereodRingCalibration rc;
  stereod_client_get_calibration(c, &rc);
  g_assert_cmpfloat_with_epsilon(rc.doffs, 4.0, 1e-9);
  int checked = 0, mismatched = 0, metres_off = 0, far = 0;
  for (int y = 0; y < H; y++) {
    const int16_t *drow = (const int16_t *)((const uint8_t *)f.disparity +
                                            (size_t)y * f.strides[STEREOD_RING_PLANE_DISPARITY]);
    const uint16_t *zrow = (const uint16_t *)((const uint8_t *)f.depth +
                                              (size_t)y * f.strides[STEREOD_RING_PLANE_DEPTH]);
    const float *mrow = (const float *)((const uint8_t *)f.float32 +
                                        (size_t)y * f.strides[STEREOD_RING_PLANE_FLOAT32]);
    for (int x = 0; x < W; x++) {
      double disp = stereod_disparity_to_px(drow[x], f.disparity_scale);
      if (isnan(disp)) {
        g_assert_cmpuint(zrow[x], ==, STEREOD_RING_DEPTH_INVALID);
        g_assert_true(isnan(mrow[x]));
        continue;
      }
      /* the same depth in both planes, the u16 one rounded to mm (or 0 when far) */
      if (zrow[x] != STEREOD_RING_DEPTH_INVALID) {
        g_assert_false(isnan(mrow[x]));
        metres_off += fabs(1000.0 * mrow[x] - zrow[x]) > 0.5 + 1e-6 * zrow[x];
      } else if (!isnan(mrow[x])) {
        g_assert_cmpfloat(mrow[x], >, 65.5344);
        far++;
      }
      if (!(disp - rc.doffs > 0.5)) {
        /* a point at or beyond infinity: no depth */
        if (disp - rc.doffs <= 0.0) {
          g_assert_cmpuint(zrow[x], ==, STEREOD_RING_DEPTH_INVALID);
          g_assert_true(isnan(mrow[x]));
        }
        continue;
      }
      double want = 1000.0 * rc.fx * rc.baseline / (disp - rc.doffs);
      /* the planes are computed from the unquantised disparity: allow the 1/64 px
       * rounding of the DISPARITY plane, plus the millimetre rounding */
      double dz = want * (0.5 * f.disparity_scale) / (disp - rc.doffs) + 1.0;
      checked++;
      mismatched += fabs(1000.0 * mrow[x] - want) > dz;
      if (want - dz > 65535.5)
        g_assert_cmpuint(zrow[x], ==, STEREOD_RING_DEPTH_INVALID);
      else if (want + dz < 65535.0)
        mismatched += fabs((double)zrow[x] - want) > dz;
    }
  }
  g_test_message("depth planes: %d pixels checked against the header's formula, %d off; "
                 "float32 and u16 planes differ at %d; %d beyond 65.535 m (u16 0, float32 "
                 "valid)", checked, mismatched, metres_off, far);
  g_assert_cmpint(checked, >, W * H / 2);
  g_assert_cmpint(mismatched, ==, 0);
  g_assert_cmpint(metres_off, ==, 0);
  g_assert_cmpint(daemon_stop(&d), ==, 0);
  stereod_frame_clear(&f);
  stereod_client_close(c);
}

/* Writes n gray JPEG frames of the left image (quality 90), file 3 garbage. */
static void
make_jpeg_sequence(const char *dir, int n)
{
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  tjhandle tj = tjInitCompress();
  for (int i = 0; i < n; i++) {
    g_autofree char *name = g_strdup_printf("%06d.jpg", i);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (i == 3) {
      g_assert_true(g_file_set_contents(path, "\xff\xd8\xff\xe0 this is not a JPEG", 24, NULL));
      continue;
    }
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    g_assert_cmpint(tjCompress2(tj, left_img, W, W, H, TJPF_GRAY, &jpeg, &size, TJSAMP_GRAY, 90,
                                0), ==, 0);
    g_assert_true(g_file_set_contents(path, (const char *)jpeg, (gssize)size, NULL));
    tjFree(jpeg);
  }
  tjDestroy(tj);
}

static void
test_corrupt_jpeg(void)
{
  g_autofree char *dir = tmp_path("jpeg");
  make_jpeg_sequence(dir, 8);
  g_autofree char *src = g_strdup_printf(
    "multifilesrc location=%s/%%06d.jpg loop=true caps=image/jpeg,framerate=10/1 ! "
    "identity sleep-time=100000", dir);
  g_autofree char *g = pair_group("svc-jpeg", src, src, "");
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=1\n%s", g);
  Daemon d;
  daemon_start(&d, conf, "jpeg.conf");
  StereodClient *c = open_ring(&d, "svc-jpeg");
  StereodFrame f = { 0 };
  /* Frame numbers count the pairs the capture delivered (published or dropped because
   * the GPU was behind): the stream goes on past the corrupt frames whatever the
   * renderer's speed, and the pair keeps publishing. Watched for at least 3 s and until
   * three frames were published (a busy llvmpipe may take seconds per frame), at most
   * 60 s. */
  uint64_t n = 0, first = 0, last = 0;
  int64_t t0 = g_get_monotonic_time();
  while (g_get_monotonic_time() - t0 < 60 * G_USEC_PER_SEC &&
         (n < 3 || g_get_monotonic_time() - t0 < 3 * G_USEC_PER_SEC)) {
    RingWatch w;
    n += watch_ring_full(c, 1.0, &f, &w);
    if (w.first_number && !first)
      first = w.first_number;
    if (w.last_number)
      last = w.last_number;
  }
  daemon_read_log(&d);
  uint64_t delivered = last - first;
  g_test_message("jpeg pair: %" G_GUINT64_FORMAT " frames published, %" G_GUINT64_FORMAT
                 " pairs delivered in %.1f s", n, delivered,
                 (g_get_monotonic_time() - t0) * 1e-6);
  g_assert_cmpuint(n, >=, 3);
  g_assert_cmpuint(delivered, >=, 15);
  /* the stats line counts the dropped frames: "corrupt N" with N > 0 at least once */
  bool counted = false;
  for (const char *p = d.log->str; (p = strstr(p, "corrupt ")); p++)
    counted |= g_ascii_strtoull(p + 8, NULL, 10) > 0;
  g_assert_true(counted);
  g_assert_cmpint(daemon_stop(&d), ==, 0);
  stereod_frame_clear(&f);
  stereod_client_close(c);
}

static void
test_reload(void)
{
  g_autofree char *sl = still_source("left.png", -1), *sr = still_source("right.png", -1);
  g_autofree char *g = pair_group("svc-reload", sl, sr, "");
  g_autofree char *conf = g_strdup_printf("[daemon]\nstats_interval=1\n%s", g);
  g_autofree char *path = tmp_path("reload.conf");
  Daemon d;
  daemon_start(&d, conf, "reload.conf");
  StereodClient *c = open_ring(&d, "svc-reload");
  StereodFrame f = { 0 };
  watch_ring(c, 1.0, &f);
  /* a live change: the filter range */
  g_autofree char *live = g_strdup_printf("[daemon]\nstats_interval=1\n%s", g);
  g_autofree char *live2 = replace(live, "max_disparity=30", "max_disparity=24");
  g_assert_true(g_file_set_contents(path, live2, -1, NULL));
  g_subprocess_send_signal(d.proc, SIGHUP);
  uint64_t n1 = watch_ring(c, 1.5, &f);
  /* a change that needs a restart: the size */
  g_autofree char *bad = replace(live2, "width=160", "width=128");
  g_assert_true(g_file_set_contents(path, bad, -1, NULL));
  g_subprocess_send_signal(d.proc, SIGHUP);
  uint64_t n2 = watch_ring(c, 1.5, &f);
  /* a broken file */
  g_assert_true(g_file_set_contents(path, "[daemon]\nstats_interval=oops\n", -1, NULL));
  g_subprocess_send_signal(d.proc, SIGHUP);
  uint64_t n3 = watch_ring(c, 1.0, &f);
  daemon_read_log(&d);
  g_assert_cmpuint(n1, >, 0);
  g_assert_cmpuint(n2, >, 0);
  g_assert_cmpuint(n3, >, 0);   /* still running the old configuration */
  g_assert_nonnull(strstr(d.log->str, "pair svc-reload: filter parameters reloaded"));
  g_assert_nonnull(strstr(d.log->str, "needs a restart; keeping the running configuration"));
  g_assert_nonnull(strstr(d.log->str, "[daemon] stats_interval"));
  g_assert_cmpint(daemon_stop(&d), ==, 0);
  stereod_frame_clear(&f);
  stereod_client_close(c);
}

static void
test_bad_config(void)
{
  g_autofree char *path = tmp_path("bad.conf");
  g_assert_true(g_file_set_contents(path, "[daemon]\nring_slots=1000\n[pair x]\nleft=a\nright=b\n"
                                    "width=64\nheight=48\nfps=25\n", -1, NULL));
  GError *error = NULL;
  g_autoptr(GSubprocess) p = g_subprocess_new(G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                                              g_getenv("STEREOD"), "--config", path, NULL);
  g_assert_no_error(error);
  g_autofree char *err = NULL;
  g_assert_true(g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &err, &error));
  g_assert_cmpint(g_subprocess_get_exit_status(p), ==, 78);
  g_autofree char *prefix = g_strdup_printf("%s: [daemon] ring_slots:", path);
  g_assert_nonnull(strstr(err, prefix));
  /* --check-config on a good file */
  g_autofree char *sl = still_source("left.png", -1), *sr = still_source("right.png", -1);
  g_autofree char *g = pair_group("svc-check", sl, sr, "");
  g_assert_true(g_file_set_contents(path, g, -1, NULL));
  g_autoptr(GSubprocess) q = g_subprocess_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE, &error,
                                              g_getenv("STEREOD"), "--config", path,
                                              "--check-config", NULL);
  g_assert_true(g_subprocess_wait(q, NULL, &error));
  g_assert_cmpint(g_subprocess_get_exit_status(q), ==, 0);
}

/* A ring name that another user holds: stereod refuses it with one line naming the
 * owner and exits 78 (no restart loop under systemd); the squatter's object is left as
 * it was. Needs root, to create the object as another user. */
static void
test_squatted_ring(void)
{
  if (geteuid() != 0) {
    g_test_skip("needs root to create a ring as another user");
    return;
  }
  const char *path = "/dev/shm/stereod.svc-squat";
  unlink(path);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0)
      _exit(2);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
    _exit(fd >= 0 && write(fd, "squat", 5) == 5 ? 0 : 3);
  }
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  g_autofree char *sl = still_source("left.png", -1), *sr = still_source("right.png", -1);
  g_autofree char *g = pair_group("svc-squat", sl, sr, "");
  g_autofree char *conf = tmp_path("squat.conf");
  g_assert_true(g_file_set_contents(conf, g, -1, NULL));
  GError *error = NULL;
  g_autoptr(GSubprocess) p = g_subprocess_new(G_SUBPROCESS_FLAGS_STDERR_PIPE, &error,
                                              g_getenv("STEREOD"), "--config", conf, NULL);
  g_assert_no_error(error);
  g_autofree char *err = NULL;
  g_assert_true(g_subprocess_communicate_utf8(p, NULL, NULL, NULL, &err, &error));
  g_test_message("%s", err);
  g_assert_cmpint(g_subprocess_get_exit_status(p), ==, 78);
  g_assert_nonnull(strstr(err, "belongs to uid 65534"));
  g_autofree char *left = NULL;
  g_assert_true(g_file_get_contents(path, &left, NULL, NULL));
  g_assert_cmpstr(left, ==, "squat");
  unlink(path);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!g_getenv("STEREOD"))
    g_error("STEREOD (the daemon's path) is not set");
  tmp_dir = g_dir_make_tmp("stereod-service-XXXXXX", NULL);
  make_images();
  g_test_add_func("/service/bad-config", test_bad_config);
  g_test_add_func("/service/squatted-ring", test_squatted_ring);
  g_test_add_func("/service/two-pairs", test_two_pairs);
  g_test_add_func("/service/depth-from-header", test_depth_from_header);
  g_test_add_func("/service/corrupt-jpeg", test_corrupt_jpeg);
  g_test_add_func("/service/reload", test_reload);
  int r = g_test_run();
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0)
    g_warning("could not remove %s", tmp_dir);
  return r;
}
