/* blobs.h: HeightmapBlobFinder (blobs.c; the checks in blob-checks.c, the splits and
 * cuts in blob-split.c): the cells of the height map above a height threshold grouped
 * into blobs, split, cut, judged and measured. Part of heightmap.h's interface, which
 * includes it where its grid and limits are known: include "heightmap/heightmap.h". */
#pragma once

#ifndef HEIGHTMAP_H_INSIDE
#error "include heightmap/heightmap.h, not heightmap/blobs.h"
#endif

G_BEGIN_DECLS

typedef struct {
  double x, y;              /* ground point under the blob's centre, pitch m */
  double height;            /* top height, m */
  double area;              /* m^2 of the blob's cells */
  int cells;
  uint32_t pairs;           /* pair mask: the pairs that saw it */
  double cov[3];            /* m^2: covariance xx, xy, yy of (x, y) from the geometry of
                               the pairs that saw it (all 0: unknown, taken as exact) */
  /* Its velocity on the pitch from the flow of its pixels (HeightmapVelocity), when
   * measured: m/s, and the covariance xx, xy, yy of that measurement, m^2/s^2. */
  bool has_velocity;
  double vx, vy;
  double velocity_cov[3];
} HeightmapBlob;

typedef struct {
  double min_height;        /* m */
  double min_area, max_area;/* m^2 */
  double top_band;          /* m: cells within this of the blob's top give its centre */
  double visible_offset;    /* m: the centre is moved this far away from the cameras */
  double disparity_noise;   /* px: sigma of a blob's disparity, for its covariance */
  double split_depth;       /* m, > 0: a blob with two tops, each at least this above the
                               lowest cells that join them and HEIGHTMAP_SPLIT_SEPARATION
                               apart, is two blobs (merged players); 0: no split */
  double crowd_split;       /* m, > 0: the same split, at this depth, for the blobs larger
                               than crowd_area only (players side by side), when
                               split_depth is 0; 0: none */
  double crowd_area;        /* m^2: see crowd_split */
  double half_length, half_width;   /* m, the lines at x = +-half_length, y = +-half_width;
                                       either 0: no play area */
  double play_margin;       /* m: a blob whose centre lies farther than this beyond the
                               lines is dropped (perimeter boards, the people and things
                               around the pitch) */
  double goal_half_width;   /* m, the goal posts at (+-half_length, +-goal_half_width); 0
                               (or half_length 0): no posts */
  double post_zone;         /* m, 0 = off: a blob smaller than post_area whose centre lies
                               within this of a goal post's foot is dropped: the post's
                               range smear, which the frame's ray test (goal_line) leaves
                               in pieces there; a player at a post makes a larger blob */
  double post_area;         /* m^2 */
  double body_support;      /* 0..1, 0 = off: with the cells' support
                               (heightmap_blob_finder_set_support), a blob whose points
                               0.2-0.6 m high are fewer than this share of its points from
                               0.2 m up stands on nothing: the ball in flight, not a player */
  double support_scale;     /* px/m, 0 = everywhere: body_support judges only the blobs some
                               pair that saw them images at this many pixels a metre or more
                               (f / D); farther, a leg is narrower than the filter and its
                               points fall to the grass behind it */
  double lower_body;        /* 0..1, 0 = off: with the cells' body bands
                               (heightmap_blob_finder_set_lower) and support, a blob whose
                               points in the bands wholly 0.6 m or more below its top are
                               fewer than this share of its points from 0.2 m up floats:
                               the ball in flight (its points lie within its 0.22 m,
                               smeared a little), at any distance (a far body's legs fall
                               to the grass, its trunk does not) */
  double lower_scale;       /* px/m, 0 = everywhere: lower_body judges only the blobs some
                               pair that saw them images at this many pixels a metre or
                               more */
  double body_share;        /* 0..1, 0 = off: with the cells' body bands and support, a blob
                               whose points 0.2-1.8 m high (the bands; a cell with a band
                               saturated counts wholly) are fewer than this share of its
                               points from 0.2 m up lies above a body: the ball in flight,
                               at any distance (a standing or jumping player's points lie
                               mostly below 1.8 m, a far one's too) */
  double min_fill;          /* 0..1, 0 = off: with the cells' support, a blob whose points
                               from 0.2 m up are fewer than this share of the pixels its
                               sharpest pair images of a body there (HEIGHTMAP_BODY_WIDTH x
                               (top - 0.2 m) x (f / D)^2, D from its camera to the blob's
                               centre 1 m up) is a fragment: the part of a pair's smear
                               beside a player or a goal frame that broke off the rest, not
                               a body, which puts most of its pixels into its own blob at
                               any distance and resolution */
  double view_split;        /* m, 0 = off: with the body masks, a blob whose cells holding a
                               pair's body points spread wider than this across that pair's
                               horizontal view is cut in two there (players side by side:
                               a pair's range error smears a body along its view, not
                               across it) */
  double merge_distance;    /* m, 0 = off: kept blobs whose centres lie closer than this
                               are one player (a body cut in two by a split or view_split:
                               two bodies' axes stand farther apart) and are merged */
  double view_split_px;     /* px: the width view_split allows grows by this many of the
                               pair's pixels at the blob (the disparity's spread over a
                               body's outline) */
  double view_centre;       /* m, 0 = off: each pair's own centre of the blob (the
                               centroid of its body cells within top_band of the top,
                               moved visible_offset along its view) with the information
                               of its range error along its view and 1 / view_centre^2
                               across it; the blob's centre is their information-weighted
                               mean, so that each pair gives what it measures well (where
                               the body lies across its view), not its smear along it */
  double view_centre_px;    /* px: the sigma across a pair's view is view_centre and this
                               many of its pixels at the blob (D / f m each), summed in
                               quadrature */
  double see_through;       /* m, 0 = off: with the see-through masks
                               (heightmap_blob_finder_set_see_through, the fusion's
                               see_height) and the body masks, a blob with fewer than
                               see_cells solid cells (more pairs put body points into
                               the cell than saw through it this low) is dropped: other
                               pairs' rays reach the grass through it, no body stands
                               there */
  int see_cells;            /* >= 1: see_through's solid cells a blob needs */
  double see_scale;         /* px/m, 0 = every pair: only the pairs that image a blob at
                               this many pixels a metre or more see through it */
} HeightmapBlobParams;

#define HEIGHTMAP_BODY_WIDTH 0.45        /* m: a body as a camera sees it, for min_fill */

/* What became of the blobs of the last heightmap_blob_finder_run (after the splits and
 * cuts): kept, or dropped for the first test they failed. */
typedef struct {
  int kept;
  int small;                /* under min_area: fragments, the ball */
  int large;                /* over max_area */
  int off_pitch;            /* centred more than play_margin beyond the lines */
  int at_post;              /* post_zone: a goal post's smear */
  int no_support;           /* body_support */
  int floating;             /* lower_body */
  int aloft;                /* body_share */
  int underfilled;          /* min_fill */
  int seen_through;         /* see_through */
  int cuts;                 /* view_split's cuts */
  int merged;               /* kept blobs merged into another (merge_distance); kept
                               counts them */
} HeightmapBlobCounts;

#define HEIGHTMAP_SPLIT_SEPARATION 0.4   /* m between two tops of one blob to split it */

typedef struct HeightmapBlobFinder HeightmapBlobFinder;

HeightmapBlobFinder *heightmap_blob_finder_new(const HeightmapGrid *grid,
                                               const HeightmapBlobParams *params);
void heightmap_blob_finder_free(HeightmapBlobFinder *finder);
/* New parameters from the next heightmap_blob_finder_run (the grid stays). */
void heightmap_blob_finder_set_params(HeightmapBlobFinder *finder,
                                      const HeightmapBlobParams *params);
/* Tells the finder where pair `pair`'s camera is, its focal length and baseline (from
 * the geometry's Q) and the size of its disparity image (width, height px; 0: unknown),
 * for visible_offset, the blobs' covariances, body_support and min_fill; a pair never set
 * does not move the centres of the blobs it sees, nor add to their covariance. With the
 * size, body_support and min_fill judge a blob by the part of a body the pair's image
 * holds (a player at its edge is seen in part); without it, as if it held all of it. */
void heightmap_blob_finder_set_camera(HeightmapBlobFinder *finder, int pair,
                                      const HeightmapPairGeometry *geometry, int width,
                                      int height);
/* The cells' body support (heightmap_fusion_get_support) for the next runs, for
 * body_support; NULL: none (body_support then drops nothing). The finder keeps the
 * pointer: it must stay valid until the run. */
void heightmap_blob_finder_set_support(HeightmapBlobFinder *finder, const uint32_t *support);
/* The cells' body masks (heightmap_fusion_get_body_masks) for the next runs, for
 * view_split; NULL: none (view_split then cuts nothing). Kept as the support is. */
void heightmap_blob_finder_set_body_masks(HeightmapBlobFinder *finder, const uint32_t *masks);
/* The cells' body bands for lower_body (heightmap_fusion_get_lower's words, one per cell
 * of the grid; NULL: none, no blob floats). Kept as the support is. */
void heightmap_blob_finder_set_lower(HeightmapBlobFinder *finder, const uint32_t *lower);
/* The cells' see-through masks (heightmap_fusion_get_see_through; NULL: none) for the next
 * runs, for see_through. The caller keeps them valid. */
void heightmap_blob_finder_set_see_through(HeightmapBlobFinder *finder, const uint32_t *see);
/* The counts of the last heightmap_blob_finder_run. With debug messages on
 * (G_MESSAGES_DEBUG=stereod-heightmap), each run also logs every blob of min_area or more
 * that it drops, with its place, area, top and the test it failed, and every cut. */
const HeightmapBlobCounts *heightmap_blob_finder_get_counts(const HeightmapBlobFinder *finder);
/* The blob of every cell in the last heightmap_blob_finder_run: its index in the blobs
 * returned, or < 0 (not a player cell, or a blob dropped for its area). grid width *
 * height, row-major; valid until the next run. */
const int32_t *heightmap_blob_finder_get_labels(const HeightmapBlobFinder *finder);
/* Finds the blobs of a height grid (8-connected cells with height >= min_height, area in
 * [min_area, max_area]). The centre is the height-weighted centroid of the cells within
 * top_band of the blob's top height, at sub-cell precision (cell centres), moved by
 * visible_offset along the mean horizontal direction from the cameras that saw the blob
 * (the bits of `masks`; no move when `masks` is NULL). The covariance of (x, y) joins, per
 * pair that saw the blob (information sum), a sigma along the horizontal view direction
 * of D L disparity_noise / (f B) (D, L: the 3-D and horizontal distances from the camera
 * to the blob's top; the range error of a disparity error) and one grid cell across it.
 * Returns the number of blobs; *blobs points into the finder (valid until the next call). */
int heightmap_blob_finder_run(HeightmapBlobFinder *finder, const float *heights,
                              const uint32_t *masks, const HeightmapBlob **blobs);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapBlobFinder, heightmap_blob_finder_free)

G_END_DECLS
