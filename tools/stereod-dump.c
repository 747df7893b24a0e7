/* stereod-dump: prints the frames of a stereod ring and the measured rates, and
 * optionally writes them to files.
 *
 *   stereod-dump PAIR [--count N] [--timeout S] [--follow] [--dir DIR] [--quiet]
 *                [--pfm DIR] [--png16 DIR] [--color DIR] [--max-disparity PX]
 *   stereod-dump --version
 *
 * The ring is DIR/stereod.PAIR (DIR: --dir, else the rule of <stereod/ring.h>:
 * $STEREOD_RING_DIR, /run/stereod, /dev/shm). Only rings owned by this user, root or
 * the user stereod are read, unless STEREOD_RING_OWNER=any|UID|USER says otherwise.
 * --follow keeps reading when the writer restarts (also after it was killed), waiting
 * for the ring to come back; its timeout is then infinite unless --timeout is given.
 *
 * One line per frame read (see dump_format_frame), then a summary line with the
 * frames read, the rate they were read at, the writer's publish rate, the frames
 * skipped and the torn copies retried. Files are named DIR/PAIR-FRAMENUMBER.{pfm,png,jpg}:
 * PFM float px (NaN = invalid), 16-bit PNG of px x 256 (KITTI), and a colour JPEG
 * scaled to --max-disparity (default: the frame's largest valid disparity). A ring
 * without a disparity plane has its FLOAT32 plane written instead.
 * Exit status: 0 after N frames, at the writer's close (without --follow) or at
 * SIGINT/SIGTERM; 1 on error (no ring, an untrusted owner, no frame within --timeout, a
 * broken ring: rewritten header, truncated object, a slot never completed), with one
 * line on stderr saying which.
 */
#include "dump.h"
#include "imageio.h"

#include <gio/gio.h>
#include <glib/gstdio.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "stereod-config.h"

static gint count = 0;
static gdouble timeout_s = -1.0;     /* not given: 5 s, or forever with --follow */
static gboolean follow = FALSE;
static char *ring_dir = NULL;
static gboolean quiet = FALSE;
static char *pfm_dir = NULL;
static char *png16_dir = NULL;
static char *color_dir = NULL;
static gdouble max_disparity = 0.0;
static gboolean version = FALSE;

static const GOptionEntry entries[] = {
  { "count", 'n', 0, G_OPTION_ARG_INT, &count, "Stop after N frames (0: never)", "N" },
  { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
  { "timeout", 't', 0, G_OPTION_ARG_DOUBLE, &timeout_s, "Give up after S s without a frame (default 5; with --follow: never; 0: never)", "S" },
  { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow, "Keep reading across writer restarts, waiting for the ring to come back", NULL },
  { "dir", 0, 0, G_OPTION_ARG_FILENAME, &ring_dir, "Ring directory (default: $STEREOD_RING_DIR, /run/stereod, /dev/shm)", "DIR" },
  { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Only print the summary", NULL },
  { "pfm", 0, 0, G_OPTION_ARG_FILENAME, &pfm_dir, "Write PFM files (float px) into DIR", "DIR" },
  { "png16", 0, 0, G_OPTION_ARG_FILENAME, &png16_dir, "Write 16-bit PNG files (px x 256) into DIR", "DIR" },
  { "color", 0, 0, G_OPTION_ARG_FILENAME, &color_dir, "Write colour JPEG files into DIR", "DIR" },
  { "max-disparity", 0, 0, G_OPTION_ARG_DOUBLE, &max_disparity, "Colour scale top, px (default: per frame)", "PX" },
  { NULL }
};

static volatile sig_atomic_t stop_requested = 0;

static void
on_signal(int sig)
{
  stop_requested = 1;
}

static gboolean
write_files(const char *pair, const StereodFrame *f, float *buf, GError **error)
{
  if (pfm_dir == NULL && png16_dir == NULL && color_dir == NULL)
    return TRUE;
  if (!dump_frame_to_float(f, buf)) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                "ring %s has neither a disparity nor a float32 plane", pair);
    return FALSE;
  }
  int w = (int) f->width, h = (int) f->height;
  char base[128];
  g_snprintf(base, sizeof base, "%s-%08" G_GUINT64_FORMAT, pair, (guint64) f->frame_number);
  if (pfm_dir != NULL) {
    g_autofree char *name = g_strconcat(base, ".pfm", NULL);
    g_autofree char *path = g_build_filename(pfm_dir, name, NULL);
    if (!imageio_write_pfm(path, buf, w, h, (size_t) w * sizeof(float), error))
      return FALSE;
  }
  if (png16_dir != NULL) {
    g_autofree char *name = g_strconcat(base, ".png", NULL);
    g_autofree char *path = g_build_filename(png16_dir, name, NULL);
    if (!imageio_write_png16_disparity(path, buf, w, h, (size_t) w * sizeof(float), error))
      return FALSE;
  }
  if (color_dir != NULL) {
    g_autofree char *name = g_strconcat(base, ".jpg", NULL);
    g_autofree char *path = g_build_filename(color_dir, name, NULL);
    if (!imageio_write_color_jpeg(path, buf, w, h, (size_t) w * sizeof(float),
                                  max_disparity > 0 ? (float) max_disparity : 0.0f, 0, NULL,
                                  error))
      return FALSE;
  }
  return TRUE;
}

static gboolean
make_dirs(GError **error)
{
  const char *dirs[] = { pfm_dir, png16_dir, color_dir };
  for (guint i = 0; i < G_N_ELEMENTS(dirs); i++) {
    if (dirs[i] != NULL && g_mkdir_with_parents(dirs[i], 0755) < 0) {
      int e = errno;
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", dirs[i], g_strerror(e));
      return FALSE;
    }
  }
  return TRUE;
}

/* Why an open failed, for the operator: the path, and for an untrusted owner whose. */
static void
set_open_error(GError **error, const char *pair, int r)
{
  char path[4096];
  if (stereod_client_format_path(ring_dir, pair, path, sizeof path) < 0)
    g_snprintf(path, sizeof path, "%s", pair);
  if (r == -EPERM) {
    GStatBuf st;
    if (g_lstat(path, &st) == 0) {
      g_set_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                  "ring %s: owned by uid %u, not by a trusted writer (this user, root or "
                  "stereod); set STEREOD_RING_OWNER=%u to read it anyway", path,
                  (unsigned) st.st_uid, (unsigned) st.st_uid);
      return;
    }
  }
  g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: %s", path,
              r == -EPROTO ? "not a valid stereod ring (another layout version, or beyond "
                             "the limits of <stereod/ring.h>)"
              : r == -ETIMEDOUT ? "no ring appeared within the timeout (is its writer running?)"
                           : stereod_client_strerror(r));
}

static void
print_ring(const char *pair, StereodClient *client)
{
  static const char *const names[STEREOD_RING_PLANE_COUNT] = {
    "disparity", "depth", "confidence", "float32", "flow_u", "flow_v",
  };
  const StereodRingHeader *h = stereod_client_get_header(client);
  char planes[128] = "";
  for (unsigned k = 0; k < STEREOD_RING_PLANE_COUNT; k++)
    if (h->formats & STEREOD_RING_FORMAT(k)) {
      if (*planes)
        g_strlcat(planes, ",", sizeof planes);
      g_strlcat(planes, names[k], sizeof planes);
    }
  printf("ring %s: %ux%u formats=0x%x (%s) slots=%u writer=%d disparity_scale=%g "
         "fx=%.3f baseline=%.4f m\n",
         pair, h->width, h->height, h->formats, planes, h->slot_count, h->writer_pid,
         h->disparity_scale, h->calibration.fx, h->calibration.baseline);
}

static int
run(const char *pair, GError **error)
{
  StereodClientOpenParams params = { .pair = pair, .dir = ring_dir, .follow = follow };
  const char *owner = g_getenv("STEREOD_RING_OWNER");
  if (stereod_client_parse_owner(owner, &params) < 0) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "STEREOD_RING_OWNER=%s: not any, a uid or a user name", owner);
    return 1;
  }
  gint64 timeout_ns = timeout_s < 0 ? (follow ? -1 : 5000000000ll)
                      : timeout_s == 0 ? -1 : (gint64) (timeout_s * 1e9);
  StereodClient *client = NULL;
  int r = follow ? stereod_client_open_wait(&params, timeout_ns, &client)
                 : stereod_client_open_with(&params, &client);
  if (r < 0) {
    set_open_error(error, pair, r);
    return 1;
  }
  print_ring(pair, client);

  StereodFrame frame = STEREOD_FRAME_INIT;
  DumpMeter meter = { 0 };
  uint64_t last = 0, generation = stereod_client_get_generation(client);
  guint64 frames = 0;
  gsize buf_pixels = (gsize) stereod_client_get_width(client) * stereod_client_get_height(client);
  g_autofree float *buf = g_new(float, buf_pixels);
  int status = 0;
  while (!stop_requested && (count <= 0 || frames < (guint64) count)) {
    r = stereod_client_read_next(client, last, timeout_ns, &frame);
    if (r == -EPIPE) {
      printf("ring %s closed by its writer\n", pair);
      break;
    }
    if (r == -EINTR)
      continue;
    if (r == -EAGAIN)
      continue;   /* counted in the torn statistic of the summary */
    if (r < 0) {
      const char *why = r == -EPROTO ? "the ring's header changed after it was opened (a "
                                       "broken or hostile writer)"
                                     : stereod_client_strerror(r);
      g_autofree char *detail = NULL;
      if (r == -ETIMEDOUT || r == -EBADMSG)
        detail = g_strdup_printf(" (%.3g s)%s", timeout_ns / 1e9,
                                 stereod_client_writer_is_alive(client)
                                 ? "" : ", and its writer is gone");
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: %s%s",
                  stereod_client_get_path(client), why, detail != NULL ? detail : "");
      status = 1;
      break;
    }
    if (stereod_client_get_generation(client) != generation) {
      generation = stereod_client_get_generation(client);
      printf("ring %s: following a new writer (pid %d, %ux%u); counters restart\n", pair,
             (int) stereod_client_get_writer_pid(client), frame.width, frame.height);
      meter = (DumpMeter) { 0 };   /* rates per writer: its counter restarted */
    }
    if ((gsize) frame.width * frame.height > buf_pixels) {
      buf_pixels = (gsize) frame.width * frame.height;
      g_free(buf);
      buf = g_new(float, buf_pixels);
    }
    last = frame.counter;
    frames++;
    guint64 skipped = dump_meter_add(&meter, &frame, g_get_monotonic_time());
    if (!quiet) {
      g_autofree char *line = dump_format_frame(&frame, skipped, (guint64) g_get_real_time() * 1000u);
      printf("%s\n", line);
    }
    if (!write_files(pair, &frame, buf, error)) {
      status = 1;
      break;
    }
  }

  StereodClientStats stats;
  stereod_client_get_stats(client, &stats);
  printf("frames=%" G_GUINT64_FORMAT " read_rate=%.2f/s writer_rate=%.2f/s skipped=%"
         G_GUINT64_FORMAT " torn=%" G_GUINT64_FORMAT "\n",
         frames, dump_meter_get_read_rate(&meter), dump_meter_get_writer_rate(&meter),
         meter.skipped, (guint64) stats.torn);
  fflush(stdout);
  stereod_frame_clear(&frame);
  stereod_client_close(client);
  return status;
}

int
main(int argc, char **argv)
{
  setvbuf(stdout, NULL, _IOLBF, 0);   /* lines go out as frames arrive, also into pipes */
  g_autoptr(GOptionContext) ctx = g_option_context_new("PAIR - print (and save) the frames of a stereod ring");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
    g_printerr("stereod-dump: %s (see --help)\n", error->message);
    return 64;   /* EX_USAGE */
  }
  if (version) {
    printf("stereod-dump %s\n", STEREOD_VERSION);
    return 0;
  }
  if (argc != 2) {
    g_printerr("stereod-dump: exactly one PAIR expected (see --help)\n");
    return 64;
  }
  if (!make_dirs(&error)) {
    g_printerr("stereod-dump: %s\n", error->message);
    return 1;
  }
  struct sigaction sa = { .sa_handler = on_signal };   /* no SA_RESTART: wait returns -EINTR */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  int status = run(argv[1], &error);
  if (error != NULL)
    g_printerr("stereod-dump: %s\n", error->message);
  return status;
}
