/* engine-test.h: what the engine tests (test-engine.c, test-engine-reference.c) share:
 * textured stereo pairs with exact disparities and an engine made or the test fails. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "kernels/stereo.h"

/* Left: texture; right: texture shifted by a disparity that is `d0` on the background and
 * `d1` inside a box (a depth step), so edges, occlusions and the fill are exercised. The
 * textures are drawn from rng. */
void engine_test_scene(GRand *rng, int w, int h, double d0, double d1, uint8_t *left,
                       uint8_t *right);
/* engine_test_scene's pair with a box (x0..x1, y0..y1 of the left view) of coarse texture
 * only (wavelengths of 18-60 px, about the background's contrast at them): at level 0 its
 * filter responses stay below a noise floor of a few grey levels, on the coarser levels
 * they do not. */
void engine_test_plain_box_scene(GRand *rng, int w, int h, double d0, double d1, int x0,
                                 int x1, int y0, int y1, uint8_t *left, uint8_t *right);
/* stereo_engine_new with these settings; asserts that it succeeds. */
StereoEngine *engine_test_new(GpuContext *ctx, const StereoParams *p, StereoOutputFormat fmt,
                              int in_flight);
