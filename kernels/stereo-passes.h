/* stereo-passes.h: the GPU passes of the stereo filter, one function per stage of
 * docs/algorithm.md. Internal to kernels/ and its tests: the engine (stereo.c) chains
 * them; tests/stereo runs each one alone on inputs computed by the CPU reference.
 *
 * Every pass binds its images, sets its uniforms, dispatches over (width, height,
 * layers) of its output and issues a memory barrier, so passes can be chained freely.
 * All images are GL_TEXTURE_2D_ARRAY; the layer count of the output is the batch size.
 * Formats: intensities RG32F (L, R); responses RGBA32F (qL.re, qL.im, qR.re, qR.im);
 * disparity state RGBA32F (d, certainty, sigma_d, v); terms RGBA32F (P); post-processing
 * RGBA32F (d, state, k, 0) with state 0 invalid, 1 filled, 2 measured.
 * Same thread as the GpuContext; nothing allocated per call.
 */
#pragma once

#include "gpu/gpu.h"
#include "kernels/stereo-params.h"

G_BEGIN_DECLS

typedef struct StereoPasses StereoPasses;

/* Compiles every program for `params` (filter radius and search window are compile-time
 * constants; taps are uniforms computed here in double). */
StereoPasses *stereo_passes_new(GpuContext *gpu, const StereoParams *params, GError **error);
void stereo_passes_free(StereoPasses *passes);

/* R8 src with 2 layers per pair (2k left, 2k+1 right) -> RG32F dst. */
void stereo_pass_ingest(StereoPasses *ps, GpuImage *src8, GpuImage *dst);
void stereo_pass_reduce(StereoPasses *ps, GpuImage *src, GpuImage *dst);
/* Quadrature filter of both images; also writes per-workgroup magnitude sums into
 * `partials` (vec2 each) from index partial_base (layers * groups entries, see
 * stereo_pass_quadrature_groups). */
void stereo_pass_quadrature(StereoPasses *ps, GpuImage *src, GpuImage *dst,
                            GpuBuffer *partials, int partial_base);
int stereo_pass_quadrature_groups(int width, int height);
/* Mean |qL|, |qR| of a level into means[layer * STEREO_MAX_LEVELS + level] (vec2). */
void stereo_pass_mean(StereoPasses *ps, GpuBuffer *partials, int partial_base, int width,
                      int height, int layers, GpuBuffer *means, int level);
/* Support-weighted ZNCC search for direction eta on the intensities of the search level,
 * into disp (d, cert, 0, v). */
void stereo_pass_search(StereoPasses *ps, GpuImage *img, GpuImage *disp, int eta, int t_min,
                        int t_max);
/* Phase terms for level `level` (its size is disp's) from responses and prior. */
void stereo_pass_phase(StereoPasses *ps, GpuImage *quad, GpuImage *disp, GpuImage *terms,
                       GpuBuffer *means, int level, int eta);
/* Applicability filter of terms (rows into tmp, columns + solve into disp, in place).
 * The size processed is disp's; terms and tmp may be larger. */
void stereo_pass_smooth_solve(StereoPasses *ps, GpuImage *terms, GpuImage *tmp,
                              GpuImage *disp, int level);
/* fill_iterations rounds of the hole fill on disp (tmp may be larger). */
void stereo_pass_fill(StereoPasses *ps, GpuImage *disp, GpuImage *tmp);
void stereo_pass_upsample(StereoPasses *ps, GpuImage *coarse, GpuImage *fine);
/* L-R check + validity, median, densify; `intensity` is level 0 (RG32F, L in .r); a and b
 * are scratch images of disp_l's size. Returns the image holding the result (a or b).
 * disp_r is ignored without L-R check. */
GpuImage *stereo_pass_post(StereoPasses *ps, GpuImage *disp_l, GpuImage *disp_r,
                           GpuImage *intensity, GpuImage *a, GpuImage *b);
/* Individual post steps (for tests). */
void stereo_pass_post_lr(StereoPasses *ps, GpuImage *disp_l, GpuImage *disp_r, GpuImage *dst);
void stereo_pass_median(StereoPasses *ps, GpuImage *src, GpuImage *dst);
void stereo_pass_densify(StereoPasses *ps, GpuImage *src, GpuImage *intensity, GpuImage *dst);
void stereo_pass_densify_median(StereoPasses *ps, GpuImage *src, GpuImage *dst);
/* Packs (d, state, k) into `out` at `offset` bytes: per layer the disparity plane then the
 * confidence plane, see stereo_pack_layout. */
void stereo_pass_pack(StereoPasses *ps, GpuImage *src, GpuBuffer *out, bool s16);
/* Bytes of one packed layer and the byte offset of its confidence plane (both multiples
 * of 4). */
void stereo_pack_layout(int width, int height, bool s16, size_t *layer_bytes,
                        size_t *conf_offset);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereoPasses, stereo_passes_free)

G_END_DECLS
