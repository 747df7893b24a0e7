/* stages-fixture.h: what the stage tests (test-stages*.c) share: a GPU context with the
 * passes of the filter, images filled from reference images and read back, NaN poison,
 * random and textured inputs, and the seeded random generator.
 *
 * Each test draws fresh random inputs (the seed is printed; STEREOD_TEST_SEED repeats a
 * run), computes the stage with tests/reference/, uploads the same inputs (rounded to
 * float) to the GPU, poisons the output with NaN, runs the one pass, reads back and
 * compares. Every helper asserts on failure.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "kernels/stereo-passes.h"
#include "tests/reference/reference.h"

extern GRand *stages_rng;   /* seeded by stages_init */

typedef struct {
  GpuContext *ctx;            /* NULL when no GPU (the test then returns: skipped) */
  StereoParams p;             /* defaults for w x h, max_disparity 24, refine on */
  StereoPasses *ps;
} Fixture;

void fixture_setup(Fixture *f, int w, int h);
void fixture_teardown(Fixture *f);
/* The passes again, for f->p as a test changed it. */
void fixture_remake_passes(Fixture *f);

GpuImage *image_new(GpuContext *ctx, int w, int h, GpuFormat fmt);
GpuBuffer *storage_buffer(GpuContext *ctx, const char *label, size_t size);
/* Fills every channel of img with NaN, so that an unwritten pixel cannot pass. */
void poison(GpuImage *img);
/* Uploads channels of up to 4 reference images into one float image (chan[i] = which
 * source channel goes to texture channel i; src[i] NULL = 0). */
void upload_channels(GpuImage *img, const RefImage *const *src, const int *chan, int n);
/* An RG32F image with l in .r and r in .g (the layout of the filter's intensity levels). */
GpuImage *pair_image(GpuContext *ctx, const RefImage *l, const RefImage *r);
float *download(GpuImage *img);
float *download_layer(GpuImage *img, int layer);
/* Rounds a reference image to float precision in place (what the GPU sees as input). */
void round_to_float(RefImage *img);
RefImage *random_image(int w, int h, int ch, double lo, double hi);
/* A smooth random texture sampled at x (left) and x + shift (right), 8-bit. */
void make_pair(int w, int h, double disparity, uint8_t *left, uint8_t *right);
/* The same, ingested (§1) into two 1-channel reference images. */
void textured_pair(int w, int h, double shift, RefImage **l, RefImage **r);
void check_all_finite(const float *v, size_t n, const char *what);
/* The per-batch-position storage buffer of the passes (stereo-passes.h): position k uses
 * pair pairs[k] (pairs NULL: k), noise floor min_magnitude, no depth constants. */
GpuBuffer *layer_params(GpuContext *ctx, int n, const int *pairs, double min_magnitude);
/* The same with the pitch-plane prior's plane (StereoParams.ground) at every position. */
GpuBuffer *layer_params_ground(GpuContext *ctx, int n, const int *pairs, double min_magnitude,
                               const double ground[3]);
/* The same with a plane of its own at each position: position k uses ground[k]. */
GpuBuffer *layer_params_grounds(GpuContext *ctx, int n, const int *pairs,
                                double min_magnitude, const double (*ground)[3]);

/* g_test_init plus the seed; stages_run runs the tests and frees the generator. */
void stages_init(int *argc, char ***argv);
int stages_run(void);
