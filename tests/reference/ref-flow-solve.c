/* ref-flow-solve.c: terms, smoothing and the 2x2 solve, hole fill, median and upsampling
 * of the optical flow (docs/optical-flow.md §5-§7). */
#include "ref-flow.h"

#include <math.h>

static inline int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* The four clamped taps around (xs, ys) and their bilinear weights. */
typedef struct {
  int x[2], y[2];
  double fx, fy;
} Bilinear;

static void
bilinear_at(int W, int H, double xs, double ys, Bilinear *b)
{
  int i0 = (int)floor(xs), j0 = (int)floor(ys);
  b->fx = xs - i0;
  b->fy = ys - j0;
  b->x[0] = clampi(i0, 0, W - 1);
  b->x[1] = clampi(i0 + 1, 0, W - 1);
  b->y[0] = clampi(j0, 0, H - 1);
  b->y[1] = clampi(j0 + 1, 0, H - 1);
}

static double
bilinear_weight(const Bilinear *b, int i, int j)
{
  return (i ? b->fx : 1.0 - b->fx) * (j ? b->fy : 1.0 - b->fy);
}

RefImage *
ref_flow_terms(const FlowParams *p, const RefImage *f0, const double *means0,
               const RefImage *f1, const RefImage *prior)
{
  int W = f0->w, H = f0->h, N = p->orientations;
  RefImage *T = ref_image_new(W, H, REF_FLOW_TERMS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const double *pr = ref_image_at(prior, x, y);
      double u0 = pr[REF_FLOW_U], v0 = pr[REF_FLOW_V];
      double xs = x + u0, ys = y + v0;
      if (!(xs >= 0.0 && xs <= W - 1 && ys >= 0.0 && ys <= H - 1))
        continue;
      Bilinear b;
      bilinear_at(W, H, xs, ys, &b);
      double *t = ref_image_at(T, x, y);
      for (int k = 0; k < N; k++) {
        const double *a = ref_image_at(f0, x, y) + 4 * k;
        if (a[2] == FLOW_GRAD_INVALID)
          continue;
        double s[4] = { 0, 0, 0, 0 };
        bool ok = true;
        for (int j = 0; j < 2 && ok; j++)
          for (int i = 0; i < 2; i++) {
            const double *c = ref_image_at(f1, b.x[i], b.y[j]) + 4 * k;
            if (c[2] == FLOW_GRAD_INVALID) {
              ok = false;
              break;
            }
            double wgt = bilinear_weight(&b, i, j);
            for (int m = 0; m < 4; m++)
              s[m] += wgt * c[m];
          }
        if (!ok)
          continue;
        double a0 = sqrt(a[0] * a[0] + a[1] * a[1]), a1 = sqrt(s[0] * s[0] + s[1] * s[1]);
        if (!(MIN(a0, a1) >= p->kappa * means0[k]) || !(a0 > 0.0 && a1 > 0.0))
          continue;
        /* dphi = arg(q1 conj(q0)) */
        double cre = s[0] * a[0] + s[1] * a[1], cim = s[1] * a[0] - s[0] * a[1];
        double dphi = atan2(cim, cre);
        double gx = 0.5 * (a[2] + s[2]), gy = 0.5 * (a[3] + s[3]);
        if (!p->local_frequency)
          flow_params_orientation(p, k, &gx, &gy);
        double sym = 2.0 * a0 * a1 / (a0 * a0 + a1 * a1);
        double c = pow(sym, p->gamma);
        if (p->energy > 0.0)
          c *= pow(a0 * a1 / (means0[k] * means0[k]), p->energy);
        if (p->cos2 > 0.0)
          c *= pow(0.5 * (1.0 + cos(dphi)), p->cos2);
        double e = gx * u0 + gy * v0 - dphi;
        t[0] += c * gx * gx;
        t[1] += c * gx * gy;
        t[2] += c * gy * gy;
        t[3] += c;
        t[4] += c * gx * e;
        t[5] += c * gy * e;
        t[6] += c * e * e;
      }
    }
  return T;
}

RefImage *
ref_flow_solve(const FlowParams *p, const RefImage *terms, const RefImage *prior)
{
  double taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  int r = flow_gauss_taps(p->smooth_sigma, taps);
  g_autoptr(RefImage) A = ref_convolve_zero(terms, taps, r);
  int W = terms->w, H = terms->h;
  RefImage *out = ref_image_new(W, H, REF_FLOW_CHANNELS);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const double *a = ref_image_at(A, x, y);
      const double *pr = ref_image_at(prior, x, y);
      double *o = ref_image_at(out, x, y);
      double cert = a[3] / p->orientations;
      double lam = p->lambda * 0.5 * (a[0] + a[2]);
      double axx = a[0] + lam, axy = a[1], ayy = a[2] + lam;
      double bx = a[4] + lam * pr[REF_FLOW_U], by = a[5] + lam * pr[REF_FLOW_V];
      double det = axx * ayy - axy * axy, tr = axx + ayy;
      if (cert >= p->c_min && det > FLOW_DET_MIN * tr * tr) {
        o[REF_FLOW_U] = (ayy * bx - axy * by) / det;
        o[REF_FLOW_V] = (axx * by - axy * bx) / det;
        o[REF_FLOW_CERT] = cert;
        o[REF_FLOW_W] = 1.0;
      } else {
        o[REF_FLOW_U] = pr[REF_FLOW_U];
        o[REF_FLOW_V] = pr[REF_FLOW_V];
      }
    }
  return out;
}

void
ref_flow_fill(const FlowParams *p, RefImage *field, int iterations)
{
  double taps[2 * FLOW_MAX_SMOOTH_RADIUS + 1];
  int r = flow_gauss_taps(p->fill_sigma, taps);
  int W = field->w, H = field->h;
  for (int it = 0; it < iterations; it++) {
    /* (w u, w v, w) of the state at the start of the round (Jacobi). */
    g_autoptr(RefImage) in = ref_image_new(W, H, 3);
    for (int i = 0; i < W * H; i++) {
      const double *f = field->data + (size_t)i * field->ch;
      double w = f[REF_FLOW_W] > 0.0 ? 1.0 : 0.0;
      in->data[3 * i] = w * f[REF_FLOW_U];
      in->data[3 * i + 1] = w * f[REF_FLOW_V];
      in->data[3 * i + 2] = w;
    }
    g_autoptr(RefImage) s = ref_convolve_zero(in, taps, r);
    for (int i = 0; i < W * H; i++) {
      double *f = field->data + (size_t)i * field->ch;
      const double *a = s->data + 3 * (size_t)i;
      if (f[REF_FLOW_W] > 0.0 || !(a[2] > 1e-6))
        continue;
      f[REF_FLOW_U] = a[0] / a[2];
      f[REF_FLOW_V] = a[1] / a[2];
      f[REF_FLOW_W] = 1.0;
    }
  }
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

RefImage *
ref_flow_median(const RefImage *field)
{
  int W = field->w, H = field->h;
  RefImage *out = ref_image_copy(field);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 2; c++) {
        double v[9];
        int n = 0;
        for (int j = -1; j <= 1; j++)
          for (int i = -1; i <= 1; i++) {
            int xx = x + i, yy = y + j;
            if (xx < 0 || yy < 0 || xx >= W || yy >= H)
              continue;
            const double *f = ref_image_at(field, xx, yy);
            if (f[REF_FLOW_W] > 0.0)
              v[n++] = f[c];
          }
        if (n < 5)
          continue;
        qsort(v, n, sizeof(double), cmp_double);
        ref_image_at(out, x, y)[c] = v[(n - 1) / 2];
      }
  return out;
}

RefImage *
ref_flow_upsample(const RefImage *coarse, int w, int h)
{
  RefImage *out = ref_image_new(w, h, REF_FLOW_CHANNELS);
  int W = coarse->w, H = coarse->h;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int x0 = MIN(x >> 1, W - 1), y0 = MIN(y >> 1, H - 1);
      int x1 = MIN(x0 + (x & 1), W - 1), y1 = MIN(y0 + (y & 1), H - 1);
      for (int c = 0; c < 2; c++) {
        double s = ref_image_at(coarse, x0, y0)[c] + ref_image_at(coarse, x1, y0)[c] +
                   ref_image_at(coarse, x0, y1)[c] + ref_image_at(coarse, x1, y1)[c];
        ref_image_at(out, x, y)[c] = 2.0 * 0.25 * s;
      }
    }
  return out;
}

RefImage *
ref_flow_fb_check(const FlowParams *p, const RefImage *fwd, const RefImage *bwd)
{
  int W = fwd->w, H = fwd->h;
  RefImage *out = ref_image_copy(fwd);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double *o = ref_image_at(out, x, y);
      double xs = x + o[REF_FLOW_U], ys = y + o[REF_FLOW_V];
      bool ok = o[REF_FLOW_W] > 0.0 && xs >= 0.0 && xs <= W - 1 && ys >= 0.0 && ys <= H - 1;
      if (ok) {
        Bilinear b;
        bilinear_at(W, H, xs, ys, &b);
        double bu = 0.0, bv = 0.0;
        for (int j = 0; j < 2; j++)
          for (int i = 0; i < 2; i++) {
            const double *c = ref_image_at(bwd, b.x[i], b.y[j]);
            double wgt = bilinear_weight(&b, i, j);
            bu += wgt * c[REF_FLOW_U];
            bv += wgt * c[REF_FLOW_V];
          }
        double du = o[REF_FLOW_U] + bu, dv = o[REF_FLOW_V] + bv;
        ok = du * du + dv * dv <= p->fb_max * p->fb_max;
      }
      if (!ok) {
        o[REF_FLOW_W] = 0.0;
        o[REF_FLOW_CERT] = 0.0;
      }
    }
  return out;
}
