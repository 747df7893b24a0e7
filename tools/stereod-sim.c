/* stereod-sim: a synthetic football stadium seen by stereo pairs, with exact ground truth.
 *
 *   stereod-sim --config FILE [--out DIR] [--frames N] [--threads N] [--quiet]
 *   stereod-sim --stadium-seed N --out DIR [--pairs P] [--scale S] [--frames N]
 *               [--ring-prefix PREFIX] [--describe] [--configs-only]
 *
 * --stadium-seed renders the random stadium of seed N (tools/sim/sim-stadium.c) and
 * writes beside the clip what a run of the service needs (tools/sim/stadium.h): the drawn
 * config (DIR/stadium.conf), DIR/stereod.conf (offline mode, one [pair] per camera pair
 * replaying its frames through GStreamer), DIR/heightmap.conf, and a players.csv with
 * heights, footprints and the pairs that see each player. --describe prints the drawn
 * config and renders nothing; --configs-only writes DIR/stadium.conf, DIR/stereod.conf and
 * DIR/heightmap.conf and renders nothing (a clip rendered earlier gets this build's
 * settings: bench/stadium-bench.sh keeps rendered clips).
 *
 * Writes, per pair NAME: DIR/NAME/left/%06d.{jpg,png}, DIR/NAME/right/%06d.{jpg,png},
 * DIR/NAME/gt/%06d.pfm (disparity of the left rectified view, +inf where no surface)
 * and DIR/NAME/calib.conf; once: DIR/players.csv (frame,time_ns,id,x,y: ground contact
 * point in pitch metres) and DIR/ball.csv (frame,time_ns,x,y,z: ball centre).
 * Frame i is the scene at t = i / fps seconds; its capture time is
 * start_time_ns + round(i * 1e9 / fps).
 *
 * Exit status: 0 done, 1 an output could not be written, 64 bad command line,
 * 78 (EX_CONFIG) bad config file. */
#include <glib.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "tools/sim/stadium.h"
#include "stereod-config.h"

#define EXIT_USAGE 64
#define EXIT_CONFIG 78

typedef struct {
  SimCamera camera;
  char *dir;
  double gt_min, gt_max;
  double render_s, write_s;
} PairState;

static bool
make_dirs(const char *out, const SimConfig *cfg, PairState *pairs, GError **error)
{
  static const char *const sub[] = { "left", "right", "gt" };
  for (int i = 0; i < cfg->n_pairs; i++) {
    pairs[i].dir = g_build_filename(out, cfg->pairs[i].name, NULL);
    for (gsize k = 0; k < G_N_ELEMENTS(sub); k++) {
      g_autofree char *d = g_build_filename(pairs[i].dir, sub[k], NULL);
      if (g_mkdir_with_parents(d, 0755) != 0) {
        g_set_error(error, SIM_ERROR, SIM_ERROR_IO, "%s: %s", d, g_strerror(errno));
        return false;
      }
    }
    sim_camera_init(&pairs[i].camera, &cfg->pairs[i]);
    StereoCalib calib;
    sim_camera_get_calib(&pairs[i].camera, &calib);
    g_autofree char *path = g_build_filename(pairs[i].dir, "calib.conf", NULL);
    if (!calib_save(path, &calib, error))
      return false;
    pairs[i].gt_min = INFINITY;
    pairs[i].gt_max = -INFINITY;
  }
  return true;
}

static bool
write_frame(const SimConfig *cfg, PairState *ps, int frame, const uint8_t *left,
            const uint8_t *right, const float *gt, GError **error)
{
  const SimPairConfig *p = ps->camera.config;
  const char *ext = cfg->format == SIM_FORMAT_PNG ? "png" : "jpg";
  const uint8_t *img[2] = { left, right };
  static const char *const side[2] = { "left", "right" };
  for (int v = 0; v < 2; v++) {
    g_autofree char *name = g_strdup_printf("%06d.%s", frame, ext);
    g_autofree char *path = g_build_filename(ps->dir, side[v], name, NULL);
    bool ok = cfg->format == SIM_FORMAT_PNG
                ? sim_write_png(path, img[v], p->width, p->height, error)
                : sim_write_jpeg(path, img[v], p->width, p->height, cfg->jpeg_quality, error);
    if (!ok)
      return false;
  }
  g_autofree char *name = g_strdup_printf("%06d.pfm", frame);
  g_autofree char *path = g_build_filename(ps->dir, "gt", name, NULL);
  return sim_write_pfm(path, gt, p->width, p->height, error);
}

static bool
run(const SimConfig *cfg, const char *out, int threads, bool quiet, const char *ring_prefix,
    GError **error)
{
  g_autofree PairState *pairs = g_new0(PairState, cfg->n_pairs);
  bool ok = make_dirs(out, cfg, pairs, error);
  g_autofree char *players_path = g_build_filename(out, "players.csv", NULL);
  g_autofree char *ball_path = g_build_filename(out, "ball.csv", NULL);
  GString *players_csv = g_string_new(ring_prefix ? STADIUM_PLAYERS_HEADER
                                                  : "frame,time_ns,id,x,y\n");
  GString *ball_csv = g_string_new("frame,time_ns,x,y,z\n");
  g_autoptr(SimScene) scene = sim_scene_new(cfg);
  size_t max_px = 0;
  for (int i = 0; i < cfg->n_pairs; i++)
    max_px = MAX(max_px, (size_t)cfg->pairs[i].width * cfg->pairs[i].height);
  g_autofree uint8_t *left = g_malloc(max_px), *right = g_malloc(max_px);
  g_autofree float *gt = g_new(float, max_px);

  g_autofree SimCamera *cams = g_new0(SimCamera, cfg->n_pairs);
  for (int i = 0; i < cfg->n_pairs; i++)
    cams[i] = pairs[i].camera;
  for (int f = 0; ok && f < cfg->frames; f++) {
    gint64 time_ns = cfg->start_time_ns + (gint64)llround((double)f * 1e9 / cfg->fps);
    sim_scene_set_time(scene, (double)f / cfg->fps);
    for (int i = 0; i < sim_scene_get_n_players(scene); i++) {
      double x, y;
      sim_scene_get_player(scene, i, &x, &y, NULL);
      if (ring_prefix)
        stadium_append_player(players_csv, scene, cfg, cams, f, time_ns, i);
      else
        g_string_append_printf(players_csv, "%d,%" G_GINT64_FORMAT ",%d,%.4f,%.4f\n", f,
                               time_ns, i, x, y);
    }
    double ball[3];
    if (sim_scene_get_ball(scene, ball))
      g_string_append_printf(ball_csv, "%d,%" G_GINT64_FORMAT ",%.4f,%.4f,%.4f\n", f, time_ns,
                             ball[0], ball[1], ball[2]);
    for (int i = 0; ok && i < cfg->n_pairs; i++) {
      PairState *ps = &pairs[i];
      const SimPairConfig *p = &cfg->pairs[i];
      guint64 seed = sim_hash64(cfg->seed ^ sim_hash64(((guint64)i << 32) | (guint64)f));
      gint64 t0 = g_get_monotonic_time();
      sim_render_pair(scene, &ps->camera, cfg->supersample, seed, threads, left, right, gt);
      gint64 t1 = g_get_monotonic_time();
      ok = write_frame(cfg, ps, f, left, right, gt, error);
      ps->render_s += (t1 - t0) * 1e-6;
      ps->write_s += (g_get_monotonic_time() - t1) * 1e-6;
      for (size_t k = 0; k < (size_t)p->width * p->height; k++)
        if (isfinite(gt[k])) {
          ps->gt_min = MIN(ps->gt_min, gt[k]);
          ps->gt_max = MAX(ps->gt_max, gt[k]);
        }
    }
    if (!quiet && (f + 1) % 25 == 0)
      g_printerr("stereod-sim: %d/%d frames\n", f + 1, cfg->frames);
  }
  g_autoptr(GError) local = NULL;
  if (ok && ring_prefix)
    ok = stadium_write_configs(cfg, out, ring_prefix, error);
  if (ok && (!g_file_set_contents(players_path, players_csv->str, players_csv->len, &local) ||
             !g_file_set_contents(ball_path, ball_csv->str, ball_csv->len, &local))) {
    g_set_error(error, SIM_ERROR, SIM_ERROR_IO, "%s", local->message);
    ok = false;
  }
  g_string_free(players_csv, true);
  g_string_free(ball_csv, true);
  for (int i = 0; i < cfg->n_pairs; i++) {
    if (ok && !quiet)
      g_print("%s: %dx%d, %d frames, render %.1f ms/frame, write %.1f ms/frame, "
              "gt disparity %.2f..%.2f px\n",
              cfg->pairs[i].name, cfg->pairs[i].width, cfg->pairs[i].height, cfg->frames,
              1e3 * pairs[i].render_s / cfg->frames, 1e3 * pairs[i].write_s / cfg->frames,
              pairs[i].gt_min, pairs[i].gt_max);
    g_free(pairs[i].dir);
  }
  return ok;
}

int
main(int argc, char **argv)
{
  g_autofree char *config_path = NULL, *out = NULL, *ring_prefix = NULL;
  int frames = 0, threads = (int)g_get_num_processors(), n_pairs = 0;
  gint64 stadium_seed = -1;
  double scale = 1.0;
  gboolean quiet = FALSE, version = FALSE, describe = FALSE, configs_only = FALSE;
  GOptionEntry entries[] = {
    { "config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path, "Sim config file", "FILE" },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Output folder (default: [output] dir)",
      "DIR" },
    { "frames", 'n', 0, G_OPTION_ARG_INT, &frames, "Frames to render (default: [output] "
      "frames; 50 for --stadium-seed)", "N" },
    { "threads", 't', 0, G_OPTION_ARG_INT, &threads, "Render threads (default: all cores)",
      "N" },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print nothing but errors", NULL },
    { "stadium-seed", 's', 0, G_OPTION_ARG_INT64, &stadium_seed, "Render the random stadium "
      "of this seed (instead of --config)", "N" },
    { "pairs", 'p', 0, G_OPTION_ARG_INT, &n_pairs, "Camera pairs of the random stadium, 2..8 "
      "(default: drawn)", "P" },
    { "scale", 0, 0, G_OPTION_ARG_DOUBLE, &scale, "Image size factor of the random stadium, "
      "0.05..1 [1]", "S" },
    { "ring-prefix", 0, 0, G_OPTION_ARG_STRING, &ring_prefix, "Prefix of the ring names in "
      "the random stadium's stereod.conf [stadium<N>-]", "PREFIX" },
    { "describe", 0, 0, G_OPTION_ARG_NONE, &describe, "Print the random stadium's config and "
      "exit", NULL },
    { "configs-only", 0, 0, G_OPTION_ARG_NONE, &configs_only, "Write the random stadium's "
      "stadium.conf, stereod.conf and heightmap.conf into --out and render nothing", NULL },
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- render a synthetic stadium clip");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  bool parsed = g_option_context_parse(ctx, &argc, &argv, &error);
  if (parsed && version) {
    printf("stereod-sim %s\n", STEREOD_VERSION);
    return EXIT_SUCCESS;
  }
  bool stadium = stadium_seed >= 0;
  const char *bad = error ? error->message : argc != 1 ? "unexpected arguments"
                    : !config_path == !stadium ? "give one of --config FILE and --stadium-seed N"
                    : frames < 0 ? "--frames must be >= 0"
                    : threads < 1 || threads > 64 ? "--threads must be within 1..64"
                    : !stadium && (n_pairs || scale != 1.0 || ring_prefix || describe ||
                                   configs_only)
                      ? "--pairs, --scale, --ring-prefix, --describe and --configs-only need "
                        "--stadium-seed"
                    : n_pairs && (n_pairs < SIM_STADIUM_MIN_PAIRS ||
                                  n_pairs > SIM_STADIUM_MAX_PAIRS) ? "--pairs must be within 2..8"
                    : !(scale >= 0.05 && scale <= 1.0) ? "--scale must be within 0.05..1"
                    : ring_prefix && !stadium_valid_prefix(ring_prefix)
                      ? "--ring-prefix: 1-16 characters of A-Z a-z 0-9 _ -"
                    : stadium && !describe && !out ? "--stadium-seed needs --out DIR" : NULL;
  if (!parsed || bad) {
    g_printerr("stereod-sim: %s (usage: stereod-sim --config FILE [--out DIR] [--frames N], "
               "or --stadium-seed N --out DIR [--pairs P] [--scale S]; see --help)\n", bad);
    return EXIT_USAGE;
  }
  g_autoptr(SimConfig) cfg = NULL;
  if (stadium) {
    SimStadiumParams sp = { .seed = (guint64)stadium_seed, .pairs = n_pairs, .scale = scale,
                            .frames = frames > 0 ? frames : 50, .fps = 25.0 };
    g_autofree char *text = sim_stadium_describe(&sp);
    if (describe) {
      fputs(text, stdout);
      return EXIT_SUCCESS;
    }
    g_autofree char *name = g_strdup_printf("stadium %" G_GINT64_FORMAT, stadium_seed);
    cfg = sim_config_load_data(text, strlen(text), name, &error);
    g_autofree char *path = g_build_filename(out, "stadium.conf", NULL);
    if (cfg && (g_mkdir_with_parents(out, 0755) != 0 ||
                !g_file_set_contents(path, text, -1, NULL))) {
      g_printerr("stereod-sim: %s: cannot be written\n", path);
      return EXIT_FAILURE;
    }
    if (!ring_prefix)
      ring_prefix = g_strdup_printf("stadium%" G_GINT64_FORMAT "-", stadium_seed);
    if (configs_only) {
      if (!cfg || !stadium_write_configs(cfg, out, ring_prefix, &error)) {
        g_printerr("stereod-sim: %s\n", error->message);
        return cfg ? EXIT_FAILURE : EXIT_CONFIG;
      }
      return EXIT_SUCCESS;
    }
  } else {
    cfg = sim_config_load(config_path, &error);
  }
  if (!cfg) {
    g_printerr("stereod-sim: %s\n", error->message);
    return EXIT_CONFIG;
  }
  if (frames > 0)
    cfg->frames = frames;
  if (!out && !cfg->dir) {
    g_printerr("stereod-sim: %s: [output] dir: missing (or give --out)\n", config_path);
    return EXIT_CONFIG;
  }
  if (!run(cfg, out ? out : cfg->dir, threads, quiet, stadium ? ring_prefix : NULL, &error)) {
    g_printerr("stereod-sim: %s\n", error->message);
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
