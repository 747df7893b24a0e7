/* flow-fixture.h: what the optical-flow GPU tests share: a context with the flow passes,
 * reference images moved into layered GPU images and back, NaN poison, random and
 * textured inputs, the seeded random generator.
 *
 * Each stage test draws fresh random inputs (the seed is printed; STEREOD_TEST_SEED
 * repeats a run), computes the stage with tests/reference/ref-flow.h, uploads the same
 * inputs (rounded to float) to the GPU, poisons the output with NaN, runs the one pass,
 * reads back and compares. Every helper asserts on failure.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "kernels/flow-passes.h"
#include "tests/reference/ref-flow.h"

extern GRand *flow_rng;   /* seeded by flow_fixture_init */

typedef struct {
  GpuContext *ctx;        /* NULL when no GPU (the test then returns: skipped) */
  FlowParams p;           /* defaults for w x h */
  FlowPasses *ps;
} FlowFixture;

void flow_fixture_setup(FlowFixture *f, int w, int h);
void flow_fixture_teardown(FlowFixture *f);

GpuImage *flow_image_new(GpuContext *ctx, int w, int h, int layers, GpuFormat fmt);
GpuBuffer *flow_storage_new(GpuContext *ctx, size_t size);
void flow_poison(GpuImage *img);
/* Uploads a reference image whose channels are split over the layers: layer l takes
 * channels l * per .. l * per + per - 1 into its first `per` texture channels (channels
 * past the image's are 0). */
void flow_upload(GpuImage *img, const RefImage *ref, int per);
/* Downloads into a new reference image of layers * per channels (the inverse). */
RefImage *flow_download(GpuImage *img, int per);
void flow_round_to_float(RefImage *img);
RefImage *flow_random_image(int w, int h, int ch, double lo, double hi);
/* A smooth random texture: frame0 at (x, y), frame1 at (x - du, y - dv) (the flow of
 * frame0's pixels is (du, dv)), 8-bit. */
void flow_textured_pair(int w, int h, double du, double dv, uint8_t *f0, uint8_t *f1);
/* Features of one 8-bit frame at level 0 by the reference, rounded to float. */
RefImage *flow_features_of(const FlowParams *p, const uint8_t *frame, int w, int h,
                           double *means);

void flow_fixture_init(int *argc, char ***argv);
int flow_fixture_run(void);
