/* test-heightmap-velocity: the players' velocities from the optical flow, on a
 * stereod-sim clip, against the simulator's truth.
 *
 * The clip: the demo's geometry at 640x360 (two pairs on the main stand, 16 m up, 52 m
 * from the halfway line's far side, baseline 3 m, focal 700 px, players 20-90 m away), 14
 * players up to 9 m/s, FRAMES frames at 25 fps. Every frame goes through the builder's
 * core (GPU fusion, blobs, velocities, tracks) with the default configuration; each
 * pair's optical flow comes from the flow engine (s16, as stereod publishes it with
 * flow=true) on the rendered left images, its disparity once from the sim's exact
 * disparity (gt PFM rounded to 1/32 px) and once from the stereo engine (s16 +
 * confidence, the demo's settings).
 *
 * The truth: players.csv's positions; a player's velocity at frame f is its step from
 * frame f - 1 over the frame time (the flow measures that step). A track within
 * MATCH_RADIUS of a player (nearest first, one each) is scored: its measured velocity
 * ("vx", "vy" of the JSON line: the median of its pixels' scene flow), when it has one,
 * and its Kalman filter's velocity, once the track has seen KALMAN_WARMUP frames.
 * Reported beside each other (RMSE of the vector error, m/s), with the Kalman velocity of
 * a second tracker fed the same blobs without their measured velocities (positions
 * alone). Required: a measured velocity for at least MIN_MEASURED of the matched tracks,
 * the RMSEs within the case's limits, and the Kalman velocity better with the measured
 * velocities than without. Measured on this clip (llvmpipe), RMSE m/s:
 *                       measured (x, y)       Kalman   Kalman, positions alone
 *   exact disparity     0.382 (0.252, 0.287)  0.318    0.498
 *   engine disparity    2.099 (0.599, 2.012)  0.813    1.034
 * Along the view (y here) the measured velocity is the change of depth over one frame:
 * the engine's disparity error moves a blob's pixels together, so the median does not
 * average it out (0.07 px at 50 m is 0.1 m of depth, 3.4 m/s over 40 ms); across, the
 * flow gives it to a few cm/s. The filter weighs the two accordingly (velocity.c).
 *
 * STEREOD_HEIGHTMAP_VELOCITY_CLIP=DIR uses an existing clip instead of rendering one.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "heightmap/heightmap.h"
#include "kernels/flow.h"
#include "kernels/stereo.h"
#include "tests/common/gpu-test.h"
#include "tools/imageio.h"

#define FRAMES 12
#define MATCH_RADIUS 1.0
#define KALMAN_WARMUP 4
#define MIN_MEASURED 0.9
/* limits, m/s: about 1.5 x what was measured (above) */
#define EXACT_MEASURED_RMSE 0.6
#define EXACT_KALMAN_RMSE 0.5
#define ENGINE_MEASURED_RMSE 3.0
#define ENGINE_KALMAN_RMSE 1.2
#define MAX_PAIRS 4

static const char sim_conf[] =
  "[output]\nframes=12\nfps=25\nstart_time_ns=1000000000\nformat=jpg\nseed=3\n"
  "supersample=2\n"
  "[scene]\nplayers=14\n"
  "[pair west]\nposition=-26,-52,16\nlook_at=-26,-8,0\nbaseline=3\nfocal=700\n"
  "width=640\nheight=360\nnoise=1.5\n"
  "[pair east]\nposition=26,-52,16\nlook_at=26,-8,0\nbaseline=3\nfocal=700\n"
  "width=640\nheight=360\nnoise=1.5\n";

typedef struct {
  int frame;
  gint64 time_ns;
  int id;
  double x, y;
} Player;

static struct {
  char *tmp_dir, *clip;
  int frames, n_pairs;
  char *names[MAX_PAIRS];
  StereoCalib calib[MAX_PAIRS];
  HeightmapPairGeometry geom[MAX_PAIRS];
  GArray *players;
  HeightmapConfig *cfg;
  /* the flow engine's output for frame f >= 1 of pair p (from f - 1), made once for both
   * cases: flow[p][f][0] u, [1] v */
  int16_t *flow[MAX_PAIRS][FRAMES][2];
} clip;

static void
load_clip(void)
{
  const char *given = g_getenv("STEREOD_HEIGHTMAP_VELOCITY_CLIP");
  if (given && *given) {
    clip.clip = g_strdup(given);
  } else {
    clip.tmp_dir = g_dir_make_tmp("test-heightmap-velocity-XXXXXX", NULL);
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
  static const char *const pairs[] = { "east", "west" };   /* name order */
  for (int p = 0; p < 2; p++) {
    clip.names[clip.n_pairs] = g_strdup(pairs[p]);
    g_autofree char *path = g_build_filename(clip.clip, pairs[p], "calib.conf", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(calib_load(path, &clip.calib[clip.n_pairs], &error));
    g_assert_no_error(error);
    heightmap_geometry_from_calib(&clip.geom[clip.n_pairs], &clip.calib[clip.n_pairs]);
    clip.n_pairs++;
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
  g_autoptr(GString) conf = g_string_new("[heightmap]\n");
  for (int p = 0; p < clip.n_pairs; p++)
    g_string_append_printf(conf, "[pair %s]\n", clip.names[p]);
  g_autoptr(GError) error = NULL;
  clip.cfg = heightmap_config_load_data(conf->str, conf->len, "defaults", &error);
  g_assert_no_error(error);
}

static char *
frame_path(int pair, const char *kind, int frame, const char *ext)
{
  g_autofree char *name = g_strdup_printf("%06d.%s", frame, ext);
  return g_build_filename(clip.clip, clip.names[pair], kind, name, NULL);
}

static int16_t *
gt_disparity(int pair, int frame)
{
  g_autofree char *path = frame_path(pair, "gt", frame, "pfm");
  g_autoptr(GError) error = NULL;
  ImageioF32 *img = imageio_read_pfm(path, &error);
  g_assert_no_error(error);
  size_t n = (size_t) img->width * img->height;
  int16_t *d = g_new(int16_t, n);
  for (size_t i = 0; i < n; i++) {
    float v = img->data[i];
    d[i] = isfinite(v) && v * 32.0f < 32767.0f ? (int16_t) lrintf(v * 32.0f) : INT16_MIN;
  }
  imageio_f32_free(img);
  return d;
}

static const Player *
player_at(int frame, int id)
{
  for (guint i = 0; i < clip.players->len; i++) {
    const Player *p = &g_array_index(clip.players, Player, i);
    if (p->frame == frame && p->id == id)
      return p;
  }
  return NULL;
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

typedef struct {
  int matched, measured, kalman_n;
  double measured_sq, kalman_sq;
  double measured_sq_xy[2];   /* per axis (the cameras look along +y) */
} VelocityScore;

/* Scores frame f's tracks (f >= 1): nearest first within MATCH_RADIUS. */
static void
score_frame(VelocityScore *s, int f, const HeightmapTrack *t, int n)
{
  const Player *gt[64];
  int ng = 0;
  for (guint i = 0; i < clip.players->len && ng < 64; i++)
    if (g_array_index(clip.players, Player, i).frame == f)
      gt[ng++] = &g_array_index(clip.players, Player, i);
  bool gt_used[64] = { 0 }, det_used[1024] = { 0 };
  n = MIN(n, 1024);
  for (;;) {
    double best = MATCH_RADIUS;
    int bi = -1, bj = -1;
    for (int i = 0; i < ng; i++)
      for (int j = 0; j < n; j++) {
        double d = hypot(gt[i]->x - t[j].x, gt[i]->y - t[j].y);
        if (!gt_used[i] && !det_used[j] && d < best) {
          best = d;
          bi = i;
          bj = j;
        }
      }
    if (bi < 0)
      break;
    gt_used[bi] = det_used[bj] = true;
    const Player *before = player_at(f - 1, gt[bi]->id);
    g_assert_nonnull(before);
    double dt = (double) (gt[bi]->time_ns - before->time_ns) * 1e-9;
    double vx = (gt[bi]->x - before->x) / dt, vy = (gt[bi]->y - before->y) / dt;
    const HeightmapTrack *tr = &t[bj];
    s->matched++;
    if (tr->has_measured) {
      double e2 = pow(tr->measured_vx - vx, 2) + pow(tr->measured_vy - vy, 2);
      s->measured++;
      s->measured_sq += e2;
      s->measured_sq_xy[0] += pow(tr->measured_vx - vx, 2);
      s->measured_sq_xy[1] += pow(tr->measured_vy - vy, 2);
      if (e2 > 1.5 * 1.5)
        g_test_message("frame %d: player %d (%.1f, %.1f) true v (%.2f, %.2f), measured "
                       "(%.2f, %.2f)", f, gt[bi]->id, gt[bi]->x, gt[bi]->y, vx, vy,
                       tr->measured_vx, tr->measured_vy);
    }
    if (tr->age >= KALMAN_WARMUP) {
      s->kalman_n++;
      s->kalman_sq += pow(tr->vx - vx, 2) + pow(tr->vy - vy, 2);
    }
  }
}

/* The flow of every frame of every pair from the one before, as stereod publishes it. */
static void
compute_flows(GpuContext *gpu)
{
  const int w = clip.calib[0].width, h = clip.calib[0].height;
  size_t n = (size_t) w * h;
  g_autoptr(GError) error = NULL;
  gint64 t0 = g_get_monotonic_time();
  for (int p = 0; p < clip.n_pairs; p++) {
    FlowEngineParams fep = { .label = clip.names[p], .output = FLOW_OUTPUT_S16 };
    flow_params_init(&fep.params, w, h);
    g_autoptr(FlowEngine) flow = flow_engine_new(gpu, &fep, &error);
    g_assert_no_error(error);
    for (int f = 0; f < MIN(clip.frames, FRAMES); f++) {
      g_autofree char *lp = frame_path(p, "left", f, "jpg");
      g_autoptr(ImageioU8) l = imageio_read_gray(lp, &error);
      g_assert_no_error(error);
      bool queued = false;
      g_assert_true(flow_engine_submit(flow, l->data, l->stride, (uint64_t) f, &queued,
                                       &error));
      g_assert_cmpint(queued, ==, f > 0);
      if (!queued)
        continue;
      FlowFrame ff;
      g_assert_true(flow_engine_collect(flow, true, &ff, &error));
      clip.flow[p][f][0] = g_memdup2(ff.u, n * sizeof(int16_t));
      clip.flow[p][f][1] = g_memdup2(ff.v, n * sizeof(int16_t));
      flow_engine_release(flow, &ff);
    }
  }
  g_test_message("flow of %d pairs x %d frames (%dx%d): %.1f s", clip.n_pairs,
                 MIN(clip.frames, FRAMES) - 1, w, h,
                 (double) (g_get_monotonic_time() - t0) * 1e-6);
}

static void
run(const char *what, bool engine_disparity, double max_measured, double max_kalman)
{
  const GpuContextParams gp = { .label = "test" };
  g_autoptr(GpuContext) gpu = gpu_test_context_with_params(&gp);
  if (!gpu)
    return;
  const HeightmapConfig *cfg = clip.cfg;
  g_autoptr(GError) error = NULL;
  HeightmapFusionParams fp = heightmap_config_fusion_params(cfg);
  g_autoptr(HeightmapFusion) fusion = heightmap_fusion_new(gpu, &fp, &error);
  g_assert_no_error(error);
  HeightmapBlobParams bp = heightmap_config_blob_params(cfg);
  g_autoptr(HeightmapBlobFinder) finder = heightmap_blob_finder_new(&cfg->grid, &bp);
  for (int p = 0; p < clip.n_pairs; p++)
    heightmap_blob_finder_set_camera(finder, p, &clip.geom[p], clip.calib[p].width,
                                     clip.calib[p].height);
  HeightmapVelocityParams vp = heightmap_config_velocity_params(cfg);
  g_autoptr(HeightmapVelocity) velocity = heightmap_velocity_new(&cfg->grid, &vp);
  HeightmapTrackerParams tp = heightmap_config_tracker_params(cfg);
  g_autoptr(HeightmapTracker) tracker = heightmap_tracker_new(&tp);
  /* the same blobs without their measured velocities: the Kalman filter on positions
   * alone, to compare */
  g_autoptr(HeightmapTracker) plain = heightmap_tracker_new(&tp);
  const int w = clip.calib[0].width, h = clip.calib[0].height;
  size_t n = (size_t) w * h, cells = (size_t) cfg->grid.width * cfg->grid.height;
  g_autofree float *heights = g_new(float, cells);
  g_autofree uint32_t *masks = g_new(uint32_t, cells);

  if (!clip.flow[0][1][0])
    compute_flows(gpu);
  StereoEngine *engine = NULL;
  if (engine_disparity) {
    StereoEngineParams ep = { .label = "test", .output = STEREO_OUTPUT_S16 };
    stereo_params_init(&ep.params, w, h);
    ep.params.min_magnitude = 2.0 / 255.0;   /* the demo's stereod.conf */
    ep.params.refine = true;
    ep.params.search_radius = 2;
    ep.params.smooth_sigma = 1.0;
    engine = stereo_engine_new(gpu, &ep, &error);
    g_assert_no_error(error);
  }

  /* a ring with flow: its first frame has the planes, all unknown (as stereod's) */
  g_autofree int16_t *unknown = g_new(int16_t, n);
  for (size_t i = 0; i < n; i++)
    unknown[i] = INT16_MIN;
  VelocityScore s = { 0 }, sp = { 0 };
  int blobs_total = 0, blobs_measured = 0;
  for (int f = 0; f < clip.frames && f < FRAMES; f++) {
    int16_t *d[MAX_PAIRS];
    uint8_t *conf[MAX_PAIRS] = { NULL };
    HeightmapInput in[MAX_PAIRS];
    uint64_t time_ns = 0;
    g_assert_true(heightmap_fusion_begin(fusion, &error));
    for (int p = 0; p < clip.n_pairs; p++) {
      bool queued = f > 0;
      if (engine) {
        g_autofree char *lp = frame_path(p, "left", f, "jpg");
        g_autoptr(ImageioU8) l = imageio_read_gray(lp, &error);
        g_assert_no_error(error);
        g_autofree char *rp = frame_path(p, "right", f, "jpg");
        g_autoptr(ImageioU8) r = imageio_read_gray(rp, &error);
        g_assert_no_error(error);
        g_assert_true(stereo_engine_submit(engine, l->data, l->stride, r->data, r->stride, 0,
                                           &error));
        StereoFrame out;
        g_assert_true(stereo_engine_collect(engine, true, &out, &error));
        d[p] = g_memdup2(out.disparity, n * sizeof(int16_t));
        conf[p] = g_memdup2(out.confidence, n);
        stereo_engine_release(engine, &out);
      } else {
        d[p] = gt_disparity(p, f);
      }
      in[p] = (HeightmapInput) {
        .width = w, .height = h, .disparity = d[p], .disparity_stride = (size_t) w * 2,
        .disparity_size = n * 2, .disparity_scale = 1.0 / 32, .confidence = conf[p],
        .confidence_stride = (size_t) w, .confidence_size = conf[p] ? n : 0,
        .flow_u = queued ? clip.flow[p][f][0] : unknown,
        .flow_v = queued ? clip.flow[p][f][1] : unknown,
        .flow_stride = (size_t) w * 2, .flow_u_size = n * 2, .flow_v_size = n * 2,
      };
      g_assert_true(heightmap_fusion_add(fusion, p, &clip.geom[p], &in[p], &error));
      time_ns = frame_time(f);
    }
    g_assert_true(heightmap_fusion_finish(fusion, heights, masks, &error));
    const HeightmapBlob *blobs;
    int nb = heightmap_blob_finder_run(finder, heights, masks, &blobs);
    heightmap_velocity_begin(velocity, heightmap_blob_finder_get_labels(finder), nb);
    for (int p = 0; p < clip.n_pairs; p++)
      g_assert_true(heightmap_velocity_add(velocity, p, &clip.geom[p], &in[p],
                                           (uint64_t) f + 1, time_ns));
    blobs = heightmap_velocity_finish(velocity, blobs, nb);
    for (int b = 0; f > 0 && b < nb; b++) {
      blobs_total++;
      blobs_measured += blobs[b].has_velocity;
    }
    const HeightmapTrack *t;
    int nt = heightmap_tracker_update(tracker, time_ns, blobs, nb, &t);
    if (f > 0)
      score_frame(&s, f, t, nt);
    g_autofree HeightmapBlob *bare = g_memdup2(blobs, (size_t) MAX(nb, 1) * sizeof *blobs);
    for (int b = 0; b < nb; b++)
      bare[b].has_velocity = false;
    nt = heightmap_tracker_update(plain, time_ns, bare, nb, &t);
    if (f > 0)
      score_frame(&sp, f, t, nt);
    for (int p = 0; p < clip.n_pairs; p++) {
      g_free(d[p]);
      g_free(conf[p]);
    }
  }
  double measured_rmse = s.measured ? sqrt(s.measured_sq / s.measured) : INFINITY;
  double kalman_rmse = s.kalman_n ? sqrt(s.kalman_sq / s.kalman_n) : INFINITY;
  double plain_rmse = sp.kalman_n ? sqrt(sp.kalman_sq / sp.kalman_n) : INFINITY;
  g_test_message("%s: %d matched tracks over %d frames; measured velocity for %d (%.0f %%; "
                 "%d of %d blobs), RMSE %.3f m/s (x %.3f, y %.3f); Kalman velocity (tracks "
                 "of >= %d frames, %d) RMSE %.3f m/s; without the measured velocities %.3f "
                 "m/s (%d)", what, s.matched, MIN(clip.frames, FRAMES) - 1, s.measured,
                 100.0 * s.measured / MAX(s.matched, 1), blobs_measured, blobs_total,
                 measured_rmse, sqrt(s.measured_sq_xy[0] / MAX(s.measured, 1)),
                 sqrt(s.measured_sq_xy[1] / MAX(s.measured, 1)), KALMAN_WARMUP, s.kalman_n,
                 kalman_rmse, plain_rmse, sp.kalman_n);
  printf("# %s: measured velocity RMSE %.3f m/s (%d tracks), Kalman velocity RMSE %.3f m/s "
         "(%d), %.3f m/s without the measured velocities\n", what, measured_rmse, s.measured,
         kalman_rmse, s.kalman_n, plain_rmse);
  g_assert_cmpint(s.matched, >=, 8 * (MIN(clip.frames, FRAMES) - 1));
  g_assert_cmpfloat((double) s.measured / s.matched, >=, MIN_MEASURED);
  g_assert_cmpfloat(measured_rmse, <=, max_measured);
  g_assert_cmpint(s.kalman_n, >=, 5 * (MIN(clip.frames, FRAMES) - KALMAN_WARMUP));
  g_assert_cmpfloat(kalman_rmse, <=, max_kalman);
  g_assert_cmpfloat(kalman_rmse, <, plain_rmse);
  stereo_engine_free(engine);
}

static void
test_ground_truth(void)
{
  run("exact disparity, engine flow", false, EXACT_MEASURED_RMSE, EXACT_KALMAN_RMSE);
}

static void
test_engine(void)
{
  run("engine disparity and flow", true, ENGINE_MEASURED_RMSE, ENGINE_KALMAN_RMSE);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  load_clip();
  g_test_add_func("/heightmap/velocity/ground-truth", test_ground_truth);
  g_test_add_func("/heightmap/velocity/engine", test_engine);
  int r = g_test_run();
  if (clip.tmp_dir) {
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", clip.tmp_dir);
    if (system(cmd) != 0)
      g_warning("cannot remove %s", clip.tmp_dir);
  }
  heightmap_config_free(clip.cfg);
  g_array_unref(clip.players);
  for (int p = 0; p < clip.n_pairs; p++) {
    g_free(clip.names[p]);
    for (int f = 0; f < FRAMES; f++) {
      g_free(clip.flow[p][f][0]);
      g_free(clip.flow[p][f][1]);
    }
  }
  return r;
}
