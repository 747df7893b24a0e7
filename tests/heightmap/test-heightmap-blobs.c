/* test-heightmap-blobs: the blob finder (cells -> blobs, their centres, the pairs'
 * precision weights and covariances, the cell labels, merged players, the play area,
 * body support) on hand-made height grids. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "heightmap/heightmap.h"

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

/* Every blob's label marks as many cells as the blob has. */
static void
assert_labels(const HeightmapGrid *g, const HeightmapBlobFinder *f, const HeightmapBlob *b,
              int n)
{
  const int32_t *label = heightmap_blob_finder_get_labels(f);
  for (int j = 0; j < n; j++) {
    int cnt = 0;
    for (int i = 0; i < g->width * g->height; i++)
      cnt += label[i] == j;
    g_assert_cmpint(cnt, ==, b[j].cells);
  }
}

/* A grid from (x0, y0) to (x1, y1) of `cell` m and its heights, every cell `ground`. */
static float *
ground_grid(HeightmapGrid *g, double x0, double x1, double y0, double y1, double cell,
            float ground)
{
  g_assert_true(heightmap_grid_init(g, x0, x1, y0, y1, cell));
  float *h = g_new(float, g->width * g->height);
  for (int i = 0; i < g->width * g->height; i++)
    h[i] = ground;
  return h;
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
  heightmap_blob_finder_set_camera(f3, 2, &cam, 0, 0);
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
  heightmap_blob_finder_set_camera(f3, 5, &cam2, 0, 0);
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

/* Crowds (crowd_split, crowd_area): three bodies (0.4 x 0.4 m at 1.6 m) 0.4 m apart,
 * joined by a 1.0 m band into one blob of 0.8 m^2, above max_area (0.5): dropped without
 * crowd_split, three blobs (one per body, each centred on it) with 0.3 above crowd_area
 * 0.5. A merged pair of 0.4 m^2 (tops 0.6 m apart over a 1.3 m saddle) stays one blob
 * there and is split with crowd_area 0.3; a flat wall of 3.6 m^2 has one top and is
 * dropped in every run. split_depth splits both blobs. */
static void
test_blobs_crowd(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -5, 5, -5, 5, 0.1, 0.05f);
  fill_rect(&g, h, -3.0, 0.0, -1.0, 0.4, 1.0f);
  for (int k = 0; k < 3; k++)
    fill_rect(&g, h, -3.0 + 0.8 * k, 0.0, -2.6 + 0.8 * k, 0.4, 1.6f);
  fill_rect(&g, h, 1.0, 0.0, 2.0, 0.4, 1.5f);
  fill_rect(&g, h, 1.1, 0.1, 1.3, 0.3, 1.8f);
  fill_rect(&g, h, 1.5, 0.0, 1.6, 0.4, 1.3f);
  fill_rect(&g, h, 1.7, 0.1, 1.9, 0.3, 1.7f);
  fill_rect(&g, h, -4.5, 4.0, 4.5, 4.4, 1.0f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 0.5,
                            .crowd_area = 0.5, .top_band = 0.15 };
  const HeightmapBlob *b;
  for (int run = 0; run < 4; run++) {
    p.crowd_split = run == 0 ? 0.0 : 0.3;
    p.split_depth = run == 2 ? 0.25 : 0.0;
    p.crowd_area = run == 3 ? 0.3 : 0.5;
    g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
    int n = heightmap_blob_finder_run(f, h, NULL, &b);
    const int want[4] = { 1, 4, 5, 5 };
    g_assert_cmpint(n, ==, want[run]);
    /* dropped as too large: the wall, and the crowd unsplit */
    g_assert_cmpint(heightmap_blob_finder_get_counts(f)->large, ==, run == 0 ? 2 : 1);
    int k = 0;
    if (run > 0) {
      int cells = 0;
      for (; k < 3; k++) {
        g_assert_cmpfloat_with_epsilon(b[k].height, 1.6, 1e-6);
        g_assert_cmpfloat_with_epsilon(b[k].x, -2.8 + 0.8 * k, 1e-6);
        g_assert_cmpfloat_with_epsilon(b[k].y, 0.2, 1e-6);
        g_assert_cmpfloat(b[k].area, <=, p.max_area);
        cells += b[k].cells;
      }
      g_assert_cmpint(cells, ==, 80);      /* the band's cells all go to a body */
    }
    /* the pair: one blob of 40 cells, or split (split_depth, crowd_area 0.3) */
    g_assert_cmpint(b[k].cells, ==, run >= 2 ? 24 : 40);
    g_assert_cmpfloat_with_epsilon(b[k].height, 1.8, 1e-6);
    assert_labels(&g, f, b, n);
    /* the wall's cells belong to no blob */
    const int32_t *label = heightmap_blob_finder_get_labels(f);
    g_assert_cmpint(label[(int) ((4.2 - g.y0) / g.cell) * g.width + g.width / 2], <, 0);
  }
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
  g_autofree float *h = ground_grid(&g, -5, 5, -5, 5, 0.1, 0.05f);
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
    assert_labels(&g, f, b, n);
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
  g_autofree float *h = ground_grid(&g, -5, 5, -5, 5, 0.1, 0.05f);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
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
  heightmap_blob_finder_set_camera(f, 0, &near, 0, 0);
  heightmap_blob_finder_set_camera(f, 1, &far, 0, 0);
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

/* view_split: pair 0 looks north from 40 m south at two bodies side by side, 1 m apart
 * across its view (x -0.7..-0.3 and 0.3..0.7, 1.8 m), each smeared 1 m along its view (y
 * 0..1); pair 1, from the east, smears a third body's points between them (x -0.3..0.3,
 * y 0.4..0.6, 0.8 m) and joins them into one blob. Pair 0's body cells spread 1.4 m across
 * its view: view_split 1 cuts the blob into the two bodies, each centred on its own
 * (top_band keeps the joint out of the centres), the joint's cells going to the nearer
 * side; at 1.6, without body masks or off, one blob. view_split_px adds the pair's pixels
 * at the blob (f 700 px, D 41.5 m: 0.059 m a pixel): 5 px (1.30 m) still cut it, 10 px
 * (1.59 m) do not. A single body 0.6 m wide smeared
 * 2 m along pair 0's view (x 2..2.6, y -1..1) is not cut at 1, nor is a body seen from
 * both pairs (x -3..-2.6, y 2..2.4). Labels follow the blobs. */
static void
test_blobs_view_split(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -5, 5, -5, 5, 0.1, 0.05f);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  g_autofree uint32_t *body = g_new0(uint32_t, g.width * g.height);
  fill_rect(&g, h, -0.3, 0.4, 0.3, 0.6, 0.8f);
  fill_rect(&g, h, -0.7, 0.0, -0.3, 1.0, 1.8f);
  fill_rect(&g, h, 0.3, 0.0, 0.7, 1.0, 1.8f);
  fill_rect(&g, h, 2.0, -1.0, 2.6, 1.0, 1.7f);
  fill_rect(&g, h, -3.0, 2.0, -2.6, 2.4, 1.7f);
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      int c = j * g.width + i;
      double x = g.x0 + (i + 0.5) * g.cell;
      masks[c] = 3u;
      if (h[c] > 0.5)
        body[c] = fabs(x) < 0.3 ? 2u : x < -2 ? 3u : 1u;
    }
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 3.0,
                            .top_band = 0.5 };
  const HeightmapPairGeometry south = pair_at(0, -40, 10, 2100);
  const HeightmapPairGeometry east = pair_at(40, 0.5, 10, 2100);
  for (int run = 0; run < 6; run++) {
    const double split[6] = { 1.0, 1.6, 1.0, 0.0, 1.0, 1.0 }, px[6] = { 0, 0, 0, 0, 5, 10 };
    const bool cut = run == 0 || run == 4;
    p.view_split = split[run];
    p.view_split_px = px[run];
    g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
    heightmap_blob_finder_set_camera(f, 0, &south, 0, 0);
    heightmap_blob_finder_set_camera(f, 1, &east, 0, 0);
    if (run != 2)
      heightmap_blob_finder_set_body_masks(f, body);
    const HeightmapBlob *b;
    int n = heightmap_blob_finder_run(f, h, masks, &b);
    g_assert_cmpint(n, ==, cut ? 4 : 3);
    g_assert_cmpint(heightmap_blob_finder_get_counts(f)->cuts, ==, cut ? 1 : 0);
    g_assert_cmpint(heightmap_blob_finder_get_counts(f)->kept, ==, n);
    assert_labels(&g, f, b, n);
    int pair_cells = 0, found = 0;
    for (int k = 0; k < n; k++) {
      if (b[k].x > 1.5) {           /* the single smeared body */
        g_assert_cmpint(b[k].cells, ==, 120);
        continue;
      }
      if (b[k].x < -2) {            /* the body both pairs saw */
        g_assert_cmpint(b[k].cells, ==, 16);
        continue;
      }
      pair_cells += b[k].cells;
      g_assert_cmpfloat_with_epsilon(b[k].y, 0.5, 1e-6);
      if (cut) {
        g_assert_cmpfloat_with_epsilon(fabs(b[k].x), 0.5, 1e-6);
        found |= b[k].x < 0 ? 1 : 2;
      } else {
        g_assert_cmpfloat_with_epsilon(b[k].x, 0.0, 1e-6);
      }
    }
    g_assert_cmpint(pair_cells, ==, 40 + 40 + 12);   /* every cell goes to a body */
    if (cut)
      g_assert_cmpint(found, ==, 3);
  }
}

/* The labels of the last run: a blob's cells carry its index, a blob dropped for its
 * area none (< 0). */
static void
test_blob_labels(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, 0, 10, 0, 10, 0.2, NAN);
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
  g_autofree float *h = ground_grid(&g, -8, 8, -6, 6, 0.1, 0.02f);
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
  const HeightmapBlobCounts *counts = heightmap_blob_finder_get_counts(f);
  g_assert_cmpint(counts->kept, ==, n_in);
  g_assert_cmpint(counts->off_pitch, ==, n_all - n_in);
  g_assert_cmpint(counts->small + counts->large + counts->no_support + counts->underfilled +
                  counts->cuts, ==, 0);
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

/* The scene of the body-support tests, on a 6 x 6 m grid of 0.1 m (made here, with the
 * heights and the support; returns the cells): a standing body around (-1, 0) (a fifth
 * of its points 0.2-0.6 m high) and the ball's smear around (1, 0), as high and wide (a
 * stray low point of 30). */
static int
support_scene(HeightmapGrid *g, float **heights, uint32_t **support)
{
  float *h = *heights = ground_grid(g, -3, 3, -3, 3, 0.1, 0.02f);
  int n_cells = g->width * g->height;
  uint32_t *s = *support = g_new0(uint32_t, n_cells);
  fill_rect(g, h, -1.15, -0.15, -0.85, 0.15, 1.8f);   /* the body */
  fill_rect(g, h, 0.85, -0.15, 1.15, 0.15, 2.3f);     /* the ball's smear */
  for (int i = 0; i < n_cells; i++) {
    if (h[i] > 2.0f)
      s[i] = 1u | 30u << 16;     /* a stray low point, 30 high */
    else if (h[i] > 1.0f)
      s[i] = 6u | 30u << 16;     /* 6 of 30: a fifth */
  }
  return n_cells;
}

/* Body support: a standing body and the ball in flight make the same blob in the height
 * grid; with body_support 0.1 and the cells' support only the body stays (the ball's
 * cells labelled -2); without support data or with body_support 0 both stay. */
static void
test_blobs_body_support(void)
{
  HeightmapGrid g;
  g_autofree float *h = NULL;
  g_autofree uint32_t *support = NULL;
  int n_cells = support_scene(&g, &h, &support);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .body_support = 0.1 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no support yet */
  heightmap_blob_finder_set_support(f, support);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->no_support, ==, 1);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->kept, ==, 1);
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

/* support_scale: body_support judges a blob only when a pair that saw it (its mask)
 * images it at support_scale px/m or more (f / D, D from the camera to the blob's centre
 * 0.4 m up); the others keep their blobs. f = 700 px: 20 px/m is 35 m. */
static void
test_blobs_support_scale(void)
{
  HeightmapGrid g;
  g_autofree float *h = NULL;
  g_autofree uint32_t *support = NULL;
  int n_cells = support_scene(&g, &h, &support);
  g_autofree uint32_t *masks = g_new0(uint32_t, n_cells);
  for (int i = 0; i < n_cells; i++)
    masks[i] = 1u << 3;   /* pair 3 saw everything */
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .body_support = 0.1, .support_scale = 20 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  heightmap_blob_finder_set_support(f, support);
  const HeightmapBlob *b;
  /* pair 3's camera unknown: nothing is judged */
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
  /* 30 m south, level with the legs: 23.3 px/m, both judged, the ball dropped */
  const HeightmapPairGeometry near = pair_at(0, -30, 0.4, 2100);
  heightmap_blob_finder_set_camera(f, 3, &near, 0, 0);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
  p.support_scale = 25;   /* 23.3 px/m is not enough */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
  p.support_scale = 0;    /* everything judged */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  /* 40 m away (17.5 px/m): not judged; a near pair that did not see the blobs (pair 1,
   * not in the masks) does not count; once it saw them, they are judged */
  p.support_scale = 20;
  heightmap_blob_finder_set_params(f, &p);
  const HeightmapPairGeometry far = pair_at(0, -40, 0.4, 2100);
  heightmap_blob_finder_set_camera(f, 3, &far, 0, 0);
  heightmap_blob_finder_set_camera(f, 1, &near, 0, 0);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
  for (int i = 0; i < n_cells; i++)
    masks[i] |= 1u << 1;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
}

/* min_fill: two blobs alike in the height grid (0.3 x 0.3 m, 1.8 m high, seen by pair
 * 0), a body whose cells hold 40 points from 0.2 m up each and a fragment with 4 each.
 * Pair 0 30 m away (f 700 px: 23.3 px/m) images a body there on 0.45 x 1.6 x 23.3^2 =
 * 391 pixels: with min_fill 0.25 the body (about 1 of that) stays, the fragment (about
 * 0.1) goes; above the body's own share, neither. 120 m away (5.8 px/m, 24.5 pixels)
 * both hold a body's share and stay. Without support data, with min_fill 0 or when no
 * pair that saw them is known, both stay. */
static void
test_blobs_min_fill(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -3, 3, -3, 3, 0.1, 0.02f);
  int n_cells = g.width * g.height;
  g_autofree uint32_t *support = g_new0(uint32_t, n_cells);
  g_autofree uint32_t *masks = g_new0(uint32_t, n_cells);
  fill_rect(&g, h, -1.15, -0.15, -0.85, 0.15, 1.8f);   /* the body */
  fill_rect(&g, h, 0.85, -0.15, 1.15, 0.15, 1.8f);     /* the fragment */
  double body_points = 0, fragment_points = 0;
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      int c = j * g.width + i;
      masks[c] = 1u;
      if (h[c] < 1.0f)
        continue;
      bool left = g.x0 + (i + 0.5) * g.cell < 0;
      support[c] = (left ? 40u : 4u) << 16;
      *(left ? &body_points : &fragment_points) += left ? 40 : 4;
    }
  double s = 700.0 / sqrt(1.0 + 30.0 * 30.0);      /* px/m, 30 m from (+-1, 0, 1) */
  double pixels = HEIGHTMAP_BODY_WIDTH * 1.6 * s * s;
  g_test_message("min_fill: body %.2f, fragment %.2f of a body's %.0f pixels",
                 body_points / pixels, fragment_points / pixels, pixels);
  g_assert_cmpfloat(body_points / pixels, >, 0.5);
  g_assert_cmpfloat(fragment_points / pixels, <, 0.15);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .min_fill = 0.25 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  const HeightmapPairGeometry near = pair_at(0, -30, 1.0, 2100);
  heightmap_blob_finder_set_camera(f, 0, &near, 0, 0);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);   /* no support yet */
  heightmap_blob_finder_set_support(f, support);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->underfilled, ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
  const int32_t *labels = heightmap_blob_finder_get_labels(f);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 1.0f)
      g_assert_cmpint(labels[i], ==, g.x0 + (i % g.width + 0.5) * g.cell < 0 ? 0 : -2);
  p.min_fill = body_points / pixels * 1.05;   /* more than the body's share */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 0);
  p.min_fill = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
  p.min_fill = 0.25;
  heightmap_blob_finder_set_params(f, &p);
  const HeightmapPairGeometry far = pair_at(0, -120, 1.0, 2100);
  heightmap_blob_finder_set_camera(f, 0, &far, 0, 0);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
  /* a pair that did not see the blobs does not judge them */
  heightmap_blob_finder_set_camera(f, 0, &near, 0, 0);
  for (int i = 0; i < n_cells; i++)
    masks[i] = 1u << 2;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 2);
}

/* A pair 30 m south of (-1, 0) at 1 m high looking north (f 700 px, f B 2100 px m, cx
 * 160, cy `cy`): a body there spans rows cy +- 18.7 (0.2-1.8 m up). */
static HeightmapPairGeometry
pair_north(double cy)
{
  HeightmapPairGeometry g = { .centre = { -1, -30, 1.0 },
                              /* camera x = east, y = down, z = north */
                              .rotation = { 1, 0, 0, 0, 0, 1, 0, -1, 0 } };
  g.q[0] = g.q[5] = 1;
  g.q[3] = -160;
  g.q[7] = -cy;
  g.q[11] = 700;
  g.q[14] = 700 / 2100.0;
  return g;
}

/* min_fill and body_support at the edge of a pair's image: a blob (0.3 x 0.3 m, 1.8 m
 * high, seen by pair 0 only) holding 15 points from 0.2 m up a cell, none 0.2-0.6 m high,
 * has 0.46 of the 391 pixels pair 0 images of a body there. With its whole body in a
 * 320 x 240 image (cy 120) it is a fragment at min_fill 0.6 and stands on nothing; when
 * the image's lower edge (height 100: rows to 91 are in, 8 px from the last; cy 91, the
 * body's point 1 m up) cuts the body at 1 m, the pair images half of it (195 pixels) and no legs: it stays. Without
 * the image's size the whole body is expected, as before. */
static void
test_blobs_image_edge(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -3, 3, -3, 3, 0.1, 0.02f);
  int n_cells = g.width * g.height;
  g_autofree uint32_t *support = g_new0(uint32_t, n_cells);
  g_autofree uint32_t *masks = g_new0(uint32_t, n_cells);
  fill_rect(&g, h, -1.15, -0.15, -0.85, 0.15, 1.8f);
  double points = 0;
  for (int i = 0; i < n_cells; i++) {
    masks[i] = 1u;
    if (h[i] > 1.0f) {
      support[i] = 15u << 16;
      points += 15;
    }
  }
  double s = 700.0 / 30.0;
  double pixels = HEIGHTMAP_BODY_WIDTH * 1.6 * s * s;
  g_assert_cmpfloat(fabs(points / pixels - 0.46), <, 0.01);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .min_fill = 0.6 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  heightmap_blob_finder_set_support(f, support);
  const HeightmapBlob *b;
  const HeightmapPairGeometry whole = pair_north(120), cut = pair_north(91);
  heightmap_blob_finder_set_camera(f, 0, &whole, 320, 240);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 0);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->underfilled, ==, 1);
  heightmap_blob_finder_set_camera(f, 0, &cut, 320, 100);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
  heightmap_blob_finder_set_camera(f, 0, &cut, 0, 0);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 0);
  /* the lower edge 4 px lower still cuts the body at about 1.2 m: half of it stays in */
  heightmap_blob_finder_set_camera(f, 0, &cut, 320, 104);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
  /* the left edge: the body (straight ahead, at column cx) is in the image only 78 px (8
   * and its disparity, 70 px) or more from it */
  HeightmapPairGeometry shifted = whole;
  shifted.q[3] = -75;
  heightmap_blob_finder_set_camera(f, 0, &shifted, 320, 240);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);   /* none of it */
  shifted.q[3] = -81;
  heightmap_blob_finder_set_camera(f, 0, &shifted, 320, 240);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 0);   /* all of it */

  /* body_support (at support_scale 10 px/m: 23.3 here): no legs, so it stands on nothing
   * while pair 0's image holds them, and is judged by area and height once it does not */
  p.min_fill = 0.0;
  p.body_support = 0.1;
  p.support_scale = 10;
  heightmap_blob_finder_set_params(f, &p);
  heightmap_blob_finder_set_camera(f, 0, &whole, 320, 240);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 0);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->no_support, ==, 1);
  heightmap_blob_finder_set_camera(f, 0, &cut, 320, 100);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
}

/* merge_distance: A (x -0.4..-0.2, 4 cells, 1.8 m) and B (x 0..0.1, 2 cells, 1.6 m),
 * y 0..0.2, two empty columns between them, centres -0.3 and 0.05 (0.35 m apart); C (x
 * 0.4..0.5, 2 cells, centre 0.45) 0.4 m beyond B, 0.75 m from A; D far away (x 2.1).
 * With 0.4 m: A and B merge (centre (4 (-0.3) + 2 0.05) / 6 = -0.1833), C stays (0.633 m
 * from the merged centre, not closer than 0.4 to B, which is gone): A+B, C, D; with
 * 0.7 m C joins too (centre (4 (-0.3) + 2 0.05 + 2 0.45) / 8 = -0.025); every merged
 * cell carries its blob's label; with 0.3 m or 0 nothing merges. */
static void
test_blobs_merge(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -3, 3, -3, 3, 0.1, 0.02f);
  fill_rect(&g, h, -0.4, 0.0, -0.2, 0.2, 1.8f);
  fill_rect(&g, h, 0.0, 0.0, 0.1, 0.2, 1.6f);
  fill_rect(&g, h, 0.4, 0.0, 0.5, 0.2, 1.7f);
  fill_rect(&g, h, 2.0, 0.0, 2.2, 0.2, 1.7f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.01, .max_area = 2.0,
                            .top_band = 2.0 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  const double dist[] = { 0.0, 0.3, 0.4, 0.7 };
  const int expect[] = { 4, 4, 3, 2 };
  for (unsigned r = 0; r < G_N_ELEMENTS(dist); r++) {
    p.merge_distance = dist[r];
    heightmap_blob_finder_set_params(f, &p);
    int n = heightmap_blob_finder_run(f, h, NULL, &b);
    g_assert_cmpint(n, ==, expect[r]);
    g_assert_cmpint(heightmap_blob_finder_get_counts(f)->kept, ==, 4);
    g_assert_cmpint(heightmap_blob_finder_get_counts(f)->merged, ==, 4 - expect[r]);
    assert_labels(&g, f, b, n);
    if (r < 2)
      continue;
    /* blob 0 is A with what merged into it: its top A's, its area theirs */
    double x = r == 2 ? (4 * -0.3 + 2 * 0.05) / 6 : (4 * -0.3 + 2 * 0.05 + 2 * 0.45) / 8;
    g_assert_cmpfloat(fabs(b[0].x - x), <, 1e-9);
    g_assert_cmpfloat(fabs(b[0].y - 0.1), <, 1e-9);
    g_assert_cmpint(b[0].cells, ==, r == 2 ? 6 : 8);
    g_assert_cmpfloat(fabs(b[0].area - (r == 2 ? 0.06 : 0.08)), <, 1e-9);
    g_assert_cmpfloat(b[0].height, >, 1.7);
    g_assert_cmpfloat(fabs(b[n - 1].x - 2.1), <, 1e-9);   /* D, last, untouched */
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/blobs/labels", test_blob_labels);
  g_test_add_func("/heightmap/blobs", test_blobs);
  g_test_add_func("/heightmap/blobs/split", test_blobs_split);
  g_test_add_func("/heightmap/blobs/crowd", test_blobs_crowd);
  g_test_add_func("/heightmap/blobs/play-area", test_blobs_play_area);
  g_test_add_func("/heightmap/blobs/body-support", test_blobs_body_support);
  g_test_add_func("/heightmap/blobs/support-scale", test_blobs_support_scale);
  g_test_add_func("/heightmap/blobs/min-fill", test_blobs_min_fill);
  g_test_add_func("/heightmap/blobs/image-edge", test_blobs_image_edge);
  g_test_add_func("/heightmap/blobs/merge", test_blobs_merge);
  g_test_add_func("/heightmap/blobs/precision", test_blobs_precision);
  g_test_add_func("/heightmap/blobs/view-split", test_blobs_view_split);
  return g_test_run();
}
