/* middlebury.h: Middlebury stereo scenes for accuracy tests: loading and scoring.
 *
 * A scene folder holds left.png, right.png, gt.png and optionally gt_right.png, as
 * shared/data/middlebury/README.md describes. PNGs are read with libpng; 8-bit gray is
 * taken as is, colour is converted to luma Y = round(0.299 R + 0.587 G + 0.114 B),
 * 16-bit samples are reduced to their high byte, alpha is dropped.
 *
 * Ground-truth scale (disparity = gt / scale): known scenes by folder name (tsukuba 16,
 * teddy 4, cones 4, see middlebury_scene_scale); otherwise a file "scale" in the folder
 * holding the number, or the caller's override.
 *
 * Scoring (README): a pixel is scored when gt > 0 and it is non-occluded ("noc"): with
 * d = gt / scale and xr = x - round(d) (round half away from zero), xr lies inside the
 * image and |gt_right(xr) / scale - d| <= 1. Scenes without gt_right: every gt > 0 pixel
 * is noc. bad-k = % of noc pixels whose estimate is missing (NaN) or off by more than k px;
 * density = % of noc pixels with an estimate; MAE = mean |error| over estimated noc
 * pixels (0 when there are none).
 *
 * Not thread safe per object; separate objects may be used from separate threads.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct {
  char *name;          /* folder base name */
  int width, height;
  double scale;        /* gt units per px */
  uint8_t *left;       /* width * height luma each, tightly packed */
  uint8_t *right;
  uint8_t *gt;         /* left-view ground truth, 0 = unknown */
  uint8_t *gt_right;   /* NULL when the scene has none */
} MiddleburyScene;

typedef struct {
  double bad1, bad2;   /* % of noc pixels, missing counted as bad */
  double density;      /* % of noc pixels with an estimate */
  double mae;          /* px, over estimated noc pixels */
  long n_noc;          /* number of scored pixels */
} MiddleburyScore;

/* The gt scale of a known scene name, or 0 if the name is unknown. */
double middlebury_scene_scale(const char *name);

/* Loads a scene folder. scale_override > 0 replaces the scale lookup. Returns NULL with
 * an error (G_FILE_ERROR or G_IO_ERROR_FAILED-like messages in G_FILE_ERROR domain) when
 * a file is missing, unreadable, of mismatched size, or the scale is unknown. */
MiddleburyScene *middlebury_scene_load(const char *dir, double scale_override, GError **error);
void middlebury_scene_free(MiddleburyScene *scene);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MiddleburyScene, middlebury_scene_free)

/* The noc mask (width * height, 1 = scored) of a scene; owned by the caller (g_free). */
uint8_t *middlebury_noc_mask(const MiddleburyScene *scene);

/* Scores a disparity map of the scene's size (px, NaN = missing). */
MiddleburyScore middlebury_score(const MiddleburyScene *scene, const float *disparity);

/* Reads an 8-bit luma PNG (see above) into a newly allocated width*height buffer. */
uint8_t *middlebury_png_load_gray(const char *path, int *width, int *height, GError **error);

/* Scores from raw arrays (used by the scene scorer and by tests): gt, gt_right (may be
 * NULL) in units of `scale`, disparity in px. */
MiddleburyScore middlebury_score_raw(int width, int height, double scale, const uint8_t *gt,
                                     const uint8_t *gt_right, const float *disparity);

G_END_DECLS
