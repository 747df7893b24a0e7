/* ref-search.c: the discrete ZNCC search of the reference (docs/algorithm.md §5). */
#include "reference.h"

#include <math.h>

static inline int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* Window mean and centred sum of squares at every pixel, x and y clamped. For the other
 * image only windows entirely inside along x are used, where the x clamp is inactive. */
static void
window_stats(const RefImage *img, int r, double *mean, double *ss)
{
  int W = img->w, H = img->h, n = (2 * r + 1) * (2 * r + 1);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double s = 0.0;
      for (int j = -r; j <= r; j++)
        for (int i = -r; i <= r; i++)
          s += img->data[(size_t)clampi(y + j, 0, H - 1) * W + clampi(x + i, 0, W - 1)];
      double m = s / n, q = 0.0;
      for (int j = -r; j <= r; j++)
        for (int i = -r; i <= r; i++) {
          double a = img->data[(size_t)clampi(y + j, 0, H - 1) * W + clampi(x + i, 0, W - 1)];
          q += (a - m) * (a - m);
        }
      mean[(size_t)y * W + x] = m;
      ss[(size_t)y * W + x] = q;
    }
}

RefImage *
ref_search(const StereoParams *p, const RefImage *ref, const RefImage *oth, int eta)
{
  g_return_val_if_fail(ref->ch == 1 && oth->ch == 1, NULL);
  g_return_val_if_fail(ref->w == oth->w && ref->h == oth->h, NULL);
  int W = ref->w, H = ref->h, r = p->search_radius;
  int n = (2 * r + 1) * (2 * r + 1);
  double flat = n * 1e-6;
  int t_min, t_max;
  stereo_params_search_range(p, &t_min, &t_max);
  int nt = t_max - t_min + 1;

  g_autofree double *mr = g_new(double, (size_t)W * H);
  g_autofree double *sr = g_new(double, (size_t)W * H);
  g_autofree double *mo = g_new(double, (size_t)W * H);
  g_autofree double *so = g_new(double, (size_t)W * H);
  window_stats(ref, r, mr, sr);
  window_stats(oth, r, mo, so);
  g_autofree double *cost = g_new(double, nt);
  g_autofree bool *ok = g_new(bool, nt);
  g_autofree double *ac = g_new(double, n);   /* centred reference window */

  RefImage *out = ref_image_new(W, H, REF_FIELD_CHANNELS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double m = mr[(size_t)y * W + x];
      for (int j = -r, k = 0; j <= r; j++)
        for (int i = -r; i <= r; i++, k++)
          ac[k] = ref->data[(size_t)clampi(y + j, 0, H - 1) * W + clampi(x + i, 0, W - 1)] - m;
      int best = -1;
      for (int ti = 0; ti < nt; ti++) {
        int t = t_min + ti;
        int xo = x - eta * t;
        ok[ti] = xo - r >= 0 && xo + r <= W - 1;
        cost[ti] = 0.0;
        if (!ok[ti])
          continue;
        double s_r = sr[(size_t)y * W + x], s_o = so[(size_t)y * W + xo];
        if (s_r >= flat && s_o >= flat) {
          double cross = 0.0;
          for (int j = -r, k = 0; j <= r; j++) {
            const double *row = oth->data + (size_t)clampi(y + j, 0, H - 1) * W;
            for (int i = -r; i <= r; i++, k++)
              cross += ac[k] * row[xo + i];
          }
          cost[ti] = cross / sqrt(s_r * s_o);
        }
        if (best < 0 || cost[ti] > cost[best])
          best = ti;
      }
      double *o = ref_image_at(out, x, y);
      if (best < 0 || !(cost[best] > 0.0))
        continue;   /* d_init = 0, certainty 0 */
      double delta = 0.0;
      if (best > 0 && best < nt - 1 && ok[best - 1] && ok[best + 1]) {
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
