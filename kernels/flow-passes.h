/* flow-passes.h: the GPU passes of the optical flow, one function per stage of
 * docs/optical-flow.md. Internal to kernels/ and its tests: the engine (flow.c) chains
 * them; tests/flow runs each one alone on inputs computed by the CPU reference.
 *
 * Every pass is a GpuPass (gpu/gpu.h): it binds its images and buffers in one call, sets
 * its uniforms by index and dispatches over the size of the level it is given and the
 * layers of the batch; the GPU context's tracker puts a barrier before a dispatch only
 * where it reads (or overwrites) what an earlier one wrote (or read), so passes can be
 * chained freely. All images are GL_TEXTURE_2D_ARRAY; with B frames (or frame pairs) in a
 * batch, per-frame images have B layers, the row responses L B (L = flow_passes_row_layers(),
 * 1..3 per frame), responses and features N B (layer b N + k), terms 2 B.
 * Formats: level images R32F; row responses RGBA32F (two complex responses per texel);
 * responses RG32F; features RGBA32F (re, im, phi_x, phi_y); terms RGBA32F; flow fields
 * RGBA32F (u, v, certainty, w).
 * Scratch images (rows, responses, terms, tmp) may be larger than the level: the size
 * processed is the one passed (or the output's where the pass says so).
 * Same thread as the GpuContext; nothing allocated per call.
 */
#pragma once

#include "gpu/gpu.h"
#include "kernels/flow-params.h"

G_BEGIN_DECLS


typedef struct FlowPasses FlowPasses;

/* Makes every pass for `params`: the per-engine constants (radius, orientations, the
 * bank's and the Gaussians' taps computed here in double, gates, exponents, thresholds)
 * are compile-time defines, so engines with the same parameters share the programs. */
FlowPasses *flow_passes_new(GpuContext *gpu, const FlowParams *params, GError **error);
void flow_passes_free(FlowPasses *passes);
/* The passes that dispatch over their output image's layers (every pass but rows,
 * columns and mean, which are given the frames) take that image as holding `batch`
 * frames' equal shares of layers and process the first `frames` of them (1 and 1 until
 * set: all layers). The engine sets it per submission. */
void flow_passes_set_frames(FlowPasses *ps, int batch, int frames);
/* Layers of the row responses per frame for these parameters. */
int flow_passes_row_layers(const FlowParams *params);

/* R8 src (B layers) -> R32F level 0. The engine does not run it: the reduce and the row
 * pass read an R8 source as I = Y / 255 themselves (the same values). */
void flow_pass_ingest(FlowPasses *ps, GpuImage *src8, GpuImage *dst);
/* src R32F, or level 0 as the R8 frame itself. */
void flow_pass_reduce(FlowPasses *ps, GpuImage *src, GpuImage *dst);
/* Row and column passes of the bank over w x h (the level size) of `src` (R32F, or level
 * 0 as the R8 frame itself). */
void flow_pass_rows(FlowPasses *ps, GpuImage *src, int w, int h, int frames, GpuImage *rows);
void flow_pass_columns(FlowPasses *ps, GpuImage *rows, int w, int h, int frames,
                       GpuImage *q);
/* Features of every orientation into `feat` (its size is the level's); writes the
 * per-workgroup magnitude sums into `partials` from partial_base
 * (N B flow_pass_features_groups(w, h) floats). */
void flow_pass_features(FlowPasses *ps, GpuImage *q, GpuImage *feat, GpuBuffer *partials,
                        int partial_base);
int flow_pass_features_groups(int width, int height);
/* flow_pass_features and flow_pass_mean (one frame, the level of feat's size) in one
 * dispatch: the last workgroup of each layer to finish (an atomic counter in `counters`,
 * uint [layer * FLOW_MAX_LEVELS + level], zero before and left zero) sums the layer's
 * partials as flow_pass_mean does, in its order (the same means). */
void flow_pass_features_mean(FlowPasses *ps, GpuImage *q, GpuImage *feat, GpuBuffer *partials,
                             int partial_base, GpuBuffer *counters, GpuBuffer *means,
                             int mean_base, int level);
/* Mean |q_k| of a level: means[mean_base + (b N + k) FLOW_MAX_LEVELS + level]. */
void flow_pass_mean(FlowPasses *ps, GpuBuffer *partials, int partial_base, int width,
                    int height, int frames, GpuBuffer *means, int mean_base, int level);
/* Terms of level `level` (its size is flow's) from the features of both frames and the
 * prior flow; mean_base locates feat0's means. */
void flow_pass_terms(FlowPasses *ps, GpuImage *feat0, GpuImage *feat1, GpuImage *flow,
                     GpuImage *terms, GpuBuffer *means, int mean_base, int level);
/* Where the terms pass takes its prior from (docs/optical-flow.md §12): the image `flow`
 * as it is, or computed in the same pass from `prior_src` and written to `flow`, exactly
 * as flow_pass_median (FLOW_PRIOR_MEDIAN: prior_src is the previous round's flow, of
 * flow's size) or flow_pass_upsample (FLOW_PRIOR_UPSAMPLE: prior_src is the next coarser
 * level's flow) would have written it. prior_src is NULL with FLOW_PRIOR_IMAGE and
 * another image than flow otherwise. */
typedef enum {
  FLOW_PRIOR_IMAGE,
  FLOW_PRIOR_MEDIAN,
  FLOW_PRIOR_UPSAMPLE,
  FLOW_PRIOR_COUNT
} FlowPrior;
void flow_pass_terms_prior(FlowPasses *ps, FlowPrior prior, GpuImage *prior_src,
                           GpuImage *feat0, GpuImage *feat1, GpuImage *flow, GpuImage *terms,
                           GpuBuffer *means, int mean_base, int level);
/* Applicability filter of the terms (rows into tmp, columns + solve into flow, in
 * place). The size processed is flow's. */
void flow_pass_smooth_solve(FlowPasses *ps, GpuImage *terms, GpuImage *tmp, GpuImage *flow);
/* `iterations` rounds of the hole fill on flow (tmp may be larger). */
void flow_pass_fill(FlowPasses *ps, GpuImage *flow, GpuImage *tmp, int iterations);
void flow_pass_median(FlowPasses *ps, GpuImage *src, GpuImage *dst);
void flow_pass_upsample(FlowPasses *ps, GpuImage *coarse, GpuImage *fine);
void flow_pass_fb(FlowPasses *ps, GpuImage *fwd, GpuImage *bwd, GpuImage *dst);
/* The same for the 3x3 median of fwd (what flow_pass_median would write), computed here. */
void flow_pass_fb_median(FlowPasses *ps, GpuImage *fwd, GpuImage *bwd, GpuImage *dst);

/* Layout of one packed layer: the u plane, then the v plane (float, or int16 at
 * 1/FLOW_SCALE px in words of two pixels); byte offsets, multiples of 4. */
typedef struct {
  bool s16;
  size_t v_offset, layer_bytes;
} FlowPackLayout;
void flow_pack_layout(int width, int height, bool s16, FlowPackLayout *layout);
void flow_pass_pack(FlowPasses *ps, GpuImage *src, GpuBuffer *out,
                    const FlowPackLayout *layout);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FlowPasses, flow_passes_free)

G_END_DECLS
