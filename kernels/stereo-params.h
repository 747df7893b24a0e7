/* stereo-params.h: the parameters of the phase-based stereo filter and the numbers
 * derived from them (filter taps, pyramid sizes, search range).
 *
 * Plain C, no GL: the GPU engine (kernels/stereo.c) and the double-precision CPU
 * reference (tests/reference/) both take their configuration from here, so the two can
 * never disagree about a tap or a level size. docs/algorithm.md explains every field.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

#define STEREO_MAX_LEVELS 8
#define STEREO_MAX_RADIUS 15          /* quadrature filter half-width limit */
#define STEREO_MAX_SMOOTH_RADIUS 15   /* applicability / fill filter half-width limit */

/* Fixed constants of the filter (docs/algorithm.md §5, §10), shared by the GPU stages and
 * the reference so that the two cannot disagree. Intensities are I = Y / 255. */
#define STEREO_SEARCH_WEIGHT_GAMMA 0.06      /* §5 support weight exp(-|a - a_c| / gamma) */
#define STEREO_REFINE_WINDOW 10   /* §5b: the prior's range over x, y +- 10 px (every 2 px) */
#define STEREO_REFINE_PAD 1       /* §5b: candidates floor(min) - 1 .. ceil(max) + 1 */
#define STEREO_REFINE_GUARD 0.25  /* §5b: level-0 phase may move d at most this far, px */
#define STEREO_MAX_FALLBACK_LEVELS 4   /* coarse_fallback reads levels 1..4 at most */
#define STEREO_SEARCH_LEVEL_AUTO (-2)
#define STEREO_ITERATIONS_AUTO (-2)
#define STEREO_SEARCH_RADIUS_AUTO (-2)
#define STEREO_ONE_ROUND_PIXELS (1 << 20)   /* automatic rounds: 1 a level from this many
                                               px (1920 x 1080 and larger), else 2 */
#define STEREO_SEARCH_AUTO_SIDE 250   /* auto search level: the coarsest level >= 1 whose
                                         smaller side is at least this many px, else 1 */
#define STEREO_DENSIFY_EDGE_MARGIN (15.5 / 255.0)  /* §10 densify side choice, in I units;
                                                     half a level off an 8-bit step so that
                                                     fp32 and double never tie */

typedef struct {
  int width, height;        /* rectified input size, px (>= 16 x 16) */

  /* Pyramid and quadrature filter (ALGORITHM.md §3, §4). */
  int levels;               /* 0 = automatic: 1 + floor(log2(min(W,H)/24)), at most 5 */
  double omega0;            /* rad/px, default pi/2 */
  double sigma;             /* Gaussian envelope, px, default 2.25 */
  int radius;               /* filter half-width, default 5 (11 taps) */

  /* Gates and weights (§5). */
  double kappa;             /* magnitude gate, fraction of mean |q_ref| of the level, 0.05 */
  double min_magnitude;     /* absolute floor of the magnitude gate, intensity units (1/255
                               = one grey level of amplitude); 0 = none */
  double tau;               /* stability test, default 2.0 */
  double gamma;             /* exponent of the magnitude-similarity weight, 2 */

  /* Least squares (§6). */
  double smooth_sigma;      /* applicability Gaussian, level px, 2.0 (radius ceil(3 sigma)) */
  double c_min;             /* minimum smoothed certainty, 0.02 */
  int iterations;           /* per level above 0, 1..8, or STEREO_ITERATIONS_AUTO
                               (default): stereo_params_level_iterations() */
  int iterations_level0;    /* at level 0 (the finest), 1..8, or STEREO_ITERATIONS_AUTO
                               (default): stereo_params_level_iterations() */

  /* Between levels (§7.2). */
  double fill_sigma;        /* hole-fill Gaussian, level px, 4.0 */
  int fill_iterations;      /* 3 */

  /* Range (§7.4, §7.5). Disparities in level-0 px. */
  double min_disparity;     /* 0 */
  double max_disparity;     /* the largest expected disparity, 128 */
  int search_level;         /* level of the discrete search; -1 = never search;
                               STEREO_SEARCH_LEVEL_AUTO (default) = by the image size:
                               stereo_params_get_search_level() */
  int search_radius;        /* ZNCC window half-width, 1..7, or STEREO_SEARCH_RADIUS_AUTO
                               (default): stereo_params_get_search_radius() */
  bool refine;              /* level-0 refinement search (§5b) when the search runs above
                               level 0, FALSE (more accurate, slower) */

  /* Post-processing (§8). */
  bool lr_check;            /* both directions + L-R check, TRUE */
  double lr_max;            /* px, 1.0 */
  double sigma_d_max;       /* px at level 0; <= 0 disables the test; 1.0 */
  bool median;              /* NaN-aware 3x3 median, TRUE */
  double coarse_fallback;   /* a pixel level 0 did not measure takes the d of the finest
                               coarser level (1 .. STEREO_MAX_FALLBACK_LEVELS, up to the
                               start level) that measured it where one px of that level is
                               at most this fraction of d; 0 = off (default), at most 1 */
  bool densify;             /* background-side fill, TRUE */

  /* The pitch-plane prior (ALGORITHM.md §7.6, docs/algorithm.md §5c): nothing a camera
   * sees lies below the ground, so a pixel's disparity is at least the ground's there.
   * ground_margin >= 0: the search takes no candidate below the ground's disparity less
   * this many level-0 px, and the post-processing invalidates a pixel below it; < 0 =
   * off (default). The plane comes from each pair's calibration (its pose); a pair
   * without one takes `ground`. */
  double ground_margin;
  double ground[3];         /* the ground's disparity a x + b y + c on the left rectified
                               grid, level-0 px, for a pair without a calibrated pose;
                               default (0, 0, STEREO_GROUND_NONE): none */
} StereoParams;

#define STEREO_GROUND_NONE (-1.0e6)   /* ground[2] of a plane that bounds nothing */

/* The lowest disparity the pitch-plane prior allows at pixel (x, y) of level s of the
 * direction eta (+1: the left grid, -1: the right grid), in level-s px: the plane at the
 * pixel's level-0 position (x 2^s, y 2^s) less the margin, divided by 2^s. On the right
 * grid a ground point of left pixel xl = xr + d has d = (a xr + b y + c) / (1 - a).
 * The GPU's common.glsl ground_bound() computes the same in float. */
static inline double
stereo_ground_bound(const double plane[3], double margin, int eta, int s, int x, int y)
{
  double scale = 1.0 / (double)(1 << s);
  double v = plane[0] * x + plane[1] * y + plane[2] * scale;
  if (eta < 0)
    v /= 1.0 - plane[0];
  return v - margin * scale;
}

/* Fills every field with the defaults above for a width x height pair. */
void stereo_params_init(StereoParams *p, int width, int height);

/* The cameras' noise floor in grey levels of amplitude (stereod.conf's noise_floor,
 * stereod-disparity --noise-floor): sets min_magnitude, in intensity units. */
static inline void
stereo_params_set_noise_floor(StereoParams *p, double grey_levels)
{
  p->min_magnitude = grey_levels / 255.0;
}

/* Checks ranges and consistency; on failure returns FALSE with a message naming the
 * field (G_IO_ERROR_INVALID_ARGUMENT in the G_IO_ERROR domain is not used: the domain
 * is STEREO_PARAMS_ERROR). */
#define STEREO_PARAMS_ERROR (stereo_params_error_quark())
GQuark stereo_params_error_quark(void);
bool stereo_params_validate(const StereoParams *p, GError **error);

/* Derived values. ------------------------------------------------------------------ */

/* The number of pyramid levels actually used (resolves levels = 0). */
int stereo_params_get_levels(const StereoParams *p);
/* Size of level s (level 0 = input size): W_s = ceil(W_{s-1} / 2). */
void stereo_params_level_size(const StereoParams *p, int s, int *w, int *h);
/* The level of the discrete search: search_level, or for STEREO_SEARCH_LEVEL_AUTO the
 * coarsest level s >= 1 (below the number of levels) whose smaller side is at least
 * STEREO_SEARCH_AUTO_SIDE px, else 1 (1920 x 1080: 2, 960 x 540 and smaller: 1). -1:
 * never. */
int stereo_params_get_search_level(const StereoParams *p);
/* The search window's half-width: search_radius, or for STEREO_SEARCH_RADIUS_AUTO 3
 * (7 x 7) when the search runs on level 2 or coarser (1920 x 1080 and larger: a window
 * of 28 x 28 level-0 px) and 4 (9 x 9) on level 1 or 0 (docs/algorithm.md §11). */
int stereo_params_get_search_radius(const StereoParams *p);
/* The refinement search's (§5b, level 0) window: search_radius, or 4 (9 x 9) for
 * STEREO_SEARCH_RADIUS_AUTO. */
int stereo_params_get_refine_radius(const StereoParams *p);
/* Whether the discrete search runs: TRUE when the search level is >= 0 and the requested range
 * exceeds what the pure pyramid captures, +-(pi/omega0) * 2^(S-1) / 2 around 0 (§7.4,
 * taken at half its nominal value to keep a margin). */
bool stereo_params_use_search(const StereoParams *p);

/* Whether the level-0 refinement search (§5b) runs: refine, the search runs, and it runs
 * above level 0. Its candidates are bounded by floor(min_disparity)..ceil(max_disparity). */
bool stereo_params_use_refine(const StereoParams *p);
/* Whether the L-R check reads the right view of level 1 (docs/algorithm.md §10, §11):
 * lr_check, without refine (which runs both views at level 0) and with a level above 0;
 * level 0 then computes the left view alone. STEREOD_LR_LEVEL=0 in the environment
 * (benchmarks) checks against level 0's right view, computed for it. */
bool stereo_params_lr_coarse(const StereoParams *p);
/* The phase rounds of level s: iterations above level 0, iterations_level0 at level 0.
 * STEREO_ITERATIONS_AUTO (the default of both) is one round a level on images of
 * STEREO_ONE_ROUND_PIXELS and more and two on smaller ones (docs/algorithm.md §11: at
 * 1920 x 1080 the second rounds cost a fifth of the phase stage and made the stadium
 * frames worse; on Middlebury's small scenes they help); an automatic level 0 with an
 * explicit `iterations` takes that below STEREO_ONE_ROUND_PIXELS. */
static inline int
stereo_params_level_iterations(const StereoParams *p, int s)
{
  bool large = (long)p->width * p->height >= STEREO_ONE_ROUND_PIXELS;
  int above = p->iterations != STEREO_ITERATIONS_AUTO ? p->iterations : large ? 1 : 2;
  if (s > 0)
    return above;
  if (p->iterations_level0 != STEREO_ITERATIONS_AUTO)
    return p->iterations_level0;
  return large ? 1 : above;
}
/* The coarsest level the phase stage runs on: the search level when searching, else S-1. */
int stereo_params_start_level(const StereoParams *p);
/* The coarser levels the coarse fallback reads (§10, step 1): 0 without coarse_fallback,
 * else the start level, at most STEREO_MAX_FALLBACK_LEVELS. */
int stereo_params_fallback_levels(const StereoParams *p);
/* Integer candidate range of the search in search-level px. */
void stereo_params_search_range(const StereoParams *p, int *t_min, int *t_max);

/* Quadrature filter taps, k = -radius..radius at index k + radius (§4.1), computed in
 * double: h_re, h_im (row, complex, applied as correlation) and v (column, real). */
void stereo_params_filter_taps(const StereoParams *p, double *h_re, double *h_im, double *v);
/* Normalised Gaussian taps exp(-k^2 / 2 s^2) / sum, k = -r..r, r = ceil(3 s) (returned).
 * Used for the applicability (smooth_sigma) and the hole fill (fill_sigma). */
int stereo_gauss_taps(double s, double *taps /* at least 2 * STEREO_MAX_SMOOTH_RADIUS + 1 */);

G_END_DECLS
