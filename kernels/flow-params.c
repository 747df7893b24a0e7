/* flow-params.c: defaults, validation and derived numbers of the optical flow. */
#include "flow-params.h"

#include <math.h>

G_DEFINE_QUARK(flow-params-error-quark, flow_params_error)

void
flow_params_init(FlowParams *p, int width, int height)
{
  *p = (FlowParams){
    .width = width,
    .height = height,
    .levels = 0,
    .orientations = 6,
    .omega0 = G_PI / 2.0,
    .sigma = 2.25,
    .radius = 5,
    .kappa = 0.05,
    .tau = 2.0,
    .gamma = 2.0,
    .energy = 0.0,
    .local_frequency = false,
    .cos2 = 0.0,
    .smooth_sigma = 4.0,
    .c_min = 0.02,
    .lambda = 0.0,
    .iterations = 4,
    .median = true,
    .fill_sigma = 4.0,
    .fill_iterations = 3,
    .fb_check = false,
    .fb_max = 1.0,
    .densify = true,
  };
}

static bool
fail(GError **error, const char *field, const char *what)
{
  g_set_error(error, FLOW_PARAMS_ERROR, 0, "%s: %s", field, what);
  return false;
}

bool
flow_params_validate(const FlowParams *p, GError **error)
{
  if (p->width < 16 || p->height < 16 || p->width > 16384 || p->height > 16384)
    return fail(error, "size", "width and height must be within 16..16384");
  if (p->levels < 0 || p->levels > FLOW_MAX_LEVELS)
    return fail(error, "levels", "must be 0 (automatic) or 1..8");
  if (p->radius < 1 || p->radius > FLOW_MAX_RADIUS)
    return fail(error, "radius", "must be within 1..15");
  if (p->levels > 0) {
    int w, h;
    flow_params_level_size(p, p->levels - 1, &w, &h);
    if (w < 2 * p->radius + 4 || h < 2 * p->radius + 4)
      return fail(error, "levels", "too many levels for the frame size: the coarsest level "
                                   "must be larger than the filter");
  }
  if (p->orientations < 2 || p->orientations > FLOW_MAX_ORIENTATIONS || p->orientations % 2)
    return fail(error, "orientations", "must be even and within 2..8");
  if (!(p->omega0 > 0.1 && p->omega0 < 3.0))
    return fail(error, "omega0", "must be within 0.1..3.0 rad/px");
  if (!(p->sigma >= 0.5 && p->sigma <= 8.0))
    return fail(error, "sigma", "must be within 0.5..8 px");
  if (!(p->kappa >= 0.0 && p->kappa <= 1.0))
    return fail(error, "kappa", "must be within 0..1");
  if (!(p->tau > 0.0 && p->tau <= 100.0))
    return fail(error, "tau", "must be within 0..100");
  if (!(p->gamma >= 0.0 && p->gamma <= 8.0))
    return fail(error, "gamma", "must be within 0..8");
  if (!(p->cos2 >= 0.0 && p->cos2 <= 8.0))
    return fail(error, "cos2", "must be within 0..8");
  if (!(p->energy >= 0.0 && p->energy <= 2.0))
    return fail(error, "energy", "must be within 0..2");
  if (!(p->smooth_sigma >= 0.5 && ceil(3.0 * p->smooth_sigma) <= FLOW_MAX_SMOOTH_RADIUS))
    return fail(error, "smooth_sigma", "must be within 0.5..5 px");
  if (!(p->c_min > 0.0 && p->c_min < 1.0))
    return fail(error, "c_min", "must be within 0..1");
  if (!(p->lambda >= 0.0 && p->lambda <= 10.0))
    return fail(error, "lambda", "must be within 0..10");
  if (p->iterations < 1 || p->iterations > 8)
    return fail(error, "iterations", "must be within 1..8");
  if (!(p->fill_sigma >= 0.5 && ceil(3.0 * p->fill_sigma) <= FLOW_MAX_SMOOTH_RADIUS))
    return fail(error, "fill_sigma", "must be within 0.5..5 px");
  if (p->fill_iterations < 0 || p->fill_iterations > 8)
    return fail(error, "fill_iterations", "must be within 0..8");
  if (!(p->fb_max > 0.0 && p->fb_max <= 16.0))
    return fail(error, "fb_max", "must be within 0..16 px");
  return true;
}

int
flow_params_get_levels(const FlowParams *p)
{
  if (p->levels > 0)
    return p->levels;
  int m = MIN(p->width, p->height);
  int s = 1 + (int)floor(log2((double)m / 24.0));
  s = CLAMP(s, 1, 6);
  /* The coarsest level must stay larger than the filter (validate's rule for levels). */
  while (s > 1) {
    int w, h;
    flow_params_level_size(p, s - 1, &w, &h);
    if (w >= 2 * p->radius + 4 && h >= 2 * p->radius + 4)
      break;
    s--;
  }
  return s;
}

void
flow_params_level_size(const FlowParams *p, int s, int *w, int *h)
{
  int ww = p->width, hh = p->height;
  for (int i = 0; i < s; i++) {
    ww = (ww + 1) / 2;
    hh = (hh + 1) / 2;
  }
  *w = ww;
  *h = hh;
}

void
flow_params_orientation(const FlowParams *p, int k, double *u, double *v)
{
  double th = G_PI * k / p->orientations;
  *u = p->omega0 * cos(th);
  *v = p->omega0 * sin(th);
  /* Exact zeros where they are meant (cos(pi/2) is 6e-17 in double). */
  if (2 * k == p->orientations)
    *u = 0.0;
  if (k == 0)
    *v = 0.0;
}

int
flow_params_row_kernels(const FlowParams *p)
{
  return p->orientations / 2 + 1;
}

int
flow_params_row_kernel_of(const FlowParams *p, int k, bool *conjugate)
{
  bool c = 2 * k > p->orientations;
  if (conjugate)
    *conjugate = c;
  return c ? p->orientations - k : k;
}

/* Whether the DC correction goes on the x kernel of orientation k: where the x frequency
 * is the larger (theta within 45 degrees of the x axis; an integer rule so that 45
 * degrees is decided the same way everywhere). */
static bool
correct_x(const FlowParams *p, int k)
{
  return 4 * k <= p->orientations || 4 * k >= 3 * p->orientations;
}

/* g(i) (e^{-i w i} - c [correct]) / G, c = sum g cos(w i) / G: exactly DC-free when
 * corrected. */
static void
taps_1d(const FlowParams *p, double w, bool correct, double *re, double *im)
{
  int R = p->radius;
  double G = 0.0, cs = 0.0;
  for (int i = -R; i <= R; i++) {
    double g = exp(-(double)(i * i) / (2.0 * p->sigma * p->sigma));
    G += g;
    cs += g * cos(w * i);
  }
  double c = correct ? cs / G : 0.0;
  for (int i = -R; i <= R; i++) {
    double g = exp(-(double)(i * i) / (2.0 * p->sigma * p->sigma));
    re[i + R] = g * (cos(w * i) - c) / G;
    im[i + R] = -g * sin(w * i) / G;
  }
}

void
flow_params_row_taps(const FlowParams *p, int r, double *re, double *im)
{
  double u, v;
  flow_params_orientation(p, r, &u, &v);
  taps_1d(p, u, correct_x(p, r), re, im);
}

void
flow_params_column_taps(const FlowParams *p, int k, double *re, double *im)
{
  double u, v;
  flow_params_orientation(p, k, &u, &v);
  taps_1d(p, v, !correct_x(p, k), re, im);
}

int
flow_gauss_taps(double s, double *taps)
{
  int r = (int)ceil(3.0 * s);
  if (r > FLOW_MAX_SMOOTH_RADIUS)
    r = FLOW_MAX_SMOOTH_RADIUS;
  double sum = 0.0;
  for (int k = -r; k <= r; k++) {
    taps[k + r] = exp(-(double)(k * k) / (2.0 * s * s));
    sum += taps[k + r];
  }
  for (int k = -r; k <= r; k++)
    taps[k + r] /= sum;
  return r;
}
