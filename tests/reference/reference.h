/* reference.h: the plain-C, double-precision reference of the stereo filter.
 *
 * Implements docs/algorithm.md stage by stage (section numbers "§n" below refer to that
 * page), with the configuration taken from kernels/stereo-params.h. Every stage is its
 * own function on double images so that one GPU pass can be compared with one call here.
 * The code favours clarity over speed; it allocates freely and is not meant for the hot
 * path. All functions are reentrant (no global state); images are never shared.
 *
 * Images: RefImage, w x h pixels of `ch` interleaved double channels, row-major,
 * element (x, y, c) at data[(y * w + x) * ch + c]. Constructors return owned images
 * (free with ref_image_free or g_autoptr(RefImage)); inputs are never modified unless a
 * function says "in place".
 *
 * Disparity fields (results of the search, the solve and the hole fill) are 3-channel
 * images: REF_D = disparity in level px of the reference view, REF_CERT = certainty
 * (smoothed C-bar, 0 = invalid), REF_SIGMA = window spread sigma_d in level px.
 *
 * Choices where docs/algorithm.md is silent (the GPU port must make the same ones):
 *  - Search (§5): ties keep the smaller t (strict ">" while scanning t upwards). The
 *    sub-pixel neighbours t-1, t+1 must lie within [t_min, t_max] and be valid.
 *  - Linear interpolation along x (§6 other samples, §10 dR at x_r): i0 = floor(xs),
 *    f = xs - i0, the i0 + 1 sample clamped to W-1 (only used with f = 0 there).
 *  - Solve (§7): the test is C-bar >= c_min AND A-bar > 0. The clamp applies to every
 *    pixel's d, also where d0 was kept.
 *  - Hole fill (§9): each round convolves v and v*d of the state at the start of the
 *    round (Jacobi); the certainty channel is not changed by the fill.
 *  - Upsample (§8): bilinear with clamp-to-edge, the result carries cert = sigma = 0.
 *  - Densify (§10): the intensity steps are taken on the level-0 intensity of the left
 *    image; ref_densify with img = NULL falls back to the spec's plain min rule.
 *  - Post (§10): without lr_check the eta = -1 direction is not run and LR-valid is true.
 *    The densify 9x3 median reads the values before any filled pixel is replaced.
 *    Confidence k of a pixel uses C-bar_L and sigma_dL of that pixel, also where the
 *    median or the densification made it valid.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/calib.h"
#include "kernels/stereo-params.h"

G_BEGIN_DECLS

typedef struct {
  int w, h, ch;
  double *data;
} RefImage;

enum { REF_D = 0, REF_CERT = 1, REF_SIGMA = 2, REF_FIELD_CHANNELS = 3 };

/* A zero-filled w x h x ch image. Never fails (aborts on out-of-memory like g_malloc). */
RefImage *ref_image_new(int w, int h, int ch);
RefImage *ref_image_copy(const RefImage *img);
void ref_image_free(RefImage *img);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RefImage, ref_image_free)

static inline double *
ref_image_at(const RefImage *img, int x, int y)
{
  return img->data + ((size_t)y * img->w + x) * img->ch;
}

/* §1: I = Y / 255 from an 8-bit luma plane with rows `stride` bytes apart. 1 channel. */
RefImage *ref_ingest(const uint8_t *y, int w, int h, size_t stride);
/* §2: one pyramid step, 5x5 binomial, clamp-to-edge, even samples; size ceil(W/2). */
RefImage *ref_reduce(const RefImage *in);
/* §3: quadrature filter of a 1-channel image: 2 channels (re, im). */
RefImage *ref_quadrature(const StereoParams *p, const RefImage *in);
/* §4: mean of |q| over all pixels of a 2-channel response. */
double ref_mean_magnitude(const RefImage *q);

/* Separable convolution of every channel with symmetric taps k = -r..r (index k + r),
 * zero outside the image (no renormalisation). Shared by §7 and §9. */
RefImage *ref_convolve_zero(const RefImage *in, const double *taps, int r);

/* §5 without its hole fill: weighted ZNCC search of one direction (eta = +1: ref = L, eta = -1:
 * ref = R) on the 1-channel intensity images of the search level. Returns a field with
 * d_init (level px) and certainty 1/0; sigma = 0. */
RefImage *ref_search(const StereoParams *p, const RefImage *ref, const RefImage *oth,
                     int eta);

/* §5b: the level-0 refinement search of one direction: as ref_search, but each pixel's
 * candidates are floor(mn) - STEREO_REFINE_PAD .. ceil(mx) + STEREO_REFINE_PAD, where mn,
 * mx are the min and max of prior's REF_D over x + i, y + j, i, j = -STEREO_REFINE_WINDOW,
 * -STEREO_REFINE_WINDOW + 2, .., STEREO_REFINE_WINDOW (clamped to the image), bounded by
 * floor(min_disparity) .. ceil(max_disparity); the sub-pixel neighbours must lie within
 * the pixel's own candidates. */
RefImage *ref_refine_search(const StereoParams *p, const RefImage *ref, const RefImage *oth,
                            const RefImage *prior, int eta);
/* §6: the four phase terms P = (c w^2, c w e, c, c e^2) for level responses q_ref,
 * q_oth (2 channels), prior d0 = channel REF_D of `prior`, direction eta and gate
 * t_mag = kappa * mean|q_ref|. Returns 4 channels. */
RefImage *ref_phase_terms(const StereoParams *p, const RefImage *q_ref,
                          const RefImage *q_oth, const RefImage *prior, int eta,
                          double t_mag);
/* §6 local frequency of one image from its samples q-, q0, q+ (re, im) at x-1, x, x+1:
 * omega = omega0 + asin(clamp(Im z, -1, 1)) and |z|^2; the stability test passes when
 * |z|^2 <= (tau / sigma)^2. Returns FALSE (outputs untouched) when |q0|^2 == 0. */
bool ref_local_frequency(const StereoParams *p, const double qm[2], const double q0[2],
                         const double qp[2], double *omega, double *z_abs2);
/* §7: smooth the terms and solve, including the range clamp for level s. `prior` gives
 * d0 where the certainty is too low. guard > 0 (§5b): where the solved d is more than
 * guard from d0, d0 is kept with certainty C-bar and sigma 0. Returns a field
 * (d, cert, sigma_d). */
RefImage *ref_smooth_solve(const StereoParams *p, const RefImage *terms,
                           const RefImage *prior, int s, double guard);
/* §9: hole fill of a field, in place (changes REF_D of pixels with cert == 0 only). */
void ref_fill_holes(const StereoParams *p, RefImage *field);
/* §8: d_{s-1} = 2 * bilinear(d_s; x/2, y/2) onto a w x h grid (the size of level s-1). */
RefImage *ref_upsample(const RefImage *field, int w, int h);

/* The pyramid of both images and their quadrature responses (§1-§3). */
typedef struct {
  int levels;
  RefImage *img[2][STEREO_MAX_LEVELS];   /* [0] = L, [1] = R; 1 channel */
  RefImage *q[2][STEREO_MAX_LEVELS];     /* 2 channels */
} RefPyramid;

RefPyramid *ref_pyramid_new(const StereoParams *p, const uint8_t *left, size_t left_stride,
                            const uint8_t *right, size_t right_stride);
void ref_pyramid_free(RefPyramid *pyr);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RefPyramid, ref_pyramid_free)

/* §5 + §8 for one direction: search (when stereo_params_use_search), hole fills,
 * iterations and levels down to 0. Returns the final level-0 field (d, cert, sigma_d)
 * after the last round, i.e. before any post-processing. */
RefImage *ref_direction_run(const StereoParams *p, const RefPyramid *pyr, int eta);
/* The same down to level `last` (0 .. the start level): with last > 0 the field of that
 * level after its rounds and its hole fill, which the next level's upsample reads. */
RefImage *ref_direction_run_to(const StereoParams *p, const RefPyramid *pyr, int eta,
                               int last);

/* §10, step by step. `valid` arrays hold w*h booleans of the left grid. */
/* valid = (cert >= c_min) AND LR-valid AND the sigma_d test. field_r may be NULL (no
 * L-R check). With `fallback` (the left view's fields of levels 1 .. n after their hole
 * fill, n = stereo_params_fallback_levels), a pixel whose cert is below c_min takes 2^s d
 * of the finest level s whose pixel (x >> s, y >> s) has cert >= c_min and
 * 2^s <= coarse_fallback 2^s d (the coarse fallback: d is changed in field_l's copy `d`,
 * w*h, which the caller passes; the sigma_d test is not applied to it, the L-R check is);
 * `d` may be NULL without fallback. */
void ref_post_valid(const StereoParams *p, const RefImage *field_l,
                    const RefImage *field_r, const RefImage *const *fallback, double *d,
                    bool *valid);
/* 3x3 NaN-aware lower median; d and valid in place (w*h each). */
void ref_median3x3(int w, int h, double *d, bool *valid);
/* Densification + 9x3 median of the filled pixels; d, valid in place, `filled` (w*h) is
 * set for pixels that it filled (which then also become valid). img: the level-0
 * reference intensity (w*h) that chooses the side; NULL = always the smaller d. */
void ref_densify(int w, int h, const double *img, double *d, bool *valid, bool *filled);
/* Runs ref_post_valid (with `fallback` as there, or NULL), the median and the densification (side choice on `left`, the
 * level-0 left intensity, 1 channel) as configured and packs the outputs: disparity
 * (float, NaN = invalid, level-0 px) and confidence u8 (0 invalid,
 * 1..127 filled, 128..255 measured), both tightly packed w*h; either may be NULL. */
void ref_post(const StereoParams *p, const RefImage *field_l, const RefImage *field_r,
              const RefImage *const *fallback, const RefImage *left, float *disparity,
              uint8_t *confidence);

/* The whole filter for one pair of 8-bit luma planes of p->width x p->height.
 * Returns FALSE with an error when the parameters do not validate. */
bool ref_stereo_run(const StereoParams *p, const uint8_t *left, size_t left_stride,
                    const uint8_t *right, size_t right_stride, float *disparity,
                    uint8_t *confidence, GError **error);

/* OpenCV's initUndistortRectifyMap for one pixel with the full 14-coefficient model,
 * written independently of calib_rectified_to_raw (which the engine uses) so that each
 * checks the other: rectified pixel (x, y) of `side` -> raw distorted (u, v). */
void ref_rectified_to_raw(const StereoCalib *calib, CalibSide side, double x, double y,
                          double *u, double *v);

/* Rectification of one raw 8-bit image: rectified pixel (x, y) samples the raw image at
 * ref_rectified_to_raw(x, y) bilinearly, taps outside the raw image reading 0 (OpenCV's
 * BORDER_CONSTANT). I = Y / 255 as in §1. 1 channel, the calibration's size. */
RefImage *ref_rectify(const StereoCalib *calib, CalibSide side, const uint8_t *raw,
                      size_t stride);
/* Depth in mm of the u16 output: round(calib_depth_mm), 0 for invalid, infinite,
 * non-positive or above 65535 (never saturated). */
unsigned ref_depth_mm(const StereoCalib *calib, double disparity);
/* Depth in metres of the f32 output: calib_depth_mm / 1000, NaN for invalid, infinite or
 * non-positive; no upper bound. */
double ref_depth_m(const StereoCalib *calib, double disparity);

G_END_DECLS
