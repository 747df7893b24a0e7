/* stereo-params.c: defaults, validation and derived numbers of the stereo filter. */
#include "stereo-params.h"

#include <math.h>

G_DEFINE_QUARK(stereo-params-error-quark, stereo_params_error)

void
stereo_params_init(StereoParams *p, int width, int height)
{
  *p = (StereoParams){
    .width = width,
    .height = height,
    .levels = 0,
    .omega0 = G_PI / 2.0,
    .sigma = 2.25,
    .radius = 5,
    .kappa = 0.05,
    .min_magnitude = 0.0,
    .tau = 2.0,
    .gamma = 2.0,
    .smooth_sigma = 2.0,
    .c_min = 0.02,
    .iterations = STEREO_ITERATIONS_AUTO,
    .iterations_level0 = STEREO_ITERATIONS_AUTO,
    .fill_sigma = 4.0,
    .fill_iterations = 3,
    .min_disparity = 0.0,
    .max_disparity = 128.0,
    .search_level = STEREO_SEARCH_LEVEL_AUTO,
    .search_radius = STEREO_SEARCH_RADIUS_AUTO,
    .refine = false,
    .lr_check = true,
    .lr_max = 1.0,
    .sigma_d_max = 1.0,
    .median = true,
    .densify = true,
    .coarse_fallback = 0.0,
    .ground_margin = -1.0,
    .ground = { 0.0, 0.0, STEREO_GROUND_NONE },
  };
}

static bool
fail(GError **error, const char *field, const char *what)
{
  g_set_error(error, STEREO_PARAMS_ERROR, 0, "%s: %s", field, what);
  return false;
}

bool
stereo_params_validate(const StereoParams *p, GError **error)
{
  if (p->width < 16 || p->height < 16 || p->width > 16384 || p->height > 16384)
    return fail(error, "size", "width and height must be within 16..16384");
  if (p->levels < 0 || p->levels > STEREO_MAX_LEVELS)
    return fail(error, "levels", "must be 0 (automatic) or 1..8");
  if (p->levels > 0) {
    int w = p->width, h = p->height;
    for (int s = 1; s < p->levels; s++) { w = (w + 1) / 2; h = (h + 1) / 2; }
    if (w < 2 * p->radius + 4 || h < 2 * p->radius + 4)
      return fail(error, "levels", "too many levels for the image size: the coarsest level "
                                   "must be larger than the filter");
  }
  if (!(p->omega0 > 0.1 && p->omega0 < 3.0))
    return fail(error, "omega0", "must be within 0.1..3.0 rad/px");
  if (!(p->sigma >= 0.5 && p->sigma <= 8.0))
    return fail(error, "sigma", "must be within 0.5..8 px");
  if (p->radius < 1 || p->radius > STEREO_MAX_RADIUS)
    return fail(error, "radius", "must be within 1..15");
  if (!(p->kappa >= 0.0 && p->kappa <= 1.0))
    return fail(error, "kappa", "must be within 0..1");
  if (!(p->min_magnitude >= 0.0 && p->min_magnitude <= 0.5))
    return fail(error, "min_magnitude", "must be within 0..0.5");
  if (!(p->tau > 0.0 && p->tau <= 100.0))
    return fail(error, "tau", "must be within 0..100");
  if (!(p->gamma >= 0.0 && p->gamma <= 8.0))
    return fail(error, "gamma", "must be within 0..8");
  if (!(p->smooth_sigma >= 0.5 && ceil(3.0 * p->smooth_sigma) <= STEREO_MAX_SMOOTH_RADIUS))
    return fail(error, "smooth_sigma", "must be within 0.5..5 px");
  if (!(p->c_min > 0.0 && p->c_min < 1.0))
    return fail(error, "c_min", "must be within 0..1");
  if ((p->iterations < 1 || p->iterations > 8) && p->iterations != STEREO_ITERATIONS_AUTO)
    return fail(error, "iterations", "must be within 1..8 or -2 (automatic)");
  if ((p->iterations_level0 < 1 || p->iterations_level0 > 8) &&
      p->iterations_level0 != STEREO_ITERATIONS_AUTO)
    return fail(error, "iterations_level0", "must be within 1..8 or -2 (automatic)");
  if (!(p->fill_sigma >= 0.5 && ceil(3.0 * p->fill_sigma) <= STEREO_MAX_SMOOTH_RADIUS))
    return fail(error, "fill_sigma", "must be within 0.5..5 px");
  if (p->fill_iterations < 0 || p->fill_iterations > 8)
    return fail(error, "fill_iterations", "must be within 0..8");
  if (!(p->min_disparity >= 0.0 && p->max_disparity > p->min_disparity &&
        p->max_disparity <= 1000.0 && p->max_disparity < p->width))
    return fail(error, "max_disparity", "must satisfy 0 <= min < max <= min(1000, width - 1)");
  if ((p->search_level < -1 && p->search_level != STEREO_SEARCH_LEVEL_AUTO) ||
      p->search_level >= STEREO_MAX_LEVELS)
    return fail(error, "search_level", "must be -1 (never), -2 (automatic) or a level index");
  if (stereo_params_get_search_level(p) >= 0) {
    int w, h;
    stereo_params_level_size(p, stereo_params_get_search_level(p), &w, &h);
    if (w < 2 * p->radius + 4 || h < 2 * p->radius + 4)
      return fail(error, "search_level", "the search level is smaller than the filter");
  }
  if ((p->search_radius < 1 || p->search_radius > 7) &&
      p->search_radius != STEREO_SEARCH_RADIUS_AUTO)
    return fail(error, "search_radius", "must be within 1..7 or -2 (automatic)");
  if (!(p->lr_max > 0.0 && p->lr_max <= 16.0))
    return fail(error, "lr_max", "must be within 0..16 px");
  if (!(p->sigma_d_max <= 16.0))
    return fail(error, "sigma_d_max", "must be at most 16 px (<= 0 disables)");
  if (!(p->coarse_fallback >= 0.0 && p->coarse_fallback <= 1.0))
    return fail(error, "coarse_fallback", "must be within 0..1 (0 = off)");
  if (!(p->ground_margin <= 1000.0))
    return fail(error, "ground_margin", "must be at most 1000 px (< 0 = off)");
  if (!(fabs(p->ground[0]) <= 0.5 && fabs(p->ground[1]) <= 10.0 &&
        p->ground[2] >= STEREO_GROUND_NONE && p->ground[2] <= 1.0e5))
    return fail(error, "ground", "the plane must have |a| <= 0.5, |b| <= 10 and c within "
                                 "-1e6..1e5 px");
  return true;
}

int
stereo_params_fallback_levels(const StereoParams *p)
{
  if (!(p->coarse_fallback > 0.0))
    return 0;
  return MIN(stereo_params_start_level(p), STEREO_MAX_FALLBACK_LEVELS);
}

int
stereo_params_get_search_radius(const StereoParams *p)
{
  if (p->search_radius != STEREO_SEARCH_RADIUS_AUTO)
    return p->search_radius;
  return stereo_params_get_search_level(p) >= 2 ? 3 : 4;
}

int
stereo_params_get_refine_radius(const StereoParams *p)
{
  return p->search_radius != STEREO_SEARCH_RADIUS_AUTO ? p->search_radius : 4;
}

int
stereo_params_get_levels(const StereoParams *p)
{
  if (p->levels > 0)
    return p->levels;
  int m = MIN(p->width, p->height);
  int s = 1 + (int)floor(log2((double)m / 24.0));
  return CLAMP(s, 1, 5);
}

void
stereo_params_level_size(const StereoParams *p, int s, int *w, int *h)
{
  int ww = p->width, hh = p->height;
  for (int i = 0; i < s; i++) {
    ww = (ww + 1) / 2;
    hh = (hh + 1) / 2;
  }
  *w = ww;
  *h = hh;
}

int
stereo_params_get_search_level(const StereoParams *p)
{
  if (p->search_level != STEREO_SEARCH_LEVEL_AUTO)
    return p->search_level;
  int S = stereo_params_get_levels(p);
  int best = 1;
  for (int s = 2; s < S; s++) {
    int w, h;
    stereo_params_level_size(p, s, &w, &h);
    if (MIN(w, h) >= STEREO_SEARCH_AUTO_SIDE)
      best = s;
  }
  return best;
}

bool
stereo_params_use_search(const StereoParams *p)
{
  if (stereo_params_get_search_level(p) < 0)
    return false;
  int S = stereo_params_get_levels(p);
  double range = 0.5 * (G_PI / p->omega0) * ldexp(1.0, S - 1);
  return p->max_disparity > range || p->min_disparity > range;
}

bool
stereo_params_use_refine(const StereoParams *p)
{
  return p->refine && stereo_params_use_search(p) && stereo_params_start_level(p) > 0;
}

bool
stereo_params_lr_coarse(const StereoParams *p)
{
  return p->lr_check && !p->refine && stereo_params_start_level(p) > 0 &&
         g_strcmp0(g_getenv("STEREOD_LR_LEVEL"), "0") != 0;
}

int
stereo_params_start_level(const StereoParams *p)
{
  int S = stereo_params_get_levels(p);
  if (stereo_params_use_search(p))
    return MIN(stereo_params_get_search_level(p), S - 1);
  return S - 1;
}

void
stereo_params_search_range(const StereoParams *p, int *t_min, int *t_max)
{
  int s = stereo_params_start_level(p);
  double scale = ldexp(1.0, -s);
  *t_min = (int)floor(p->min_disparity * scale);
  *t_max = (int)ceil(p->max_disparity * scale);
}

void
stereo_params_filter_taps(const StereoParams *p, double *h_re, double *h_im, double *v)
{
  int R = p->radius;
  double G = 0.0, cs = 0.0;
  for (int k = -R; k <= R; k++) {
    double g = exp(-(double)(k * k) / (2.0 * p->sigma * p->sigma));
    G += g;
    cs += g * cos(p->omega0 * k);
  }
  double c = cs / G;
  for (int k = -R; k <= R; k++) {
    double g = exp(-(double)(k * k) / (2.0 * p->sigma * p->sigma));
    h_re[k + R] = (2.0 / G) * g * (cos(p->omega0 * k) - c);
    h_im[k + R] = -(2.0 / G) * g * sin(p->omega0 * k);
    v[k + R] = g / G;
  }
}

int
stereo_gauss_taps(double s, double *taps)
{
  int r = (int)ceil(3.0 * s);
  if (r > STEREO_MAX_SMOOTH_RADIUS)
    r = STEREO_MAX_SMOOTH_RADIUS;
  double sum = 0.0;
  for (int k = -r; k <= r; k++) {
    taps[k + r] = exp(-(double)(k * k) / (2.0 * s * s));
    sum += taps[k + r];
  }
  for (int k = -r; k <= r; k++)
    taps[k + r] /= sum;
  return r;
}
