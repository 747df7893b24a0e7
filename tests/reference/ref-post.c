/* ref-post.c: post-processing and the whole-filter driver of the reference
 * (docs/algorithm.md §10). */
#include "reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The coarse fallback's d at level-0 pixel (x, y): from the finest level s = 1..n whose
 * pixel holding it was measured, where one px of that level is at most coarse_fallback
 * of d. FALSE when none. */
static bool
fallback_d(const StereoParams *p, const RefImage *const *fallback, int x, int y, double *d)
{
  int n = stereo_params_fallback_levels(p);
  for (int s = 1; s <= n; s++) {
    const double *c = ref_image_at(fallback[s - 1], x >> s, y >> s);
    double scale = (double)(1 << s);
    if (c[REF_CERT] >= p->c_min && scale <= p->coarse_fallback * (scale * c[REF_D])) {
      *d = scale * c[REF_D];
      return true;
    }
  }
  return false;
}

void
ref_post_valid(const StereoParams *p, const RefImage *field_l, const RefImage *field_r,
               const RefImage *const *fallback, double *d, bool *valid)
{
  int W = field_l->w, H = field_l->h;
  g_return_if_fail(!fallback || d);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const double *f = ref_image_at(field_l, x, y);
      double dl = f[REF_D];
      bool ok = f[REF_CERT] >= p->c_min;
      bool spread = p->sigma_d_max > 0.0;
      if (!ok && fallback && fallback_d(p, fallback, x, y, &dl)) {
        ok = true;
        spread = false;
        d[(size_t)y * W + x] = dl;
      }
      if (spread && !(f[REF_SIGMA] <= p->sigma_d_max))
        ok = false;
      if (p->ground_margin >= 0.0 &&
          !(dl >= stereo_ground_bound(p->ground, p->ground_margin, 1, 0, x, y)))
        ok = false;   /* below the ground (the pitch-plane prior) */
      if (ok && field_r) {
        double xr = x - dl;
        if (xr < 0.0 || xr > W - 1) {
          ok = false;
        } else {
          int i0 = (int)floor(xr);
          double fr = xr - i0;
          int i1 = MIN(i0 + 1, W - 1);
          double dr = (1.0 - fr) * ref_image_at(field_r, i0, y)[REF_D] +
                      fr * ref_image_at(field_r, i1, y)[REF_D];
          ok = fabs(dl - dr) <= p->lr_max;
        }
      }
      valid[(size_t)y * W + x] = ok;
    }
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void
ref_median3x3(int w, int h, double *d, bool *valid)
{
  size_t n = (size_t)w * h;
  g_autofree double *din = g_memdup2(d, n * sizeof(double));
  g_autofree bool *vin = g_memdup2(valid, n * sizeof(bool));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double v[9];
      int k = 0;
      for (int j = -1; j <= 1; j++)
        for (int i = -1; i <= 1; i++) {
          int xx = x + i, yy = y + j;
          if (xx < 0 || xx >= w || yy < 0 || yy >= h || !vin[(size_t)yy * w + xx])
            continue;
          v[k++] = din[(size_t)yy * w + xx];
        }
      size_t o = (size_t)y * w + x;
      if (k >= 5) {
        qsort(v, k, sizeof(double), cmp_double);
        d[o] = v[(k - 1) / 2];
        valid[o] = true;
      } else {
        valid[o] = false;
      }
    }
}

void
ref_densify(int w, int h, const double *img, double *d, bool *valid, bool *filled)
{
  size_t n = (size_t)w * h;
  memset(filled, 0, n * sizeof(bool));
  g_autofree int *left = g_new(int, w);
  for (int y = 0; y < h; y++) {
    double *row = d + (size_t)y * w;
    const bool *vr = valid + (size_t)y * w;
    const double *ir = img ? img + (size_t)y * w : NULL;
    int last = -1;
    for (int x = 0; x < w; x++) {
      if (vr[x])
        last = x;
      left[x] = last;
    }
    int next = -1;
    for (int x = w - 1; x >= 0; x--) {
      if (vr[x]) {
        next = x;
        continue;
      }
      int l = left[x];
      if (l < 0 && next < 0)
        continue;
      double v;
      if (l < 0)
        v = row[next];
      else if (next < 0)
        v = row[l];
      else if (!ir)
        v = MIN(row[l], row[next]);
      else {
        /* The strongest intensity step on the row between x and each side's pixel. */
        double el = 0.0, er = 0.0;
        for (int k = l; k < x; k++)
          el = MAX(el, fabs(ir[k + 1] - ir[k]));
        for (int k = x; k < next; k++)
          er = MAX(er, fabs(ir[k + 1] - ir[k]));
        bool l_low = row[l] <= row[next];
        double e_low = l_low ? el : er, e_high = l_low ? er : el;
        v = e_high + STEREO_DENSIFY_EDGE_MARGIN < e_low ? MAX(row[l], row[next])
                                                        : MIN(row[l], row[next]);
      }
      row[x] = v;
      filled[(size_t)y * w + x] = true;
    }
  }
  /* 9x3 lower median of the valid or filled values around each filled pixel. */
  g_autofree double *din = g_memdup2(d, n * sizeof(double));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t o = (size_t)y * w + x;
      if (!filled[o])
        continue;
      double v[27];
      int k = 0;
      for (int j = -1; j <= 1; j++)
        for (int i = -4; i <= 4; i++) {
          int xx = x + i, yy = y + j;
          if (xx < 0 || xx >= w || yy < 0 || yy >= h)
            continue;
          size_t q = (size_t)yy * w + xx;
          if (valid[q] || filled[q])
            v[k++] = din[q];
        }
      qsort(v, k, sizeof(double), cmp_double);   /* k >= 1: the pixel itself */
      d[o] = v[(k - 1) / 2];
    }
  for (size_t i = 0; i < n; i++)
    if (filled[i])
      valid[i] = true;
}

void
ref_post(const StereoParams *p, const RefImage *field_l, const RefImage *field_r,
         const RefImage *const *fallback, const RefImage *left, float *disparity,
         uint8_t *confidence)
{
  int W = field_l->w, H = field_l->h;
  size_t n = (size_t)W * H;
  g_autofree bool *valid = g_new(bool, n);
  g_autofree bool *filled = g_new0(bool, n);
  g_autofree double *d = g_new(double, n);
  for (size_t i = 0; i < n; i++)
    d[i] = field_l->data[i * field_l->ch + REF_D];
  ref_post_valid(p, field_l, p->lr_check ? field_r : NULL,
                 stereo_params_fallback_levels(p) > 0 ? fallback : NULL, d, valid);
  if (p->median)
    ref_median3x3(W, H, d, valid);
  if (p->densify)
    ref_densify(W, H, left ? left->data : NULL, d, valid, filled);
  for (size_t i = 0; i < n; i++) {
    double c = field_l->data[i * field_l->ch + REF_CERT];
    double sg = field_l->data[i * field_l->ch + REF_SIGMA];
    double k = CLAMP(c / 0.5, 0.0, 1.0) * exp(-(sg / 0.5) * (sg / 0.5));
    if (disparity)
      disparity[i] = valid[i] ? (float)d[i] : NAN;
    if (confidence)
      confidence[i] = !valid[i] ? 0 : (filled[i] ? (uint8_t)(1 + lround(126 * k))
                                                 : (uint8_t)(128 + lround(127 * k)));
  }
}

bool
ref_stereo_run(const StereoParams *p, const uint8_t *left, size_t left_stride,
               const uint8_t *right, size_t right_stride, float *disparity,
               uint8_t *confidence, GError **error)
{
  if (!stereo_params_validate(p, error))
    return false;
  g_autoptr(RefPyramid) pyr = ref_pyramid_new(p, left, left_stride, right, right_stride);
  g_autoptr(RefImage) fl = ref_direction_run(p, pyr, +1);
  g_autoptr(RefImage) fr = NULL;
  if (stereo_params_lr_coarse(p)) {
    /* the right view of level 1, read at level 0 as 2 x bilinear at (x / 2, y / 2); the
     * check's linear interpolation between two such pixels is the bilinear value at
     * (xr / 2, y / 2) (post.comp reads that) */
    g_autoptr(RefImage) c = ref_direction_run_to(p, pyr, -1, 1);
    fr = ref_upsample(c, fl->w, fl->h);
  } else if (p->lr_check) {
    fr = ref_direction_run(p, pyr, -1);
  }
  /* the coarse fallback: the left view's fields of levels 1 .. n after their hole fill */
  int n_fb = stereo_params_fallback_levels(p);
  RefImage *fb[STEREO_MAX_FALLBACK_LEVELS] = { NULL };
  for (int s = 1; s <= n_fb; s++)
    fb[s - 1] = ref_direction_run_to(p, pyr, +1, s);
  ref_post(p, fl, fr, (const RefImage *const *)fb, pyr->img[0][0], disparity, confidence);
  for (int s = 0; s < n_fb; s++)
    ref_image_free(fb[s]);
  return true;
}
