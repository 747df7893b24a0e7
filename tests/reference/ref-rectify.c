/* ref-rectify.c: rectification and depth of the reference (docs/algorithm.md §0). */
#include "reference.h"

#include <math.h>

/* 3x3 inverse by cofactors (the matrix is well conditioned: K' R with K' upper triangular
 * and a positive focal length). */
static void
invert3(const double m[9], double inv[9])
{
  double c[9] = {
    m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
    m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
    m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
  };
  double det = m[0] * c[0] + m[1] * c[3] + m[2] * c[6];
  for (int i = 0; i < 9; i++)
    inv[i] = c[i] / det;
}

/* Written from OpenCV's documented model independently of calib_rectified_to_raw: the
 * homogeneous ray iR (x, y, 1) with iR = (P[:, :3] R)^-1, the distortion with explicit
 * powers of r, and the tilt in the closed form of computeTiltProjectionMatrix's
 * documentation, Rt = Ry(tau_y) Rx(tau_x) =
 *   [ cy  sy sx  -sy cx ]
 *   [ 0   cx      sx    ]
 *   [ sy  -cy sx  cy cx ],
 * T = [Rt22 0 -Rt02; 0 Rt22 -Rt12; 0 0 1] Rt, whose first two rows have a zero last
 * column. */
void
ref_rectified_to_raw(const StereoCalib *c, CalibSide side, double x, double y, double *u,
                     double *v)
{
  const double *P = side == CALIB_LEFT ? c->P1 : c->P2;
  const double *R = side == CALIB_LEFT ? c->R1 : c->R2;
  const double *K = side == CALIB_LEFT ? c->K_left : c->K_right;
  const double *D = side == CALIB_LEFT ? c->dist_left : c->dist_right;
  double PR[9], iR[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      PR[3 * i + j] = P[4 * i] * R[j] + P[4 * i + 1] * R[3 + j] + P[4 * i + 2] * R[6 + j];
  invert3(PR, iR);
  double X = iR[0] * x + iR[1] * y + iR[2];
  double Y = iR[3] * x + iR[4] * y + iR[5];
  double W = iR[6] * x + iR[7] * y + iR[8];
  double xn = X / W, yn = Y / W;
  double r2 = xn * xn + yn * yn, r4 = r2 * r2, r6 = r4 * r2;
  double k1 = D[0], k2 = D[1], p1 = D[2], p2 = D[3], k3 = D[4], k4 = D[5], k5 = D[6],
         k6 = D[7], s1 = D[8], s2 = D[9], s3 = D[10], s4 = D[11];
  double radial = (1.0 + k1 * r2 + k2 * r4 + k3 * r6) / (1.0 + k4 * r2 + k5 * r4 + k6 * r6);
  double xd = xn * radial + 2.0 * p1 * xn * yn + p2 * (r2 + 2.0 * xn * xn) + s1 * r2 + s2 * r4;
  double yd = yn * radial + p1 * (r2 + 2.0 * yn * yn) + 2.0 * p2 * xn * yn + s3 * r2 + s4 * r4;
  double cx = cos(D[12]), sx = sin(D[12]), cy = cos(D[13]), sy = sin(D[13]);
  double rt[9] = { cy, sy * sx, -sy * cx, 0, cx, sx, sy, -cy * sx, cy * cx };
  double a = rt[8] * (rt[0] * xd + rt[1] * yd) - rt[2] * (rt[6] * xd + rt[7] * yd);
  double b = rt[8] * (rt[3] * xd + rt[4] * yd) - rt[5] * (rt[6] * xd + rt[7] * yd);
  double w = rt[6] * xd + rt[7] * yd + rt[8];
  double xt = a / w, yt = b / w;
  *u = K[0] * xt + K[1] * yt + K[2];
  *v = K[4] * yt + K[5];
}

static double
tap(const uint8_t *raw, int w, int h, size_t stride, int x, int y)
{
  if (x < 0 || y < 0 || x >= w || y >= h)
    return 0.0;
  return raw[(size_t)y * stride + x] / 255.0;
}

RefImage *
ref_rectify(const StereoCalib *calib, CalibSide side, const uint8_t *raw, size_t stride)
{
  int w = calib->width, h = calib->height;
  RefImage *out = ref_image_new(w, h, 1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      double u, v;
      ref_rectified_to_raw(calib, side, x, y, &u, &v);
      double fu = floor(u), fv = floor(v);
      int x0 = (int)fu, y0 = (int)fv;
      double ax = u - fu, ay = v - fv;
      double a = (1.0 - ax) * tap(raw, w, h, stride, x0, y0) + ax * tap(raw, w, h, stride, x0 + 1, y0);
      double b = (1.0 - ax) * tap(raw, w, h, stride, x0, y0 + 1) +
                 ax * tap(raw, w, h, stride, x0 + 1, y0 + 1);
      out->data[(size_t)y * w + x] = (1.0 - ay) * a + ay * b;
    }
  return out;
}

unsigned
ref_depth_mm(const StereoCalib *calib, double disparity)
{
  if (!isfinite(disparity))
    return 0;
  double z = calib_depth_mm(calib, disparity);
  if (!isfinite(z) || z <= 0.0)
    return 0;
  return round(z) <= 65535.0 ? (unsigned)round(z) : 0u;
}

double
ref_depth_m(const StereoCalib *calib, double disparity)
{
  if (!isfinite(disparity))
    return NAN;
  double z = calib_depth_mm(calib, disparity);
  return isfinite(z) && z > 0.0 ? z / 1000.0 : NAN;
}
