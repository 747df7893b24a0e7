/* ref-flow.h: the plain-C, double-precision reference of the optical flow.
 *
 * Implements docs/optical-flow.md stage by stage ("§n" below refers to that page), with
 * the configuration taken from kernels/flow-params.h. Like the stereo reference
 * (reference.h, whose RefImage, ref_ingest, ref_reduce and ref_convolve_zero it uses),
 * every stage is its own function on double images so that one GPU pass can be compared
 * with one call here; it allocates freely, has no global state and is reentrant.
 *
 * Channel layouts (N = p->orientations):
 *  - rows (§3): 2 (N/2 + 1) channels, row response r at (2r, 2r + 1) = (re, im);
 *  - responses (§3): 2N channels, q_k at (2k, 2k + 1);
 *  - features (§4): 4N channels, orientation k at 4k..4k+3 = (re, im, phi_x, phi_y),
 *    phi_x = FLOW_GRAD_INVALID (and phi_y = 0) where the phase is unstable;
 *  - terms (§5): 8 channels (Gxx, Gxy, Gyy, C, Bx, By, E, 0);
 *  - flow fields (§6-§8): 4 channels (u, v, certainty, w), w = 1 where the field holds
 *    a value (measured or filled), 0 where it does not.
 */
#pragma once

#include "kernels/flow-params.h"
#include "reference.h"

G_BEGIN_DECLS

enum { REF_FLOW_U = 0, REF_FLOW_V = 1, REF_FLOW_CERT = 2, REF_FLOW_W = 3,
       REF_FLOW_CHANNELS = 4, REF_FLOW_TERMS = 8 };

/* §3: row pass of the oriented bank on a 1-channel level image. */
RefImage *ref_flow_rows(const FlowParams *p, const RefImage *img);
/* §3: column pass: the N complex responses from the row responses. */
RefImage *ref_flow_columns(const FlowParams *p, const RefImage *rows);
/* §4: phase gradients and the stability test of every orientation. */
RefImage *ref_flow_features(const FlowParams *p, const RefImage *q);
/* §4: mean |q_k| over all pixels of a features image, means[k] for k < N. */
void ref_flow_means(const FlowParams *p, const RefImage *features, double *means);
/* §5: the least-squares terms for the prior flow field `prior` (level px), features f0 of
 * the first frame (with its means) and f1 of the second. */
RefImage *ref_flow_terms(const FlowParams *p, const RefImage *f0, const double *means0,
                         const RefImage *f1, const RefImage *prior);
/* §6: smooth the terms and solve the 2x2 system; `prior` gives the fallback and the
 * regularisation target. */
RefImage *ref_flow_solve(const FlowParams *p, const RefImage *terms, const RefImage *prior);
/* §7: hole fill, in place (u, v and w of pixels with w == 0 only). */
void ref_flow_fill(const FlowParams *p, RefImage *field, int iterations);
/* §7: 3x3 lower median of u and v over the window's pixels with w > 0 (at least 5). */
RefImage *ref_flow_median(const RefImage *field);
/* §7: (u, v) = 2 bilinear(coarse; x/2, y/2) on a w x h grid, certainty and w 0. */
RefImage *ref_flow_upsample(const RefImage *coarse, int w, int h);
/* §8: forward-backward check: w = 0 (and certainty 0) where |f(x) + b(x + f(x))| > fb_max
 * or x + f(x) leaves the frame. Returns the checked copy of fwd. */
RefImage *ref_flow_fb_check(const FlowParams *p, const RefImage *fwd, const RefImage *bwd);

/* The pyramid of one frame and its features (§1-§4). */
typedef struct {
  int levels;
  RefImage *img[FLOW_MAX_LEVELS];        /* 1 channel */
  RefImage *features[FLOW_MAX_LEVELS];   /* 4N channels */
  double means[FLOW_MAX_LEVELS][FLOW_MAX_ORIENTATIONS];
} RefFlowPyramid;

RefFlowPyramid *ref_flow_pyramid_new(const FlowParams *p, const uint8_t *frame,
                                     size_t stride);
void ref_flow_pyramid_free(RefFlowPyramid *pyr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RefFlowPyramid, ref_flow_pyramid_free)

/* §7: coarse to fine from a zero flow, the flow of `from` to `to`; the level-0 field
 * after the last round. */
RefImage *ref_flow_direction(const FlowParams *p, const RefFlowPyramid *from,
                             const RefFlowPyramid *to);

/* The whole flow of frame0 -> frame1 (8-bit luma, p->width x p->height): u, v in px
 * (width * height each, FLOW_UNKNOWN where there is no estimate); either may be NULL. */
bool ref_flow_run(const FlowParams *p, const uint8_t *frame0, size_t stride0,
                  const uint8_t *frame1, size_t stride1, float *u, float *v, GError **error);

G_END_DECLS
