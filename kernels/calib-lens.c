/* calib-lens.c: the lens model of a calibration: OpenCV's distortion with all 14
 * coefficients, the rectification map built on it (initUndistortRectifyMap) and the
 * checks that keep it well defined over the image. The formulas are written out in
 * config/calib/README.md. */
#include "calib-private.h"

#include <math.h>
#include <string.h>

#define DIST_COEFF_LIMIT 1000.0 /* |k|, |p|, |s|: far beyond any fitted lens */
#define DIST_TILT_LIMIT 0.5     /* |tau_x|, |tau_y|, radians (28.6 degrees) */

static const char *const dist_names[CALIB_DIST_COUNT] = {
  "k1", "k2", "p1", "p2", "k3", "k4", "k5", "k6", "s1", "s2", "s3", "s4", "tau_x", "tau_y",
};

int
calib_dist_model(const double dist[CALIB_DIST_COUNT])
{
  g_return_val_if_fail(dist != NULL, 5);
  static const int models[] = { 5, 8, 12, 14 };
  int last = -1;
  for (int i = 0; i < CALIB_DIST_COUNT; i++)
    if (dist[i] != 0.0)
      last = i;
  for (gsize m = 0; m < G_N_ELEMENTS(models); m++)
    if (last < models[m])
      return models[m];
  return CALIB_DIST_COUNT;
}

/* OpenCV's computeTiltProjectionMatrix: the sensor turned by tau_x about x, then tau_y
 * about y (Rt = Ry Rx), and the projection back onto the untilted image plane along the
 * turned optical axis: T = [Rt22 0 -Rt02; 0 Rt22 -Rt12; 0 0 1] Rt. */
static void
tilt_matrix(double tau_x, double tau_y, double T[9])
{
  double cx = cos(tau_x), sx = sin(tau_x), cy = cos(tau_y), sy = sin(tau_y);
  const double rx[9] = { 1, 0, 0, 0, cx, sx, 0, -sx, cx };
  const double ry[9] = { cy, 0, -sy, 0, 1, 0, sy, 0, cy };
  double rt[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      rt[3 * i + j] = ry[3 * i] * rx[j] + ry[3 * i + 1] * rx[3 + j] + ry[3 * i + 2] * rx[6 + j];
  const double pz[9] = { rt[8], 0, -rt[2], 0, rt[8], -rt[5], 0, 0, 1 };
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      T[3 * i + j] = pz[3 * i] * rt[j] + pz[3 * i + 1] * rt[3 + j] + pz[3 * i + 2] * rt[6 + j];
}

/* Rectified pixel (x, y) -> the undistorted ray (xn, yn, 1) of the raw camera, returned
 * as its (unnormalised) direction q: the inverse of the upper-triangular P[:, :3], then
 * R^T. */
static void
rectified_ray(const double *P, const double *R, double x, double y, double q[3])
{
  double ry = (y - P[6]) / P[5];
  double rx = (x - P[2] - P[1] * ry) / P[0];
  const double r[3] = { rx, ry, 1.0 };
  for (int i = 0; i < 3; i++)
    q[i] = R[i] * r[0] + R[3 + i] * r[1] + R[6 + i] * r[2];
}

void
calib_rectified_to_raw(const StereoCalib *c, CalibSide side, double x, double y, double *u,
                       double *v)
{
  const double *P = side == CALIB_LEFT ? c->P1 : c->P2;
  const double *R = side == CALIB_LEFT ? c->R1 : c->R2;
  const double *K = side == CALIB_LEFT ? c->K_left : c->K_right;
  const double *D = side == CALIB_LEFT ? c->dist_left : c->dist_right;
  double q[3];
  rectified_ray(P, R, x, y, q);
  double xn = q[0] / q[2], yn = q[1] / q[2];
  double r2 = xn * xn + yn * yn;
  double num = 1.0 + r2 * (D[CALIB_DIST_K1] + r2 * (D[CALIB_DIST_K2] + r2 * D[CALIB_DIST_K3]));
  double den = 1.0 + r2 * (D[CALIB_DIST_K4] + r2 * (D[CALIB_DIST_K5] + r2 * D[CALIB_DIST_K6]));
  double radial = num / den;
  double p1 = D[CALIB_DIST_P1], p2 = D[CALIB_DIST_P2];
  double xd = xn * radial + 2.0 * p1 * xn * yn + p2 * (r2 + 2.0 * xn * xn) +
              r2 * (D[CALIB_DIST_S1] + r2 * D[CALIB_DIST_S2]);
  double yd = yn * radial + p1 * (r2 + 2.0 * yn * yn) + 2.0 * p2 * xn * yn +
              r2 * (D[CALIB_DIST_S3] + r2 * D[CALIB_DIST_S4]);
  if (D[CALIB_DIST_TAU_X] != 0.0 || D[CALIB_DIST_TAU_Y] != 0.0) {
    double T[9];
    tilt_matrix(D[CALIB_DIST_TAU_X], D[CALIB_DIST_TAU_Y], T);
    double tx = T[0] * xd + T[1] * yd + T[2];
    double ty = T[3] * xd + T[4] * yd + T[5];
    double tz = T[6] * xd + T[7] * yd + T[8];
    double inv = tz != 0.0 ? 1.0 / tz : 1.0;   /* as OpenCV */
    xd = tx * inv;
    yd = ty * inv;
  }
  *u = K[0] * xd + K[1] * yd + K[2];
  *v = K[4] * yd + K[5];
}

/* The smallest value of 1 + k4 s + k5 s^2 + k6 s^3 over s in [0, smax]: at an end or
 * where the derivative k4 + 2 k5 s + 3 k6 s^2 vanishes. */
static double
denominator_min(const double *D, double smax, double *at)
{
  double k4 = D[CALIB_DIST_K4], k5 = D[CALIB_DIST_K5], k6 = D[CALIB_DIST_K6];
  double s[4] = { 0.0, smax, -1.0, -1.0 };
  if (k6 != 0.0) {
    double disc = 4.0 * k5 * k5 - 12.0 * k6 * k4;
    if (disc >= 0.0) {
      s[2] = (-2.0 * k5 + sqrt(disc)) / (6.0 * k6);
      s[3] = (-2.0 * k5 - sqrt(disc)) / (6.0 * k6);
    }
  } else if (k5 != 0.0) {
    s[2] = -k4 / (2.0 * k5);
  }
  double best = 1.0;
  *at = 0.0;
  for (int i = 0; i < 4; i++) {
    if (!(s[i] >= 0.0 && s[i] <= smax))
      continue;
    double d = 1.0 + s[i] * (k4 + s[i] * (k5 + s[i] * k6));
    if (d < best) {
      best = d;
      *at = s[i];
    }
  }
  return best;
}

bool
calib_check_lens(const StereoCalib *c, CalibSide side, const char *file, GError **error)
{
  const char *group = side == CALIB_LEFT ? "left" : "right";
  const double *D = side == CALIB_LEFT ? c->dist_left : c->dist_right;
  const double *P = side == CALIB_LEFT ? c->P1 : c->P2;
  const double *R = side == CALIB_LEFT ? c->R1 : c->R2;
  for (int i = 0; i < CALIB_DIST_COUNT; i++) {
    double limit = i >= CALIB_DIST_TAU_X ? DIST_TILT_LIMIT : DIST_COEFF_LIMIT;
    if (!(fabs(D[i]) <= limit)) {
      g_set_error(error, CALIB_ERROR, CALIB_ERROR_INVALID,
                  "%s: [%s] distortion: %s = %g is outside -%g..%g%s", file, group,
                  dist_names[i], D[i], limit, limit, i >= CALIB_DIST_TAU_X ? " (radians)" : "");
      return false;
    }
  }
  /* The rectified image maps onto a convex quadrilateral of the raw camera's normalised
   * plane (a homography, positive depth at the corners), so r^2 is largest at a
   * corner. */
  const double corners[4][2] = {
    { 0, 0 }, { c->width - 1, 0 }, { 0, c->height - 1 }, { c->width - 1, c->height - 1 },
  };
  double r2max = 0.0;
  for (int i = 0; i < 4; i++) {
    double q[3];
    rectified_ray(P, R, corners[i][0], corners[i][1], q);
    if (!(q[2] > 0.0)) {
      g_set_error(error, CALIB_ERROR, CALIB_ERROR_INVALID,
                  "%s: [rectification] %s: the rectified pixel (%g, %g) looks behind the raw "
                  "%s camera", file, side == CALIB_LEFT ? "R1" : "R2", corners[i][0],
                  corners[i][1], group);
      return false;
    }
    double xn = q[0] / q[2], yn = q[1] / q[2];
    r2max = MAX(r2max, xn * xn + yn * yn);
  }
  double at = 0.0;
  double dmin = denominator_min(D, r2max, &at);
  if (!(dmin > 0.0)) {
    g_set_error(error, CALIB_ERROR, CALIB_ERROR_INVALID,
                "%s: [%s] distortion: the rational denominator 1 + k4 r^2 + k5 r^4 + k6 r^6 "
                "is %g at r^2 = %g, inside the image (r^2 up to %g): not a lens", file, group,
                dmin, at, r2max);
    return false;
  }
  return true;
}
