/* stereod-heightmap: fuses the depth rings of every camera pair into one height map of
 * the pitch, finds the players and publishes both.
 *
 *   stereod-heightmap [--config FILE] [--check-config] [--json] [--table] [--png DIR]
 *                     [--frames N] [--device DEV] [--no-publish] [--version]
 *
 * Reads the rings its configuration names (heightmap/heightmap.h, config/heightmap.conf),
 * fuses the frames whose capture times agree, and for every fused frame publishes the
 * height map to the ring DIR/stereod.<ring> (DIR: <stereod/ring.h>) (plane FLOAT32 metres, or DEPTH u16 mm
 * with format=mm; the grid in the header's producer[], <stereod/ring.h>) and the players
 * as one JSON line to the clients of the Unix socket `socket=`, and to stdout with
 * --json. --table shows a live table of the players instead; --png DIR writes a colour
 * PNG of every fused frame. Runs until SIGTERM/SIGINT (or N fused frames with --frames).
 * One builder owns a socket and a ring: a second one with the same socket or ring
 * refuses to start (status 1, "another stereod-heightmap serves SOCKET") and touches
 * neither (HeightmapInstance, heightmap_server_new). --no-publish serves no socket and
 * publishes no ring, for an operator's --table or --json beside the running service.
 * A pair whose ring or frames are bad is left out (one warning) and tried again later;
 * the other pairs go on (sources.c, reader.c).
 * SIGHUP reads the same file again: the thresholds of the fusion, the blobs and the
 * tracks and the timing of the frame choice apply from the next fused frame (the tracks
 * stay); the grid, pool, socket, ring, format and the pairs need a restart (one warning
 * each, their running values stay); a file that does not load changes nothing (one
 * warning). Under systemd: READY=1 once the GPU and the rings' readers are up,
 * RELOADING=1 ... READY=1 around a reload, WATCHDOG=1 from the loop, STATUS= with the
 * fused-frame rate and time. With `metrics=` (not with --no-publish) the builder's
 * Prometheus metrics are served on http://ADDRESS:PORT/metrics (heightmap.h, metrics).
 * Exit status: 0, 78 for a bad configuration, 64 for a bad
 * command line, 1 when the GPU or the output fails.
 */
#include <errno.h>
#include <gio/gio.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stereod/client.h>

#include "client/ring-writer.h"
#include "common/notify.h"
#include "heightmap/sources.h"
#include "stereod-config.h"

#define STATUS_INTERVAL_US (5 * G_USEC_PER_SEC)
#define TABLE_INTERVAL_US (200 * 1000)
#define TABLE_MAX_ROWS 40
#define LOOP_SLICE_NS (250 * 1000000ull)

static volatile sig_atomic_t stop_requested, reload_requested;

/* Every failing function here sets its error; this only keeps a broken promise from
 * turning into a NULL dereference on the way out. */
static const char *
error_text(const GError *error)
{
  return error ? error->message : "failed without an error message";
}

/* Only flags: the main loop (woken at least every LOOP_SLICE_NS) does the work. */
static void
on_signal(int sig)
{
  if (sig == SIGHUP)
    reload_requested = 1;
  else
    stop_requested = sig;
}

typedef struct {
  HeightmapConfig *cfg;
  GpuContext *gpu;
  HeightmapFusion *fusion;
  HeightmapBlobFinder *finder;
  HeightmapVelocity *velocity;
  HeightmapTracker *tracker;
  HeightmapServer *server;
  HeightmapSources *sources;
  HeightmapInstance *instance;
  HeightmapMetrics *metrics;
  RingWriter *ring;
  float *heights;
  uint32_t *masks;
  uint16_t *mm;
  GString *line;
  /* options */
  bool json, table, no_publish;
  char *png_dir;
  gint64 max_frames;
  /* stats */
  uint64_t fused;
  double ms_sum, ms_max;
  uint64_t ms_count;
  double run_ms_sum, run_ms_max;   /* over the whole run, for the summary at exit */
  double run_scatter_ms, run_resolve_ms;   /* of run_ms_sum: the uploads and scatter, the
                                              resolve and its readback; the rest is blobs,
                                              tracks and outputs */
  gint64 last_status, last_table, last_ping;
  int prepared[HEIGHTMAP_MAX_PAIRS][2];   /* the size each pair's fusion images were made
                                             for when its ring opened (builder_prepare) */
} Builder;

static bool builder_start_ring(Builder *b, GError **error);
static bool builder_start_server(Builder *b, GError **error);

static void
builder_clear(Builder *b)
{
  heightmap_sources_free(b->sources);
  ring_writer_free(b->ring);
  heightmap_server_free(b->server);
  heightmap_tracker_free(b->tracker);
  heightmap_velocity_free(b->velocity);
  heightmap_blob_finder_free(b->finder);
  heightmap_fusion_free(b->fusion);
  gpu_context_free(b->gpu);
  heightmap_metrics_free(b->metrics);
  heightmap_instance_free(b->instance);
  heightmap_config_free(b->cfg);
  g_free(b->heights);
  g_free(b->masks);
  g_free(b->mm);
  if (b->line)
    g_string_free(b->line, TRUE);
  g_free(b->png_dir);
}

static bool
builder_start(Builder *b, const char *device, GError **error)
{
  const HeightmapConfig *c = b->cfg;
  const HeightmapGrid *g = &c->grid;
  /* First of all, before the GPU and before anything the running builder owns. */
  if (!b->no_publish && !(b->instance = heightmap_instance_new(c->socket_path, c->ring_name,
                                                               error)))
    return false;
  /* --no-publish runs beside the service: they leave its metrics port alone too */
  if (!b->no_publish && c->metrics_address) {
    if (!(b->metrics = heightmap_metrics_new(c, error)))
      return false;
    g_autofree char *url = heightmap_metrics_get_url(b->metrics);
    g_message("metrics on %s", url);
  }
  GpuContextParams gp = { .label = "heightmap", .device = device };
  if (!(b->gpu = gpu_context_new(&gp, error)))
    return false;
  g_message("GPU: %s (%s)", gpu_context_get_renderer(b->gpu), gpu_context_get_device(b->gpu));
  HeightmapFusionParams fp = heightmap_config_fusion_params(c);
  if (!(b->fusion = heightmap_fusion_new(b->gpu, &fp, error)))
    return false;
  HeightmapBlobParams bp = heightmap_config_blob_params(c);
  b->finder = heightmap_blob_finder_new(g, &bp);
  HeightmapVelocityParams vp = heightmap_config_velocity_params(c);
  b->velocity = heightmap_velocity_new(g, &vp);
  HeightmapTrackerParams tp = heightmap_config_tracker_params(c);
  b->tracker = heightmap_tracker_new(&tp);
  size_t cells = (size_t) g->width * g->height;
  b->heights = g_new(float, cells);
  b->masks = g_new(uint32_t, cells);
  b->mm = g_new(uint16_t, cells);
  b->line = g_string_sized_new(4096);
  if (!b->no_publish && !(builder_start_ring(b, error) && builder_start_server(b, error)))
    return false;
  if (!(b->sources = heightmap_sources_new(c, error)))
    return false;
  g_message("grid %dx%d cells of %.2f m over x [%.1f, %.1f], y [%.1f, %.1f]; %d pairs; "
            "ring %s", g->width, g->height, g->cell, g->x0, g->x1, g->y0, g->y1, c->n_pairs,
            b->ring ? ring_writer_get_path(b->ring) : "none (--no-publish)");
  return true;
}

/* The ring before the socket: ring_writer_new leaves a ring whose writer is alive alone
 * (-EBUSY), so a clash is refused before the socket is looked at. */
static bool
builder_start_ring(Builder *b, GError **error)
{
  const HeightmapConfig *c = b->cfg;
  const HeightmapGrid *g = &c->grid;
  RingWriterParams rp = {
    .name = c->ring_name, .width = (uint32_t) g->width, .height = (uint32_t) g->height,
    .formats = c->format == HEIGHTMAP_FORMAT_FLOAT ? STEREOD_RING_FORMAT_FLOAT32
                                                   : STEREOD_RING_FORMAT_DEPTH,
    .producer = { 2.0, g->x0, g->y0, g->cell, g->width, g->height },
  };
  char why[512];
  int r = ring_writer_new_with_error(&rp, &b->ring, why, sizeof why);
  if (r == -EBUSY) {
    char path[4096];
    if (stereod_client_format_path(NULL, c->ring_name, path, sizeof path) < 0)
      g_strlcpy(path, c->ring_name, sizeof path);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY,
                "another process publishes the ring %s (its writer is alive): not replacing it",
                path);
    return false;
  }
  if (r < 0) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "%s", why);
    return false;
  }
  return true;
}

static bool
builder_start_server(Builder *b, GError **error)
{
  const char *path = b->cfg->socket_path;
  return !path || (b->server = heightmap_server_new(path, error)) != NULL;
}

/* SIGHUP, on the main loop's thread (the GPU's): loads the file again and hands what can
 * change while running to the objects, from the next fused frame on. b->cfg stays the
 * running configuration (the sources point into its pairs), updated in place. */
static void
builder_reload(Builder *b)
{
  HeightmapConfig *c = b->cfg;
  /* MONOTONIC_USEC: systemd >= 253 matches the READY=1 to this reload. */
  stereod_notifyf("RELOADING=1\nMONOTONIC_USEC=%" G_GINT64_FORMAT, g_get_monotonic_time());
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapConfig) next = heightmap_config_load(c->path, &error);
  if (!next) {
    g_warning("reload: %s; keeping the running configuration", error_text(error));
    stereod_notify("READY=1");
    return;
  }
  g_autoptr(GString) changed = g_string_new(NULL);
  g_autoptr(GPtrArray) fixed = g_ptr_array_new_with_free_func(g_free);
  bool live = heightmap_config_update(c, next, changed, fixed);
  for (guint i = 0; i < fixed->len; i++)
    g_warning("%s", (const char *) fixed->pdata[i]);
  if (live) {
    HeightmapFusionParams fp = heightmap_config_fusion_params(c);
    heightmap_fusion_set_params(b->fusion, &fp);
    HeightmapBlobParams bp = heightmap_config_blob_params(c);
    heightmap_blob_finder_set_params(b->finder, &bp);
    HeightmapVelocityParams vp = heightmap_config_velocity_params(c);
    heightmap_velocity_set_params(b->velocity, &vp);
    HeightmapTrackerParams tp = heightmap_config_tracker_params(c);
    heightmap_tracker_set_params(b->tracker, &tp);
    HeightmapSelectParams sp = heightmap_select_params(c);
    heightmap_sources_set_select(b->sources, &sp);
  }
  g_message("reloaded %s: %s", c->path,
            live ? changed->str
                 : fixed->len ? "nothing that applies without a restart changed" : "no change");
  stereod_notify("READY=1");
}

static void
publish_ring(Builder *b, uint64_t capture_ns)
{
  if (!b->ring)
    return;
  const HeightmapGrid *g = &b->cfg->grid;
  const void *planes[STEREOD_RING_PLANE_COUNT] = { 0 };
  if (b->cfg->format == HEIGHTMAP_FORMAT_FLOAT) {
    planes[STEREOD_RING_PLANE_FLOAT32] = b->heights;
  } else {
    size_t n = (size_t) g->width * g->height;
    for (size_t i = 0; i < n; i++) {
      float h = b->heights[i];
      b->mm[i] = isnan(h) ? 0 : (uint16_t) CLAMP(lrintf(h * 1000.0f), 1, 65535);
    }
    planes[STEREOD_RING_PLANE_DEPTH] = b->mm;
  }
  RingWriterMeta meta = { .frame_number = b->fused, .capture_ns = capture_ns };
  int r = ring_writer_publish(b->ring, &meta, planes);
  if (r < 0)
    g_warning("publishing to %s: %s, ignoring", ring_writer_get_path(b->ring), g_strerror(-r));
}

static void
show_table(Builder *b, uint64_t time_ns, const char *const *names, int n_names,
           const HeightmapTrack *t, int n)
{
  GString *s = g_string_sized_new(4096);
  if (isatty(STDOUT_FILENO))
    g_string_append(s, "\033[H\033[J");
  g_string_append_printf(s, "fused frame %" G_GUINT64_FORMAT "  capture %.3f s  pairs:",
                         b->fused, (double) time_ns * 1e-9);
  for (int i = 0; i < n_names; i++)
    g_string_append_printf(s, " %s", names[i]);
  g_string_append_printf(s, "  players: %d  (%.1f ms per fused frame)\n", n,
                         b->ms_count ? b->ms_sum / (double) b->ms_count : 0.0);
  g_string_append(s, "   id       x m      y m   height m  area m2   speed m/s\n");
  for (int i = 0; i < MIN(n, TABLE_MAX_ROWS); i++)
    g_string_append_printf(s, "%5u  %8.2f %8.2f   %6.2f   %6.2f   %6.1f\n", t[i].id, t[i].x,
                           t[i].y, t[i].height, t[i].area, hypot(t[i].vx, t[i].vy));
  if (n > TABLE_MAX_ROWS)
    g_string_append_printf(s, "  ... %d more\n", n - TABLE_MAX_ROWS);
  fputs(s->str, stdout);
  fflush(stdout);
  g_string_free(s, TRUE);
}

/* One fused frame: GPU fusion, blobs, tracks, outputs. A pair whose frame the fusion
 * refuses is left out (heightmap_sources_drop) and the others are fused; FALSE only when
 * the GPU failed, which no pair can be fused without. */
static bool
builder_fuse(Builder *b, const HeightmapSourceFrame *f, int n, GError **error)
{
  gint64 t0 = g_get_monotonic_time();
  const char *names[HEIGHTMAP_MAX_PAIRS];
  int fused_pairs[HEIGHTMAP_MAX_PAIRS];
  bool fused[HEIGHTMAP_MAX_PAIRS] = { false };
  int n_names = 0;
  uint64_t time_ns = 0;
  if (!heightmap_fusion_begin(b->fusion, error))
    return false;
  for (int i = 0; i < n; i++) {
    g_autoptr(GError) local = NULL;
    if (!heightmap_fusion_add(b->fusion, f[i].pair, &f[i].geometry, &f[i].input, &local)) {
      if (gpu_context_is_failed(b->gpu)) {
        g_propagate_error(error, g_steal_pointer(&local));
        return false;
      }
      heightmap_sources_drop(b->sources, f[i].pair, error_text(local));
      if (b->metrics)
        heightmap_metrics_refused(b->metrics, f[i].pair);
      continue;
    }
    heightmap_blob_finder_set_camera(b->finder, f[i].pair, &f[i].geometry, f[i].input.width,
                                     f[i].input.height);
    fused[i] = true;
    fused_pairs[n_names] = f[i].pair;
    names[n_names++] = f[i].name;
    time_ns = MAX(time_ns, f[i].capture_ns);
  }
  if (n_names == 0)
    return true;   /* every frame of the set was refused: nothing to publish */
  gint64 t_scatter = g_get_monotonic_time();
  if (!heightmap_fusion_finish(b->fusion, b->heights, b->masks, error))
    return false;
  gint64 t_resolve = g_get_monotonic_time();
  heightmap_blob_finder_set_support(b->finder, heightmap_fusion_get_support(b->fusion));
  heightmap_blob_finder_set_body_masks(b->finder, heightmap_fusion_get_body_masks(b->fusion));
  heightmap_blob_finder_set_lower(b->finder, heightmap_fusion_get_lower(b->fusion));
  heightmap_blob_finder_set_see_through(b->finder,
                                        heightmap_fusion_get_see_through(b->fusion));
  const HeightmapBlob *blobs;
  int nb = heightmap_blob_finder_run(b->finder, b->heights, b->masks, &blobs);
  /* the blobs' velocities from the flow of the pixels fused into them; every fused
   * pair's disparity is kept for its next frame's flow */
  heightmap_velocity_begin(b->velocity, heightmap_blob_finder_get_labels(b->finder), nb);
  for (int i = 0; i < n; i++)
    if (fused[i])
      heightmap_velocity_add(b->velocity, f[i].pair, &f[i].geometry, &f[i].input,
                             f[i].frame_number, f[i].capture_ns);
  blobs = heightmap_velocity_finish(b->velocity, blobs, nb);
  const HeightmapTrack *tracks;
  int nt = heightmap_tracker_update(b->tracker, time_ns, blobs, nb, &tracks);
  publish_ring(b, time_ns);
  g_string_truncate(b->line, 0);
  heightmap_json_append(b->line, time_ns, b->fused, names, n_names, tracks, nt);
  double ms = (double) (g_get_monotonic_time() - t0) * 1e-3;
  b->ms_sum += ms;
  b->ms_max = MAX(b->ms_max, ms);
  b->ms_count++;
  b->run_ms_sum += ms;
  b->run_scatter_ms += (double) (t_scatter - t0) * 1e-3;
  b->run_resolve_ms += (double) (t_resolve - t_scatter) * 1e-3;
  b->run_ms_max = MAX(b->run_ms_max, ms);
  if (b->metrics)
    heightmap_metrics_fused(b->metrics, fused_pairs, n_names, nt, ms * 1e-3);
  if (b->server)
    heightmap_server_send(b->server, b->line->str, b->line->len);
  if (b->json) {
    fputs(b->line->str, stdout);
    fflush(stdout);
  }
  gint64 now = g_get_monotonic_time();
  if (b->table && now - b->last_table >= TABLE_INTERVAL_US) {
    b->last_table = now;
    show_table(b, time_ns, names, n_names, tracks, nt);
  }
  if (b->png_dir) {
    g_autofree char *name = g_strdup_printf("heightmap-%06" G_GUINT64_FORMAT ".png", b->fused);
    g_autofree char *path = g_build_filename(b->png_dir, name, NULL);
    g_autoptr(GError) local = NULL;
    if (!heightmap_view_write_png(path, &b->cfg->grid, b->heights, tracks, nt, &local))
      g_warning("%s, ignoring", local->message);
  }
  b->fused++;
  return true;
}

/* A pair whose ring opened (or changed size) gets its fusion images now, not in its
 * first fused frame: the frame loop makes no GL object. A size the GPU cannot take is
 * logged; that pair's frames are then refused one by one (builder_fuse). */
static void
builder_prepare(Builder *b)
{
  for (int i = 0; i < b->cfg->n_pairs; i++) {
    int w, h;
    if (!heightmap_sources_get_size(b->sources, i, &w, &h) ||
        (b->prepared[i][0] == w && b->prepared[i][1] == h))
      continue;
    b->prepared[i][0] = w;
    b->prepared[i][1] = h;
    g_autoptr(GError) error = NULL;
    gint64 t0 = g_get_monotonic_time();
    if (!heightmap_fusion_prepare(b->fusion, i, w, h, &error))
      g_warning("heightmap: [pair %s] %dx%d frames: %s", b->cfg->pairs[i].name, w, h,
                error_text(error));
    else
      g_message("heightmap: [pair %s] fusion images for %dx%d frames made in %.1f ms",
                b->cfg->pairs[i].name, w, h, (double) (g_get_monotonic_time() - t0) * 1e-3);
  }
}

/* At exit: what became of every pair's frames (heightmap_sources_get_counts), one line
 * per pair that read any. */
static void
builder_log_counts(Builder *b)
{
  for (int i = 0; b->sources && i < b->cfg->n_pairs; i++) {
    HeightmapPairCounts c;
    heightmap_sources_get_counts(b->sources, i, &c);
    if (!c.read)
      continue;
    g_message("heightmap: [pair %s] %" G_GUINT64_FORMAT " frames read (%" G_GUINT64_FORMAT
              " passed over in the ring), %" G_GUINT64_FORMAT " fused, %" G_GUINT64_FORMAT
              " dropped from its last %d before a set took them, %" G_GUINT64_FORMAT " behind a "
              "set, %" G_GUINT64_FORMAT " late", b->cfg->pairs[i].name, c.read, c.missed,
              c.fused, c.replaced, HEIGHTMAP_HISTORY, c.behind, c.late);
  }
}

static void
builder_tick(Builder *b)
{
  gint64 now = g_get_monotonic_time();
  guint64 ping = stereod_watchdog_interval_us();
  if (ping && (guint64) (now - b->last_ping) >= ping) {
    stereod_notify("WATCHDOG=1");
    b->last_ping = now;
  }
  if (b->metrics) {
    for (int i = 0; i < b->cfg->n_pairs; i++)
      heightmap_metrics_set_open(b->metrics, i, heightmap_sources_is_open(b->sources, i));
    heightmap_metrics_set_clients(b->metrics,
                                  b->server ? heightmap_server_get_clients(b->server) : 0);
  }
  if (now - b->last_status < STATUS_INTERVAL_US)
    return;
  double secs = (double) (now - b->last_status) * 1e-6;
  b->last_status = now;
  GString *open = g_string_new(NULL);
  for (int i = 0; i < b->cfg->n_pairs; i++)
    if (heightmap_sources_is_open(b->sources, i))
      g_string_append_printf(open, "%s%s", open->len ? "," : "", b->cfg->pairs[i].name);
  double mean = b->ms_count ? b->ms_sum / (double) b->ms_count : 0;
  stereod_notifyf("STATUS=%.1f fused frames/s, %.1f ms each (max %.1f); rings open: %s",
                  (double) b->ms_count / secs, mean, b->ms_max, open->len ? open->str : "none");
  if (!b->json && !b->table)
    g_message("%.1f fused frames/s, %.1f ms each (max %.1f); rings open: %s",
              (double) b->ms_count / secs, mean, b->ms_max, open->len ? open->str : "none");
  g_string_free(open, TRUE);
  b->ms_sum = b->ms_max = 0;
  b->ms_count = 0;
}

int
main(int argc, char **argv)
{
  setlocale(LC_ALL, "");
  /* stdout carries the JSON lines or the table: debug and info messages (G_MESSAGES_DEBUG)
   * go to stderr with the rest */
  g_log_writer_default_set_use_stderr(TRUE);
  g_autofree char *config_path = NULL, *device = NULL, *png_dir = NULL;
  gboolean check = FALSE, json = FALSE, table = FALSE, no_publish = FALSE, version = FALSE;
  gint64 frames = 0;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
      "Configuration file (default " STEREOD_SYSCONFDIR "/stereod/heightmap.conf)", "FILE" },
    { "check-config", 0, 0, G_OPTION_ARG_NONE, &check, "Validate the configuration and exit",
      NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Players as JSON lines on stdout", NULL },
    { "table", 0, 0, G_OPTION_ARG_NONE, &table, "A live table of the players on stdout",
      NULL },
    { "png", 0, 0, G_OPTION_ARG_FILENAME, &png_dir, "Write a PNG of every height map to DIR",
      "DIR" },
    { "frames", 0, 0, G_OPTION_ARG_INT64, &frames, "Stop after N fused frames", "N" },
    { "device", 0, 0, G_OPTION_ARG_STRING, &device,
      "EGL device: auto, hardware, software, surfaceless or an index", "DEV" },
    { "no-publish", 0, 0, G_OPTION_ARG_NONE, &no_publish,
      "No socket and no ring: for --json, --table or --png beside the service", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("- height map of the pitch and players");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_option_context_set_description(oc,
    "One stereod-heightmap owns the socket= and the ring= of its configuration (a lock\n"
    "file beside each: SOCKET.lock, DIR/stereod.RING~lock). A second one with the\n"
    "same socket or ring, --json and --table runs included, refuses to start (status 1,\n"
    "\"another stereod-heightmap serves SOCKET\") and leaves the running one's socket and\n"
    "ring alone. To watch the players on a machine where the service runs, add\n"
    "--no-publish: that run reads the pairs' rings and fuses them itself, and touches\n"
    "neither the socket nor the ring (or read the service's socket: one JSON line per\n"
    "fused frame).\n"
    "\n"
    "Exit status: 0; 1 when the GPU or an output fails or another builder owns the\n"
    "socket or ring; 64 for a bad command line; 78 for a bad configuration.");
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || argc > 1 || frames < 0 ||
      (json && table) || (no_publish && !json && !table && !png_dir)) {
    fprintf(stderr, "stereod-heightmap: %s (see --help)\n", error ? error->message :
            argc > 1 ? "unexpected arguments" : frames < 0 ? "--frames must be >= 0" :
            json && table ? "--json and --table both write to stdout: pick one" :
            "--no-publish without --json, --table or --png has no output");
    return 64;
  }
  if (version) {
    printf("stereod-heightmap %s\n", STEREOD_VERSION);
    return 0;
  }
  if (!config_path)
    config_path = g_strdup(STEREOD_SYSCONFDIR "/stereod/heightmap.conf");

  Builder b = { .json = json, .table = table, .no_publish = no_publish,
                .png_dir = g_steal_pointer(&png_dir), .max_frames = frames };
  if (!(b.cfg = heightmap_config_load(config_path, &error))) {
    fprintf(stderr, "stereod-heightmap: %s\n", error->message);
    builder_clear(&b);
    return HEIGHTMAP_EXIT_CONFIG;
  }
  if (check) {
    printf("%s: OK (%d pairs, grid %dx%d)\n", config_path, b.cfg->n_pairs, b.cfg->grid.width,
           b.cfg->grid.height);
    builder_clear(&b);
    return 0;
  }
  if (b.png_dir && g_mkdir_with_parents(b.png_dir, 0755) < 0) {
    fprintf(stderr, "stereod-heightmap: %s: %s\n", b.png_dir, g_strerror(errno));
    builder_clear(&b);
    return 1;
  }
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  int status = 0;
  if (!builder_start(&b, device, &error)) {
    /* as the configuration's errors: not g_critical, which G_DEBUG=fatal-criticals
     * would turn into a crash of a clean refusal */
    fprintf(stderr, "stereod-heightmap: %s\n", error_text(error));
    builder_clear(&b);
    return 1;
  }
  stereod_notify("READY=1");
  b.last_status = b.last_ping = g_get_monotonic_time();
  while (!stop_requested && (b.max_frames == 0 || (gint64) b.fused < b.max_frames)) {
    if (reload_requested) {
      reload_requested = 0;
      builder_reload(&b);
    }
    builder_prepare(&b);
    const HeightmapSourceFrame *f;
    int n = heightmap_sources_next(b.sources, LOOP_SLICE_NS, &f);
    if (n > 0 && !builder_fuse(&b, f, n, &error)) {
      fprintf(stderr, "stereod-heightmap: %s\n", error_text(error));
      status = 1;
      break;
    }
    builder_tick(&b);
  }
  stereod_notify("STOPPING=1");
  if (b.fused) {   /* a short run (an offline replay) ends before the first status line */
    double n = (double) b.fused;
    g_message("%" G_GUINT64_FORMAT " fused frames, %.1f ms each (max %.1f): uploads and "
              "scatter %.1f, resolve and readback %.1f, blobs, tracks and outputs %.1f",
              b.fused, b.run_ms_sum / n, b.run_ms_max, b.run_scatter_ms / n,
              b.run_resolve_ms / n, (b.run_ms_sum - b.run_scatter_ms - b.run_resolve_ms) / n);
  }
  builder_log_counts(&b);
  builder_clear(&b);
  return status;
}
