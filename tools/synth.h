/* synth.h: synthetic rectified stereo pairs with exact ground truth, for tests,
 * benchmarks and the demo.
 *
 * The scene is a set of surfaces described by their LEFT-view disparity dL(x, y) (px,
 * left view is the reference, the match of left pixel (x, y) is right pixel (x - dL, y)):
 *  - a background plane dL = d0 + dx x + dy y (CONSTANT: dx = dy = 0; SLANTED);
 *  - BOX: in front of it, a fronto-parallel rectangle at disparity d1 covering the left
 *    pixels box_x <= x < box_x + box_w, box_y <= y < box_y + box_h.
 * Each surface carries its own texture, painted in left-view coordinates: the surface
 * point seen at left (x, y) has brightness T_s(x, y), where T_s is a smooth random
 * procedural texture (a sum of band-limited sinusoids with a 1/f-like spectrum, from
 * the seed). Both views are rendered by evaluating T_s at exact positions, never by
 * resampling an image:
 *    L(x, y)  = T_s(x, y) for the surface s seen at (x, y);
 *    R(x', y) = T_s(x, y) for the NEAREST surface s (largest disparity) that has a point
 *               with x - dL_s(x, y) = x'  (plane: x = (x' + d0 + dy y) / (1 - dx)).
 * Hence L(x, y) = R(x - dL(x, y), y) wherever the point is visible in both views, up to
 * rounding to 8 bits and whatever interpolation the reader uses to sample R.
 * Optional photometric changes apply to the right image only:
 *    R = gain * R + offset + N(0, noise^2), then rounded and clamped to 0..255.
 *
 * Everything is deterministic for a given SynthParams (GLib's Mersenne Twister, so also
 * across machines). Thread safe on distinct data; no global state.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define SYNTH_ERROR (synth_error_quark())
GQuark synth_error_quark(void);

typedef enum {
  SYNTH_SCENE_CONSTANT,
  SYNTH_SCENE_SLANTED,
  SYNTH_SCENE_BOX,
  SYNTH_SCENE_COUNT
} SynthScene;

/* "constant", "slanted", "box". */
const char *synth_scene_name(SynthScene scene);
/* FALSE for an unknown name. */
bool synth_scene_from_name(const char *name, SynthScene *scene);

/* Mask values (Middlebury's mask0nocc.png convention, so it can be written as is). */
#define SYNTH_MASK_VISIBLE 255   /* seen in both views */
#define SYNTH_MASK_OCCLUDED 128  /* hidden in the right view by a nearer surface */
#define SYNTH_MASK_OUTSIDE 0     /* its match x - dL falls outside the right image */

typedef struct {
  int width, height;       /* px, 16..16384 */
  SynthScene scene;
  uint32_t seed;           /* texture and noise */
  double d0, dx, dy;       /* background plane, px and px/px (|dx| < 0.5, |dy| < 0.5) */
  double d1;               /* BOX: the rectangle's disparity, px, larger than the plane's */
  int box_x, box_y, box_w, box_h;  /* BOX: left-view pixels covered, inside the image */
  double contrast;         /* texture standard deviation, grey levels (default 40) */
  double gain, offset;     /* right image photometric change (default 1, 0) */
  double noise;            /* right image Gaussian noise sigma, grey levels (default 0) */
} SynthParams;

/* Defaults for a scene at a size (disparities scale with the width):
 *  CONSTANT d0 = W/20; SLANTED d0 = W/40, dx = 0.05, dy = 0.02;
 *  BOX d0 = W/40, d1 = W/10, the rectangle is the middle third in x and y.
 * The values of the other scenes' fields are zero. */
void synth_params_init(SynthParams *p, SynthScene scene, int width, int height);
/* Every disparity of the scene must lie in [0, width - 1]; see the field comments. */
bool synth_params_validate(const SynthParams *p, GError **error);

typedef struct {
  int width, height;
  uint8_t *left, *right;       /* luma, width * height, tightly packed */
  float *disparity;            /* dL of the surface seen at each left pixel (dense) */
  float *disparity_nocc;       /* the same, NaN where mask != SYNTH_MASK_VISIBLE */
  float *disparity_right;      /* dR >= 0 of the surface seen at each right pixel; its
                                  match in the left view is (x' + dR, y) */
  uint8_t *mask;               /* SYNTH_MASK_* per left pixel */
} SynthPair;

/* Renders a pair. NULL + SYNTH_ERROR when the parameters are invalid. */
SynthPair *synth_pair_new(const SynthParams *params, GError **error);
void synth_pair_free(SynthPair *pair);

/* Uniform random bytes (seeded, deterministic) into a width x height plane whose rows are
 * `stride` bytes apart; the padding bytes are left untouched. */
void synth_noise_u8(uint8_t *data, int width, int height, size_t stride, uint32_t seed);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SynthPair, synth_pair_free)

G_END_DECLS
