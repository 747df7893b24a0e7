/* flow-score.h: scoring an optical flow against a ground truth, as
 * shared/data/middlebury-flow/README.md defines it, and loading the Middlebury flow
 * scenes for the accuracy tests.
 *
 * A pixel is scored where the ground truth is known (imageio_flow_known). EPE = mean
 * |(u, v) - (u_gt, v_gt)| (px) and AAE = mean angle (degrees) between (u, v, 1) and
 * (u_gt, v_gt, 1), both over the scored pixels that have an estimate; bad-k = % of scored
 * pixels whose estimate is missing or has an endpoint error above k px; density = % of
 * scored pixels with an estimate. Not thread safe per object.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "tools/imageio.h"

G_BEGIN_DECLS

typedef struct {
  double epe, aae;        /* px, degrees */
  double bad1, bad3;      /* % of scored pixels */
  double density;         /* % of scored pixels with an estimate */
  long n;                 /* scored pixels */
} FlowScore;

/* u, v, u_gt, v_gt: width * height each, tightly packed; unknown = NaN or |.| >= 1e9. */
FlowScore flow_score(int width, int height, const float *u, const float *v,
                     const float *u_gt, const float *v_gt);

/* A Middlebury flow scene folder: frame10.png, frame11.png (luma as imageio reads it)
 * and flow10.flo. */
typedef struct {
  char *name;
  int width, height;
  ImageioU8 *frame0, *frame1;   /* tightly packed */
  ImageioFlow *gt;
} FlowScene;

FlowScene *flow_scene_load(const char *dir, GError **error);
void flow_scene_free(FlowScene *scene);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FlowScene, flow_scene_free)

/* The four public scenes of the accuracy test, in report order. */
extern const char *const flow_scene_names[4];

G_END_DECLS
