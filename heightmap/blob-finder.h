/* blob-finder.h: the blob finder's state, shared by blobs.c (finding and measuring the
 * blobs), blob-checks.c (judging them) and blob-split.c (splitting merged players,
 * cutting players side by side).
 * Private to the heightmap library. */
#pragma once

#include "heightmap/heightmap.h"

#include <math.h>

#define MAX_BLOBS 4096
#define MAX_SPLIT 16   /* components of one blob; more stay with their neighbours */
#define MAX_PIECES 32  /* pieces of one blob waiting to be cut or judged (view_split) */
/* px: a point nearer the edge of a pair's image is not in it for body_support and
 * min_fill (the filters' support reaches outside the image there) */
#define HEIGHTMAP_VIEW_BORDER 8.0
#define HEIGHTMAP_VIEW_SAMPLES 16   /* points along a body that in_image_share projects */

struct HeightmapBlobFinder {
  HeightmapGrid grid;
  HeightmapBlobParams params;
  int32_t *label;        /* per cell: -1 unvisited/not a player cell, -2 in a dropped
                            blob, else blob index */
  int32_t *stack;        /* cells of the blob being filled */
  /* the split (split_depth > 0), per cell of the blob being split, by its rank in the
   * blob's height order: */
  int32_t *rank;         /* per grid cell: its rank in the blob being split */
  int32_t *parent;       /* per rank: union-find parent */
  int32_t *top;          /* per rank (a root's): the grid cell of its component's top */
  int32_t *size;         /* per rank (a root's): its component's cells */
  int32_t *order;        /* the blob's cells regrouped by component */
  HeightmapBlob *blobs;
  double camera[HEIGHTMAP_MAX_PAIRS][3];
  double focal_baseline[HEIGHTMAP_MAX_PAIRS];   /* f B, px m; 0 when unknown */
  double focal[HEIGHTMAP_MAX_PAIRS];            /* f, px; 0 when unknown */
  double rotation[HEIGHTMAP_MAX_PAIRS][9];      /* camera -> pitch, row-major */
  double principal[HEIGHTMAP_MAX_PAIRS][2];     /* cx, cy, px (from Q) */
  int image[HEIGHTMAP_MAX_PAIRS][2];            /* width, height, px; 0 when unknown */
  uint32_t has_camera;     /* bit per pair */
  const uint32_t *support; /* per cell, heightmap_fusion_get_support's; NULL: none */
  const uint32_t *body;    /* per cell, heightmap_fusion_get_body_masks'; NULL: none */
  const uint32_t *lower;   /* per cell, heightmap_fusion_get_lower's; NULL: none */
  const uint32_t *see;     /* per cell, heightmap_fusion_get_see_through's; NULL: none */
  double *proj;            /* view_split: the cells' positions across a pair's view */
  double *widest;          /* view_split: those of the widest pair so far */
  int32_t *part;           /* view_split: the cells of a blob being cut */
  int32_t *merged_into;    /* merge_distance, per blob: the blob it was merged into */
  HeightmapBlobCounts counts;   /* of the last run */
  bool explain;            /* this run logs its drops and cuts (debug messages on) */
};

/* blob-checks.c: the first test a measured blob b (its n cells) fails, counted in
 * f->counts, as the words the debug log gives it; NULL when it passes every test. */
const char *heightmap_blob_check(HeightmapBlobFinder *f, const HeightmapBlob *b,
                                 const int32_t *cells, int n);

/* The cells a blob needs to reach min_area (at least 1). */
static inline int
heightmap_blob_min_cells(const HeightmapBlobFinder *f)
{
  return MAX(1, (int) ceil(f->params.min_area / (f->grid.cell * f->grid.cell) - 1e-9));
}

/* The scale at which pair p images (x, y, z): f / D px/m (D the 3-D distance from its
 * camera); 0 when its camera or focal length is not known. */
static inline double
heightmap_blob_scale_at(const HeightmapBlobFinder *f, int p, double x, double y, double z)
{
  if (!(f->has_camera & (1u << p)) || !(f->focal[p] > 0))
    return 0.0;
  double d = sqrt((x - f->camera[p][0]) * (x - f->camera[p][0]) +
                  (y - f->camera[p][1]) * (y - f->camera[p][1]) +
                  (z - f->camera[p][2]) * (z - f->camera[p][2]));
  return d > 0 ? f->focal[p] / d : 0.0;
}

/* The mean of the centres of n cells, pitch m. */
static inline void
heightmap_blob_cells_mean(const HeightmapGrid *g, const int32_t *cells, int n, double *x,
                          double *y)
{
  double sx = 0, sy = 0;
  for (int i = 0; i < n; i++) {
    sx += cells[i] % g->width + 0.5;
    sy += cells[i] / g->width + 0.5;
  }
  *x = g->x0 + sx / n * g->cell;
  *y = g->y0 + sy / n * g->cell;
}

/* Splits the blob `id` of n cells in f->stack at tops `depth` (> 0) apart in height (merged
 * players, blobs.c's header): returns the number of components; f->order holds the cells
 * regrouped by component, starts[k] .. starts[k + 1] the k-th (at most `max` components,
 * the rest stay with their highest neighbour's). */
int heightmap_blob_split(HeightmapBlobFinder *f, const float *h, int n, int32_t id,
                         double depth, int *starts, int max);
/* Cuts a blob of n cells across a pair's view (view_split, blobs.c's header): returns k,
 * 0 < k < n, with cells[0 .. k) one piece and cells[k .. n) the other (the cells
 * reordered), or 0 for no cut. */
int heightmap_blob_view_cut(HeightmapBlobFinder *f, int32_t *cells, int n);
