/* ref-search.c: the discrete search of the reference (docs/algorithm.md §5): ZNCC with
 * adaptive support weights on the reference window. */
#include "reference.h"

#include <math.h>

static inline int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* The search with candidates t_min..t_max, or per pixel from `prior` (§5b) when given, on
 * level `level` (the pitch-plane prior's scale: none below floor of the ground bound). */
static RefImage *
search(const StereoParams *p, const RefImage *ref, const RefImage *oth, const RefImage *prior,
       int eta, int t_min_all, int t_max_all, int r, int level)
{
  int W = ref->w, H = ref->h;
  int n = (2 * r + 1) * (2 * r + 1);
  int nt = MAX(t_max_all - t_min_all + 1, 1);

  g_autofree double *cost = g_new(double, nt);
  g_autofree bool *ok = g_new(bool, nt);
  g_autofree double *wt = g_new(double, n);   /* support weights w_k */
  g_autofree double *ac = g_new(double, n);   /* a_k - weighted mean of a */

  RefImage *out = ref_image_new(W, H, REF_FIELD_CHANNELS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double a_c = ref->data[(size_t)y * W + x], sw = 0.0, sa = 0.0;
      for (int j = -r, k = 0; j <= r; j++)
        for (int i = -r; i <= r; i++, k++) {
          double a = ref->data[(size_t)clampi(y + j, 0, H - 1) * W + clampi(x + i, 0, W - 1)];
          wt[k] = exp(-fabs(a - a_c) / STEREO_SEARCH_WEIGHT_GAMMA);
          ac[k] = a;
          sw += wt[k];
          sa += wt[k] * a;
        }
      double ma = sa / sw, s_aa = 0.0;
      for (int k = 0; k < n; k++) {
        ac[k] -= ma;
        s_aa += wt[k] * ac[k] * ac[k];
      }
      double flat = sw * 1e-6;
      int t_min = t_min_all, t_max = t_max_all;
      if (prior) {
        double mn = INFINITY, mx = -INFINITY;
        for (int j = -STEREO_REFINE_WINDOW; j <= STEREO_REFINE_WINDOW; j += 2)
          for (int i = -STEREO_REFINE_WINDOW; i <= STEREO_REFINE_WINDOW; i += 2) {
            double d = ref_image_at(prior, clampi(x + i, 0, W - 1), clampi(y + j, 0, H - 1))[REF_D];
            mn = MIN(mn, d);
            mx = MAX(mx, d);
          }
        t_min = MAX(t_min_all, (int)floor(mn) - STEREO_REFINE_PAD);
        t_max = MIN(t_max_all, (int)ceil(mx) + STEREO_REFINE_PAD);
      }
      if (p->ground_margin >= 0.0) {
        double g = stereo_ground_bound(p->ground, p->ground_margin, eta, level, x, y);
        t_min = MAX(t_min, (int)floor(MAX(g, -1.0e6)));
      }
      int nc = t_max - t_min + 1;   /* this pixel's candidates */
      int best = -1;
      for (int ti = 0; ti < nc; ti++) {
        int t = t_min + ti;
        int xo = x - eta * t;
        ok[ti] = xo - r >= 0 && xo + r <= W - 1;
        cost[ti] = 0.0;
        if (!ok[ti])
          continue;
        /* One pass: S_bb = sum w b^2 - S_w mean_b^2, S_ab = sum w (a - mean_a) b (the
         * weighted a deviations sum to 0, so b need not be centred). */
        double sb = 0.0, sbb = 0.0, s_ab = 0.0;
        for (int j = -r, k = 0; j <= r; j++) {
          const double *row = oth->data + (size_t)clampi(y + j, 0, H - 1) * W;
          for (int i = -r; i <= r; i++, k++) {
            double b = row[xo + i];
            sb += wt[k] * b;
            sbb += wt[k] * b * b;
            s_ab += wt[k] * ac[k] * b;
          }
        }
        double s_bb = sbb - sb * sb / sw;
        if (s_aa >= flat && s_bb >= flat)
          cost[ti] = s_ab / sqrt(s_aa * s_bb);
        if (best < 0 || cost[ti] > cost[best])
          best = ti;
      }
      double *o = ref_image_at(out, x, y);
      if (best < 0 || !(cost[best] > 0.0))
        continue;   /* d_init = 0, certainty 0 */
      double delta = 0.0;
      if (best > 0 && best < nc - 1 && ok[best - 1] && ok[best + 1]) {
        double cm = cost[best - 1], c0 = cost[best], cp = cost[best + 1];
        double denom = cm - 2.0 * c0 + cp;
        if (denom < 0.0)
          delta = CLAMP((cm - cp) / (2.0 * denom), -0.5, 0.5);
      }
      o[REF_D] = (t_min + best) + delta;
      o[REF_CERT] = 1.0;
    }
  return out;
}

RefImage *
ref_search(const StereoParams *p, const RefImage *ref, const RefImage *oth, int eta)
{
  g_return_val_if_fail(ref->ch == 1 && oth->ch == 1, NULL);
  g_return_val_if_fail(ref->w == oth->w && ref->h == oth->h, NULL);
  int t_min, t_max;
  stereo_params_search_range(p, &t_min, &t_max);
  return search(p, ref, oth, NULL, eta, t_min, t_max, stereo_params_get_search_radius(p),
                stereo_params_start_level(p));
}

RefImage *
ref_refine_search(const StereoParams *p, const RefImage *ref, const RefImage *oth,
                  const RefImage *prior, int eta)
{
  g_return_val_if_fail(ref->ch == 1 && oth->ch == 1, NULL);
  g_return_val_if_fail(ref->w == oth->w && ref->h == oth->h, NULL);
  g_return_val_if_fail(prior->w == ref->w && prior->h == ref->h, NULL);
  return search(p, ref, oth, prior, eta, (int)floor(p->min_disparity),
                (int)ceil(p->max_disparity), stereo_params_get_refine_radius(p), 0);
}
