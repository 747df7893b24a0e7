/* test-heightmap-blob-checks: the tests a blob must pass to be kept (the play area, the
 * goal posts' zones, the lower body, body support and the scale it applies from,
 * min_fill, the part of a body a pair's image holds) on hand-made height grids. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "blob-test.h"

/* post_zone: goal lines at x = +-5, posts at y = +-1 (goal_half_width), post_zone 0.6 m,
 * post_area 0.3 m^2: a small blob (0.2 x 0.2 m) centred 0.4 m from a post's foot, in
 * front of or behind the line, is dropped (at_post, its cells no blob's); one as small
 * 0.8 m from every post, one as near a post but 0.5 x 0.8 m (a player at the post), and
 * one at the posts' mirror inside the pitch (x 4.6, y 0) are kept; post_zone 0 or no
 * goal width keeps all. */
static void
test_blobs_post_zone(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -8, 8, -6, 6, 0.1, 0.02f);
  static const double rect[][4] = {   /* x0, y0, x1, y1 */
    { 5.2, 1.1, 5.4, 1.3 },       /* 0.4 m behind the line, beside post (5, 1): dropped */
    { -4.8, -1.3, -4.6, -1.1 },   /* 0.4 m in front of post (-5, -1): dropped */
    { -5.3, 1.7, -5.1, 1.9 },     /* 0.8 m from post (-5, 1): kept */
    { 4.3, -1.2, 4.8, -0.4 },     /* 0.4 m^2 at post (5, -1): kept */
    { 4.5, -0.1, 4.7, 0.1 },      /* on the goal's axis, 1 m from both posts: kept */
  };
  const int n_drop = 2, n_all = G_N_ELEMENTS(rect);
  for (int k = 0; k < n_all; k++)
    fill_rect(&g, h, rect[k][0], rect[k][1], rect[k][2], rect[k][3], 1.8f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.02, .max_area = 2.0,
                            .top_band = 0.3, .half_length = 5, .half_width = 3,
                            .play_margin = 1.0, .goal_half_width = 1.0, .post_zone = 0.6,
                            .post_area = 0.3 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, NULL, &b);
  g_assert_cmpint(n, ==, n_all - n_drop);
  const HeightmapBlobCounts *counts = heightmap_blob_finder_get_counts(f);
  g_assert_cmpint(counts->at_post, ==, n_drop);
  g_assert_cmpint(counts->off_pitch + counts->small + counts->large, ==, 0);
  for (int k = 0; k < n_all; k++) {
    double cx = 0.5 * (rect[k][0] + rect[k][2]), cy = 0.5 * (rect[k][1] + rect[k][3]);
    bool found = false;
    for (int j = 0; j < n; j++)
      found |= fabs(b[j].x - cx) < 0.1 && fabs(b[j].y - cy) < 0.1;
    g_assert_cmpint(found, ==, k >= n_drop);
    int i = (int)((cy - g.y0) / g.cell) * g.width + (int)((cx - g.x0) / g.cell);
    g_assert_cmpint(heightmap_blob_finder_get_labels(f)[i] >= 0, ==, k >= n_drop);
  }
  p.post_zone = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_all);
  p.post_zone = 0.6;
  p.goal_half_width = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_all);
  p.goal_half_width = 1.0;
  p.post_area = 0.03;   /* smaller than the small blobs (4 cells or more): all kept */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, n_all);
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

/* A run on support_scene's grid (or one built on it) that keeps only the body: one blob,
 * at x = -1, the ball's smear (its cells above 2 m) dropped by a check (labelled -2).
 * Returns the body's blob. */
static const HeightmapBlob *
only_the_body(HeightmapBlobFinder *f, const float *h, int n_cells)
{
  const HeightmapBlob *b;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 1.0), <, 0.1);
  const int32_t *labels = heightmap_blob_finder_get_labels(f);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 2.0f)
      g_assert_cmpint(labels[i], ==, -2);
  return b;
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
  b = only_the_body(f, h, n_cells);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->no_support, ==, 1);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->kept, ==, 1);
  g_assert_cmpfloat_with_epsilon(b[0].height, 1.8, 1e-6);
  p.body_support = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  p.body_support = 0.25;   /* more than the body's fifth */
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 0);
}

/* support_scene with the cells' body bands (0.2-0.6, 0.6-1.0, 1.0-1.4, 1.4-1.8 m): the
 * body's 6, 6, 9, 9 of its 30 points, the ball's smear 1 (its stray low point). */
static int
bands_scene(HeightmapGrid *g, float **heights, uint32_t **support, uint32_t **bands)
{
  int n_cells = support_scene(g, heights, support);
  const float *h = *heights;
  uint32_t *w = *bands = g_new0(uint32_t, n_cells);
  for (int i = 0; i < n_cells; i++)
    w[i] = h[i] > 2.0f ? 1u : h[i] > 1.0f ? 6u | 6u << 8 | 9u << 16 | 9u << 24 : 0u;
  return n_cells;
}

/* body_share: on support_scene's grid, the body (top 1.8 m) holds 30 of each cell's 30
 * points in the body bands 0.2-1.8 m (6, 6, 9, 9), the ball's smear (top 2.3 m) 1 of 30
 * (the rest lie above 1.8 m). With body_share 0.5 and the bands the ball lies above a
 * body (dropped, counted, its cells -2), the body stays; without the bands, without the
 * support, or with body_share 0 both stay. A near body's cell holds more points than a
 * band's byte: with the body's bands saturated at 255 and 2000 points a cell it stays
 * (its cells count wholly), with 2000 points and bands of 200 each (800 of 2000) it
 * would be dropped at 0.5. */
static void
test_blobs_body_share(void)
{
  HeightmapGrid g;
  g_autofree float *h = NULL;
  g_autofree uint32_t *support = NULL;
  g_autofree uint32_t *bands = NULL;
  int n_cells = bands_scene(&g, &h, &support, &bands);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .body_share = 0.5 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  heightmap_blob_finder_set_support(f, support);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no bands yet */
  heightmap_blob_finder_set_lower(f, bands);
  only_the_body(f, h, n_cells);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->aloft, ==, 1);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->kept, ==, 1);
  heightmap_blob_finder_set_support(f, NULL);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  heightmap_blob_finder_set_support(f, support);
  p.body_share = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  /* the near body: 2000 points a cell */
  p.body_share = 0.5;
  heightmap_blob_finder_set_params(f, &p);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 1.0f && h[i] < 2.0f) {
      support[i] = 400u | 2000u << 16;
      bands[i] = 200u | 200u << 8 | 255u << 16 | 200u << 24;
    }
  only_the_body(f, h, n_cells);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 1.0f && h[i] < 2.0f)
      bands[i] = 200u | 200u << 8 | 200u << 16 | 200u << 24;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 0);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->aloft, ==, 2);
}

/* lower_body: on support_scene's grid, the body (top 1.8 m) holds 12 of each cell's 30
 * points in the bands wholly below 1.2 m (6 at 0.2-0.6 m, 6 at 0.6-1.0 m; 9 and 9 in the
 * bands above, which do not count), the ball's smear (top 2.3 m) 1 (the stray low
 * point, 0.2-0.6 m) in the three bands below 1.7 m. With
 * lower_body 0.1 and the cells' lower body the ball floats (dropped, counted, its cells
 * -2), the body stays; without the lower body data, without the support, or with
 * lower_body 0 both stay; 0.5 (more than the body's 0.4) drops both, unless lower_scale
 * asks for a pair that images them sharply enough (none is known here). A near body's
 * cells hold more points than a band's byte: with its bands saturated it stays. A blob
 * whose top is below 1.2 m (a crouching keeper) is not judged. */
static void
test_blobs_lower_body(void)
{
  HeightmapGrid g;
  g_autofree float *h = NULL;
  g_autofree uint32_t *support = NULL;
  g_autofree uint32_t *lower = NULL;
  int n_cells = bands_scene(&g, &h, &support, &lower);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .lower_body = 0.1 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  heightmap_blob_finder_set_support(f, support);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no lower body yet */
  heightmap_blob_finder_set_lower(f, lower);
  only_the_body(f, h, n_cells);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->floating, ==, 1);
  heightmap_blob_finder_set_support(f, NULL);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  heightmap_blob_finder_set_support(f, support);
  p.lower_body = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  p.lower_body = 0.5;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 0);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->floating, ==, 2);
  /* lower_scale: judged only where a pair that saw the blob images it that sharply; no
   * pair's camera is known here, so none is judged */
  p.lower_scale = 20.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  /* a near body: 20000 points a cell, its bands saturated at 255; with lower_body 0.1
   * it stays (a saturated band counts the cell wholly), the ball still floats */
  p.lower_scale = 0.0;
  p.lower_body = 0.1;
  heightmap_blob_finder_set_params(f, &p);
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 1.0f && h[i] < 2.0f) {
      support[i] = 4000u | 20000u << 16;
      lower[i] = 0xffffffffu;
    }
  only_the_body(f, h, n_cells);
  /* a crouching keeper, top 1.1 m: no band lies wholly below 0.5 m, so it is not judged
   * (it stays, with no points in the bands at all), the ball still floats */
  for (int i = 0; i < n_cells; i++)
    if (h[i] > 1.0f && h[i] < 2.0f) {
      h[i] = 1.1f;
      support[i] = 6u | 30u << 16;
      lower[i] = 0u;
    }
  b = only_the_body(f, h, n_cells);
  g_assert_cmpfloat_with_epsilon(b[0].height, 1.1, 1e-6);
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

/* see_through: two blobs of 3 x 3 cells 0.1 m. The body's cells hold body points of
 * pairs 0, 1 and 2, and pair 3 saw through three of them low (a pair whose leg pixels
 * were measured too far); in two of those only pair 0, or pairs 0 and 1 of which pair 1
 * saw through too, put points; the smear's cells hold pair 0's body points and pairs 1 and 2 saw
 * through all of them, pair 0 through one too (counted in neither there). The smear is dropped
 * (counted), the body kept; without the see-through masks, without the body masks or
 * with see_through 0 both are kept; the body has 7 solid cells (those two cells weigh
 * 1 against 1): see_cells 7 keeps it, 8 drops it. Then see_scale and the pairs' images
 * (see below). */
static void
test_blobs_see_through(void)
{
  HeightmapGrid g;
  g_autofree float *h = ground_grid(&g, -2, 2, -2, 2, 0.1, 0.0f);
  int n_cells = g.width * g.height;
  g_autofree uint32_t *body = g_new0(uint32_t, n_cells);
  g_autofree uint32_t *see = g_new0(uint32_t, n_cells);
  fill_rect(&g, h, -1.0, -0.1, -0.7, 0.2, 1.8f);   /* the body at (-0.85, 0.05) */
  fill_rect(&g, h, 0.8, -0.1, 1.1, 0.2, 1.3f);     /* the smear at (0.95, 0.05) */
  int k = 0;
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      int c = j * g.width + i;
      if (!(h[c] > 0.5f))
        continue;
      if (h[c] > 1.5f) {
        body[c] = 0x7u;
        if (k == 0) {           /* pair 3 sees through where only pair 0 put points */
          body[c] = 0x1u;
          see[c] = 0x8u;
        } else if (k == 1) {    /* pair 0 against pair 3 */
          body[c] = 0x1u;
          see[c] = 0x8u | 0x2u;
          body[c] |= 0x2u;      /* pair 1 in both: neither */
        } else if (k == 2)
          see[c] = 0x8u;        /* 3 body pairs against 1: solid */
        k++;
      } else
        body[c] = 0x1u, see[c] = 0x6u;
    }
  g_assert_cmpint(k, ==, 9);
  int smear_cell = 20 * g.width + 29;   /* (0.95, 0.05) */
  g_assert_cmpfloat(h[smear_cell], ==, 1.3f);
  see[smear_cell] |= 0x1u;
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3, .see_through = 0.5, .see_cells = 1 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no masks yet */
  heightmap_blob_finder_set_see_through(f, see);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);   /* no body masks */
  heightmap_blob_finder_set_body_masks(f, body);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 0.85), <, 0.06);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->seen_through, ==, 1);
  const int32_t *label = heightmap_blob_finder_get_labels(f);
  g_assert_cmpint(label[smear_cell], ==, -2);
  for (int cells = 7; cells <= 8; cells++) {
    p.see_cells = cells;
    heightmap_blob_finder_set_params(f, &p);
    g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, cells == 7 ? 1 : 0);
  }
  p.see_through = 0.0;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  g_assert_cmpint(heightmap_blob_finder_get_counts(f)->seen_through, ==, 0);

  /* see_scale: pairs 1 and 2 100 m away (7 px/m), pairs 0 and 3 20 and 30 m away (35
   * and 23 px/m). With see_scale 10 only pairs 0 and 3 see through: the smear's cells
   * become solid (pair 0's points against nobody) and it is kept; the body gains the
   * cell where pair 1 saw through (8 solid: see_cells 8 keeps it). With 5 px/m all four
   * count again. */
  HeightmapPairGeometry near0 = pair_at(-0.9, -20, 0, 300), far1 = pair_at(0.9, 100, 0, 300),
                        far2 = pair_at(100, 0, 1, 300), near3 = pair_at(-30, 0, 1, 300);
  heightmap_blob_finder_set_camera(f, 0, &near0, 0, 0);
  heightmap_blob_finder_set_camera(f, 1, &far1, 0, 0);
  heightmap_blob_finder_set_camera(f, 2, &far2, 0, 0);
  heightmap_blob_finder_set_camera(f, 3, &near3, 0, 0);
  p.see_through = 0.5;
  p.see_cells = 8;
  p.see_scale = 10;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  p.see_scale = 5;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 0);
  p.see_cells = 1;
  heightmap_blob_finder_set_params(f, &p);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 0.85), <, 0.06);
  /* a pair whose image does not hold the blob (a known image size; pair_at's cameras
   * have no rotation: nothing lies in front of them) does not see through it: pairs 1
   * and 2 so, the smear is kept */
  heightmap_blob_finder_set_camera(f, 1, &far1, 640, 480);
  heightmap_blob_finder_set_camera(f, 2, &far2, 640, 480);
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);

  /* a pair that alone put body points into the smear's cells and alone saw through them
   * (its filled-in leg pixels): solid, kept; two pairs that both saw under their own
   * points there (the ball above the grass): not solid, dropped */
  for (int c = 0; c < n_cells; c++)
    if (h[c] > 1.0f && h[c] < 1.5f)
      body[c] = see[c] = 0x1u;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 2);
  for (int c = 0; c < n_cells; c++)
    if (h[c] > 1.0f && h[c] < 1.5f)
      body[c] = see[c] = 0x9u;
  g_assert_cmpint(heightmap_blob_finder_run(f, h, NULL, &b), ==, 1);
  g_assert_cmpfloat(fabs(b[0].x + 0.85), <, 0.06);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/blobs/play-area", test_blobs_play_area);
  g_test_add_func("/heightmap/blobs/post-zone", test_blobs_post_zone);
  g_test_add_func("/heightmap/blobs/lower-body", test_blobs_lower_body);
  g_test_add_func("/heightmap/blobs/body-share", test_blobs_body_share);
  g_test_add_func("/heightmap/blobs/body-support", test_blobs_body_support);
  g_test_add_func("/heightmap/blobs/support-scale", test_blobs_support_scale);
  g_test_add_func("/heightmap/blobs/min-fill", test_blobs_min_fill);
  g_test_add_func("/heightmap/blobs/image-edge", test_blobs_image_edge);
  g_test_add_func("/heightmap/blobs/see-through", test_blobs_see_through);
  return g_test_run();
}
