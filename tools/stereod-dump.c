/* stereod-dump: prints the frames of a stereod ring and the measured rates, and
 * optionally writes them to files.
 *
 *   stereod-dump PAIR [--count N] [--timeout S] [--quiet]
 *                [--pfm DIR] [--png16 DIR] [--color DIR] [--max-disparity PX]
 *   stereod-dump --version
 *
 * One line per frame read (see dump_format_frame), then a summary line with the
 * frames read, the rate they were read at, the writer's publish rate, the frames
 * skipped and the torn copies retried. Files are named DIR/PAIR-FRAMENUMBER.{pfm,png,jpg}:
 * PFM float px (NaN = invalid), 16-bit PNG of px x 256 (KITTI), and a colour JPEG
 * scaled to --max-disparity (default: the frame's largest valid disparity). A ring
 * without a disparity plane has its FLOAT32 plane written instead.
 * Exit status: 0 after N frames, at the writer's close or at SIGINT/SIGTERM; 1 on error.
 */
#include "dump.h"
#include "imageio.h"

#include <gio/gio.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "stereod-config.h"

static gint count = 0;
static gdouble timeout_s = 5.0;
static gboolean quiet = FALSE;
static char *pfm_dir = NULL;
static char *png16_dir = NULL;
static char *color_dir = NULL;
static gdouble max_disparity = 0.0;
static gboolean version = FALSE;

static const GOptionEntry entries[] = {
  { "count", 'n', 0, G_OPTION_ARG_INT, &count, "Stop after N frames (0: never)", "N" },
  { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
  { "timeout", 't', 0, G_OPTION_ARG_DOUBLE, &timeout_s, "Give up after S s without a frame (default 5)", "S" },
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

static int
run(const char *pair, GError **error)
{
  StereodClient *client = NULL;
  int r = stereod_client_open(pair, &client);
  if (r < 0) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: %s%s", pair,
                g_strerror(-r), r == -ENOENT ? " (is its writer running?)" : "");
    return 1;
  }
  const StereodRingHeader *h = stereod_client_get_header(client);
  printf("ring %s: %ux%u formats=0x%x slots=%u writer=%d disparity_scale=%g "
         "fx=%.3f baseline=%.4f m\n",
         pair, h->width, h->height, h->formats, h->slot_count, h->writer_pid,
         h->disparity_scale, h->calibration.fx, h->calibration.baseline);

  g_autofree float *buf = g_new(float, (gsize) h->width * h->height);
  StereodFrame frame = STEREOD_FRAME_INIT;
  DumpMeter meter = { 0 };
  uint64_t last = 0;
  int status = 0;
  while (!stop_requested && (count <= 0 || meter.frames < (guint64) count)) {
    r = stereod_client_wait(client, last, (gint64) (timeout_s * 1e9), NULL);
    if (r == -EPIPE) {
      printf("ring %s closed by its writer\n", pair);
      break;
    }
    if (r == -EINTR)
      continue;
    if (r < 0) {
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: waiting: %s%s", pair,
                  g_strerror(-r), r == -ESTALE ? " (the writer restarted)" : "");
      status = 1;
      break;
    }
    r = stereod_client_read_latest(client, &frame);
    if (r == -EAGAIN)
      continue;   /* counted in the torn statistic of the summary */
    if (r < 0) {
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: reading: %s", pair,
                  g_strerror(-r));
      status = 1;
      break;
    }
    last = frame.counter;
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
         meter.frames, dump_meter_get_read_rate(&meter), dump_meter_get_writer_rate(&meter),
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
    g_printerr("stereod-dump: %s\n", error->message);
    return 1;
  }
  if (version) {
    printf("stereod-dump %s\n", STEREOD_VERSION);
    return 0;
  }
  if (argc != 2) {
    g_printerr("stereod-dump: exactly one PAIR expected (see --help)\n");
    return 1;
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
