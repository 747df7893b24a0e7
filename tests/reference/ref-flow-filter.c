/* ref-flow-filter.c: the oriented quadrature bank, phase gradients and the pyramid of one
 * frame (docs/optical-flow.md §1-§4). */
#include "ref-flow.h"

#include <math.h>

static inline int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

RefImage *
ref_flow_rows(const FlowParams *p, const RefImage *img)
{
  g_return_val_if_fail(img->ch == 1, NULL);
  int R = p->radius, W = img->w, H = img->h, nr = flow_params_row_kernels(p);
  double re[FLOW_MAX_ROW_KERNELS][2 * FLOW_MAX_RADIUS + 1];
  double im[FLOW_MAX_ROW_KERNELS][2 * FLOW_MAX_RADIUS + 1];
  for (int r = 0; r < nr; r++)
    flow_params_row_taps(p, r, re[r], im[r]);
  RefImage *out = ref_image_new(W, H, 2 * nr);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double *o = ref_image_at(out, x, y);
      for (int i = -R; i <= R; i++) {
        double a = img->data[(size_t)y * W + clampi(x + i, 0, W - 1)];
        for (int r = 0; r < nr; r++) {
          o[2 * r] += a * re[r][i + R];
          o[2 * r + 1] += a * im[r][i + R];
        }
      }
    }
  return out;
}

RefImage *
ref_flow_columns(const FlowParams *p, const RefImage *rows)
{
  int R = p->radius, W = rows->w, H = rows->h, N = p->orientations;
  g_return_val_if_fail(rows->ch == 2 * flow_params_row_kernels(p), NULL);
  RefImage *out = ref_image_new(W, H, 2 * N);
  for (int k = 0; k < N; k++) {
    bool conj;
    int r = flow_params_row_kernel_of(p, k, &conj);
    double cre[2 * FLOW_MAX_RADIUS + 1], cim[2 * FLOW_MAX_RADIUS + 1];
    flow_params_column_taps(p, k, cre, cim);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        double sre = 0.0, sim = 0.0;
        for (int j = -R; j <= R; j++) {
          const double *t = ref_image_at(rows, x, clampi(y + j, 0, H - 1));
          double tre = t[2 * r], tim = conj ? -t[2 * r + 1] : t[2 * r + 1];
          sre += tre * cre[j + R] - tim * cim[j + R];
          sim += tre * cim[j + R] + tim * cre[j + R];
        }
        /* The factor 2 makes |q| the amplitude of a plane wave at the centre frequency. */
        ref_image_at(out, x, y)[2 * k] = 2.0 * sre;
        ref_image_at(out, x, y)[2 * k + 1] = 2.0 * sim;
      }
  }
  return out;
}

/* Demodulated central difference along one axis (§4): z = (q+ e^{-i w} - q- e^{+i w})
 * conj(q0) / (2 |q0|^2), n0 = |q0|^2 > 0. */
static void
demod(const double *qm, const double *q0, const double *qp, double w, double n0, double z[2])
{
  double c = cos(w), s = sin(w);
  double are = (qp[0] * c + qp[1] * s) - (qm[0] * c - qm[1] * s);
  double aim = (qp[1] * c - qp[0] * s) - (qm[1] * c + qm[0] * s);
  z[0] = (are * q0[0] + aim * q0[1]) / (2.0 * n0);
  z[1] = (aim * q0[0] - are * q0[1]) / (2.0 * n0);
}

RefImage *
ref_flow_features(const FlowParams *p, const RefImage *q)
{
  int W = q->w, H = q->h, N = p->orientations;
  g_return_val_if_fail(q->ch == 2 * N, NULL);
  double lim = (p->tau / p->sigma) * (p->tau / p->sigma);
  RefImage *out = ref_image_new(W, H, 4 * N);
  for (int k = 0; k < N; k++) {
    double u, v;
    flow_params_orientation(p, k, &u, &v);
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) {
        const double *q0 = ref_image_at(q, x, y) + 2 * k;
        const double *xm = ref_image_at(q, clampi(x - 1, 0, W - 1), y) + 2 * k;
        const double *xp = ref_image_at(q, clampi(x + 1, 0, W - 1), y) + 2 * k;
        const double *ym = ref_image_at(q, x, clampi(y - 1, 0, H - 1)) + 2 * k;
        const double *yp = ref_image_at(q, x, clampi(y + 1, 0, H - 1)) + 2 * k;
        double *o = ref_image_at(out, x, y) + 4 * k;
        o[0] = q0[0];
        o[1] = q0[1];
        o[2] = FLOW_GRAD_INVALID;
        o[3] = 0.0;
        double n0 = q0[0] * q0[0] + q0[1] * q0[1];
        if (!(n0 > 0.0))
          continue;
        double zx[2], zy[2];
        demod(xm, q0, xp, u, n0, zx);
        demod(ym, q0, yp, v, n0, zy);
        if (zx[0] * zx[0] + zx[1] * zx[1] + zy[0] * zy[0] + zy[1] * zy[1] > lim)
          continue;
        o[2] = u + asin(CLAMP(zx[1], -1.0, 1.0));
        o[3] = v + asin(CLAMP(zy[1], -1.0, 1.0));
      }
  }
  return out;
}

void
ref_flow_means(const FlowParams *p, const RefImage *features, double *means)
{
  int N = p->orientations;
  size_t n = (size_t)features->w * features->h;
  for (int k = 0; k < N; k++) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
      const double *f = features->data + i * features->ch + 4 * k;
      s += sqrt(f[0] * f[0] + f[1] * f[1]);
    }
    means[k] = s / (double)n;
  }
}

RefFlowPyramid *
ref_flow_pyramid_new(const FlowParams *p, const uint8_t *frame, size_t stride)
{
  RefFlowPyramid *pyr = g_new0(RefFlowPyramid, 1);
  pyr->levels = flow_params_get_levels(p);
  pyr->img[0] = ref_ingest(frame, p->width, p->height, stride);
  for (int s = 0; s < pyr->levels; s++) {
    if (s > 0)
      pyr->img[s] = ref_reduce(pyr->img[s - 1]);
    g_autoptr(RefImage) rows = ref_flow_rows(p, pyr->img[s]);
    g_autoptr(RefImage) q = ref_flow_columns(p, rows);
    pyr->features[s] = ref_flow_features(p, q);
    ref_flow_means(p, pyr->features[s], pyr->means[s]);
  }
  return pyr;
}

void
ref_flow_pyramid_free(RefFlowPyramid *pyr)
{
  if (!pyr)
    return;
  for (int s = 0; s < FLOW_MAX_LEVELS; s++) {
    ref_image_free(pyr->img[s]);
    ref_image_free(pyr->features[s]);
  }
  g_free(pyr);
}
