/* test-heightmap-sim: the height-map builder end to end on a stereod-sim clip.
 *
 * The clip: the demo's geometry (config/demo/sim.conf: two pairs of 960x540 cameras on
 * the main stand, 16 m up, 18 m behind the near touchline, baseline 3 m, players 20-90 m
 * away), 22 players, FRAMES frames (1 s). Every frame goes through the builder's core
 * (GPU fusion, blobs, tracks) with the default configuration, once from the sim's exact
 * disparity (gt PFM rounded to the ring's 1/32 px) and once from the stereo engine's
 * output on the rendered images (s16 + confidence, as stereod publishes them, with the
 * demo's noise_floor, refine=true, window=2 and smoothing=1). The tracks of each fused
 * frame are scored against players.csv: a player counts when its body (1 m above its
 * ground point) projects into both views of at least one fused pair; a track within
 * MATCH_RADIUS of it (nearest first, one each) detects it. Reported: recall, RMSE of the
 * matched positions, false detections per frame, and how far the engine's depth on the
 * bodies lies in front of their axes (what visible_offset stands for). Required on both
 * inputs: recall >= 95 %, RMSE <= 0.15 m. A third case fuses frames of the first pair
 * alone: its players are still found, no cell carries another pair's bit, and the pair
 * list says so.
 *
 * STEREOD_HEIGHTMAP_CLIP=DIR uses an existing clip (every folder with a calib.conf is a
 * pair, up to MAX_PAIRS, taken in name order) instead of rendering;
 * STEREOD_HEIGHTMAP_FRAMES=N scores its first N frames (default: all, as players.csv
 * lists them); STEREOD_HEIGHTMAP_REFINE=0 turns the filter's refinement off (the demo
 * on a GPU too slow for it); STEREOD_HEIGHTMAP_CONF="key=value\n..." adds [heightmap] keys to the
 * defaults (to measure other settings); STEREOD_HEIGHTMAP_PNG=PREFIX writes every fused
 * map.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "heightmap/heightmap.h"
#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tools/imageio.h"

#define FRAMES 25
#define MATCH_RADIUS 1.0
#define MAX_RMSE 0.15
#define MAX_PAIRS 8

static const char sim_conf[] =
  "[output]\nframes=25\nfps=25\nstart_time_ns=1000000000\nformat=jpg\nseed=1\n"
  "supersample=2\n"
  "[scene]\nplayers=22\n"
  "[pair west]\nposition=-26,-52,16\nlook_at=-26,-8,0\nbaseline=3\nfocal=1050\n"
  "width=960\nheight=540\nnoise=1.5\n"
  "[pair east]\nposition=26,-52,16\nlook_at=26,-8,0\nbaseline=3\nfocal=1050\n"
  "width=960\nheight=540\nnoise=1.5\n";

typedef struct {
  int frame;
  gint64 time_ns;
  int id;
  double x, y;
} Player;

typedef struct {
  char *tmp_dir;
  char *clip;
  int frames;               /* scored: all of players.csv's, or STEREOD_HEIGHTMAP_FRAMES */
  int n_pairs;
  char *names[MAX_PAIRS];   /* the clip's pair folders (with a calib.conf), sorted */
  StereoCalib calib[MAX_PAIRS];
  HeightmapPairGeometry geom[MAX_PAIRS];
  GArray *players;
  HeightmapConfig *cfg;
} Clip;

static Clip clip;

typedef struct {
  int gt, matched, false_pos, partly_seen, frames;
  double sq_err;
} Score;

/* ---------------------------------------------------------------- the clip */

static void
render_clip(void)
{
  const char *given = g_getenv("STEREOD_HEIGHTMAP_CLIP");
  if (given && *given) {
    clip.clip = g_strdup(given);
    return;
  }
  clip.tmp_dir = g_dir_make_tmp("test-heightmap-XXXXXX", NULL);
  g_assert_nonnull(clip.tmp_dir);
  g_autofree char *conf = g_build_filename(clip.tmp_dir, "sim.conf", NULL);
  g_assert_true(g_file_set_contents(conf, sim_conf, -1, NULL));
  clip.clip = g_build_filename(clip.tmp_dir, "clip", NULL);
  const char *argv[] = { STEREOD_SIM, "--config", conf, "--out", clip.clip, "--quiet", NULL };
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                             NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int
cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *) a, *(char *const *) b);
}

static void
load_clip(void)
{
  render_clip();
  g_autoptr(GDir) dir = g_dir_open(clip.clip, 0, NULL);
  g_assert_nonnull(dir);
  for (const char *e; (e = g_dir_read_name(dir));) {
    g_autofree char *calib = g_build_filename(clip.clip, e, "calib.conf", NULL);
    if (g_file_test(calib, G_FILE_TEST_EXISTS) && clip.n_pairs < MAX_PAIRS)
      clip.names[clip.n_pairs++] = g_strdup(e);
  }
  g_assert_cmpint(clip.n_pairs, >=, 2);
  qsort(clip.names, clip.n_pairs, sizeof(char *), cmp_name);
  for (int p = 0; p < clip.n_pairs; p++) {
    g_autofree char *path = g_build_filename(clip.clip, clip.names[p], "calib.conf", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(calib_load(path, &clip.calib[p], &error));
    g_assert_no_error(error);
    heightmap_geometry_from_calib(&clip.geom[p], &clip.calib[p]);
  }
  g_autofree char *path = g_build_filename(clip.clip, "players.csv", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpstr(lines[0], ==, "frame,time_ns,id,x,y");
  clip.players = g_array_new(false, false, sizeof(Player));
  for (int i = 1; lines[i] && *lines[i]; i++) {
    Player r;
    g_assert_cmpint(sscanf(lines[i], "%d,%" G_GINT64_FORMAT ",%d,%lf,%lf", &r.frame,
                           &r.time_ns, &r.id, &r.x, &r.y), ==, 5);
    g_array_append_val(clip.players, r);
    clip.frames = MAX(clip.frames, r.frame + 1);
  }
  const char *frames = g_getenv("STEREOD_HEIGHTMAP_FRAMES");
  if (frames && *frames)
    clip.frames = CLAMP(atoi(frames), 1, clip.frames);
  /* the builder's defaults, with the pairs of the clip */
  g_autoptr(GString) text_conf = g_string_new("[heightmap]\n");
  if (g_getenv("STEREOD_HEIGHTMAP_CONF"))
    g_string_append_printf(text_conf, "%s\n", g_getenv("STEREOD_HEIGHTMAP_CONF"));
  for (int p = 0; p < clip.n_pairs; p++)
    g_string_append_printf(text_conf, "[pair %s]\n", clip.names[p]);
  const char *conf = text_conf->str;
  g_autoptr(GError) error = NULL;
  clip.cfg = heightmap_config_load_data(conf, strlen(conf), "defaults", &error);
  g_assert_no_error(error);
}

static char *
frame_path(int pair, const char *kind, int frame, const char *ext)
{
  g_autofree char *name = g_strdup_printf("%06d.%s", frame, ext);
  return g_build_filename(clip.clip, clip.names[pair], kind, name, NULL);
}

/* The sim's exact disparity as the ring carries it: s16, 1/32 px, no confidence. */
static int16_t *
gt_disparity(int pair, int frame, int *w, int *h)
{
  g_autofree char *path = frame_path(pair, "gt", frame, "pfm");
  g_autoptr(GError) error = NULL;
  ImageioF32 *img = imageio_read_pfm(path, &error);
  g_assert_no_error(error);
  *w = img->width;
  *h = img->height;
  int16_t *d = g_new(int16_t, (size_t) *w * *h);
  for (int i = 0; i < *w * *h; i++) {
    float v = img->data[i];
    d[i] = isfinite(v) && v * 32.0f < 32767.0f ? (int16_t) lrintf(v * 32.0f) : INT16_MIN;
  }
  imageio_f32_free(img);
  return d;
}

/* Does pair p see the body of a player standing at (x, y), in both of its views (a pair
 * measures depth only where both cameras see)? */
static bool
sees(int p, double x, double y)
{
  const StereoCalib *c = &clip.calib[p];
  double d[3] = { x - c->pose_centre[0], y - c->pose_centre[1], 1.0 - c->pose_centre[2] };
  const double *R = c->pose_rotation;
  double cam[3];
  for (int i = 0; i < 3; i++)   /* R^T d */
    cam[i] = R[i] * d[0] + R[3 + i] * d[1] + R[6 + i] * d[2];
  if (cam[2] <= 0)
    return false;
  double u = c->P1[0] * cam[0] / cam[2] + c->P1[2];
  double v = c->P1[5] * cam[1] / cam[2] + c->P1[6];
  /* the right rectified view: u_r = (f X + P2[3]) / Z + cx_r (P2[3] = -f B) */
  double ur = (c->P2[0] * cam[0] + c->P2[3]) / cam[2] + c->P2[2];
  return u >= 4 && u <= c->width - 5 && ur >= 4 && ur <= c->width - 5 && v >= 4 &&
         v <= c->height - 5;
}

/* ---------------------------------------------------------------- scoring */

/* Scores the tracks of one fused frame; fused[k] says which pairs were fused (NULL: all
 * of the clip's). */
static void
score_frame(Score *s, int frame, const bool *fused, const HeightmapTrack *t, int n)
{
  const HeightmapGrid *g = &clip.cfg->grid;
  Player gt[64];
  int ng = 0;
  for (guint i = 0; i < clip.players->len; i++) {
    const Player *p = &g_array_index(clip.players, Player, i);
    if (p->frame != frame || p->x < g->x0 || p->x > g->x1 || p->y < g->y0 || p->y > g->y1)
      continue;
    bool seen = false;
    for (int k = 0; k < clip.n_pairs; k++)
      seen |= (!fused || fused[k]) && sees(k, p->x, p->y);
    if (seen && ng < 64)
      gt[ng++] = *p;
  }
  bool gt_used[64] = { 0 };
  bool *det_used = g_new0(bool, n + 1);
  int matched = 0;
  for (;;) {   /* nearest pair first */
    double best = MATCH_RADIUS;
    int bi = -1, bj = -1;
    for (int i = 0; i < ng; i++)
      for (int j = 0; j < n; j++)
        if (!gt_used[i] && !det_used[j] && hypot(gt[i].x - t[j].x, gt[i].y - t[j].y) < best) {
          best = hypot(gt[i].x - t[j].x, gt[i].y - t[j].y);
          bi = i;
          bj = j;
        }
    if (bi < 0)
      break;
    gt_used[bi] = det_used[bj] = true;
    s->sq_err += best * best;
    matched++;
  }
  for (int i = 0; i < ng; i++)
    if (!gt_used[i])
      g_test_message("frame %d: player %d at (%.2f, %.2f) missed", frame, gt[i].id, gt[i].x,
                     gt[i].y);
  /* A track left over on a player that is not counted (part of its body outside the
   * views, the ball...) is not a false detection, nor a detection: it is reported apart. */
  int partly = 0;
  for (int j = 0; j < n; j++) {
    if (det_used[j])
      continue;
    bool real = false;   /* near a player not counted (a second track on a counted one
                            is a false detection) */
    for (guint i = 0; i < clip.players->len && !real; i++) {
      const Player *p = &g_array_index(clip.players, Player, i);
      bool counted = false;
      for (int k = 0; k < ng && !counted; k++)
        counted = gt[k].id == p->id;
      real = p->frame == frame && !counted &&
             hypot(p->x - t[j].x, p->y - t[j].y) < MATCH_RADIUS;
    }
    partly += real;
    g_test_message("frame %d: %s %u at (%.2f, %.2f) h %.2f area %.2f", frame,
                   real ? "track on a player partly in view" : "false detection", t[j].id,
                   t[j].x, t[j].y, t[j].height, t[j].area);
  }
  s->gt += ng;
  s->matched += matched;
  s->partly_seen += partly;
  s->false_pos += n - matched - partly;
  s->frames++;
  g_free(det_used);
}

static void
report(const char *what, const Score *s, double max_rmse)
{
  double recall = s->gt ? (double) s->matched / s->gt : 0;
  double rmse = s->matched ? sqrt(s->sq_err / s->matched) : INFINITY;
  g_test_message("%s: %d frames, recall %.1f %% (%d of %d), RMSE %.3f m, false detections "
                 "%d (%.2f per frame), %d tracks on players partly in view", what, s->frames,
                 100 * recall, s->matched, s->gt, rmse, s->false_pos,
                 (double) s->false_pos / MAX(s->frames, 1), s->partly_seen);
  printf("# %s: recall %.1f %%, RMSE %.3f m, false detections %.2f per frame\n", what,
         100 * recall, rmse, (double) s->false_pos / MAX(s->frames, 1));
  g_assert_cmpint(s->gt, >=, 10 * s->frames);
  g_assert_cmpfloat(recall, >=, 0.95);
  g_assert_cmpfloat(rmse, <=, max_rmse);
}

/* ---------------------------------------------------------------- the builder's core */

typedef struct {
  GpuContext *gpu;
  HeightmapFusion *fusion;
  HeightmapBlobFinder *finder;
  HeightmapTracker *tracker;
  float *heights;
  uint32_t *masks;
  double ms_sum;
  int runs;
} Core;

static bool
core_init(Core *c)
{
  memset(c, 0, sizeof *c);
  const GpuContextParams gp = { .label = "test" };   /* no debug: times are reported */
  if (!(c->gpu = gpu_test_context_with_params(&gp)))
    return false;
  const HeightmapConfig *cfg = clip.cfg;
  HeightmapFusionParams fp = heightmap_config_fusion_params(cfg);
  g_autoptr(GError) error = NULL;
  c->fusion = heightmap_fusion_new(c->gpu, &fp, &error);
  g_assert_no_error(error);
  HeightmapBlobParams bp = heightmap_config_blob_params(cfg);
  c->finder = heightmap_blob_finder_new(&cfg->grid, &bp);
  for (int p = 0; p < clip.n_pairs; p++)
    heightmap_blob_finder_set_camera(c->finder, p, &clip.geom[p], clip.calib[p].width,
                                     clip.calib[p].height);
  HeightmapTrackerParams tp = heightmap_config_tracker_params(cfg);
  c->tracker = heightmap_tracker_new(&tp);
  c->heights = g_new(float, (size_t) cfg->grid.width * cfg->grid.height);
  c->masks = g_new(uint32_t, (size_t) cfg->grid.width * cfg->grid.height);
  return true;
}

static void
core_clear(Core *c)
{
  heightmap_tracker_free(c->tracker);
  heightmap_blob_finder_free(c->finder);
  heightmap_fusion_free(c->fusion);
  gpu_context_free(c->gpu);
  g_free(c->heights);
  g_free(c->masks);
}

/* Fuses the given inputs (NULL = pair not fused) and returns the tracks seen. */
static int
core_fuse(Core *c, uint64_t time_ns, const HeightmapInput *in[MAX_PAIRS],
          const HeightmapTrack **tracks)
{
  g_autoptr(GError) error = NULL;
  gint64 t0 = g_get_monotonic_time();
  g_assert_true(heightmap_fusion_begin(c->fusion, &error));
  for (int p = 0; p < clip.n_pairs; p++)
    if (in[p])
      g_assert_true(heightmap_fusion_add(c->fusion, p, &clip.geom[p], in[p], &error));
  g_assert_true(heightmap_fusion_finish(c->fusion, c->heights, c->masks, &error));
  g_assert_no_error(error);
  heightmap_blob_finder_set_support(c->finder, heightmap_fusion_get_support(c->fusion));
  heightmap_blob_finder_set_body_masks(c->finder, heightmap_fusion_get_body_masks(c->fusion));
  const HeightmapBlob *blobs;
  int nb = heightmap_blob_finder_run(c->finder, c->heights, c->masks, &blobs);
  int n = heightmap_tracker_update(c->tracker, time_ns, blobs, nb, tracks);
  if (g_getenv("STEREOD_HEIGHTMAP_PNG")) {   /* PREFIX: height maps to look at */
    g_autofree char *path = g_strdup_printf("%s-%d.png", g_getenv("STEREOD_HEIGHTMAP_PNG"),
                                            c->runs);
    heightmap_view_write_png(path, &clip.cfg->grid, c->heights, *tracks, n, NULL);
  }
  c->ms_sum += (double) (g_get_monotonic_time() - t0) * 1e-3;
  c->runs++;
  return n;
}

/* The capture time of a frame, as players.csv gives it. */
static uint64_t
frame_time(int frame)
{
  for (guint i = 0; i < clip.players->len; i++) {
    const Player *p = &g_array_index(clip.players, Player, i);
    if (p->frame == frame)
      return (uint64_t) p->time_ns;
  }
  g_assert_not_reached();
}

/* ---------------------------------------------------------------- tests */

static void
test_ground_truth(void)
{
  Core c;
  if (!core_init(&c))
    return;
  Score s = { 0 };
  for (int f = 0; f < clip.frames; f++) {
    int16_t *d[MAX_PAIRS];
    HeightmapInput in[MAX_PAIRS];
    const HeightmapInput *inp[MAX_PAIRS];
    for (int p = 0; p < clip.n_pairs; p++) {
      int w, h;
      d[p] = gt_disparity(p, f, &w, &h);
      in[p] = (HeightmapInput) { .width = w, .height = h, .disparity = d[p],
                                 .disparity_stride = (size_t) w * 2,
                                 .disparity_size = (size_t) w * h * 2,
                                 .disparity_scale = 1.0 / 32 };
      inp[p] = &in[p];
    }
    const HeightmapTrack *t;
    int n = core_fuse(&c, frame_time(f), inp, &t);
    if (f >= clip.cfg->confirm - 1)   /* tracks need `confirm` frames to be reported */
      score_frame(&s, f, NULL, t, n);
    for (int p = 0; p < clip.n_pairs; p++)
      g_free(d[p]);
  }
  g_test_message("builder core: %.1f ms per fused frame (%d pairs %dx%d, grid %dx%d, %s)",
                 c.ms_sum / c.runs, clip.n_pairs, clip.calib[0].width, clip.calib[0].height,
                 clip.cfg->grid.width, clip.cfg->grid.height, gpu_context_get_renderer(c.gpu));
  printf("# builder core: %.1f ms per fused frame on %s\n", c.ms_sum / c.runs,
         gpu_context_get_renderer(c.gpu));
  report("ground-truth disparity", &s, MAX_RMSE);
  core_clear(&c);
}

/* How far the engine's depth on the players' bodies lies in front of their axes: mean
 * over the measured pixels (confidence >= 128) whose exact point is a body's (over 0.3 m
 * high, within 0.4 m of a player's axis) of Z(axis) - Z(engine), in the left camera, and
 * the same for the exact depth (the surface: 2r/pi = 0.15 m for r = 0.24 m). The
 * builder's visible_offset stands for the first (docs/heightmap.md). */
typedef struct {
  double engine, exact;
  long n;
} BodyDepth;

static void
body_depth(BodyDepth *acc, int p, int f, const int16_t *d, const uint8_t *conf)
{
  int w, h;
  g_autofree int16_t *gt = gt_disparity(p, f, &w, &h);
  const StereoCalib *cb = &clip.calib[p];
  const double *R = cb->pose_rotation, *c = cb->pose_centre;
  const double fb = calib_focal(cb) * calib_baseline(cb);
  const Player *here[64];
  int n_here = 0;
  for (guint k = 0; k < clip.players->len && n_here < 64; k++)
    if (g_array_index(clip.players, Player, k).frame == f)
      here[n_here++] = &g_array_index(clip.players, Player, k);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t i = (size_t) y * w + x;
      double pt[3];
      if (gt[i] == INT16_MIN || d[i] == INT16_MIN || d[i] <= 0 || conf[i] < 128 ||
          !heightmap_geometry_pixel_to_pitch(&clip.geom[p], x, y, gt[i] / 32.0, pt) ||
          pt[2] < 0.3)
        continue;
      for (int k = 0; k < n_here; k++) {
        const Player *pl = here[k];
        if (hypot(pl->x - pt[0], pl->y - pt[1]) >= 0.4)
          continue;
        /* the axis point at the pixel's height, its depth along the optical axis */
        double z_axis = (pl->x - c[0]) * R[2] + (pl->y - c[1]) * R[5] + (pt[2] - c[2]) * R[8];
        acc->engine += z_axis - fb / (d[i] / 32.0);
        acc->exact += z_axis - fb / (gt[i] / 32.0);
        acc->n++;
        break;
      }
    }
}

static void
test_engine(void)
{
  Core c;
  if (!core_init(&c))
    return;
  StereoEngineParams ep = { .label = "test", .output = STEREO_OUTPUT_S16 };
  stereo_params_init(&ep.params, clip.calib[0].width, clip.calib[0].height);
  /* as the demo's stereod.conf: noise_floor=2 grey levels for cameras with noise 1.5, the
   * level-0 refinement (refine=true, the recommended setting for height maps; the demo
   * turns it off only on a GPU too slow for it) and small windows (window=2, smoothing=1) */
  ep.params.min_magnitude = 2.0 / 255.0;
  const char *refine = g_getenv("STEREOD_HEIGHTMAP_REFINE");
  ep.params.refine = !(refine && g_str_equal(refine, "0"));
  ep.params.search_radius = 2;    /* window=2, smoothing=1: small players, far background */
  ep.params.smooth_sigma = 1.0;
  g_autoptr(GError) error = NULL;
  g_autoptr(StereoEngine) engine = stereo_engine_new(c.gpu, &ep, &error);
  g_assert_no_error(error);
  Score s = { 0 };
  BodyDepth bd = { 0 };
  for (int f = 0; f < clip.frames; f++) {
    int16_t *d[MAX_PAIRS];
    uint8_t *conf[MAX_PAIRS];
    HeightmapInput in[MAX_PAIRS];
    const HeightmapInput *inp[MAX_PAIRS];
    for (int p = 0; p < clip.n_pairs; p++) {
      g_autofree char *lp = frame_path(p, "left", f, "jpg");
      g_autofree char *rp = frame_path(p, "right", f, "jpg");
      g_autoptr(ImageioU8) l = imageio_read_gray(lp, &error);
      g_assert_no_error(error);
      g_autoptr(ImageioU8) r = imageio_read_gray(rp, &error);
      g_assert_no_error(error);
      g_assert_true(stereo_engine_submit(engine, l->data, l->stride, r->data, r->stride, 0,
                                         &error));
      StereoFrame out;
      g_assert_true(stereo_engine_collect(engine, true, &out, &error));
      g_assert_no_error(error);
      size_t n = (size_t) out.width * out.height;
      d[p] = g_memdup2(out.disparity, n * sizeof(int16_t));
      conf[p] = g_memdup2(out.confidence, n);
      body_depth(&bd, p, f, d[p], conf[p]);
      in[p] = (HeightmapInput) { .width = out.width, .height = out.height, .disparity = d[p],
                                 .disparity_stride = (size_t) out.width * 2,
                                 .disparity_size = n * sizeof(int16_t),
                                 .disparity_scale = 1.0 / STEREO_DISPARITY_SCALE,
                                 .confidence = conf[p],
                                 .confidence_stride = (size_t) out.width,
                                 .confidence_size = n };
      inp[p] = &in[p];
      stereo_engine_release(engine, &out);
    }
    const HeightmapTrack *t;
    int n = core_fuse(&c, frame_time(f), inp, &t);
    if (f >= clip.cfg->confirm - 1)   /* tracks need `confirm` frames to be reported */
      score_frame(&s, f, NULL, t, n);
    for (int p = 0; p < clip.n_pairs; p++) {
      g_free(d[p]);
      g_free(conf[p]);
    }
  }
  g_assert_cmpint(bd.n, >, 1000);
  g_test_message("the engine's depth on the bodies: %.3f m in front of their axes (exact "
                 "surface %.3f m; %ld pixels); visible_offset %.3f m", bd.engine / bd.n,
                 bd.exact / bd.n, bd.n, clip.cfg->visible_offset);
  printf("# engine depth on the bodies: %.3f m in front of the axes (exact %.3f m)\n",
         bd.engine / bd.n, bd.exact / bd.n);
  report("engine disparity", &s, MAX_RMSE);
  core_clear(&c);
}

/* A pair that stops publishing: the frame fused from west alone. */
static void
test_pair_lost(void)
{
  Core c;
  if (!core_init(&c))
    return;
  /* the frames a track needs to be confirmed, each from west alone; the last is scored */
  const HeightmapTrack *t = NULL;
  int n = 0, last = clip.cfg->confirm - 1;
  for (int f = 0; f <= last; f++) {
    int w, h;
    g_autofree int16_t *d = gt_disparity(0, f, &w, &h);
    HeightmapInput in = { .width = w, .height = h, .disparity = d,
                          .disparity_stride = (size_t) w * 2,
                          .disparity_size = (size_t) w * h * 2, .disparity_scale = 1.0 / 32 };
    const HeightmapInput *inp[MAX_PAIRS] = { &in, NULL };
    n = core_fuse(&c, frame_time(f), inp, &t);
  }
  Score s = { 0 };
  const bool fused[MAX_PAIRS] = { true };
  score_frame(&s, last, fused, t, n);
  g_test_message("west alone: %d of %d players, %d false", s.matched, s.gt, s.false_pos);
  g_assert_cmpint(s.gt, >=, 5);
  g_assert_cmpfloat((double) s.matched / s.gt, >=, 0.95);
  /* no cell carries east's bit: the map is west's alone */
  const HeightmapGrid *g = &clip.cfg->grid;
  int cells = 0;
  for (int i = 0; i < g->width * g->height; i++) {
    g_assert_cmpuint(c.masks[i] & ~1u, ==, 0);
    cells += c.masks[i] != 0;
  }
  g_assert_cmpint(cells, >, 1000);
  /* the JSON line names the pairs fused */
  const char *names[] = { clip.names[0] };
  g_autoptr(GString) line = g_string_new(NULL);
  heightmap_json_append(line, frame_time(0), 0, names, 1, t, n);
  g_autofree char *pairs = g_strdup_printf("\"pairs\":[\"%s\"]", clip.names[0]);
  g_assert_true(strstr(line->str, pairs) != NULL);
  core_clear(&c);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  load_clip();
  g_test_add_func("/heightmap/sim/ground-truth", test_ground_truth);
  g_test_add_func("/heightmap/sim/engine", test_engine);
  g_test_add_func("/heightmap/sim/pair-lost", test_pair_lost);
  int r = g_test_run();
  if (clip.tmp_dir) {
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", clip.tmp_dir);
    if (system(cmd) != 0)
      g_warning("cannot remove %s", clip.tmp_dir);
  }
  heightmap_config_free(clip.cfg);
  g_array_unref(clip.players);
  return r;
}
