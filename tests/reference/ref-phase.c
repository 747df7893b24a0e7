/* ref-phase.c: phase terms, smoothing and solve, hole fill, upsampling and the
 * coarse-to-fine driver of one direction (docs/algorithm.md §6-§9). */
#include "reference.h"

#include <math.h>

/* Linear interpolation of a 2-channel row at xs (caller guarantees 0 <= xs <= W-1). */
static void
lerp_x(const RefImage *q, double xs, int y, double out[2])
{
  int i0 = (int)floor(xs);
  double f = xs - i0;
  int i1 = MIN(i0 + 1, q->w - 1);
  const double *a = ref_image_at(q, i0, y), *b = ref_image_at(q, i1, y);
  out[0] = (1.0 - f) * a[0] + f * b[0];
  out[1] = (1.0 - f) * a[1] + f * b[1];
}

bool
ref_local_frequency(const StereoParams *p, const double qm[2], const double q0[2],
                    const double qp[2], double *omega, double *z_abs2)
{
  double w0 = p->omega0;
  double n0 = q0[0] * q0[0] + q0[1] * q0[1];
  if (!(n0 > 0.0))
    return false;
  double c = cos(w0), s = sin(w0);
  /* a = qp e^{-i w0} - qm e^{+i w0} */
  double are = (qp[0] * c + qp[1] * s) - (qm[0] * c - qm[1] * s);
  double aim = (qp[1] * c - qp[0] * s) - (qm[1] * c + qm[0] * s);
  /* z = a conj(q0) / (2 |q0|^2) */
  double zre = (are * q0[0] + aim * q0[1]) / (2.0 * n0);
  double zi = (aim * q0[0] - are * q0[1]) / (2.0 * n0);
  *z_abs2 = zre * zre + zi * zi;
  *omega = w0 + asin(CLAMP(zi, -1.0, 1.0));
  return true;
}

RefImage *
ref_phase_terms(const StereoParams *p, const RefImage *q_ref, const RefImage *q_oth,
                const RefImage *prior, int eta, double t_mag)
{
  int W = q_ref->w, H = q_ref->h, R = p->radius;
  double lim = (p->tau / p->sigma) * (p->tau / p->sigma);
  RefImage *P = ref_image_new(W, H, 4);
  for (int y = R; y <= H - 1 - R; y++)
    for (int x = R; x <= W - 1 - R; x++) {
      double d0 = ref_image_at(prior, x, y)[REF_D];
      double xw = x - eta * d0;
      if (!(R <= xw - 1.0 && xw + 1.0 <= W - 1 - R))
        continue;
      double rm[2], r0[2], rp[2], om[2], o0[2], op[2];
      for (int c = 0; c < 2; c++) {
        rm[c] = ref_image_at(q_ref, x - 1, y)[c];
        r0[c] = ref_image_at(q_ref, x, y)[c];
        rp[c] = ref_image_at(q_ref, x + 1, y)[c];
      }
      lerp_x(q_oth, xw - 1.0, y, om);
      lerp_x(q_oth, xw, y, o0);
      lerp_x(q_oth, xw + 1.0, y, op);
      double zr2, wr, zo2, wo;
      if (!ref_local_frequency(p, rm, r0, rp, &wr, &zr2) ||
          !ref_local_frequency(p, om, o0, op, &wo, &zo2))
        continue;
      if (zr2 > lim || zo2 > lim)
        continue;
      double ar = hypot(r0[0], r0[1]), ao = hypot(o0[0], o0[1]);
      if (MIN(ar, ao) < t_mag)
        continue;
      double wb = 0.5 * (wr + wo);
      /* C = q0_oth conj(q0_ref) */
      double cre = o0[0] * r0[0] + o0[1] * r0[1];
      double cim = o0[1] * r0[0] - o0[0] * r0[1];
      double dphi = atan2(cim, cre);
      double c = pow(2.0 * ar * ao / (ar * ar + ao * ao), p->gamma);
      double e = wb * d0 + eta * dphi;
      double *o = ref_image_at(P, x, y);
      o[0] = c * wb * wb;
      o[1] = c * wb * e;
      o[2] = c;
      o[3] = c * e * e;
    }
  return P;
}

RefImage *
ref_smooth_solve(const StereoParams *p, const RefImage *terms, const RefImage *prior, int s,
                 double guard)
{
  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int r = stereo_gauss_taps(p->smooth_sigma, taps);
  g_autoptr(RefImage) sm = ref_convolve_zero(terms, taps, r);
  double lo = p->min_disparity * ldexp(1.0, -s) - 2.0;
  double hi = p->max_disparity * ldexp(1.0, -s) + 2.0;
  RefImage *out = ref_image_new(terms->w, terms->h, REF_FIELD_CHANNELS);
  for (int y = 0; y < terms->h; y++)
    for (int x = 0; x < terms->w; x++) {
      const double *t = ref_image_at(sm, x, y);
      double *o = ref_image_at(out, x, y);
      double A = t[0], B = t[1], C = t[2], E = t[3];
      double d0 = ref_image_at(prior, x, y)[REF_D];
      if (guard > 0.0 && C >= p->c_min && A > 0.0 && fabs(B / A - d0) > guard) {
        o[REF_D] = d0;   /* §5b: the phase may not move the refined d that far */
        o[REF_CERT] = C;
      } else if (C >= p->c_min && A > 0.0) {
        double d = B / A;
        o[REF_D] = d;
        o[REF_CERT] = C;
        o[REF_SIGMA] = sqrt(MAX(E / A - d * d, 0.0));
      } else {
        o[REF_D] = d0;
      }
      o[REF_D] = CLAMP(o[REF_D], lo, hi);
    }
  return out;
}

void
ref_fill_holes(const StereoParams *p, RefImage *field)
{
  double taps[2 * STEREO_MAX_SMOOTH_RADIUS + 1];
  int r = stereo_gauss_taps(p->fill_sigma, taps);
  int W = field->w, H = field->h;
  size_t n = (size_t)W * H;
  /* vd: channel 0 = v * d, channel 1 = v. */
  g_autoptr(RefImage) vd = ref_image_new(W, H, 2);
  for (size_t i = 0; i < n; i++) {
    bool v = field->data[i * field->ch + REF_CERT] > 0.0;
    vd->data[2 * i] = v ? field->data[i * field->ch + REF_D] : 0.0;
    vd->data[2 * i + 1] = v ? 1.0 : 0.0;
  }
  for (int it = 0; it < p->fill_iterations; it++) {
    g_autoptr(RefImage) g = ref_convolve_zero(vd, taps, r);
    for (size_t i = 0; i < n; i++) {
      if (vd->data[2 * i + 1] > 0.0 || !(g->data[2 * i + 1] > 1e-6))
        continue;
      double d = g->data[2 * i] / g->data[2 * i + 1];
      field->data[i * field->ch + REF_D] = d;
      vd->data[2 * i] = d;
      vd->data[2 * i + 1] = 1.0;
    }
  }
}

RefImage *
ref_upsample(const RefImage *field, int w, int h)
{
  RefImage *out = ref_image_new(w, h, REF_FIELD_CHANNELS);
  int W = field->w, H = field->h;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int x0 = MIN(x / 2, W - 1), x1 = MIN(x0 + (x & 1), W - 1);
      int y0 = MIN(y / 2, H - 1), y1 = MIN(y0 + (y & 1), H - 1);
      double fx = (x & 1) ? 0.5 : 0.0, fy = (y & 1) ? 0.5 : 0.0;
      double a = ref_image_at(field, x0, y0)[REF_D], b = ref_image_at(field, x1, y0)[REF_D];
      double c = ref_image_at(field, x0, y1)[REF_D], d = ref_image_at(field, x1, y1)[REF_D];
      double top = (1 - fx) * a + fx * b, bot = (1 - fx) * c + fx * d;
      ref_image_at(out, x, y)[REF_D] = 2.0 * ((1 - fy) * top + fy * bot);
    }
  return out;
}

RefImage *
ref_direction_run(const StereoParams *p, const RefPyramid *pyr, int eta)
{
  return ref_direction_run_to(p, pyr, eta, 0);
}

RefImage *
ref_direction_run_to(const StereoParams *p, const RefPyramid *pyr, int eta, int last)
{
  int ir = eta > 0 ? 0 : 1, io = 1 - ir;
  int s0 = stereo_params_start_level(p);
  g_return_val_if_fail(last >= 0 && last <= s0, NULL);   /* before the search's work */
  g_autoptr(RefImage) d = NULL;
  if (stereo_params_use_search(p)) {
    d = ref_search(p, pyr->img[ir][s0], pyr->img[io][s0], eta);
    ref_fill_holes(p, d);
  } else {
    d = ref_image_new(pyr->img[ir][s0]->w, pyr->img[ir][s0]->h, REF_FIELD_CHANNELS);
  }
  for (int s = s0; s >= last; s--) {
    double guard = 0.0;
    if (s < s0) {
      ref_fill_holes(p, d);
      RefImage *up = ref_upsample(d, pyr->q[ir][s]->w, pyr->q[ir][s]->h);
      ref_image_free(d);
      d = up;
    }
    if (s == 0 && stereo_params_use_refine(p)) {   /* §5b */
      RefImage *rd = ref_refine_search(p, pyr->img[ir][0], pyr->img[io][0], d, eta);
      ref_image_free(d);
      d = rd;
      ref_fill_holes(p, d);
      guard = STEREO_REFINE_GUARD;
    }
    double t_mag = MAX(p->kappa * ref_mean_magnitude(pyr->q[ir][s]), p->min_magnitude);
    for (int it = 0; it < stereo_params_level_iterations(p, s); it++) {
      g_autoptr(RefImage) P = ref_phase_terms(p, pyr->q[ir][s], pyr->q[io][s], d, eta, t_mag);
      RefImage *nd = ref_smooth_solve(p, P, d, s, guard);
      ref_image_free(d);
      d = nd;
    }
  }
  if (last > 0)
    ref_fill_holes(p, d);   /* what the next level's upsample would read */
  return g_steal_pointer(&d);
}
