/* service.c: stereod-bench --service: the service's own frame loop and capture
 * (daemon/frame-loop.h, daemon/capture.h) on N synthetic live camera pairs.
 *
 *   stereod-bench --service [--pairs 16] [--size 1920x1080] [--fps 60] [--seconds 10]
 *                 [--warmup-seconds 3] [--in-flight 2] [--scales 5] [--max-disparity 128]
 *                 [--refine] [--source still|videotestsrc] [--device D]
 *
 * Each pair's two cameras are live GStreamer sources of one pipeline at --fps: "still"
 * (default) plays a synthetic textured pair with known disparity (bench/pairs.h, written
 * as PGM files into a temporary folder) through imagefreeze is-live=true, the frame the
 * capture copies each period being that image; "videotestsrc" is videotestsrc is-live=true
 * GRAY8 (a pattern per pair; left and right the same image). The config is the service's
 * defaults for every other key (outputs disparity + confidence, rings of 4 slots). After
 * the warm-up the totals are reset and taken again after --seconds: offered pairs/s (what
 * the captures delivered), published pairs/s, pairs dropped at capture, batches and GPU
 * ms per batch, pairs per batch, and capture-to-publish latency p50/p99/max (the left
 * frame's capture time to the ring's publish, on CLOCK_REALTIME, every published pair),
 * and the "# summary:" line of bench/RESULTS.md. Rings are named bench-PID-K.
 */
#include "bench/service.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/pairs.h"
#include "daemon/config.h"
#include "daemon/frame-loop.h"

static bool
write_pgm(const char *path, const uint8_t *img, int w, int h)
{
  FILE *fp = fopen(path, "wbe");
  bool ok = fp && fprintf(fp, "P5\n%d %d\n255\n", w, h) > 0 &&
            fwrite(img, (size_t)w * h, 1, fp) == 1;
  if (fp && fclose(fp) != 0)
    ok = false;
  return ok;
}

static char *
source(const BenchServiceOptions *o, const char *dir, int k, int side)
{
  if (g_strcmp0(o->source, "videotestsrc") == 0) {
    static const char *const patterns[] = { "smpte", "checkers-8", "zone-plate", "ball",
                                            "pinwheel", "spokes", "gradient", "snow" };
    return g_strdup_printf("videotestsrc is-live=true pattern=%s ! video/x-raw,format=GRAY8,"
                           "width=%d,height=%d,framerate=%d/1", patterns[k % 8], o->width,
                           o->height, o->fps);
  }
  return g_strdup_printf("filesrc location=%s/pair%d-%s.pgm ! pnmdec ! videoconvert ! "
                         "video/x-raw,format=GRAY8 ! imagefreeze is-live=true ! "
                         "video/x-raw,framerate=%d/1", dir, k % BENCH_N_INPUTS,
                         side ? "right" : "left", o->fps);
}

int
bench_service_run(const BenchServiceOptions *o)
{
  if (o->pairs < 1 || o->pairs > STEREOD_CONFIG_MAX_PAIRS || o->fps < 1 || o->fps > 1000 ||
      o->seconds < 1 || o->warmup_seconds < 0 || o->width < 64 || o->height < 64) {
    fprintf(stderr, "stereod-bench --service: bad --pairs (1..%d), --fps, --seconds or "
                    "--size\n", STEREOD_CONFIG_MAX_PAIRS);
    return 64;   /* EX_USAGE */
  }
  gst_init(NULL, NULL);
  g_autofree char *dir = g_dir_make_tmp("stereod-bench-XXXXXX", NULL);
  if (!dir) {
    fprintf(stderr, "stereod-bench --service: cannot make a temporary folder\n");
    return 1;
  }
  double dmax = MIN(o->max_disparity, o->width / 2);
  if (g_strcmp0(o->source, "videotestsrc") != 0) {
    GRand *rng = g_rand_new_with_seed(12345);
    g_autofree uint8_t *l = g_malloc((size_t)o->width * o->height);
    g_autofree uint8_t *r = g_malloc((size_t)o->width * o->height);
    for (int k = 0; k < MIN(o->pairs, BENCH_N_INPUTS); k++) {
      bench_make_pair(rng, o->width, o->height, dmax * 0.6, l, r);
      g_autofree char *pl = g_strdup_printf("%s/pair%d-left.pgm", dir, k);
      g_autofree char *pr = g_strdup_printf("%s/pair%d-right.pgm", dir, k);
      if (!write_pgm(pl, l, o->width, o->height) || !write_pgm(pr, r, o->width, o->height)) {
        fprintf(stderr, "stereod-bench --service: cannot write %s\n", pl);
        g_rand_free(rng);
        return 1;
      }
    }
    g_rand_free(rng);
  }
  GString *conf = g_string_new(NULL);
  g_string_append_printf(conf, "[daemon]\nstats_interval=%d\nin_flight=%d\n",
                         MAX(1, o->seconds), o->in_flight);
  if (o->device)
    g_string_append_printf(conf, "device=%s\n", o->device);
  for (int k = 0; k < o->pairs; k++) {
    g_autofree char *l = source(o, dir, k, 0), *r = source(o, dir, k, 1);
    g_string_append_printf(conf, "[pair bench-%d-%d]\nleft=%s\nright=%s\nwidth=%d\nheight=%d\n"
                           "fps=%d\nmax_disparity=%.0f\n", (int)getpid(), k, l, r, o->width,
                           o->height, o->fps, dmax);
    if (o->scales)
      g_string_append_printf(conf, "levels=%d\n", o->scales);
    if (o->refine)
      g_string_append(conf, "refine=true\n");
  }
  GError *error = NULL;
  g_autoptr(StereodConfig) config = stereod_config_load_data(conf->str, conf->len,
                                                             "bench-service.conf", &error);
  g_string_free(conf, TRUE);
  if (!config) {
    fprintf(stderr, "stereod-bench --service: %s\n", error->message);
    g_error_free(error);
    return 2;
  }
  printf("# service: %d live pairs %dx%d at %d fps (%s), %d batches in flight, %d scales, max "
         "disparity %.0f%s, %d s after %d s warm-up\n", o->pairs, o->width, o->height, o->fps,
         g_strcmp0(o->source, "videotestsrc") ? "still textured pairs" : "videotestsrc",
         o->in_flight, stereo_params_get_levels(&config->pairs[0].params), dmax,
         o->refine ? ", refine" : "",
         o->seconds, o->warmup_seconds);
  int levels = stereo_params_get_levels(&config->pairs[0].params);
  g_autoptr(FrameLoop) loop = frame_loop_start(config, NULL, NULL, &error);
  if (!loop) {
    fprintf(stderr, "stereod-bench --service: %s\n", error->message);
    g_error_free(error);
    return 1;
  }
  g_usleep((gulong)o->warmup_seconds * G_USEC_PER_SEC);
  frame_loop_reset_stats(loop);
  g_usleep((gulong)o->seconds * G_USEC_PER_SEC);
  FrameLoopStats st;
  frame_loop_get_stats(loop, &st);
  bool failed = frame_loop_failed(loop);
  g_clear_pointer(&loop, frame_loop_free);
  for (int k = 0; k < BENCH_N_INPUTS; k++)
    for (int side = 0; side < 2; side++) {
      g_autofree char *p = g_strdup_printf("%s/pair%d-%s.pgm", dir, k, side ? "right" : "left");
      g_unlink(p);
    }
  g_rmdir(dir);
  if (failed) {
    fprintf(stderr, "stereod-bench --service: the frame loop failed (see the log)\n");
    return 1;
  }
  double offered = st.captured / st.seconds, published = st.published / st.seconds;
  double per_batch = st.batches ? st.gpu_ms / (double)st.batches : 0.0;
  double pairs_per_batch = st.batches ? (double)st.published / (double)st.batches : 0.0;
  printf("offered %.1f pairs/s, published %.1f pairs/s, dropped at capture %" G_GUINT64_FORMAT
         " pairs (%.1f %%, newest wins; %" G_GUINT64_FORMAT " frames unpaired, %" G_GUINT64_FORMAT
         " without a buffer), %" G_GUINT64_FORMAT " batches (%.2f pairs each), GPU %.3f ms per "
         "batch, %.3f ms per pair, capture to publish p50 %.2f ms p99 %.2f ms max %.2f ms over "
         "%.1f s\n", offered, published, st.dropped,
         st.captured ? 100.0 * st.dropped / st.captured : 0.0, st.unpaired, st.starved,
         st.batches, pairs_per_batch, per_batch,
         pairs_per_batch > 0 ? per_batch / pairs_per_batch : 0.0, st.latency_p50_ms,
         st.latency_p99_ms, st.latency_max_ms, st.seconds);
  if (st.published == 0) {
    printf("# summary: %s service %dx%d %d scales, %d pairs: no pair published in %.1f s "
           "(offered %.1f pairs/s at %d fps)\n", o->device_name, o->width, o->height, levels,
           o->pairs, st.seconds, offered, o->fps);
    return 0;
  }
  printf("# summary: %s service %dx%d %d scales, %d pairs: %.1f pairs/s published, p99 latency "
         "%.2f ms (offered %.1f pairs/s at %d fps, frame period %.2f ms)\n", o->device_name,
         o->width, o->height, levels, o->pairs, published, st.latency_p99_ms, offered,
         o->fps, 1000.0 / o->fps);
  return 0;
}
