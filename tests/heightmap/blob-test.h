/* blob-test.h: hand-made height grids for the blob finder's tests (blob-test.c). */
#pragma once

#include <glib.h>

#include "heightmap/heightmap.h"

/* Sets the cells whose centres lie in [x0, x1) x [y0, y1) to v. */
void fill_rect(const HeightmapGrid *g, float *h, double x0, double y0, double x1, double y1,
               float v);
/* Every blob's label marks as many cells as the blob has. */
void assert_labels(const HeightmapGrid *g, const HeightmapBlobFinder *f, const HeightmapBlob *b,
                   int n);
/* A grid from (x0, y0) to (x1, y1) of `cell` m and its heights, every cell `ground`. */
float *ground_grid(HeightmapGrid *g, double x0, double x1, double y0, double y1, double cell,
                   float ground);
/* A pair seen from (x, y, z) with focal length * baseline `fb` (Q as calib.c makes it). */
HeightmapPairGeometry pair_at(double x, double y, double z, double fb);

