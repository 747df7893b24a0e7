/* test-heightmap-players: the blob finder (cells -> blobs, their centres, the pairs'
 * precision weights and covariances, the cell labels), the velocities from the flow
 * (a synthetic moving body seen by one camera) and the tracker (ids kept through
 * crossings and misses, confirmation, the Kalman filter with and without measured
 * velocities, new parameters) on hand-made inputs. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "heightmap/heightmap.h"

/* ---------------------------------------------------------------- blobs */

static void
fill_rect(const HeightmapGrid *g, float *h, double x0, double y0, double x1, double y1, float v)
{
  for (int j = 0; j < g->height; j++)
    for (int i = 0; i < g->width; i++) {
      double x = g->x0 + (i + 0.5) * g->cell, y = g->y0 + (j + 0.5) * g->cell;
      if (x >= x0 && x < x1 && y >= y0 && y < y1)
        h[j * g->width + i] = v;
    }
}

static void
test_blobs(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = i % 3 ? 0.05f : NAN;        /* ground and holes */
  /* A: 0.5 x 0.4 m at 1.0 with a 0.2 x 0.2 m top at 1.8 in its corner */
  fill_rect(&g, h, -2.0, -1.0, -1.5, -0.6, 1.0f);
  fill_rect(&g, h, -1.7, -0.8, -1.5, -0.6, 1.8f);
  /* B: 0.3 x 0.3 m at 1.5 */
  fill_rect(&g, h, 2.0, 2.0, 2.3, 2.3, 1.5f);
  /* a single cell (too small) and a long wall (too big) */
  fill_rect(&g, h, 0.0, 0.0, 0.1, 0.1, 2.0f);
  fill_rect(&g, h, -4.5, 4.0, 4.5, 4.4, 1.0f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, NULL, &b);
  g_assert_cmpint(n, ==, 2);
  /* rows first: A (y -1.0) comes before B (y 2.0) */
  g_assert_cmpint(b[0].cells, ==, 20);
  g_assert_cmpfloat_with_epsilon(b[0].area, 0.2, 1e-9);
  g_assert_cmpfloat_with_epsilon(b[0].height, 1.8, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[0].x, -1.6, 1e-6);     /* the top's centre */
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.7, 1e-6);
  g_assert_cmpint(b[1].cells, ==, 9);
  g_assert_cmpfloat_with_epsilon(b[1].x, 2.15, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[1].y, 2.15, 1e-6);

  /* top_band 0: height-weighted centroid of all of A: (12 cells at 1.0, 4 at 1.8 ...) */
  p.top_band = 0;
  g_autoptr(HeightmapBlobFinder) f2 = heightmap_blob_finder_new(&g, &p);
  n = heightmap_blob_finder_run(f2, h, NULL, &b);
  double sw = 16 * 1.0 + 4 * 1.8;
  double ex = (1.0 * (-1.95 - 1.85 - 1.75 - 1.65 - 1.55) * 4 +
               0.8 * (-1.65 - 1.55) * 2) / sw;
  g_assert_cmpfloat_with_epsilon(b[0].x, ex, 1e-6);

  /* visible_offset: moved away from the camera that saw it */
  p.top_band = 0.3;
  p.visible_offset = 0.2;
  g_autoptr(HeightmapBlobFinder) f3 = heightmap_blob_finder_new(&g, &p);
  const HeightmapPairGeometry cam = { .centre = { -1.6, -40.7, 20 } };   /* "south" of A */
  heightmap_blob_finder_set_camera(f3, 2, &cam);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] = 1u << 2;
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpint(n, ==, 2);
  g_assert_cmpuint(b[0].pairs, ==, 4);
  g_assert_cmpfloat_with_epsilon(b[0].x, -1.6, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.5, 1e-6);
  /* a second camera on the opposite side cancels the move */
  const HeightmapPairGeometry cam2 = { .centre = { -1.6, 39.3, 20 } };
  heightmap_blob_finder_set_camera(f3, 5, &cam2);
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] |= 1u << 5;
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.7, 1e-6);

  /* new parameters (a reload): at 1.2 m only A's top (0.04 m^2, too small) and B remain */
  p.min_height = 1.2;
  heightmap_blob_finder_set_params(f3, &p);
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpint(b[0].cells, ==, 9);
}

/* Merged players (split_depth): two bodies side by side, tops 1.8 and 1.7 m 0.6 m apart
 * over a 1.3 m saddle, make one blob without the split and two with split_depth 0.25 (or
 * 0.4: both tops stand 0.4 and 0.5 m above the saddle), each centred on its own top, the
 * saddle going to the higher top; split_depth 0.6 keeps one. A body whose shoulder is a
 * second top only 0.1 m above its dip stays one blob; two tops 0.3 m apart (one head)
 * are not split either (HEIGHTMAP_SPLIT_SEPARATION), nor a body with a spike of 2 cells
 * (under min_area by itself) 0.5 m from its top over a 1.3 m strip. Labels follow the
 * blobs. */
static void
test_blobs_split(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = 0.05f;
  /* the pair: x -1.0 .. 0.0 (10 columns) by 0.4 m: left body at 1.5 with a 0.2 m top at
   * 1.8 (x -0.9 .. -0.7), saddle column at 1.3 (x -0.5 .. -0.4), right body at 1.5 with its
   * top at 1.7 (x -0.3 .. -0.1) */
  fill_rect(&g, h, -1.0, 0.0, 0.0, 0.4, 1.5f);
  fill_rect(&g, h, -0.9, 0.1, -0.7, 0.3, 1.8f);
  fill_rect(&g, h, -0.5, 0.0, -0.4, 0.4, 1.3f);
  fill_rect(&g, h, -0.3, 0.1, -0.1, 0.3, 1.7f);
  /* one body (2.0 .. 2.6 by 0.4): head 1.8 at x 2.1 .. 2.3, shoulder top 1.6 at 2.4 .. 2.5
   * over a dip of 1.5: 0.1 m */
  fill_rect(&g, h, 2.0, 0.0, 2.6, 0.4, 1.5f);
  fill_rect(&g, h, 2.1, 0.1, 2.3, 0.3, 1.8f);
  fill_rect(&g, h, 2.4, 0.1, 2.5, 0.3, 1.6f);
  /* one head with two tops 0.3 m apart (x -3.0 and -2.7), 0.5 m above the 1.3 m between */
  fill_rect(&g, h, -3.1, 2.0, -2.5, 2.3, 1.3f);
  fill_rect(&g, h, -3.1, 2.1, -3.0, 2.2, 1.8f);
  fill_rect(&g, h, -2.8, 2.1, -2.7, 2.2, 1.8f);
  /* the body with a spike: 1.5 at x 3.0 .. 3.4, top 1.8 at 3.1 .. 3.3; strip 1.3 at
   * 3.4 .. 3.5, spike 1.9 at 3.5 .. 3.6 (2 cells, y 2.1 .. 2.3) */
  fill_rect(&g, h, 3.0, 2.0, 3.4, 2.4, 1.5f);
  fill_rect(&g, h, 3.1, 2.1, 3.3, 2.3, 1.8f);
  fill_rect(&g, h, 3.4, 2.1, 3.5, 2.3, 1.3f);
  fill_rect(&g, h, 3.5, 2.1, 3.6, 2.3, 1.9f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.15 };
  const HeightmapBlob *b;
  for (int run = 0; run < 4; run++) {
    p.split_depth = (double[]) { 0.0, 0.25, 0.4, 0.6 }[run];
    g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
    int n = heightmap_blob_finder_run(f, h, NULL, &b);
    bool split = run == 1 || run == 2;
    g_assert_cmpint(n, ==, split ? 5 : 4);
    /* rows first: the pair and the body start on row y 0.0, the head on 2.0; within a
     * split blob the higher top first */
    g_assert_cmpint(b[0].cells, ==, split ? 24 : 40);   /* the saddle column joins the left */
    g_assert_cmpfloat_with_epsilon(b[0].height, 1.8, 1e-6);
    /* merged: the centre of both tops (4 cells at 1.8 m, 4 at 1.7 m), between the two */
    g_assert_cmpfloat_with_epsilon(b[0].x, split ? -0.8 : (7.2 * -0.8 + 6.8 * -0.2) / 14,
                                   1e-6);
    g_assert_cmpfloat_with_epsilon(b[0].y, 0.2, 1e-6);
    int k = 1;
    if (split) {
      g_assert_cmpint(b[1].cells, ==, 16);
      g_assert_cmpfloat_with_epsilon(b[1].height, 1.7, 1e-6);
      g_assert_cmpfloat_with_epsilon(b[1].x, -0.2, 1e-6);
      k = 2;
    }
    g_assert_cmpint(b[k].cells, ==, 24);                 /* the body: one blob */
    g_assert_cmpfloat_with_epsilon(b[k].height, 1.8, 1e-6);
    g_assert_cmpint(b[k + 1].cells, ==, 18);             /* the head: one blob */
    g_assert_cmpint(b[k + 2].cells, ==, 16 + 2 + 2);     /* the body with its spike */
    g_assert_cmpfloat_with_epsilon(b[k + 2].height, 1.9, 1e-6);
    const int32_t *label = heightmap_blob_finder_get_labels(f);
    for (int j = 0; j < n; j++) {
      int cnt = 0;
      for (int i = 0; i < g.width * g.height; i++)
        cnt += label[i] == j;
      g_assert_cmpint(cnt, ==, b[j].cells);
    }
  }
}

/* A pair seen from `centre` with focal length * baseline `fb` (Q as calib.c makes it). */
static HeightmapPairGeometry
pair_at(double x, double y, double z, double fb)
{
  HeightmapPairGeometry g = { .centre = { x, y, z } };
  g.q[11] = 700;
  g.q[14] = 700 / fb;
  return g;
}

/* Precision weights: a blob's two halves, one seen by a near pair, one by a far pair on
 * the other side; the near half gives the centre, the covariance is the information sum,
 * visible_offset moves the centre away from the near pair. */
static void
test_blobs_precision(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = 0.05f;
  /* P (x -0.2..0, seen by pair 0) and Q (x 0..0.2, seen by pair 1), y 0..0.2, at 1.8 m */
  fill_rect(&g, h, -0.2, 0.0, 0.2, 0.2, 1.8f);
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      double x = g.x0 + (i + 0.5) * g.cell;
      masks[j * g.width + i] = x < 0 ? 1u : 2u;
    }
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 1, .disparity_noise = 0.07 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  /* cameras level with the top (D = L): pair 0 30 m south of P, pair 1 60 m north of Q */
  const HeightmapPairGeometry near = pair_at(-0.1, -29.9, 1.8, 2100);
  const HeightmapPairGeometry far = pair_at(0.1, 60.1, 1.8, 2100);
  heightmap_blob_finder_set_camera(f, 0, &near);
  heightmap_blob_finder_set_camera(f, 1, &far);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(b[0].pairs, ==, 3);
  /* weights 1 / sigma^2, sigma = L^2 0.07 / 2100: P's cells are (60 / 30)^4 = 16 times
   * Q's, so x = (-0.1 * 16 + 0.1) / 17 */
  g_assert_cmpfloat_with_epsilon(b[0].x, (-0.1 * 16 + 0.1) / 17, 2e-3);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1, 1e-3);
  /* covariance: along y 1 / (1 / s0^2 + 1 / s1^2), across x cell^2 / 2 */
  double s0 = 30.0 * 30.0 * 0.07 / 2100, s1 = 60.0 * 60.0 * 0.07 / 2100;
  double cyy = 1.0 / (1.0 / (s0 * s0) + 1.0 / (s1 * s1));
  g_assert_cmpfloat_with_epsilon(b[0].cov[2] / cyy, 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon(b[0].cov[0] / (0.01 / 2), 1.0, 0.02);
  g_assert_cmpfloat(fabs(b[0].cov[1]), <, 0.01 * b[0].cov[0]);

  /* visible_offset 0.2: along +y (away from the near pair) by 0.2 (16 - 1) / 17 */
  p.visible_offset = 0.2;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1 + 0.2 * 15 / 17, 2e-3);

  /* disparity_noise 0: equal weights, no covariance, the plain mean of directions */
  p.disparity_noise = 0;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].x, 0.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1, 1e-3);   /* the two directions cancel */
  g_assert_cmpfloat(b[0].cov[0], ==, 0);
  g_assert_cmpfloat(b[0].cov[2], ==, 0);

  /* only the near pair: cov along y s0^2, across cell^2 */
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] = 1u;
  p.disparity_noise = 0.07;
  p.visible_offset = 0;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].x, 0.0, 1e-4);
  g_assert_cmpfloat_with_epsilon(b[0].cov[2] / (s0 * s0), 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon(b[0].cov[0] / 0.01, 1.0, 0.02);
}

/* ---------------------------------------------------------------- tracks */

static void
test_tracks(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 2 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  /* two players 1.5 m apart running towards each other at 5 m/s, 25 fps; they pass
   * 0.6 m apart in y: constant velocity keeps the ids on the right players */
  uint32_t id_a = 0, id_b = 0;
  for (int f = 0; f < 20; f++) {
    double s = 0.2 * f;
    HeightmapBlob blobs[2] = {
      { .x = -2 + s, .y = 0.0, .height = 1.8, .area = 0.2 },
      { .x = 2 - s, .y = 0.6, .height = 1.7, .area = 0.2 },
    };
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, blobs, 2, &tr);
    g_assert_cmpint(n, ==, 2);
    for (int i = 0; i < 2; i++) {
      if (f == 0) {
        if (tr[i].y == 0.0)
          id_a = tr[i].id;
        else
          id_b = tr[i].id;
        continue;
      }
      g_assert_cmpuint(tr[i].id, ==, tr[i].y == 0.0 ? id_a : id_b);
    }
    if (f > 3) {
      double vx = tr[0].id == id_a ? tr[0].vx : tr[1].vx;
      g_assert_cmpfloat_with_epsilon(vx, 5.0, 0.5);
    }
  }
  g_assert_cmpuint(id_a, !=, id_b);
  /* both vanish: tracks survive max_missed frames, then go; new blobs get new ids */
  for (int f = 20; f < 23; f++)
    g_assert_cmpint(heightmap_tracker_update(t, (uint64_t) f * 40000000u, NULL, 0, &tr), ==, 0);
  HeightmapBlob again = { .x = 2.0, .y = 0.0 };
  int n = heightmap_tracker_update(t, 23 * 40000000ull, &again, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b));
  /* a blob beyond the gate starts a new track */
  HeightmapBlob far = { .x = 3.5, .y = 0.0 };
  n = heightmap_tracker_update(t, 24 * 40000000ull, &far, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b) + 1);
}

static void
test_tracks_coast(void)
{
  /* missed for one frame, found where the velocity says */
  HeightmapTrackerParams p = { .gate = 0.5, .max_missed = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  uint32_t id = 0;
  for (int f = 0; f < 12; f++) {
    HeightmapBlob b = { .x = 0.32 * f, .y = 1 };   /* 8 m/s */
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, f == 8 ? NULL : &b,
                                     f == 8 ? 0 : 1, &tr);
    if (f == 8) {
      g_assert_cmpint(n, ==, 0);
      continue;
    }
    g_assert_cmpint(n, ==, 1);
    if (f == 0)
      id = tr[0].id;
    g_assert_cmpuint(tr[0].id, ==, id);
  }
}

/* The Kalman filter (acceleration > 0): a player running at 5 m/s across the view of a
 * camera 60 m away, its blobs off by noise of 0.25 m along the view (y) and 0.05 m
 * across: the track follows without lag and has half or less of the noise along y;
 * without the filter (acceleration 0) the track is the blob. Then the player turns back
 * at once (-10 m/s in a frame): the track is within 0.3 m again 0.6 s later. */
static void
test_tracks_kalman(void)
{
  const double sy = 0.25, sx = 0.05;
  double err[2][3] = { { 0 } };     /* per mode: sum x error, sum x^2, sum y^2 */
  double after_turn[2] = { 0 };
  for (int mode = 0; mode < 2; mode++) {
    HeightmapTrackerParams p = { .gate = 1.5, .max_missed = 3, .acceleration = mode ? 10 : 0 };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    g_autoptr(GRand) rand = g_rand_new_with_seed(7);
    uint32_t id = 0;
    double x = 0;
    int counted = 0;
    for (int f = 0; f < 150; f++) {
      double v = f < 100 ? 5.0 : -5.0;   /* turns at frame 100 */
      if (f > 0)
        x += v * 0.04;
      /* Box-Muller, unit normal deviates */
      double u1 = g_rand_double_range(rand, 1e-12, 1), u2 = g_rand_double(rand);
      double r = sqrt(-2 * log(u1));
      HeightmapBlob b = { .x = x + sx * r * cos(2 * G_PI * u2), .y = 2 + sy * r * sin(2 * G_PI * u2),
                          .height = 1.8, .area = 0.3, .cov = { sx * sx, 0, sy * sy } };
      const HeightmapTrack *tr;
      int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, &b, 1, &tr);
      g_assert_cmpint(n, ==, 1);
      if (f == 0)
        id = tr[0].id;
      g_assert_cmpuint(tr[0].id, ==, id);
      if (mode == 0) {
        g_assert_cmpfloat(tr[0].x, ==, b.x);   /* no filter: the blob's position */
        g_assert_cmpfloat(tr[0].y, ==, b.y);
      }
      if (f >= 20 && f < 100) {
        err[mode][0] += tr[0].x - x;
        err[mode][1] += (tr[0].x - x) * (tr[0].x - x);
        err[mode][2] += (tr[0].y - 2) * (tr[0].y - 2);
        counted++;
      }
      if (f >= 115)
        after_turn[mode] = MAX(after_turn[mode], hypot(tr[0].x - x, tr[0].y - 2));
    }
    for (int k = 0; k < 3; k++)
      err[mode][k] /= counted;
  }
  double rms_y[2] = { sqrt(err[0][2]), sqrt(err[1][2]) };
  g_test_message("along the view: rms %.3f m raw, %.3f m filtered; x bias %.4f m; "
                 "after the turn %.3f m", rms_y[0], rms_y[1], err[1][0], after_turn[1]);
  g_assert_cmpfloat(rms_y[0], >, 0.8 * sy);         /* the noise is there ... */
  g_assert_cmpfloat(rms_y[1], <, rms_y[0] / 2);     /* ... and half of it filtered out */
  g_assert_cmpfloat(fabs(err[1][0]), <, 0.02);      /* no lag at constant velocity */
  g_assert_cmpfloat(sqrt(err[1][1]), <, 1.2 * sx);
  g_assert_cmpfloat(after_turn[1], <, 0.3);
}

/* A blob seen once is not reported and its tentative track goes at the next miss; one
 * seen in `confirm` consecutive frames is reported from then on, also through a miss. */
static void
test_tracks_confirm(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob noise = { .x = 10, .y = 5, .height = 1.2, .area = 0.3 };
  HeightmapBlob player[2] = { { .x = 0, .y = 0, .height = 1.8, .area = 0.3 }, noise };
  uint64_t ms40 = 40000000u;
  /* frame 0: a player and a noise blob; frame 1: the player only; frame 2: both again */
  g_assert_cmpint(heightmap_tracker_update(t, 0, player, 2, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, player, 1, &tr), ==, 0);
  int n = heightmap_tracker_update(t, 2 * ms40, player, 2, &tr);
  g_assert_cmpint(n, ==, 1);   /* the player, confirmed at its 3rd frame; the noise blob
                                  restarted a tentative track */
  g_assert_cmpfloat(tr[0].x, ==, 0.0);
  g_assert_true(tr[0].confirmed);
  uint32_t id = tr[0].id;
  /* a miss does not un-confirm it */
  g_assert_cmpint(heightmap_tracker_update(t, 3 * ms40, NULL, 0, &tr), ==, 0);
  n = heightmap_tracker_update(t, 4 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
  /* the noise blob, seen in frame 2 only, never becomes a player */
  n = heightmap_tracker_update(t, 5 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
}

/* New parameters keep the tracks: a tentative track keeps its hits against the new
 * `confirm`, and its id. */
static void
test_tracks_set_params(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 5 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob player = { .x = 0, .y = 0, .height = 1.8, .area = 0.3 };
  uint64_t ms40 = 40000000u;
  g_assert_cmpint(heightmap_tracker_update(t, 0, &player, 1, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, &player, 1, &tr), ==, 0);
  p.confirm = 3;
  heightmap_tracker_set_params(t, &p);
  g_assert_cmpint(heightmap_tracker_update(t, 2 * ms40, &player, 1, &tr), ==, 1);
  g_assert_cmpuint(tr[0].id, ==, 1);
  g_assert_cmpint(tr[0].age, ==, 3);
}

/* ---------------------------------------------------------------- velocities */

/* A camera 10 m in front of the pitch origin looking along +y, 1 m up: f 800 px, B 1 m,
 * 320 x 240 px. */
#define VW 320
#define VH 240
static const double vel_rot[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };   /* camera -> pitch */
static const double vel_centre[3] = { 0, -10, 1 };

/* A body: the points of the pitch plane x in [-0.3, 0.3], y = y0 + depth offset, z in
 * [0.6, 1.8] at (cx, cy) on the pitch; the disparity plane of a frame with it at (bx, by),
 * INT16_MIN elsewhere, and its pixels' pitch points. */
static void
vel_render(const StereoCalib *c, double bx, double by, int16_t *d)
{
  const double f = c->P1[0], cx = c->P1[2], cy = c->P1[6], fb = f * 1.0;
  for (int i = 0; i < VW * VH; i++)
    d[i] = INT16_MIN;
  for (int y = 0; y < VH; y++)
    for (int x = 0; x < VW; x++) {
      /* the ray of (x, y) meets the plane Z = by + 10 (the body's depth) */
      double z = by + 10.0, px = (x - cx) * z / f, py = -(y - cy) * z / f + 1.0;
      if (px >= bx - 0.3 && px <= bx + 0.3 && py >= 0.6 && py <= 1.8)
        d[y * VW + x] = (int16_t) lrint(32.0 * fb / z);
    }
}

/* The flow of the previous frame's pixels of a body moving from (bx, by) by (sx, sy):
 * exact, rounded to 1/32 px; unknown off the body. */
static void
vel_flow(const StereoCalib *c, double bx, double by, double sx, double sy, int16_t *u,
         int16_t *v)
{
  const double f = c->P1[0], cx = c->P1[2], cy = c->P1[6];
  for (int i = 0; i < VW * VH; i++)
    u[i] = v[i] = INT16_MIN;
  for (int y = 0; y < VH; y++)
    for (int x = 0; x < VW; x++) {
      double z = by + 10.0, px = (x - cx) * z / f, py = -(y - cy) * z / f + 1.0;
      if (!(px >= bx - 0.3 && px <= bx + 0.3 && py >= 0.6 && py <= 1.8))
        continue;
      double z1 = z + sy, x1 = cx + f * (px + sx) / z1, y1 = cy - f * (py - 1.0) / z1;
      u[y * VW + x] = (int16_t) lrint(32.0 * (x1 - x));
      v[y * VW + x] = (int16_t) lrint(32.0 * (y1 - y));
    }
}

static HeightmapInput
vel_input(const int16_t *d, const int16_t *u, const int16_t *v)
{
  return (HeightmapInput) { .width = VW, .height = VH, .disparity = d,
                            .disparity_stride = VW * 2, .disparity_size = VW * VH * 2,
                            .disparity_scale = 1.0 / 32, .flow_u = u, .flow_v = v,
                            .flow_stride = VW * 2, .flow_u_size = u ? VW * VH * 2 : 0,
                            .flow_v_size = v ? VW * VH * 2 : 0 };
}

/* A body moving at (1.5, -0.8) m/s for 40 ms: the median of its pixels' scene flow gives
 * the velocity within 0.05 m/s; its covariance is larger along the view (y) than
 * across; no velocity without the previous frame (a gap in the frame numbers), without
 * flow planes, or for a blob its pixels do not fall in. */
static void
test_velocity(void)
{
  StereoCalib c;
  calib_init_ideal(&c, VW, VH, 800.0, (VW - 1) / 2.0, (VH - 1) / 2.0, 1.0, NULL, vel_rot,
                   vel_centre);
  HeightmapPairGeometry geom;
  heightmap_geometry_from_calib(&geom, &c);
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.2));
  g_autofree int32_t *labels = g_new(int32_t, g.width * g.height);
  for (int j = 0; j < g.height; j++)   /* blob 0: the cells within 1 m of the origin */
    for (int i = 0; i < g.width; i++)
      labels[j * g.width + i] =
        hypot(g.x0 + (i + 0.5) * g.cell, g.y0 + (j + 0.5) * g.cell) < 1.0 ? 0 : -1;
  HeightmapVelocityParams vp = { .min_height = 0.5, .min_confidence = 0, .min_samples = 20,
                                 .disparity_noise = 0.07 };
  g_autoptr(HeightmapVelocity) vel = heightmap_velocity_new(&g, &vp);
  const double vx = 1.5, vy = -0.8, dt = 0.04;
  const uint64_t t0 = 1000000000u, t1 = t0 + 40000000u;
  g_autofree int16_t *d0 = g_new(int16_t, VW * VH), *d1 = g_new(int16_t, VW * VH);
  g_autofree int16_t *u = g_new(int16_t, VW * VH), *v = g_new(int16_t, VW * VH);
  vel_render(&c, 0.1, 0.2, d0);
  vel_render(&c, 0.1 + vx * dt, 0.2 + vy * dt, d1);
  vel_flow(&c, 0.1, 0.2, vx * dt, vy * dt, u, v);
  HeightmapBlob blob[2] = { { .x = 0.1, .y = 0.2, .height = 1.8 },
                            { .x = 3, .y = 3, .height = 1.8 } };
  HeightmapInput in0 = vel_input(d0, NULL, NULL), in1 = vel_input(d1, u, v);

  /* the first frame: no previous one */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in0, 7, t0));
  const HeightmapBlob *out = heightmap_velocity_finish(vel, blob, 2);
  g_assert_false(out[0].has_velocity);
  /* the next: measured */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in1, 8, t1));
  out = heightmap_velocity_finish(vel, blob, 2);
  g_assert_true(out[0].has_velocity);
  g_assert_false(out[1].has_velocity);   /* no pixel of it */
  g_assert_cmpfloat(out[0].x, ==, blob[0].x);   /* the rest of the blob unchanged */
  g_test_message("measured (%.3f, %.3f) m/s for (%.2f, %.2f); sigma x %.3f, y %.3f m/s",
                 out[0].vx, out[0].vy, vx, vy, sqrt(out[0].velocity_cov[0]),
                 sqrt(out[0].velocity_cov[2]));
  g_assert_cmpfloat(fabs(out[0].vx - vx), <, 0.05);
  g_assert_cmpfloat(fabs(out[0].vy - vy), <, 0.05);
  g_assert_cmpfloat(out[0].velocity_cov[2], >, 4 * out[0].velocity_cov[0]);
  g_assert_cmpfloat(sqrt(out[0].velocity_cov[0]), >=, HEIGHTMAP_VELOCITY_MIN_SIGMA - 1e-9);

  /* a gap: frame 10 after 8 has no previous frame; nor a frame without flow planes */
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in1, 10, t1 + 80000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_true(heightmap_velocity_add(vel, 0, &geom, &in0, 11, t1 + 120000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
  /* planes that do not fit their sizes are refused, and the pair's history with them */
  HeightmapInput bad = in1;
  bad.flow_v_size = VW * 2;
  heightmap_velocity_begin(vel, labels, 2);
  g_assert_false(heightmap_velocity_add(vel, 0, &geom, &bad, 12, t1 + 160000000u));
  g_assert_false(heightmap_velocity_finish(vel, blob, 2)[0].has_velocity);
}

/* A track of blobs with measured velocities takes them as measurements: after one
 * frame it already moves at the measured velocity (positions alone need two), and with
 * noisy positions its velocity follows the measured one. */
static void
test_tracks_velocity(void)
{
  HeightmapTrackerParams p = { .gate = 2.0, .max_missed = 3, .confirm = 1,
                               .acceleration = 3.0 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob b = { .x = 0, .y = 0, .height = 1.8, .area = 0.3, .cov = { 0.01, 0, 0.01 },
                      .has_velocity = true, .vx = 4.0, .vy = -1.0,
                      .velocity_cov = { 0.01, 0, 0.01 } };
  g_assert_cmpint(heightmap_tracker_update(t, 0, &b, 1, &tr), ==, 1);
  g_assert_cmpfloat(tr[0].vx, ==, 4.0);   /* a new track starts from it */
  g_assert_true(tr[0].has_measured);
  g_assert_cmpfloat(tr[0].measured_vy, ==, -1.0);
  uint64_t ms40 = 40000000u;
  double err = 0;
  for (int f = 1; f <= 25; f++) {
    b.x = 4.0 * 0.04 * f + (f % 2 ? 0.08 : -0.08);   /* positions with +-8 cm of noise */
    b.y = -1.0 * 0.04 * f;
    g_assert_cmpint(heightmap_tracker_update(t, f * ms40, &b, 1, &tr), ==, 1);
    err = MAX(err, hypot(tr[0].vx - 4.0, tr[0].vy + 1.0));
  }
  g_test_message("largest velocity error with measured velocities: %.3f m/s", err);
  g_assert_cmpfloat(err, <, 0.2);
  /* without them the same noisy positions give a worse velocity */
  g_autoptr(HeightmapTracker) plain = heightmap_tracker_new(&p);
  b.has_velocity = false;
  double err_plain = 0;
  for (int f = 0; f <= 25; f++) {
    b.x = 4.0 * 0.04 * f + (f % 2 ? 0.08 : -0.08);
    b.y = -1.0 * 0.04 * f;
    g_assert_cmpint(heightmap_tracker_update(plain, f * ms40, &b, 1, &tr), ==, 1);
    g_assert_false(tr[0].has_measured);
    if (f >= 10)
      err_plain = MAX(err_plain, hypot(tr[0].vx - 4.0, tr[0].vy + 1.0));
  }
  g_test_message("largest velocity error from positions alone (from frame 10): %.3f m/s",
                 err_plain);
  g_assert_cmpfloat(err_plain, >, err);
}

/* The labels of the last run: a blob's cells carry its index, a blob dropped for its
 * area none (< 0). */
static void
test_blob_labels(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, 0, 10, 0, 10, 0.2));
  g_autofree float *h = g_new(float, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = NAN;
  fill_rect(&g, h, 1.0, 1.0, 1.6, 1.6, 1.8);   /* 9 cells, 0.36 m^2 */
  fill_rect(&g, h, 5.0, 5.0, 5.2, 5.2, 1.8);   /* one cell: below min_area */
  fill_rect(&g, h, 8.0, 8.0, 8.6, 8.6, 1.8);
  HeightmapBlobParams bp = { .min_height = 0.5, .min_area = 0.1, .max_area = 2.0 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &bp);
  const HeightmapBlob *blobs;
  int n = heightmap_blob_finder_run(f, h, NULL, &blobs);
  g_assert_cmpint(n, ==, 2);
  const int32_t *labels = heightmap_blob_finder_get_labels(f);
  int cells[2] = { 0, 0 }, dropped = 0;
  for (int i = 0; i < g.width * g.height; i++) {
    if (labels[i] >= 0) {
      g_assert_cmpint(labels[i], <, n);
      cells[labels[i]]++;
    } else if (h[i] >= 0.5) {
      dropped++;
    }
  }
  g_assert_cmpint(cells[0], ==, blobs[0].cells);
  g_assert_cmpint(cells[1], ==, blobs[1].cells);
  g_assert_cmpint(dropped, ==, 1);
  g_assert_false(blobs[0].has_velocity);
}

/* The play area: with lines at x = +-5 and y = +-3 and a margin of 1 m, blobs centred
 * on the pitch or within 1 m of a line are kept, those farther out are dropped (their
 * cells labelled -2, not a blob's); a wider margin (a reload) or unknown lines keep all. */
static void
test_blobs_play_area(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -8, 8, -6, 6, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = 0.02f;
  static const double centre[][2] = {
    { 0.0, 0.0 },     /* on the pitch */
    { -4.6, 2.7 },    /* inside a corner */
    { 2.0, 3.85 },    /* 0.85 m beyond a touch line: kept */
    { 5.9, -1.0 },    /* 0.9 m beyond a goal line: kept */
    { -6.25, 1.0 },   /* 1.25 m beyond a goal line: dropped */
    { 1.0, -5.5 },    /* 2.5 m beyond a touch line: dropped */
    { 6.6, 4.6 },     /* beyond both: dropped */
  };
  const int n_in = 4, n_all = G_N_ELEMENTS(centre);
  for (int k = 0; k < n_all; k++)   /* 0.3 x 0.3 m bodies, 1.8 m */
    fill_rect(&g, h, centre[k][0] - 0.15, centre[k][1] - 0.15, centre[k][0] + 0.15,
              centre[k][1] + 0.15, 1.8f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .half_length = 5, .half_width = 3,
                            .play_margin = 1.0 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, NULL, &b);
  g_assert_cmpint(n, ==, n_in);
  for (int k = 0; k < n_all; k++) {
    bool found = false;
    for (int j = 0; j < n; j++)
      found |= fabs(b[j].x - centre[k][0]) < 0.1 && fabs(b[j].y - centre[k][1]) < 0.1;
    g_assert_cmpint(found, ==, k < n_in);
    /* the dropped ones' cells belong to no blob */
    int i = (int)((centre[k][1] - g.y0) / g.cell) * g.width + (int)((centre[k][0] - g.x0) / g.cell);
    g_assert_cmpint(heightmap_blob_finder_get_labels(f)[i] >= 0, ==, k < n_in);
  }
  p.play_margin = 3.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_all);
  p.play_margin = 1.0;
  p.half_width = 0;   /* lines unknown */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_all);
  p.half_width = 3;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_in);
}

/* Body support: a standing body (a fifth of its points 0.2-0.6 m high) and the ball in
 * flight (none) make the same blob in the height grid; with body_support 0.1 and the
 * cells' support only the body stays (the ball's cells labelled -2); without support data
 * or with body_support 0 both stay. */
static void
test_blobs_body_support(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -3, 3, -3, 3, 0.1));
  int n_cells = g.width * g.height;
  g_autofree float *h = g_new(float, n_cells);
  g_autofree uint32_t *support = g_new0(uint32_t, n_cells);
  for (int i = 0; i < n_cells; i++)
    h[i] = 0.02f;
  fill_rect(&g, h, -1.15, -0.15, -0.85, 0.15, 1.8f);   /* the body, around (-1, 0) */
  fill_rect(&g, h, 0.85, -0.15, 1.15, 0.15, 2.3f);     /* the ball's smear, around (1, 0) */
  for (int i = 0; i < n_cells; i++) {
    if (h[i] > 2.0f)
      support[i] = 1u | 30u << 16;     /* a stray low point, 30 high */
    else if (h[i] > 1.0f)
      support[i] = 6u | 30u << 16;     /* 6 of 30: a fifth */
  }
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .body_support = 0.1 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no support yet */
  heightmap_blob_finder_set_support(f, support);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
  g_assert_cmpfloat_with_epsilon(b[0].height, 1.8, 1e-6);
  const int32_t *labels = heightmap_blob_finder_get_labels(f);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 2.0f)
      g_assert_cmpint(labels[i], ==, -2);
  p.body_support = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  p.body_support = 0.25;   /* more than the body's fifth */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/blobs/labels", test_blob_labels);
  g_test_add_func("/heightmap/velocity", test_velocity);
  g_test_add_func("/heightmap/tracks/velocity", test_tracks_velocity);
  g_test_add_func("/heightmap/blobs", test_blobs);
  g_test_add_func("/heightmap/blobs/split", test_blobs_split);
  g_test_add_func("/heightmap/blobs/play-area", test_blobs_play_area);
  g_test_add_func("/heightmap/blobs/body-support", test_blobs_body_support);
  g_test_add_func("/heightmap/blobs/precision", test_blobs_precision);
  g_test_add_func("/heightmap/tracks/crossing", test_tracks);
  g_test_add_func("/heightmap/tracks/coast", test_tracks_coast);
  g_test_add_func("/heightmap/tracks/kalman", test_tracks_kalman);
  g_test_add_func("/heightmap/tracks/confirm", test_tracks_confirm);
  g_test_add_func("/heightmap/tracks/set-params", test_tracks_set_params);
  return g_test_run();
}
