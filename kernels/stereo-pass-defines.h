/* stereo-pass-defines.h: the compile-time constants of the stereo filter's programs
 * (stereo-passes.c): each pass's GLSL defines from the parameters, and the layout
 * choices that depend on the GPU's shared memory. Internal to kernels/. */
#pragma once

#include "kernels/stereo-params.h"

/* Which groups of constants a pass's program needs (its identity is its text). */
enum {
  D_FILTER = 1 << 0,   /* RADIUS, H_RE, H_IM, V_TAPS */
  D_SEARCH = 1 << 1,   /* SEARCH_R, WEIGHT_GAMMA, REFINE_WINDOW, REFINE_PAD */
  D_PHASE = 1 << 2,    /* RADIUS, OMEGA0, STAB2, KAPPA, GAMMA_EXP */
  D_SMOOTH = 1 << 3,   /* SMOOTH_R, SMOOTH_TAPS, C_MIN */
  D_FILL = 1 << 4,     /* FILL_R, FILL_TAPS */
  D_POST = 1 << 5,     /* LR_CHECK, LR_MAX, SIGMA_D_MAX, C_MIN, EDGE_MARGIN */
  D_LEVELS = 1 << 6,   /* MAX_LEVELS */
  D_QUAD = 1 << 7,     /* QUAD_LEVELS, QUAD_FORMAT, QUAD_TILE_W */
  D_DIRS = 1 << 8,     /* DIRS: directions per pair (2 with the L-R check) */
  D_FILL_REST = 1 << 9,   /* with D_FILL: the remainder's rounds instead of the full count */
};
/* The defines of a program needing the constant groups `groups` (D_*) for `p`, then
 * `variant` (more defines, or NULL), for a GPU with `shared_limit` bytes of shared memory
 * per work group: the program's identity. g_free it. */
char *stereo_pass_defines(const StereoParams *p, unsigned groups, const char *variant,
                          int shared_limit);

/* The quadrature pass's tile width (its height is 16): 32 outputs of a row a workgroup,
 * or with STEREOD_QUAD_TILE=16 (benchmarks) 16 (64 would not fit llvmpipe's 32 KiB). */
int stereo_quad_tile_width(void);

/* Fill rounds per dispatch: all of them (at most 3) where their regions fit the shared
 * memory, else fewer. */
int stereo_fill_rounds_per_pass(const StereoParams *p, int shared_limit);
