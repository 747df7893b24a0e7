/* test-capture-sources.c: the sources a stadium has, through real pipelines
 * (integration): RTSP cameras (H.264 and MJPEG, from the local server rtsp-server.py on
 * 127.0.0.1) paired by their sender timestamps; recordings in MKV and MP4 made here with
 * gst-launch (demuxers, decodebin, uridecodebin and uridecodebin3, an audio track before
 * the video) replayed offline, every frame, to their end, also behind a consumer slower
 * than the stall time (back-pressure is no stall); two pairs of a file sequence played in real time that carry
 * the same capture time for the same frame, and keep it growing when the clip starts
 * again; capture_check() on descriptions whose links are known only when they play. */
#include "capture-test-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static char *tmp_dir;

static char *
tmp_path(const char *name)
{
  return g_build_filename(tmp_dir, name, NULL);
}

/* Runs gst-launch-1.0 with `pipeline` (split on blanks), which must succeed. */
static void
gst_launch(const char *pipeline)
{
  g_autofree char *cmd = g_strdup_printf("gst-launch-1.0 -q %s", pipeline);
  g_autofree char *err = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_command_line_sync(cmd, NULL, &err, &status, &error));
  g_assert_no_error(error);
  if (!g_spawn_check_wait_status(status, NULL))
    g_error("%s failed: %s", cmd, err);
}

/* ---------------------------------------------------------------- RTSP */

/* Both sides from the local server's genlocked cameras: the frames of a pair are the
 * same grid instant (the same level), the clock is the senders'. At 25 frames/s: the
 * server's first sender report of a stream lies 20-95 ms from its later ones, and taken
 * alone (before CaptureSenderClock) it paired frames one apart now and then. */
static void
test_rtsp(gconstpointer data)
{
  const char *codec = data;
  g_autofree char *l_arg = g_strdup_printf("L,codec=%s", codec);
  g_autofree char *r_arg = g_strdup_printf("R,codec=%s", codec);
  const char *args[] = { "--size", "64x48", "--fps", "25", l_arg, r_arg, NULL };
  CtRtsp server = { 0 };
  ct_rtsp_start(&server, args);
  g_autofree char *lu = ct_rtsp_url(&server, "L"), *ru = ct_rtsp_url(&server, "R");
  g_autofree char *left = g_strdup_printf("rtspsrc location=%s latency=100 protocols=tcp", lu);
  g_autofree char *right = g_strdup_printf("rtspsrc location=%s latency=100 protocols=tcp", ru);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = codec, .left = left, .right = right, .width = 64, .height = 48, .fps = 25,
    .tolerance_ns = 5000000, .notifier = n,
  };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  int got = 0, changes = 0;
  double last_level = -1;
  uint64_t last_cap = 0;
  while (got < 15) {
    const CaptureFrame *l, *r;
    uint64_t cap;
    g_assert_true(ct_take(pair, n, 20000, &l, &r, &cap, NULL));
    double ml = ct_mean(l), mr = ct_mean(r);
    g_assert_cmpfloat(fabs(ml - mr), <, 4.0);
    g_assert_cmpuint(cap, >, last_cap);
    uint64_t now = (uint64_t)g_get_real_time() * 1000;
    g_assert_cmpuint(cap, <, now);
    g_assert_cmpuint(cap, >, now - 3 * G_GUINT64_CONSTANT(1000000000));
    changes += last_level >= 0 && fabs(ml - last_level) > 8.0;
    last_level = ml;
    last_cap = cap;
    capture_pair_release(pair, l, r);
    got++;
  }
  g_assert_cmpint(changes, >=, 10);   /* the frames advance: 10 levels in a cycle */
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++)
    g_assert_cmpint(capture_pair_get_clock(pair, s), ==, CAPTURE_CLOCK_SENDER);
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_test_message("rtsp %s: %d pairs; frames %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                 ", untimed %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", unpaired %"
                 G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, codec, got, st.frames[0],
                 st.frames[1], st.untimed[0], st.untimed[1], st.unpaired[0], st.unpaired[1]);
  g_assert_cmpuint(st.failures, ==, 0);
  g_clear_pointer(&pair, capture_pair_free);
  ct_rtsp_stop(&server);
}

/* ---------------------------------------------------------------- recordings */

#define CLIP_FRAMES 50

static void
make_recordings(void)
{
  static bool made;
  if (made)
    return;
  made = true;
  const char *src = "videotestsrc num-buffers=50 pattern=ball ! "
                    "video/x-raw,format=I420,width=64,height=48,framerate=25/1";
  g_autofree char *mkv = tmp_path("clip.mkv"), *mp4 = tmp_path("clip.mp4");
  g_autofree char *av = tmp_path("av.mkv");
  g_autofree char *a = g_strdup_printf("%s ! x264enc ! matroskamux ! filesink location=%s",
                                       src, mkv);
  g_autofree char *b = g_strdup_printf("%s ! x264enc ! mp4mux ! filesink location=%s", src, mp4);
  /* the audio track is the first one of the file */
  g_autofree char *c = g_strdup_printf(
    "matroskamux name=m ! filesink location=%s audiotestsrc num-buffers=100 ! "
    "audioconvert ! vorbisenc ! queue ! m.audio_0 %s ! x264enc ! queue ! m.video_0", av, src);
  gst_launch(a);
  gst_launch(b);
  gst_launch(c);
}

/* Offline, two recordings of the same clip: every frame pairs, once, in order, 40 ms
 * apart on the replay clock, and the pair ends. The consumer holds the first pairs for
 * `hold_ms` each (a GPU slower than the decoders): back-pressure, not a stall, even with
 * a stall time far below that (start_timeout_ms 300 makes stall_ms 300 offline). */
static void
replay_offline_held(const char *name, const char *left, const char *right, int hold_ms)
{
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = name, .left = left, .right = right, .width = 64, .height = 48, .fps = 25,
    .mode = CAPTURE_MODE_OFFLINE, .notifier = n, .stall_ms = hold_ms ? 100 : 0,
    .start_timeout_ms = hold_ms ? 300 : 0,
  };
  g_autoptr(CapturePair) pair = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(pair);
  uint64_t last_seq = 0, first_cap = 0, last_cap = 0;
  int got = 0;
  int64_t deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  for (;;) {
    uint64_t seen = capture_notifier_get(n);
    const CaptureFrame *l, *r;
    uint64_t cap, seq;
    if (capture_pair_take(pair, &l, &r, &cap, &seq)) {
      double mean;
      int max;
      ct_compare(l->data, l->stride, r->data, r->stride, 64, 48, &mean, &max);
      g_assert_cmpfloat(mean, <, 1.0);   /* the same frame of the clip on both sides */
      g_assert_cmpuint(seq, ==, last_seq + 1);
      if (got == 0)
        first_cap = cap;
      else
        g_assert_cmpuint(cap - last_cap, ==, 40000000);
      last_seq = seq;
      last_cap = cap;
      got++;
      g_usleep(got < 5 ? (gulong)(hold_ms ? hold_ms : 100) * 1000 : 0);   /* back-pressure */
      capture_pair_release(pair, l, r);
      continue;
    }
    CaptureState st = capture_pair_get_state(pair);
    if (st == CAPTURE_STATE_ENDED && !capture_pair_take(pair, &l, &r, NULL, NULL))
      break;
    g_assert_cmpint(st, !=, CAPTURE_STATE_FAILED);
    g_assert_cmpint(g_get_monotonic_time(), <, deadline);
    capture_notifier_wait(n, seen, g_get_monotonic_time() + 100000);
  }
  CaptureStats st;
  capture_pair_get_stats(pair, &st);
  g_test_message("%s: %d pairs, capture times %.3f s apart first to last; frames %"
                 G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ", unpaired %" G_GUINT64_FORMAT "/%"
                 G_GUINT64_FORMAT ", wrong size %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                 ", starved %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT, name, got,
                 (double)(last_cap - first_cap) * 1e-9, st.frames[0], st.frames[1],
                 st.unpaired[0], st.unpaired[1], st.wrong_size[0], st.wrong_size[1],
                 st.starved[0], st.starved[1]);
  g_assert_cmpint(got, ==, CLIP_FRAMES);
  g_assert_cmpuint(st.pairs, ==, CLIP_FRAMES);
  g_assert_cmpuint(st.overwritten + st.unpaired[0] + st.unpaired[1] + st.starved[0] +
                   st.starved[1], ==, 0);
  g_assert_cmpuint(st.failures + st.stalls, ==, 0);
  for (int s = 0; s < CAPTURE_SIDE_COUNT; s++)
    g_assert_cmpint(capture_pair_get_clock(pair, s), ==, CAPTURE_CLOCK_REPLAY);
}

static void
replay_offline(const char *name, const char *left, const char *right)
{
  replay_offline_held(name, left, right, 0);
}

static void
test_recordings(void)
{
  make_recordings();
  g_autofree char *mkv = tmp_path("clip.mkv"), *mp4 = tmp_path("clip.mp4");
  g_autofree char *av = tmp_path("av.mkv");
  g_autofree char *demux = g_strdup_printf("filesrc location=%s ! matroskademux", mkv);
  g_autofree char *qt = g_strdup_printf("filesrc location=%s ! qtdemux ! h264parse ! "
                                        "avdec_h264", mp4);
  g_autofree char *uri = g_strdup_printf("uridecodebin uri=file://%s", mp4);
  g_autofree char *bare = g_strdup_printf("filesrc location=%s", mkv);
  g_autofree char *with_audio = g_strdup_printf("filesrc location=%s ! matroskademux", av);
  replay_offline("mkv-mp4", demux, qt);
  replay_offline("uri-bare", uri, bare);
  replay_offline("audio-first", with_audio, demux);
  g_autofree char *decodebin = g_strdup_printf("filesrc location=%s ! decodebin", av);
  g_autofree char *uri3 = g_strdup_printf("uridecodebin3 uri=file://%s", mkv);
  replay_offline("decodebin-uri3", decodebin, uri3);
  /* the consumer holds each of the first pairs 1 s, the stall time is 300 ms */
  replay_offline_held("slow-gpu", demux, qt, 1000);
}

/* ---------------------------------------------------------------- replay clock */

#define SEQ_FILES 20

/* Two pairs of one JPEG sequence played in real time, started 300 ms apart with one
 * timebase: the same file carries the same capture time in both; the clip's second
 * round goes on 2 s (20 frames at 10 frames/s) later, not back. */
static void
test_replay_clock(void)
{
  g_autofree char *dir = tmp_path("seq");
  g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
  uint8_t gray[64 * 48];
  for (int i = 0; i < SEQ_FILES; i++) {
    memset(gray, 10 + 12 * i, sizeof gray);
    size_t size;
    g_autofree uint8_t *jpg = ct_jpeg_gray(gray, 64, 48, 95, &size);
    g_autofree char *path = g_strdup_printf("%s/%03d.jpg", dir, i);
    g_assert_true(g_file_set_contents(path, (const char *)jpg, (gssize)size, NULL));
  }
  g_autofree char *desc = g_strdup_printf(
    "imagesequencesrc location=%s/%%03d.jpg framerate=10/1 ! identity sync=true", dir);
  g_autoptr(CaptureNotifier) n = capture_notifier_new();
  g_autoptr(CaptureTimebase) tb = capture_timebase_new();
  g_autoptr(GError) error = NULL;
  CapturePairParams prm = {
    .name = "A", .left = desc, .right = desc, .width = 64, .height = 48, .fps = 10,
    .notifier = n, .timebase = tb, .backoff_min_ms = 50, .backoff_max_ms = 50,
  };
  g_autoptr(CapturePair) a = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  prm.name = "B";
  g_autoptr(CapturePair) b = capture_pair_new(&prm, &error);
  g_assert_no_error(error);
  capture_pair_start(a);
  g_usleep(300000);
  capture_pair_start(b);

  /* capture time of each file (first round, second round) per pair */
  uint64_t cap[2][2][SEQ_FILES] = { { { 0 } } };
  uint64_t last[2] = { 0, 0 };
  int round[2] = { 0, 0 }, prev[2] = { -1, -1 };
  CapturePair *pairs[2] = { a, b };
  int64_t end = g_get_monotonic_time() + 4500 * 1000;
  while (g_get_monotonic_time() < end) {
    uint64_t seen = capture_notifier_get(n);
    bool any = false;
    for (int k = 0; k < 2; k++) {
      const CaptureFrame *l, *r;
      uint64_t c;
      if (!capture_pair_take(pairs[k], &l, &r, &c, NULL))
        continue;
      any = true;
      int file = (int)lround((ct_mean(l) - 10.0) / 12.0);
      g_assert_cmpint(file, >=, 0);
      g_assert_cmpint(file, <, SEQ_FILES);
      g_assert_cmpuint(c, >, last[k]);   /* only grows, also across the clip's end */
      if (file < prev[k])
        round[k]++;
      prev[k] = file;
      if (round[k] < 2)
        cap[k][round[k]][file] = c;
      last[k] = c;
      capture_pair_release(pairs[k], l, r);
    }
    if (!any)
      capture_notifier_wait(n, seen, g_get_monotonic_time() + 50000);
  }
  int same = 0, next_round = 0;
  for (int f = 0; f < SEQ_FILES; f++)
    for (int r = 0; r < 2; r++)
      if (cap[0][r][f] && cap[1][r][f]) {
        g_assert_cmpuint(cap[0][r][f], ==, cap[1][r][f]);
        same++;
      }
  for (int k = 0; k < 2; k++)
    for (int f = 0; f < SEQ_FILES; f++)
      if (cap[k][0][f] && cap[k][1][f]) {
        g_assert_cmpuint(cap[k][1][f] - cap[k][0][f], ==, 2000000000);
        next_round++;
      }
  g_test_message("replay clock: %d files with the same capture time in both pairs, %d "
                 "seen again 2.000 s later in the clip's second round", same, next_round);
  g_assert_cmpint(round[0], >=, 1);
  g_assert_cmpint(same, >=, 10);
  g_assert_cmpint(next_round, >=, 5);
}

/* ---------------------------------------------------------------- checks */

static void
test_check(void)
{
  CapturePairParams prm = { .name = "chk", .width = 64, .height = 48 };
  CaptureSide side = CAPTURE_SIDE_LEFT;
  g_autoptr(GError) error = NULL;
  /* the link of a source whose pads appear when it plays is made then */
  prm.left = "rtspsrc location=rtsp://127.0.0.1:9/none";
  prm.right = "uridecodebin uri=file:///nonexistent.mkv";
  g_assert_true(capture_check(&prm, &side, &error));
  g_assert_no_error(error);
  prm.right = "rtspsrc location=rtsp://127.0.0.1:9/none ! nosuchdepay";
  g_assert_false(capture_check(&prm, &side, &error));
  g_assert_error(error, CAPTURE_ERROR, CAPTURE_ERROR_DESCRIPTION);
  g_assert_cmpint(side, ==, CAPTURE_SIDE_RIGHT);
  g_assert_nonnull(strstr(error->message, "nosuchdepay"));
  g_assert_null(strstr(error->message, "pair chk"));
  g_clear_error(&error);
  prm.left = "audiotestsrc ! audioconvert";
  g_assert_false(capture_check(&prm, &side, &error));
  g_assert_cmpint(side, ==, CAPTURE_SIDE_LEFT);
  g_assert_nonnull(strstr(error->message, "whose output is video"));
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  tmp_dir = g_dir_make_tmp("capture-sources-XXXXXX", NULL);
  ct_add("/capture/sources/rtsp/h264", "h264", test_rtsp);
  ct_add("/capture/sources/rtsp/mjpeg", "jpeg", test_rtsp);
  ct_add_func("/capture/sources/recordings", test_recordings);
  ct_add_func("/capture/sources/replay-clock", test_replay_clock);
  ct_add_func("/capture/sources/check", test_check);
  int r = g_test_run();
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
  if (system(cmd) != 0)
    g_warning("could not remove %s", tmp_dir);
  return r;
}
