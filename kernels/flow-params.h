/* flow-params.h: the parameters of the phase-based optical flow and the numbers derived
 * from them (oriented filter taps, pyramid sizes).
 *
 * Plain C, no GL: the GPU flow engine (kernels/flow.c) and the double-precision CPU
 * reference (tests/reference/ref-flow*.c) both take their configuration from here, so
 * the two can never disagree about a tap or a level size. docs/optical-flow.md explains
 * every field; the defaults were chosen on the training set described there.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

#define FLOW_MAX_LEVELS 8
#define FLOW_MAX_ORIENTATIONS 8
#define FLOW_MAX_RADIUS 15          /* oriented filter half-width limit */
#define FLOW_MAX_SMOOTH_RADIUS 15   /* applicability / fill filter half-width limit */
/* Row kernels of the separable bank: orientations k and N - k share one up to a complex
 * conjugate, so N / 2 + 1 complex row responses serve N orientations. */
#define FLOW_MAX_ROW_KERNELS (FLOW_MAX_ORIENTATIONS / 2 + 1)
/* A feature whose phase is unstable (docs/optical-flow.md §4) is stored with its x phase
 * gradient set to this flag; valid gradients are bounded by omega0 + pi/2 < 5. */
#define FLOW_GRAD_INVALID 64.0
/* The 2x2 solve (§6) needs det > FLOW_DET_MIN * trace^2 (a condition number below ~1e6). */
#define FLOW_DET_MIN 1e-6
/* Rounds of the hole fill that densify what fails the consistency check (§8). */
#define FLOW_DENSIFY_ITERATIONS 8
/* Invalid flow in the float outputs (Middlebury .flo convention: |u| >= 1e9 unknown). */
#define FLOW_UNKNOWN 1e10f

typedef struct {
  int width, height;        /* frame size, px (>= 16 x 16) */

  /* Pyramid and oriented quadrature filters (§2, §3). */
  int levels;               /* 0 = automatic: 1 + floor(log2(min(W,H)/24)), at most 6 */
  int orientations;         /* N, even, 2..8; theta_k = k pi / N; default 8 */
  double omega0;            /* rad/px, default pi/2 */
  double sigma;             /* Gaussian envelope, px, default 2.25 */
  int radius;               /* filter half-width, default 5 (11 taps) */

  /* Gates and weights (§4, §5). */
  double kappa;             /* magnitude gate, fraction of the level's mean |q_k| */
  double tau;               /* stability test |z_x|^2 + |z_y|^2 <= (tau / sigma)^2 */
  double gamma;             /* exponent of the magnitude-similarity weight */
  double energy;            /* exponent of the energy weight (|q0| |q1| / mean^2)^energy */
  double cos2;              /* exponent of the phase-agreement weight cos^2(dphi / 2) */
  bool local_frequency;     /* constraints along the measured phase gradients (TRUE) or
                               along the filters' centre frequencies (FALSE) */

  /* Least squares (§6). */
  double smooth_sigma;      /* applicability Gaussian, level px (radius ceil(3 sigma)) */
  double c_min;             /* minimum smoothed certainty per orientation */
  double lambda;            /* pull towards the prior, fraction of the mean diagonal */
  int iterations;           /* per level */
  bool median;              /* 3x3 median of each component after every round */

  /* Between rounds and levels (§7). */
  double fill_sigma;        /* hole-fill Gaussian, level px */
  int fill_iterations;

  /* Consistency (§8). */
  bool fb_check;            /* backward flow + forward-backward check */
  double fb_max;            /* px at level 0 */
  bool densify;             /* fill what fails the check from its neighbours */
} FlowParams;

/* Fills every field with the defaults for a width x height frame. */
void flow_params_init(FlowParams *p, int width, int height);

#define FLOW_PARAMS_ERROR (flow_params_error_quark())
GQuark flow_params_error_quark(void);
/* Checks ranges and consistency; on failure returns FALSE with a message naming the
 * field (domain FLOW_PARAMS_ERROR). */
bool flow_params_validate(const FlowParams *p, GError **error);

/* Derived values. ------------------------------------------------------------------ */

/* The number of pyramid levels actually used (resolves levels = 0). */
int flow_params_get_levels(const FlowParams *p);
/* Size of level s (level 0 = frame size): W_s = ceil(W_{s-1} / 2). */
void flow_params_level_size(const FlowParams *p, int s, int *w, int *h);
/* Centre frequency (u_k, v_k) = omega0 (cos theta_k, sin theta_k), theta_k = k pi / N. */
void flow_params_orientation(const FlowParams *p, int k, double *u, double *v);
/* Number of distinct row kernels: N / 2 + 1. */
int flow_params_row_kernels(const FlowParams *p);
/* Row kernel index of orientation k (k for k <= N/2, else N - k) and whether its row
 * response is the complex conjugate of that kernel's (k > N/2). */
int flow_params_row_kernel_of(const FlowParams *p, int k, bool *conjugate);
/* Taps i = -radius..radius at index i + radius (§3), in double:
 * row kernel r (its orientation is k = r): hx = (re, im);
 * column kernel of orientation k: hy = (re, im).
 * The 2-D filter of orientation k is 2 * hx(i) * hy(j) (conjugated hx for k > N/2). */
void flow_params_row_taps(const FlowParams *p, int r, double *re, double *im);
void flow_params_column_taps(const FlowParams *p, int k, double *re, double *im);
/* Normalised Gaussian taps exp(-k^2 / 2 s^2) / sum, k = -r..r, r = ceil(3 s) (returned). */
int flow_gauss_taps(double s, double *taps /* at least 2 * FLOW_MAX_SMOOTH_RADIUS + 1 */);

G_END_DECLS
