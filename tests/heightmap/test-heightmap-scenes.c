/* test-heightmap-scenes: the fusion's free-space carving and goal frames on scenes
 * ray-cast against boxes (the ground, players, a goal), two cameras.
 *
 *  - free-space carving (carve): one camera also sees a fake object 1.2 m high along its
 *    own rays (a range error's smear). Without carving the fake object stands; with it
 *    the other camera's rays to the ground behind it remove it, while the box and the
 *    ground stay; outputs poisoned first; at 320 x 240 and at 1920 x 1440 (strided rays);
 *  - seeing through (see_height, see_through): in the same scene, the other camera's rays
 *    to the ground behind the fake object cross its cells low, none crosses the box's;
 *    the blob finder drops the fake object and keeps the box (at both sizes);
 *  - goal frames: a goal, a keeper in front of it and a player; without the frames the
 *    goal stands, with them it is gone and the rest unchanged; with the frame's pixels
 *    measured 2.5 % far or near, goal_shadow and goal_front drop their smears;
 *  - players side by side (the body masks and view_split): two bodies joined by one
 *    camera's range smear are cut apart across the other camera's view.
 */
#include <gio/gio.h>
#include <math.h>
#include <string.h>

#include "heightmap/heightmap.h"
#include "tests/common/gpu-test.h"

/* A camera at `centre` looking at `target`, OpenCV axes (x right, y down, z forward):
 * the pose's columns are the camera axes in pitch coordinates. */
static void
look_at(StereoCalib *c, int w, int h, double f, double baseline, const double centre[3],
        const double target[3])
{
  double z[3] = { target[0] - centre[0], target[1] - centre[1], target[2] - centre[2] };
  double n = sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
  for (int i = 0; i < 3; i++)
    z[i] /= n;
  double x[3] = { z[1], -z[0], 0 };   /* z x up, up = (0, 0, 1) */
  n = sqrt(x[0] * x[0] + x[1] * x[1]);
  x[0] /= n;
  x[1] /= n;
  double y[3] = { z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2],
                  z[0] * x[1] - z[1] * x[0] };   /* z x x: down */
  double R[9];
  for (int i = 0; i < 3; i++) {
    R[3 * i] = x[i];
    R[3 * i + 1] = y[i];
    R[3 * i + 2] = z[i];
  }
  calib_init_ideal(c, w, h, f, (w - 1) / 2.0, (h - 1) / 2.0, baseline, NULL, R, centre);
}

/* The depth (camera z, = the ray parameter for a ray of z 1) where the ray o + t r first
 * meets the box [b0, b1] (slab test), or +inf. */
static double
box_hit(const double o[3], const double r[3], const double b0[3], const double b1[3])
{
  double t0 = 0, t1 = INFINITY;
  for (int i = 0; i < 3; i++) {
    if (fabs(r[i]) < 1e-12) {
      if (o[i] < b0[i] || o[i] > b1[i])
        return INFINITY;
      continue;
    }
    double a = (b0[i] - o[i]) / r[i], b = (b1[i] - o[i]) / r[i];
    t0 = MAX(t0, MIN(a, b));
    t1 = MIN(t1, MAX(a, b));
  }
  return t0 <= t1 ? t0 : INFINITY;
}

typedef double Box[2][3];   /* corners [x0 y0 z0], [x1 y1 z1] */

/* Renders the disparity of the ground and of the n boxes (each pixel: the nearest), and,
 * with smear, (fake) A's smear: pixels whose ground point lies in the smear's source patch
 * see a point 3 m nearer along the same ray. With range_noise > 0 a box's pixels are
 * measured up to that share nearer or farther along their rays (-1, -1/2, 0, 1/2 or 1
 * times it, by a fixed pattern of the pixels): a range error's smear along the view. */
static void
render_boxes(const StereoCalib *c, const Box *boxes, size_t n, bool smear, double range_noise,
             int16_t *d)
{
  const double *R = c->pose_rotation, *C = c->pose_centre;
  double f = c->P1[0], cx = c->P1[2], cy = c->P1[6], fb = f * calib_baseline(c);
  for (int y = 0; y < c->height; y++)
    for (int x = 0; x < c->width; x++) {
      double cam[3] = { (x - cx) / f, (y - cy) / f, 1 }, r[3];
      for (int i = 0; i < 3; i++)
        r[i] = R[3 * i] * cam[0] + R[3 * i + 1] * cam[1] + R[3 * i + 2] * cam[2];
      double t = r[2] < 0 ? -C[2] / r[2] : INFINITY;   /* the ground */
      double gx = C[0] + t * r[0], gy = C[1] + t * r[1];
      if (smear && isfinite(t) && fabs(gx) <= 0.5 && gy >= -1.0 && gy <= -0.2)
        t *= 1.0 - 3.0 / hypot(gx - C[0], gy - C[1]);   /* 3 m nearer, horizontally */
      double ground = t;
      for (size_t k = 0; k < n; k++)
        t = MIN(t, box_hit(C, r, boxes[k][0], boxes[k][1]));
      if (range_noise > 0 && t < ground)
        t *= 1.0 + range_noise * ((x * 7 + y * 13) % 5 - 2) / 2.0;
      d[y * c->width + x] = isfinite(t) ? (int16_t) lround(fb / t * 32) : INT16_MIN;
    }
}

/* Two cameras looking at the origin: A from (0, -30, 12), B from (bx, 0, 12), W x H px,
 * focal f, baseline 1.5 m; their disparity planes (W x H, for the caller to render) and
 * the fusion's inputs over them. */
typedef struct {
  StereoCalib ca, cb;
  HeightmapPairGeometry ga, gb;
  int16_t *da, *db;
  HeightmapInput ia, ib;
} TwoCameras;

static void
two_cameras_init(TwoCameras *t, int W, int H, double f, double bx)
{
  const double target[3] = { 0, 0, 0 }, a_at[3] = { 0, -30, 12 }, b_at[3] = { bx, 0, 12 };
  look_at(&t->ca, W, H, f, 1.5, a_at, target);
  look_at(&t->cb, W, H, f, 1.5, b_at, target);
  heightmap_geometry_from_calib(&t->ga, &t->ca);
  heightmap_geometry_from_calib(&t->gb, &t->cb);
  t->da = g_new(int16_t, W * H);
  t->db = g_new(int16_t, W * H);
  t->ia = (HeightmapInput) { .width = W, .height = H, .disparity = t->da,
                             .disparity_stride = W * 2, .disparity_size = W * H * 2,
                             .disparity_scale = 1.0 / 32 };
  t->ib = t->ia;
  t->ib.disparity = t->db;
}

static void
two_cameras_clear(TwoCameras *t)
{
  g_free(t->da);
  g_free(t->db);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(TwoCameras, two_cameras_clear)

/* The carving scene: the ground, a box and (with smear) A's smear. */
static void
render_scene(const StereoCalib *c, bool smear, int16_t *d)
{
  static const Box box[1] = { { { -0.25, 1.5, 0 }, { 0.25, 2.0, 1.8 } } };
  render_boxes(c, box, 1, smear, 0, d);
}

/* Fuses pair 0 (ga, ia) and pair 1 (gb, ib) with `fp` over [-4, 4]^2 in 0.1 m cells into
 * h (N x N, poisoned first); every cell NaN or within the histogram's range. */
enum { SCENE_N = 80 };
static void
fuse_two(GpuContext *ctx, HeightmapFusionParams *fp, const HeightmapPairGeometry *ga,
         const HeightmapInput *ia, const HeightmapPairGeometry *gb, const HeightmapInput *ib,
         float *h)
{
  g_assert_true(heightmap_grid_init(&fp->grid, -4, 4, -4, 4, 0.1));
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapFusion) f = heightmap_fusion_new(ctx, fp, &error);
  g_assert_no_error(error);
  for (int i = 0; i < SCENE_N * SCENE_N; i++)
    h[i] = -7.0f;
  g_assert_true(heightmap_fusion_begin(f, &error));
  g_assert_true(heightmap_fusion_add(f, 0, ga, ia, &error));
  g_assert_true(heightmap_fusion_add(f, 1, gb, ib, &error));
  g_assert_true(heightmap_fusion_finish(f, h, NULL, &error));
  g_assert_no_error(error);
  for (int i = 0; i < SCENE_N * SCENE_N; i++)
    g_assert_true(isnan(h[i]) || (h[i] >= 0.0f && h[i] <= 3.2f));
}

/* The highest cell of h (fuse_two's grid) in a region (x0, x1, y0, y1 in m), NaN cells
 * left out; -1 when there is none. */
static double
region_top(const float *h, const double region[4])
{
  double top = -1;
  for (int j = 0; j < SCENE_N; j++)
    for (int i = 0; i < SCENE_N; i++) {
      double x = -4 + 0.1 * (i + 0.5), y = -4 + 0.1 * (j + 0.5);
      if (x >= region[0] && x <= region[1] && y >= region[2] && y <= region[3] &&
          !isnan(h[j * SCENE_N + i]))
        top = MAX(top, h[j * SCENE_N + i]);
    }
  return top;
}

/* The scene at W x H px, focal 1200 x W / 320 (the same view at any size): at 1920 x 1440
 * only every 2nd pixel's ray carves (fusion.c's stride). */
static void
carve_scene(GpuContext *ctx, int W, int H)
{
  g_auto(TwoCameras) t = { 0 };
  two_cameras_init(&t, W, H, 1200.0 * W / 320, 30);
  render_scene(&t.ca, true, t.da);
  render_scene(&t.cb, false, t.db);

  float h[2][SCENE_N * SCENE_N];
  for (int carve = 0; carve < 2; carve++) {
    HeightmapFusionParams fp = { .label = "carve", .min_points = 2, .top_fraction = 0.1,
                                 .carve = carve, .disparity_noise = 0.07 };
    fuse_two(ctx, &fp, &t.ga, &t.ia, &t.gb, &t.ib, h[carve]);
  }
  double top[2][3];
  static const double region[3][4] = {
    { -0.5, 0.5, -4.0, -3.0 },   /* the fake object: A's smear, about 1.2 m high */
    { -0.2, 0.2, 1.5, 2.0 },     /* the box's cells it covers whole */
    { 1.0, 3.0, -3.0, 1.0 },     /* ground seen by both */
  };
  for (int carve = 0; carve < 2; carve++)
    for (int k = 0; k < 3; k++)
      top[carve][k] = region_top(h[carve], region[k]);
  g_test_message("%dx%d: highest cell without / with carving: fake object %.2f / %.2f m, "
                 "box %.2f / %.2f m, ground %.2f / %.2f m", W, H, top[0][0], top[1][0],
                 top[0][1], top[1][1], top[0][2], top[1][2]);
  g_assert_cmpfloat(top[0][0], >, 1.0);    /* the smear stands without carving */
  g_assert_cmpfloat(top[1][0], <, 0.5);    /* B's rays to the ground behind it remove it */
  g_assert_cmpfloat(top[0][1], >, 1.6);    /* the box, both ways */
  g_assert_cmpfloat(top[1][1], >, 1.6);
  g_assert_cmpfloat(top[0][2], >=, 0.0);   /* the ground, both ways */
  g_assert_cmpfloat(top[0][2], <, 0.2);
  g_assert_cmpfloat(top[1][2], >=, 0.0);
  g_assert_cmpfloat(top[1][2], <, 0.2);
}

static void
test_fusion_carve(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  carve_scene(ctx, 320, 240);
  carve_scene(ctx, 1920, 1440);
}

/* The two cameras' pairs fused with `fp` over fuse_two's grid, heights and masks
 * poisoned first; the fusion is kept for its other planes (nothing before the finish:
 * no see-through plane yet). */
static HeightmapFusion *
fuse_masked(GpuContext *ctx, HeightmapFusionParams *fp, const TwoCameras *t, float *h,
            uint32_t *masks)
{
  g_assert_true(heightmap_grid_init(&fp->grid, -4, 4, -4, 4, 0.1));
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapFusion) f = heightmap_fusion_new(ctx, fp, &error);
  g_assert_no_error(error);
  g_assert_null(heightmap_fusion_get_see_through(f));
  for (int i = 0; i < SCENE_N * SCENE_N; i++) {
    h[i] = -7.0f;
    masks[i] = 0xdeadbeef;
  }
  g_assert_true(heightmap_fusion_begin(f, &error));
  g_assert_true(heightmap_fusion_add(f, 0, &t->ga, &t->ia, &error));
  g_assert_true(heightmap_fusion_add(f, 1, &t->gb, &t->ib, &error));
  g_assert_true(heightmap_fusion_finish(f, h, masks, &error));
  g_assert_no_error(error);
  return g_steal_pointer(&f);
}

/* The carving scene with see_height 0.5 m: B's rays to the ground behind A's fake object
 * cross its cells low (B's bit in most of them), no ray crosses the cells the box covers,
 * and the blob finder with see_through drops the fake object and keeps the box; without
 * see_through both are kept. Outputs poisoned first. */
static void
see_through_scene(GpuContext *ctx, int W, int H)
{
  g_auto(TwoCameras) t = { 0 };
  two_cameras_init(&t, W, H, 1200.0 * W / 320, 30);
  render_scene(&t.ca, true, t.da);
  render_scene(&t.cb, false, t.db);

  HeightmapFusionParams fp = { .label = "see", .min_points = 2, .top_fraction = 0.1,
                               .see_height = 0.5, .disparity_noise = 0.07 };
  float h[SCENE_N * SCENE_N];
  uint32_t masks[SCENE_N * SCENE_N];
  g_autoptr(HeightmapFusion) f = fuse_masked(ctx, &fp, &t, h, masks);
  const uint32_t *see = heightmap_fusion_get_see_through(f);
  const uint32_t *body = heightmap_fusion_get_body_masks(f);
  g_assert_nonnull(see);
  g_assert_nonnull(body);

  int fake = 0, fake_seen = 0, box = 0, box_seen = 0, ground = 0, ground_seen = 0;
  for (int j = 0; j < SCENE_N; j++)
    for (int i = 0; i < SCENE_N; i++) {
      double x = -4 + 0.1 * (i + 0.5), y = -4 + 0.1 * (j + 0.5);
      int c = j * SCENE_N + i;
      g_assert_cmpuint(see[c] & ~3u, ==, 0);   /* only the two pairs' bits */
      if (fabs(x) <= 0.5 && y >= -4.0 && y <= -3.0 && h[c] >= 0.5) {
        fake++;
        fake_seen += (see[c] & 2u) != 0;
      } else if (fabs(x) <= 0.2 && y >= 1.55 && y <= 1.95) {
        box++;
        box_seen += see[c] != 0;
      } else if (x >= 1.0 && x <= 3.0 && y >= -3.0 && y <= 1.0) {
        ground++;
        ground_seen += see[c] == 3u;
      }
    }
  g_test_message("%dx%d: fake object %d cells, %d seen through by B; box %d cells, %d seen "
                 "through; ground %d cells, %d seen through by both", W, H, fake, fake_seen,
                 box, box_seen, ground, ground_seen);
  g_assert_cmpint(fake, >=, 5);
  g_assert_cmpint(fake_seen, >=, fake * 3 / 4);
  g_assert_cmpint(box, >=, 6);
  g_assert_cmpint(box_seen, ==, 0);
  g_assert_cmpint(ground_seen, >=, ground * 3 / 4);

  HeightmapBlobParams bp = { .min_height = 0.5, .min_area = 0.05, .max_area = 3.0,
                             .top_band = 1.0, .disparity_noise = 0.07, .see_cells = 1 };
  for (int on = 0; on < 2; on++) {
    bp.see_through = on ? 0.5 : 0.0;
    g_autoptr(HeightmapBlobFinder) bf = heightmap_blob_finder_new(&fp.grid, &bp);
    /* the image sizes left out: the fake object lies within a few pixels of the edge of
     * B's narrow view, which the image test (blob-checks' see-through test) would take
     * as out of it; here the rays' marks are what is checked */
    heightmap_blob_finder_set_camera(bf, 0, &t.ga, 0, 0);
    heightmap_blob_finder_set_camera(bf, 1, &t.gb, 0, 0);
    heightmap_blob_finder_set_body_masks(bf, body);
    heightmap_blob_finder_set_see_through(bf, see);
    const HeightmapBlob *b;
    int n = heightmap_blob_finder_run(bf, h, masks, &b);
    int at_fake = 0, at_box = 0;
    for (int k = 0; k < n; k++) {
      g_test_message("  see_through %s: (%.2f, %.2f) %.2f m, %.2f m^2", on ? "on" : "off",
                     b[k].x, b[k].y, b[k].height, b[k].area);
      at_fake += b[k].y < -2.5;
      at_box += fabs(b[k].x) < 0.5 && fabs(b[k].y - 1.75) < 0.5;
    }
    g_assert_cmpint(at_box, ==, 1);
    g_assert_cmpint(at_fake, ==, on ? 0 : 1);
    g_assert_cmpint(heightmap_blob_finder_get_counts(bf)->seen_through, ==, on ? 1 : 0);
  }
}

static void
test_fusion_see_through(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  see_through_scene(ctx, 320, 240);
  see_through_scene(ctx, 1920, 1440);
}

/* Goal frames (heightmap_scatter.comp): a goal at x = 3 m (posts at y = +-1.5 m, bar at
 * 2 m, 0.12 m thick, drawn as boxes), a keeper 0.4 m in front of its line, a player in
 * the open, seen by two cameras; each pixel's disparity is that of the nearest box or the
 * ground. Without the goal frames the frame stands in the height map; with them its
 * pixels are dropped and the keeper, the player and the ground are unchanged. */
static void
render_goal_scene(const StereoCalib *c, int16_t *d)
{
  static const Box boxes[] = {
    { { 2.94, -1.56, 0 }, { 3.06, -1.44, 2.06 } },     /* post */
    { { 2.94, 1.44, 0 }, { 3.06, 1.56, 2.06 } },       /* post */
    { { 2.94, -1.56, 1.94 }, { 3.06, 1.56, 2.06 } },   /* bar */
    { { 2.2, -0.25, 0 }, { 2.6, 0.25, 1.8 } },         /* the keeper */
    { { -0.25, 1.5, 0 }, { 0.25, 2.0, 1.8 } },         /* a player */
  };
  render_boxes(c, boxes, G_N_ELEMENTS(boxes), false, 0, d);
}

static void
test_fusion_goals(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 320, H = 240 };
  g_auto(TwoCameras) t = { 0 };
  two_cameras_init(&t, W, H, 1200.0, -30);
  render_goal_scene(&t.ca, t.da);
  render_goal_scene(&t.cb, t.db);
  float h[2][SCENE_N * SCENE_N];
  for (int goals = 0; goals < 2; goals++) {
    HeightmapFusionParams fp = { .label = "goals", .min_points = 2, .top_fraction = 0.1,
                                 .disparity_noise = 0.07, .goal_line = goals ? 3.0 : 0.0,
                                 .goal_width = 3.0, .goal_height = 2.0 };
    fuse_two(ctx, &fp, &t.ga, &t.ia, &t.gb, &t.ib, h[goals]);
  }
  static const double region[5][4] = {
    { 2.8, 3.2, -1.7, -1.3 },   /* a post */
    { 2.8, 3.2, -1.2, 1.2 },    /* under the bar */
    { 2.3, 2.5, -0.15, 0.15 },  /* the keeper */
    { -0.2, 0.2, 1.55, 1.95 },  /* the player */
    { -3.0, 1.0, -3.0, 1.0 },   /* ground */
  };
  double top[2][5];
  for (int goals = 0; goals < 2; goals++)
    for (int k = 0; k < 5; k++)
      top[goals][k] = region_top(h[goals], region[k]);
  g_test_message("highest cell without / with goal frames: post %.2f / %.2f m, bar %.2f / "
                 "%.2f m, keeper %.2f / %.2f m, player %.2f / %.2f m, ground %.2f / %.2f m",
                 top[0][0], top[1][0], top[0][1], top[1][1], top[0][2], top[1][2], top[0][3],
                 top[1][3], top[0][4], top[1][4]);
  g_assert_cmpfloat(top[0][0], >, 1.8);   /* the frame stands without */
  g_assert_cmpfloat(top[0][1], >, 1.8);
  g_assert_cmpfloat(top[1][0], <, 0.3);   /* and is gone with them */
  g_assert_cmpfloat(top[1][1], <, 0.3);
  g_assert_cmpfloat(top[0][2], >, 1.6);   /* the keeper */
  g_assert_cmpfloat(top[0][3], >, 1.6);   /* the player */
  g_assert_cmpfloat(top[0][4], >=, 0.0);  /* the ground */
  g_assert_cmpfloat(top[0][4], <, 0.2);
  for (int k = 2; k < 5; k++)             /* none of them changed by the goal frames */
    g_assert_cmpfloat(fabs(top[1][k] - top[0][k]), <, 1e-6);

  /* goal_shadow and goal_front: the frame's pixels measured too far (their disparity
   * 2.5 % low, as a window that takes in the ground behind a thin post makes it: about
   * 0.8 m), so that their points stand behind the frame along their rays, beyond the
   * range gate (B's behind the goal line); or too near (2.5 % high: mixed with nearer
   * ground), in front of it (B's in front of the near post). Kept without the key,
   * dropped with it; the keeper, the player and the ground as with exact frames. */
  static const Box people[] = {
    { { 2.2, -0.25, 0 }, { 2.6, 0.25, 1.8 } },
    { { -0.25, 1.5, 0 }, { 0.25, 2.0, 1.8 } },
  };
  const StereoCalib *cams[2] = { &t.ca, &t.cb };
  g_autofree int16_t *open = g_new(int16_t, W * H);
  g_autofree int16_t *sa = g_new(int16_t, W * H);
  g_autofree int16_t *sb = g_new(int16_t, W * H);
  static const double smear_region[2][4] = {
    { 3.3, 4.0, -2.5, 2.5 },     /* behind the goal line */
    { 2.0, 2.5, -1.75, -1.25 },  /* in front of the near post */
  };
  for (int near = 0; near < 2; near++) {
    int16_t *smeared[2] = { sa, sb };
    const int16_t *exact[2] = { t.da, t.db };
    for (int c = 0; c < 2; c++) {
      render_boxes(cams[c], people, G_N_ELEMENTS(people), false, 0, open);
      for (int i = 0; i < W * H; i++) {
        smeared[c][i] = exact[c][i];
        if (exact[c][i] > open[i])   /* the frame's pixels */
          smeared[c][i] = (int16_t) lround(exact[c][i] * (near ? 1.025 : 0.975));
      }
    }
    HeightmapInput sia = t.ia, sib = t.ib;
    sia.disparity = sa;
    sib.disparity = sb;
    double smear_top[2], people_top[2][3];
    for (int on = 0; on < 2; on++) {
      float hs[SCENE_N * SCENE_N];
      HeightmapFusionParams fp = { .label = "goal-shadow", .min_points = 2,
                                   .top_fraction = 0.1, .disparity_noise = 0.07,
                                   .goal_line = 3.0, .goal_width = 3.0, .goal_height = 2.0,
                                   .goal_shadow = !near && on ? 2.0 : 0.0,
                                   .goal_front = near && on ? 2.0 : 0.0 };
      fuse_two(ctx, &fp, &t.ga, &sia, &t.gb, &sib, hs);
      smear_top[on] = region_top(hs, smear_region[near]);
      for (int k = 2; k < 5; k++)
        people_top[on][k - 2] = region_top(hs, region[k]);
    }
    g_test_message("the frame measured 2.5 %% %s: %s %.2f m without %s, %.2f m with 2 m",
                   near ? "near" : "far", near ? "in front of the post" : "behind the line",
                   smear_top[0], near ? "goal_front" : "goal_shadow", smear_top[1]);
    g_assert_cmpfloat(smear_top[0], >, 1.0);
    g_assert_cmpfloat(smear_top[1], <, 0.3);
    for (int k = 0; k < 3; k++)
      g_assert_cmpfloat(fabs(people_top[1][k] - top[1][k + 2]), <, 1e-6);
  }
}

/* Players side by side (view_split, end to end): two bodies 1 m apart along x, seen by A
 * from the south (side by side across its view) and by B from the east (one behind the
 * other along its view), B's pixels measured up to 3 % off in range: B's smear joins them
 * into one blob. The fusion's body masks (points 0.6 m up) give A's cells 1.4 m across its
 * view: with view_split 0.9 m + 10 px (A's pixels at 32 m: 0.27 m) the blob is cut into
 * the two bodies, one on each side, each within 0.3 m of its body; without the cut (or
 * without the body masks) one blob. Every output poisoned first. */
static void
test_fusion_side_by_side(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 320, H = 240 };
  static const Box bodies[] = {
    { { -0.7, -0.2, 0 }, { -0.3, 0.2, 1.8 } },
    { { 0.3, -0.2, 0 }, { 0.7, 0.2, 1.8 } },
  };
  g_auto(TwoCameras) t = { 0 };
  two_cameras_init(&t, W, H, 1200.0, 30);
  render_boxes(&t.ca, bodies, G_N_ELEMENTS(bodies), false, 0, t.da);
  render_boxes(&t.cb, bodies, G_N_ELEMENTS(bodies), false, 0.03, t.db);

  HeightmapFusionParams fp = { .label = "side", .min_points = 2, .top_fraction = 0.1,
                               .disparity_noise = 0.07 };
  float h[SCENE_N * SCENE_N];
  uint32_t masks[SCENE_N * SCENE_N];
  g_autoptr(HeightmapFusion) f = fuse_masked(ctx, &fp, &t, h, masks);
  const uint32_t *body = heightmap_fusion_get_body_masks(f);
  g_assert_nonnull(body);
  g_assert_null(heightmap_fusion_get_see_through(f));   /* no see_height: no such plane */

  HeightmapBlobParams bp = { .min_height = 0.5, .min_area = 0.1, .max_area = 3.0,
                             .top_band = 1.0, .disparity_noise = 0.07 };
  for (int run = 0; run < 3; run++) {
    bp.view_split = run == 1 ? 0.0 : 0.9;
    bp.view_split_px = 10;
    g_autoptr(HeightmapBlobFinder) bf = heightmap_blob_finder_new(&fp.grid, &bp);
    heightmap_blob_finder_set_camera(bf, 0, &t.ga, W, H);
    heightmap_blob_finder_set_camera(bf, 1, &t.gb, W, H);
    if (run != 2)
      heightmap_blob_finder_set_body_masks(bf, body);
    const HeightmapBlob *b;
    int n = heightmap_blob_finder_run(bf, h, masks, &b);
    g_test_message("run %d: %d blobs", run, n);
    for (int k = 0; k < n; k++)
      g_test_message("  (%.2f, %.2f) %.2f m, %.2f m^2", b[k].x, b[k].y, b[k].height,
                     b[k].area);
    if (run == 0) {
      g_assert_cmpint(n, ==, 2);
      int sides = 0;
      for (int k = 0; k < 2; k++) {
        g_assert_cmpfloat(fabs(fabs(b[k].x) - 0.5), <, 0.3);
        g_assert_cmpfloat(fabs(b[k].y), <, 0.3);
        sides |= b[k].x < 0 ? 1 : 2;
      }
      g_assert_cmpint(sides, ==, 3);
    } else {
      g_assert_cmpint(n, ==, 1);
      g_assert_cmpfloat(fabs(b[0].x), <, 0.3);
    }
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/fusion-carve", test_fusion_carve);
  g_test_add_func("/heightmap/fusion-see-through", test_fusion_see_through);
  g_test_add_func("/heightmap/fusion-goals", test_fusion_goals);
  g_test_add_func("/heightmap/fusion-side-by-side", test_fusion_side_by_side);
  return g_test_run();
}
