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

/* §1 and §2 up to level 1 in one dispatch: R8 src8 with 2 layers per pair (2k left,
 * 2k+1 right) -> RG32F level0 and, unless level1 is NULL, its reduce level1. With a map
 * (RG32F, layers 2k left and 2k+1 right: the raw (u, v) of every rectified pixel of
 * pair k), level 0 is the rectification of §0: src8 sampled bilinearly at the map's
 * positions, taps outside the raw image reading 0. */
void stereo_pass_ingest(StereoPasses *ps, GpuImage *src8, GpuImage *map, GpuImage *level0,
                        GpuImage *level1);
/* §2 for the levels after the first. */
void stereo_pass_reduce(StereoPasses *ps, GpuImage *src, GpuImage *dst);
/* §3 and §4 for several levels: for each level its intensities img (RG32F) -> responses
 * quad, and the mean |qL|, |qR| of each layer into means[layer * STEREO_MAX_LEVELS +
 * level] (vec2). One dispatch per STEREO_QUAD_LEVELS_PER_PASS levels. `partials` holds
 * (vec2) stereo_pass_quadrature_groups(level size) entries per layer from each level's
 * partial_base; `counters` (uint, layers * STEREO_MAX_LEVELS, zero at first use) is left
 * zero again. */
#define STEREO_QUAD_LEVELS_PER_PASS 3
typedef struct {
  GpuImage *img, *quad;
  int level;
  int partial_base;
} StereoQuadLevel;
void stereo_pass_quadrature(StereoPasses *ps, const StereoQuadLevel *levels, int n,
                            GpuBuffer *partials, GpuBuffer *counters, GpuBuffer *means);
int stereo_pass_quadrature_groups(int width, int height);
/* Support-weighted ZNCC search for direction eta on the intensities of the search level,
 * into disp (d, cert, 0, v). */
void stereo_pass_search(StereoPasses *ps, GpuImage *img, GpuImage *disp, int eta, int t_min,
                        int t_max);
/* The same with the implementation chosen: tiled (shared memory) or direct reads; both
 * give identical results, stereo_pass_search picks the faster for the device. */
/* §5b: the level-0 refinement search: per pixel, the candidates around the range of the
 * upsampled prior (d in .x of `prior`, level 0) near it; writes (d, certainty, 0, v). */
void stereo_pass_refine(StereoPasses *ps, GpuImage *img, GpuImage *prior, GpuImage *disp,
                        int eta);
/* The same with the search variant chosen (tests). */
void stereo_pass_refine_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *prior,
                                GpuImage *disp, int eta);
void stereo_pass_search_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *disp,
                                int eta, int t_min, int t_max);
/* Phase terms for level `level` (its size is disp's) from responses and prior. */
void stereo_pass_phase(StereoPasses *ps, GpuImage *quad, GpuImage *disp, GpuImage *terms,
                       GpuBuffer *means, int level, int eta);
/* Applicability filter of terms (rows into tmp, columns + solve into disp, in place).
 * The size processed is disp's; terms and tmp may be larger. guard > 0 (§5b): a solved d
 * more than guard px from d0 keeps d0 (certainty C-bar, sigma 0). */
void stereo_pass_smooth_solve(StereoPasses *ps, GpuImage *terms, GpuImage *tmp,
                              GpuImage *disp, int level, float guard);
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
/* Layout of one packed layer: the disparity plane (float, or s16 in words of two
 * pixels), the u8 confidence plane and, with `depth`, the u16 depth plane; byte offsets,
 * all multiples of 4. */
typedef struct {
  bool s16, depth;
  size_t conf_offset, depth_offset, layer_bytes;
} StereoPackLayout;
void stereo_pack_layout(int width, int height, bool s16, bool depth, StereoPackLayout *layout);
/* Packs (d, state, k) into `out` (one layer after the other). Depth in mm is
 * round(fb_mm / (d - doffs)), fb_mm = 1000 f B. */
void stereo_pass_pack(StereoPasses *ps, GpuImage *src, GpuBuffer *out,
                      const StereoPackLayout *layout, double fb_mm, double doffs);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereoPasses, stereo_passes_free)

G_END_DECLS
