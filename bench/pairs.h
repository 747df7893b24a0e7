/* pairs.h: the synthetic stereo pairs stereod-bench times the engine on, shared with the
 * reference's timing (tests/reference/ref-bench.c) so that both time the same pairs.
 *
 * A smooth random texture (16 sinusoids); the right view is the left shifted by a
 * disparity that grows down the image (a ground-plane-like scene), plus a box nearer the
 * camera in the middle third. Deterministic for a given GRand state; thread safe on
 * distinct GRand objects. */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The number of different pairs of each size that are rotated through. */
#define BENCH_N_INPUTS 8

/* Writes a w x h pair (tightly packed, 8-bit) with disparities up to about 0.9 * dmax
 * into left and right (w * h bytes each), drawing from `rng`. */
void bench_make_pair(GRand *rng, int w, int h, double dmax, uint8_t *left, uint8_t *right);

G_END_DECLS
