/* blob-test.c: hand-made height grids for the blob finder's tests (test-heightmap-blobs,
 * test-heightmap-blob-checks). */
#include "blob-test.h"

void
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
void
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
float *
ground_grid(HeightmapGrid *g, double x0, double x1, double y0, double y1, double cell,
            float ground)
{
  g_assert_true(heightmap_grid_init(g, x0, x1, y0, y1, cell));
  float *h = g_new(float, g->width * g->height);
  for (int i = 0; i < g->width * g->height; i++)
    h[i] = ground;
  return h;
}

/* A pair seen from `centre` with focal length * baseline `fb` (Q as calib.c makes it). */
HeightmapPairGeometry
pair_at(double x, double y, double z, double fb)
{
  HeightmapPairGeometry g = { .centre = { x, y, z } };
  g.q[11] = 700;
  g.q[14] = 700 / fb;
  return g;
}
