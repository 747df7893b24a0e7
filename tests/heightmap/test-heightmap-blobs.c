/* test-heightmap-blobs: the blob finder (cells -> blobs, their centres, the pairs'
 * precision weights and covariances, the cell labels, merged players, players side by
 * side, one player cut in two) on hand-made height grids; the tests a blob must pass to
 * be kept are in test-heightmap-blob-checks.c. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "blob-test.h"

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

/* view_centre: a body at the origin seen by two far pairs at right angles, each smearing
 * it along its own view: pair 0 from 60 m south (body cells x -0.2..0.2, y -0.2..1.0:
 * centroid (0, 0.4)), pair 1 from 60 m east (x -0.8..0.2, y -0.2..0.2: centroid
 * (-0.3, 0)). Each pair's centroid is known along its view to its range error and across
 * it to view_centre: the centre is the information-weighted mean, each pair's centroid
 * first moved visible_offset along its own view; with a sharp view_centre it is where the
 * two views cross, whatever the smears; view_centre_px adds the pair's pixels (D / f) to
 * the sigma across. Each pair's centroid weighs its cells by the precision of the pairs
 * that hit them, as the blob's centroid does. Without body masks the pairs' masks (here every
 * cell both) give each pair every cell; with view_centre 0 or no range error the centre is
 * the cells' centroid as before. */
static void
test_blobs_view_centre(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -5, 5, -5, 5, 0.1, 0.05f);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  g_autofree uint32_t *body = g_new0(uint32_t, g.width * g.height);
  fill_rect(&g, h, -0.2, -0.2, 0.2, 1.0, 1.8f);
  fill_rect(&g, h, -0.8, -0.2, 0.2, 0.2, 1.8f);
  double ux = 0, uy = 0, un = 0;   /* the plain centroid of the blob's cells */
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      int c = j * g.width + i;
      double x = g.x0 + (i + 0.5) * g.cell, y = g.y0 + (j + 0.5) * g.cell;
      if (h[c] < 1)
        continue;
      masks[c] = 3u;
      body[c] = (x > -0.2 && y > -0.2 ? 1u : 0u) | (y < 0.2 ? 2u : 0u);
      ux += x;
      uy += y;
      un++;
    }
  ux /= un;
  uy /= un;
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 3.0,
                            .top_band = 1, .disparity_noise = 0.07, .view_centre = 0.1 };
  const HeightmapPairGeometry south = pair_at(0, -60, 1.8, 2100);
  const HeightmapPairGeometry east = pair_at(60, 0, 1.8, 2100);
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  heightmap_blob_finder_set_camera(f, 0, &south, 0, 0);
  heightmap_blob_finder_set_camera(f, 1, &east, 0, 0);
  heightmap_blob_finder_set_body_masks(f, body);
  /* the range errors at the pairs' centroids, level with the top: L^2 0.07 / f B */
  const double s0 = 60.4 * 60.4 * 0.07 / 2100, s1 = 60.3 * 60.3 * 0.07 / 2100;
  const double a0 = 1 / (s0 * s0), a1 = 1 / (s1 * s1);
  const double across[4] = { 0.1, 0.1, 0.001, 0.1 }, offset[4] = { 0, 0.05, 0, 0 };
  const double px[4] = { 0, 0, 0, 1 };
  for (int run = 0; run < 4; run++) {
    p.view_centre = across[run];
    p.view_centre_px = px[run];
    p.visible_offset = offset[run];
    heightmap_blob_finder_set_params(f, &p);
    const HeightmapBlob *b;
    g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
    /* view_centre_px: a pixel is D / f m, f 700 px (pair_at), D the pair's distance */
    double c0 = hypot(across[run], px[run] * 60.4 / 700);
    double c1 = hypot(across[run], px[run] * 60.3 / 700);
    /* pair 0: (0, 0.4 + offset), along y; pair 1: (-0.3 - offset, 0), along x */
    double x = a1 * (-0.3 - offset[run]) / (a1 + 1 / (c0 * c0));
    double y = a0 * (0.4 + offset[run]) / (a0 + 1 / (c1 * c1));
    /* every cell is weighted by its pairs' precision there, which varies a little */
    g_assert_cmpfloat_with_epsilon(b[0].x, x, 3e-3);
    g_assert_cmpfloat_with_epsilon(b[0].y, y, 3e-3);
    if (run == 2) {
      g_assert_cmpfloat(fabs(b[0].x), <, 0.01);
      g_assert_cmpfloat(fabs(b[0].y), <, 0.01);
    }
  }
  /* the cells both pairs hit (here: the masks as the body masks) count for both pairs'
   * precision in each pair's centroid: each centroid moves towards where the smears
   * overlap, (0, 0.3) and (-0.21, 0) instead of (0, 0.4) and (-0.3, 0) */
  {
    g_autofree uint32_t *hit = g_memdup2(body, sizeof *body * g.width * g.height);
    p.view_centre = 0.1;
    p.view_centre_px = 0;
    p.visible_offset = 0;
    heightmap_blob_finder_set_params(f, &p);
    const HeightmapBlob *b;
    g_assert_cmpint(heightmap_blob_finder_run(f, h, hit, &b), ==, 1);
    double ic = 100;
    g_assert_cmpfloat_with_epsilon(b[0].x, a1 * -0.214 / (a1 + ic), 5e-3);
    g_assert_cmpfloat_with_epsilon(b[0].y, a0 * 0.3 / (a0 + ic), 5e-3);
  }
  /* off (0), without a range error, or without body masks (each pair's cells are all
   * the blob's: both pairs hit every cell): the cells' centroid, far from the crossing */
  for (int run = 0; run < 3; run++) {
    p.view_centre = run == 0 ? 0 : 0.1;
    p.disparity_noise = run == 1 ? 0 : 0.07;
    p.visible_offset = 0;
    heightmap_blob_finder_set_params(f, &p);
    heightmap_blob_finder_set_body_masks(f, run == 2 ? NULL : body);
    const HeightmapBlob *b;
    g_assert_cmpint(heightmap_blob_finder_run(f, h, masks, &b), ==, 1);
    /* runs 0 and 2 weigh each cell by its pairs' precision there, which varies a little */
    double eps = run == 1 ? 1e-6 : 5e-3;
    g_assert_cmpfloat_with_epsilon(b[0].x, ux, eps);
    g_assert_cmpfloat_with_epsilon(b[0].y, uy, eps);
    g_assert_cmpfloat(hypot(b[0].x, b[0].y), >, 0.1);
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
  g_test_add_func("/heightmap/blobs/merge", test_blobs_merge);
  g_test_add_func("/heightmap/blobs/precision", test_blobs_precision);
  g_test_add_func("/heightmap/blobs/view-split", test_blobs_view_split);
  g_test_add_func("/heightmap/blobs/view-centre", test_blobs_view_centre);
  return g_test_run();
}
