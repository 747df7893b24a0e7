/* stereo-passes.h: the GPU passes of the stereo filter, one function per stage of
 * docs/algorithm.md. Internal to kernels/ and its tests: the engine (stereo.c) chains
 * them; tests/stereo runs each one alone on inputs computed by the CPU reference.
 *
 * Every pass binds its images, sets its uniforms and dispatches over (width, height,
 * layers) of its output; the GPU context's tracker puts the barriers between them, so
 * passes can be chained freely. All images are GL_TEXTURE_2D_ARRAY. Layers: one per pair
 * for intensities, responses and post-processing; DIRS per pair (pair * DIRS +
 * direction, direction 0 = eta +1 = the left view's) for the disparity state.
 * Formats: intensities RG32F (L, R); responses RGBA32F (qL.re, qL.im, qR.re, qR.im);
 * disparity state RGBA32F (d, certainty, sigma_d, v); post-processing RGBA32F
 * (d, state, k, 0) with state 0 invalid, 1 filled, 2 measured.
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
/* The same with the programs built in the background when `async` (GpuPassParams.async):
 * stereo_passes_poll() is TRUE once all are built (FALSE with an error if one failed). */
StereoPasses *stereo_passes_new_async(GpuContext *gpu, const StereoParams *params, bool async,
                                      GError **error);
bool stereo_passes_poll(StereoPasses *passes, GError **error);
void stereo_passes_free(StereoPasses *passes);
/* The pairs of the batch the next dispatches run on (0: all layers of their images). A
 * pair's state images have DIRS layers (2 with the L-R check, else 1). */
void stereo_passes_set_layers(StereoPasses *passes, int pairs);
/* The batch's per-position parameters (below) that the search and the post-processing
 * read with the pitch-plane prior (StereoParams.ground_margin >= 0); kept, not owned. */
void stereo_passes_set_layer_params(StereoPasses *passes, GpuBuffer *layers);

/* Per batch position k, `layers` (a storage buffer) holds a StereoLayerParams-like
 * std430 struct { int pair; float min_magnitude, fb_mm, doffs; int metres_offset; float
 * ground_a, ground_b, ground_c; } (kernels/stereo-private.h): the pair whose rectification
 * map k uses, the noise floor of the magnitude gate, the depth constants, where the pack
 * pass writes f32 metres and the ground's disparity a x + b y + c (level-0 px, left grid). */

/* §1 and §2 up to level 1 in one dispatch: R8 src8 with 2 layers per batch position
 * (2k left, 2k+1 right) -> RG32F level0 and, unless level1 is NULL, its reduce level1.
 * With a map (RG32F, layers 2p left and 2p+1 right: the raw (u, v) of every rectified
 * pixel of pair p = layers[k].pair), level 0 is the rectification of §0: src8 sampled
 * bilinearly at the map's positions, taps outside the raw image reading 0. `layers` is
 * needed only with a map. */
void stereo_pass_ingest(StereoPasses *ps, GpuImage *src8, GpuImage *map, GpuImage *level0,
                        GpuImage *level1, GpuBuffer *layers);
/* §2 for the levels after the first. */
void stereo_pass_reduce(StereoPasses *ps, GpuImage *src, GpuImage *dst);
/* §3 and §4 for several levels: for each level its intensities img (RG32F) -> responses
 * quad, and the mean |qL|, |qR| of each layer into means[layer * STEREO_MAX_LEVELS +
 * level] (vec2). One dispatch per STEREO_QUAD_LEVELS_PER_PASS levels. `partials` holds
 * (vec2) stereo_pass_quadrature_groups(ps, level size) entries per layer from each level's
 * partial_base; `counters` (uint, layers * STEREO_MAX_LEVELS, zero at first use) is left
 * zero again. */
#define STEREO_QUAD_LEVELS_PER_PASS 3
/* The responses' storage: half floats (docs/algorithm.md §11: the phase stage's terms
 * and the mean magnitudes are computed in fp32 from them, resp. before rounding). */
#define STEREO_QUAD_FORMAT GPU_FORMAT_RGBA16F
typedef struct {
  GpuImage *img, *quad;
  int level;
  int partial_base;
} StereoQuadLevel;
void stereo_pass_quadrature(StereoPasses *ps, const StereoQuadLevel *levels, int n,
                            GpuBuffer *partials, GpuBuffer *counters, GpuBuffer *means);
int stereo_pass_quadrature_groups(const StereoPasses *ps, int width, int height);
/* The discrete search (§5), both directions, on the intensities of the search level
 * (layer = pair) into disp (layer pair * DIRS + direction: d, cert, 0, v). */
void stereo_pass_search(StereoPasses *ps, GpuImage *img, GpuImage *disp, int t_min,
                        int t_max);
/* §5b: the level-0 refinement search: per pixel, the candidates around the range of the
 * upsampled prior (the level-1 state `coarse`, d in .x) near it; writes (d, cert, 0, v). */
void stereo_pass_refine(StereoPasses *ps, GpuImage *img, GpuImage *coarse, GpuImage *disp);
/* The same with the implementation chosen: tiled (shared memory) or direct reads; both
 * give identical results, the plain calls pick the faster for the device. */
void stereo_pass_search_variant(StereoPasses *ps, bool tiled, GpuImage *img, GpuImage *disp,
                                int t_min, int t_max);
void stereo_pass_refine_variant(StereoPasses *ps, bool tiled, GpuImage *img,
                                GpuImage *coarse, GpuImage *disp);
/* One round of the phase stage at `level` (§6 terms, §7 applicability filter and solve),
 * both directions: responses quad (layer = pair), prior d0 from `prior` (.x; the same
 * level, or with `upsample` the next coarser level, 2 x bilinear, §8) -> out (d, C,
 * sigma_d, v), the size of out. guard > 0 (§5b): a solved d more than guard px from d0
 * keeps d0 (certainty C-bar, sigma 0). `prior` and `out` are different images. With
 * `left_only` only the left views' layers (direction 0) are computed. */
void stereo_pass_phase(StereoPasses *ps, GpuImage *quad, GpuImage *prior, bool upsample,
                       GpuImage *out, GpuBuffer *means, GpuBuffer *layers, int level,
                       float guard, GpuImage *scratch, bool left_only);
/* Whether the L-R check compares level 0's left view with level 1's right view, so that
 * level 0 computes the left views alone (stereo_pass_phase's `left_only`,
 * stereo_pass_post's `coarse`): stereo_params_lr_coarse when the passes were made. */
bool stereo_passes_lr_coarse(const StereoPasses *ps);
/* Whether the phase round of a level of this size runs as two passes (every level on
 * software renderers, levels of 2^20 pixels and more on GPUs; env STEREOD_PHASE_SPLIT=0,
 * 1 or "large"): the terms into `scratch` (RGBA32F, at least the level's size, as many
 * layers as the state), then the rest. Otherwise `scratch` is not used and may be NULL.
 * The results are the same. */
bool stereo_passes_phase_split(StereoPasses *passes, int width, int height);
/* fill_iterations rounds of the hole fill (§9), each one dispatch reading one of the two
 * state images and writing the other, starting from state[cur]; returns the index of
 * the image holding the result. */
int stereo_pass_fill(StereoPasses *ps, GpuImage *state[2], int cur);
/* §10 up to the densification, one dispatch: validity (certainty, L-R check, sigma_d),
 * the 3x3 median and the row fill, as configured; `disp` is the level-0 state of both
 * directions (layers pair * DIRS, pair * DIRS + 1), `intensity` level 0 (RG32F, L in .r)
 * -> dst (a layer per pair): (d, state, k, 0), state 2 measured, 1 filled, 0 invalid.
 * The 9x3 median of the filled pixels is the first step of stereo_pass_pack. */
/* With `coarse` (stereo_passes_lr_coarse: level 1's state) the L-R check reads the right
 * view there, 2 x bilinear; else disp's right-view layers. */
/* `fallback` holds the final states of levels 1 .. stereo_params_fallback_levels (the
 * coarse fallback, §10 step 1); NULL when that is 0. */
void stereo_pass_post(StereoPasses *ps, GpuImage *disp, GpuImage *intensity, GpuImage *dst,
                      GpuImage *coarse, GpuImage *const *fallback);
/* Layout of one packed layer: the disparity plane (float, or s16 in words of two
 * pixels), the u8 confidence plane and, with `depth`, the u16 depth plane; byte offsets,
 * all multiples of 4. */
typedef struct {
  bool s16, depth;
  size_t conf_offset, depth_offset, layer_bytes;
} StereoPackLayout;
void stereo_pack_layout(int width, int height, bool s16, bool depth, StereoPackLayout *layout);
/* With densify on, replaces the d of every filled pixel by the lower median of the
 * valid or filled values in the 9x3 window around it (all read before any is replaced;
 * one dispatch into `med`, R32F of src's size and layers, unused without densify), then
 * packs (d, state, k) into `out` (one layer after the other). Depth in mm is
 * round(fb_mm / (d - doffs)) with fb_mm = 1000 f B and doffs from `layers`. */
void stereo_pass_pack(StereoPasses *ps, GpuImage *src, GpuImage *med, GpuBuffer *out,
                      const StereoPackLayout *layout, GpuBuffer *layers);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereoPasses, stereo_passes_free)

G_END_DECLS
