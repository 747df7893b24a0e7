/* calib.c: calibration files (load, validate, save) and the geometry of a rectified pair;
 * the lens model and its checks are in calib-lens.c. The format is documented in
 * config/calib/example.conf. */
#include "calib-private.h"

#include <math.h>
#include <string.h>

#include "common/file.h"
#include "common/keyfile.h"

G_DEFINE_QUARK(stereod-calib-error-quark, calib_error)

#define CALIB_VERSION 1
#define CALIB_MAX_SIZE 16384
#define ORTHO_TOL 1e-6          /* |R R^T - I| entries, |det R - 1| */
#define MATCH_TOL 1e-6          /* relative, for values that must agree */

/* The keys of a version-1 file, in the order calib_save() writes them. */
typedef struct {
  const char *group;
  const char *keys[6];
} CalibGroup;

static const CalibGroup calib_groups[] = {
  { "calibration", { "version", "width", "height" } },
  { "left", { "K", "distortion" } },
  { "right", { "K", "distortion" } },
  { "rectification", { "R1", "R2", "P1", "P2", "Q" } },
  { "pose", { "rotation", "centre" } },
};

static bool G_GNUC_PRINTF(6, 7)
fail(GError **error, CalibError code, const char *file, const char *group, const char *key,
     const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *what = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (key)
    g_set_error(error, CALIB_ERROR, code, "%s: [%s] %s: %s", file, group, key, what);
  else
    g_set_error(error, CALIB_ERROR, code, "%s: [%s]: %s", file, group, what);
  return false;
}

static bool
close_to(double a, double b)
{
  return fabs(a - b) <= MATCH_TOL * MAX(1.0, MAX(fabs(a), fabs(b)));
}

/* Parsing: common/keyfile.h (bounded regular files, no NUL, no duplicate group or key,
 * decimal numbers without locale effects). ------------------------------------------- */

static KeyFileParams
reader_params(void)
{
  return (KeyFileParams){
    .domain = CALIB_ERROR,
    .codes = {
      [KEYFILE_ERROR_IO] = CALIB_ERROR_IO,
      [KEYFILE_ERROR_SYNTAX] = CALIB_ERROR_SYNTAX,
      [KEYFILE_ERROR_DUPLICATE] = CALIB_ERROR_MALFORMED,
      [KEYFILE_ERROR_UNKNOWN] = CALIB_ERROR_UNKNOWN,
      [KEYFILE_ERROR_MISSING] = CALIB_ERROR_MISSING,
      [KEYFILE_ERROR_MALFORMED] = CALIB_ERROR_MALFORMED,
      [KEYFILE_ERROR_RANGE] = CALIB_ERROR_INVALID,
    },
    .max_size = FILE_MAX_CONFIG_SIZE,
  };
}

typedef struct {
  const KeyFile *kf;
  const char *file;
} Reader;

/* A list of exactly n finite numbers separated by spaces and/or commas. */
static bool
read_numbers(const Reader *r, const char *group, const char *key, int n, double *out,
             GError **error)
{
  return keyfile_get_doubles(r->kf, group, key, KEYFILE_REQUIRED, n, -G_MAXDOUBLE,
                             G_MAXDOUBLE, out, error);
}

/* A distortion key: the coefficients of one of OpenCV's models (4, 5, 8, 12 or 14
 * numbers, CalibDistTerm order); the terms it does not have are 0. */
static bool
read_distortion(const Reader *r, const char *group, double *out, GError **error)
{
  g_autofree char *value = keyfile_get_value(r->kf, group, "distortion");
  if (!value)
    return fail(error, CALIB_ERROR_MISSING, r->file, group, "distortion", "missing (required)");
  g_auto(GStrv) tokens = g_strsplit_set(value, " \t,", -1);
  int n = 0;
  for (int i = 0; tokens[i]; i++)
    n += tokens[i][0] != '\0';
  if (n != 4 && n != 5 && n != 8 && n != 12 && n != 14)
    return fail(error, CALIB_ERROR_MALFORMED, r->file, group, "distortion",
                "expected 4, 5, 8, 12 or 14 numbers (OpenCV's distortion models), found %d", n);
  memset(out, 0, CALIB_DIST_COUNT * sizeof(double));
  return read_numbers(r, group, "distortion", n, out, error);
}

static bool
read_int(const Reader *r, const char *group, const char *key, int lo, int hi, int *out,
         GError **error)
{
  return keyfile_get_int(r->kf, group, key, KEYFILE_REQUIRED, lo, hi, out, error);
}

static bool
check_known(const Reader *r, GError **error)
{
  g_auto(GStrv) groups = keyfile_get_groups(r->kf, NULL);
  for (int g = 0; groups[g]; g++) {
    const CalibGroup *known = NULL;
    for (gsize i = 0; i < G_N_ELEMENTS(calib_groups); i++)
      if (strcmp(groups[g], calib_groups[i].group) == 0)
        known = &calib_groups[i];
    if (!known)
      return fail(error, CALIB_ERROR_UNKNOWN, r->file, groups[g], NULL, "unknown group");
    if (!keyfile_check_keys(r->kf, groups[g], known->keys, error))
      return false;
  }
  return true;
}

/* Validation ---------------------------------------------------------------------- */

static bool
check_rotation(const double *R, const char *file, const char *group, const char *key,
               GError **error)
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double dot = 0.0;
      for (int k = 0; k < 3; k++)
        dot += R[3 * i + k] * R[3 * j + k];
      if (fabs(dot - (i == j ? 1.0 : 0.0)) > ORTHO_TOL)
        return fail(error, CALIB_ERROR_INVALID, file, group, key,
                    "not a rotation matrix (rows are not orthonormal)");
    }
  double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
               R[2] * (R[3] * R[7] - R[4] * R[6]);
  if (fabs(det - 1.0) > ORTHO_TOL)
    return fail(error, CALIB_ERROR_INVALID, file, group, key,
                "not a rotation matrix (determinant %g, a reflection)", det);
  return true;
}

static bool
check_K(const double *K, const char *file, const char *group, GError **error)
{
  if (!(K[0] > 0.0) || !(K[4] > 0.0))
    return fail(error, CALIB_ERROR_INVALID, file, group, "K",
                "focal lengths fx = %g, fy = %g must be positive", K[0], K[4]);
  if (K[3] != 0.0 || K[6] != 0.0 || K[7] != 0.0 || K[8] != 1.0)
    return fail(error, CALIB_ERROR_INVALID, file, group, "K",
                "must have the form 'fx s cx 0 fy cy 0 0 1'");
  return true;
}

static bool
check_P(const double *P, const char *file, const char *key, GError **error)
{
  if (!(P[0] > 0.0) || !(P[5] > 0.0))
    return fail(error, CALIB_ERROR_INVALID, file, "rectification", key,
                "focal lengths %g, %g must be positive", P[0], P[5]);
  if (P[4] != 0.0 || P[7] != 0.0 || P[8] != 0.0 || P[9] != 0.0 || P[10] != 1.0 ||
      P[11] != 0.0)
    return fail(error, CALIB_ERROR_INVALID, file, "rectification", key,
                "must have the form 'f s cx tx 0 f cy 0 0 0 1 0' (horizontal rectification)");
  return true;
}

static void
compute_Q(const double *P1, const double *P2, double *Q)
{
  double tx = P2[3] / P2[0];   /* -B */
  double q[16] = {
    1, 0, 0, -P1[2],
    0, 1, 0, -P1[6],
    0, 0, 0, P1[0],
    0, 0, -1.0 / tx, (P1[2] - P2[2]) / tx,
  };
  memcpy(Q, q, sizeof(q));
}

static bool
validate_named(const StereoCalib *c, const char *file, GError **error)
{
  if (c->width < 1 || c->width > CALIB_MAX_SIZE)
    return fail(error, CALIB_ERROR_INVALID, file, "calibration", "width",
                "%d is outside 1..%d", c->width, CALIB_MAX_SIZE);
  if (c->height < 1 || c->height > CALIB_MAX_SIZE)
    return fail(error, CALIB_ERROR_INVALID, file, "calibration", "height",
                "%d is outside 1..%d", c->height, CALIB_MAX_SIZE);

  /* Every number finite, whatever produced the struct. */
  struct { const char *group, *key; const double *v; int n; } all[] = {
    { "left", "K", c->K_left, 9 }, { "left", "distortion", c->dist_left, CALIB_DIST_COUNT },
    { "right", "K", c->K_right, 9 },
    { "right", "distortion", c->dist_right, CALIB_DIST_COUNT },
    { "rectification", "R1", c->R1, 9 }, { "rectification", "R2", c->R2, 9 },
    { "rectification", "P1", c->P1, 12 }, { "rectification", "P2", c->P2, 12 },
    { "rectification", "Q", c->Q, 16 }, { "pose", "rotation", c->pose_rotation, 9 },
    { "pose", "centre", c->pose_centre, 3 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(all); i++)
    for (int k = 0; k < all[i].n; k++)
      if (!isfinite(all[i].v[k]))
        return fail(error, CALIB_ERROR_INVALID, file, all[i].group, all[i].key,
                    "number %d is not finite", k + 1);

  if (!check_K(c->K_left, file, "left", error) || !check_K(c->K_right, file, "right", error))
    return false;
  if (!check_rotation(c->R1, file, "rectification", "R1", error) ||
      !check_rotation(c->R2, file, "rectification", "R2", error))
    return false;
  if (!check_P(c->P1, file, "P1", error) || !check_P(c->P2, file, "P2", error))
    return false;
  if (!calib_check_lens(c, CALIB_LEFT, file, error) ||
      !calib_check_lens(c, CALIB_RIGHT, file, error))
    return false;
  if (c->P1[3] != 0.0)
    return fail(error, CALIB_ERROR_INVALID, file, "rectification", "P1",
                "the left rectified camera must be the origin (P1[0][3] = 0)");
  if (!close_to(c->P1[0], c->P2[0]) || !close_to(c->P1[5], c->P2[5]) ||
      !close_to(c->P1[6], c->P2[6]))
    return fail(error, CALIB_ERROR_INVALID, file, "rectification", "P2",
                "focal lengths and cy must equal those of P1");
  if (!(c->P2[3] < 0.0))
    return fail(error, CALIB_ERROR_INVALID, file, "rectification", "P2",
                "P2[0][3] = -f B must be negative (the right camera to the right of the left)");
  double Q[16];
  compute_Q(c->P1, c->P2, Q);
  for (int k = 0; k < 16; k++)
    if (!close_to(Q[k], c->Q[k]))
      return fail(error, CALIB_ERROR_INVALID, file, "rectification", "Q",
                  "does not match P1 and P2 (entry %d is %g, expected %g)", k + 1, c->Q[k],
                  Q[k]);
  return check_rotation(c->pose_rotation, file, "pose", "rotation", error);
}

bool
calib_validate(const StereoCalib *calib, GError **error)
{
  g_return_val_if_fail(calib != NULL, false);
  return validate_named(calib, "calibration", error);
}

/* Loading ------------------------------------------------------------------------- */

/* The values of a loaded calibration file. */
static bool
load_keyfile(const KeyFile *kf, const char *name, StereoCalib *calib, GError **error)
{
  Reader r = { kf, name };
  StereoCalib c = { 0 };
  int version = 0;
  if (!check_known(&r, error) ||
      !read_int(&r, "calibration", "version", CALIB_VERSION, CALIB_VERSION, &version, error) ||
      !read_int(&r, "calibration", "width", 1, CALIB_MAX_SIZE, &c.width, error) ||
      !read_int(&r, "calibration", "height", 1, CALIB_MAX_SIZE, &c.height, error) ||
      !read_numbers(&r, "left", "K", 9, c.K_left, error) ||
      !read_distortion(&r, "left", c.dist_left, error) ||
      !read_numbers(&r, "right", "K", 9, c.K_right, error) ||
      !read_distortion(&r, "right", c.dist_right, error) ||
      !read_numbers(&r, "rectification", "R1", 9, c.R1, error) ||
      !read_numbers(&r, "rectification", "R2", 9, c.R2, error) ||
      !read_numbers(&r, "rectification", "P1", 12, c.P1, error) ||
      !read_numbers(&r, "rectification", "P2", 12, c.P2, error) ||
      !read_numbers(&r, "rectification", "Q", 16, c.Q, error) ||
      !read_numbers(&r, "pose", "rotation", 9, c.pose_rotation, error) ||
      !read_numbers(&r, "pose", "centre", 3, c.pose_centre, error))
    return false;
  if (!validate_named(&c, name, error))
    return false;
  *calib = c;
  return true;
}

bool
calib_load_data(const char *data, gsize length, const char *name, StereoCalib *calib,
                GError **error)
{
  g_return_val_if_fail(data != NULL && name != NULL && calib != NULL, false);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_data(&params, data, length, name, error);
  return kf && load_keyfile(kf, name, calib, error);
}

bool
calib_load(const char *path, StereoCalib *calib, GError **error)
{
  g_return_val_if_fail(path != NULL && calib != NULL, false);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_file(&params, path, error);
  return kf && load_keyfile(kf, path, calib, error);
}

/* Saving -------------------------------------------------------------------------- */

static void
append_numbers(GString *s, const char *key, const double *v, int n, int per_line)
{
  g_string_append_printf(s, "%s=", key);
  for (int i = 0; i < n; i++) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(buf, sizeof(buf), v[i] == 0.0 ? 0.0 : v[i]);  /* no "-0" */
    g_string_append(s, buf);
    if (i + 1 < n)
      g_string_append(s, (i + 1) % per_line == 0 ? "  " : " ");
  }
  g_string_append_c(s, '\n');
}

/* The coefficients of the shortest model that holds them, grouped as OpenCV's models
 * extend each other: "k1 k2 p1 p2 k3  k4 k5 k6  s1 s2 s3 s4  tau_x tau_y". */
static void
append_distortion(GString *s, const double *dist)
{
  int n = calib_dist_model(dist);
  g_string_append(s, "distortion=");
  for (int i = 0; i < n; i++) {
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(buf, sizeof(buf), dist[i] == 0.0 ? 0.0 : dist[i]);  /* no "-0" */
    if (i > 0)
      g_string_append(s, i == 5 || i == 8 || i == 12 ? "  " : " ");
    g_string_append(s, buf);
  }
  g_string_append_c(s, '\n');
}

char *
calib_to_data(const StereoCalib *c)
{
  g_return_val_if_fail(c != NULL, NULL);
  GString *s = g_string_new("# stereod calibration of one stereo pair; format: "
                            "config/calib/example.conf\n");
  g_string_append_printf(s, "[calibration]\nversion=%d\nwidth=%d\nheight=%d\n\n",
                         CALIB_VERSION, c->width, c->height);
  g_string_append(s, "[left]\n");
  append_numbers(s, "K", c->K_left, 9, 3);
  append_distortion(s, c->dist_left);
  g_string_append(s, "\n[right]\n");
  append_numbers(s, "K", c->K_right, 9, 3);
  append_distortion(s, c->dist_right);
  g_string_append(s, "\n[rectification]\n");
  append_numbers(s, "R1", c->R1, 9, 3);
  append_numbers(s, "R2", c->R2, 9, 3);
  append_numbers(s, "P1", c->P1, 12, 4);
  append_numbers(s, "P2", c->P2, 12, 4);
  append_numbers(s, "Q", c->Q, 16, 4);
  g_string_append(s, "\n[pose]\n");
  append_numbers(s, "rotation", c->pose_rotation, 9, 3);
  append_numbers(s, "centre", c->pose_centre, 3, 3);
  return g_string_free(s, false);
}

bool
calib_save(const char *path, const StereoCalib *calib, GError **error)
{
  g_return_val_if_fail(path != NULL && calib != NULL, false);
  g_autoptr(GError) local = NULL;
  if (!validate_named(calib, path, error))
    return false;
  g_autofree char *text = calib_to_data(calib);
  if (!g_file_set_contents(path, text, -1, &local)) {
    g_set_error(error, CALIB_ERROR, CALIB_ERROR_IO, "%s: %s", path, local->message);
    return false;
  }
  return true;
}

/* Geometry ------------------------------------------------------------------------ */

void
calib_init_ideal(StereoCalib *c, int width, int height, double focal, double cx, double cy,
                 double baseline, const double dist[5], const double rotation[9],
                 const double centre[3])
{
  g_return_if_fail(c != NULL && rotation != NULL && centre != NULL);
  static const double I[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
  const double K[9] = { focal, 0, cx, 0, focal, cy, 0, 0, 1 };
  const double P1[12] = { focal, 0, cx, 0, 0, focal, cy, 0, 0, 0, 1, 0 };
  const double P2[12] = { focal, 0, cx, -focal * baseline, 0, focal, cy, 0, 0, 0, 1, 0 };
  *c = (StereoCalib){ .width = width, .height = height };
  memcpy(c->K_left, K, sizeof(K));
  memcpy(c->K_right, K, sizeof(K));
  if (dist) {
    memcpy(c->dist_left, dist, 5 * sizeof(double));
    memcpy(c->dist_right, dist, 5 * sizeof(double));
  }
  memcpy(c->R1, I, sizeof(I));
  memcpy(c->R2, I, sizeof(I));
  memcpy(c->P1, P1, sizeof(P1));
  memcpy(c->P2, P2, sizeof(P2));
  compute_Q(c->P1, c->P2, c->Q);
  memcpy(c->pose_rotation, rotation, sizeof(c->pose_rotation));
  memcpy(c->pose_centre, centre, sizeof(c->pose_centre));
}

double
calib_focal(const StereoCalib *c)
{
  return c->P1[0];
}

double
calib_baseline(const StereoCalib *c)
{
  return -c->P2[3] / c->P2[0];
}

double
calib_doffs(const StereoCalib *c)
{
  return c->P1[2] - c->P2[2];
}

double
calib_depth_mm(const StereoCalib *c, double disparity)
{
  if (isnan(disparity))
    return NAN;
  double dd = disparity - calib_doffs(c);
  if (dd <= 0.0)
    return INFINITY;
  return 1000.0 * calib_focal(c) * calib_baseline(c) / dd;
}

bool
calib_reproject(const StereoCalib *c, double x, double y, double d, double point[3])
{
  if (!isfinite(d))
    return false;
  const double in[4] = { x, y, d, 1.0 };
  double out[4];
  for (int i = 0; i < 4; i++)
    out[i] = c->Q[4 * i] * in[0] + c->Q[4 * i + 1] * in[1] + c->Q[4 * i + 2] * in[2] +
             c->Q[4 * i + 3] * in[3];
  if (!(out[3] > 0.0))
    return false;
  for (int i = 0; i < 3; i++)
    point[i] = out[i] / out[3];
  return true;
}

void
calib_camera_to_pitch(const StereoCalib *c, const double cam[3], double pitch[3])
{
  const double *R = c->pose_rotation;
  double p[3];
  for (int i = 0; i < 3; i++)
    p[i] = R[3 * i] * cam[0] + R[3 * i + 1] * cam[1] + R[3 * i + 2] * cam[2] +
           c->pose_centre[i];
  memcpy(pitch, p, sizeof(p));
}

/* Clips the convex polygon `v` (n points, at most 16) by the half-space n . (p - o) >= 0;
 * returns the new count. */
static int
clip_polygon(double v[][3], int n, const double nrm[3], const double o[3])
{
  double out[16][3];
  int m = 0;
  for (int i = 0; i < n; i++) {
    const double *a = v[i], *b = v[(i + 1) % n];
    double da = 0, db = 0;
    for (int k = 0; k < 3; k++) {
      da += nrm[k] * (a[k] - o[k]);
      db += nrm[k] * (b[k] - o[k]);
    }
    if (da >= 0 && m < 16)
      memcpy(out[m++], a, sizeof out[0]);
    if ((da >= 0) != (db >= 0) && m < 16) {
      double t = da / (da - db);
      for (int k = 0; k < 3; k++)
        out[m][k] = a[k] + t * (b[k] - a[k]);
      m++;
    }
  }
  memcpy(v, out, sizeof(double[3]) * (size_t)m);
  return m;
}

double
calib_pitch_max_disparity(const StereoCalib *c, double x0, double x1, double y0, double y1,
                          double top_m)
{
  const double *R = c->pose_rotation, *C = c->pose_centre;
  double f = c->P1[0], fy = c->P1[5], cx = c->P1[2], cy = c->P1[6];
  double fb = f * calib_baseline(c), doffs = calib_doffs(c);
  /* the rays of the image's corners (in order around it) and the optical axis, in pitch
   * coordinates; the view's side planes hold two neighbouring corner rays */
  const double px[4] = { 0, c->width - 1.0, c->width - 1.0, 0 };
  const double py[4] = { 0, 0, c->height - 1.0, c->height - 1.0 };
  double ray[4][3], axis[3] = { R[2], R[5], R[8] };
  for (int i = 0; i < 4; i++) {
    double cam[3] = { (px[i] - cx) / f, (py[i] - cy) / fy, 1 };
    for (int k = 0; k < 3; k++)
      ray[i][k] = R[3 * k] * cam[0] + R[3 * k + 1] * cam[1] + R[3 * k + 2] * cam[2];
  }
  double best = 0.0;
  const double heights[2] = { 0.0, top_m };
  for (int hz = 0; hz < 2; hz++) {
    double v[16][3] = { { x0, y0, heights[hz] }, { x1, y0, heights[hz] },
                        { x1, y1, heights[hz] }, { x0, y1, heights[hz] } };
    int n = 4;
    for (int i = 0; i < 4 && n > 0; i++) {
      const double *a = ray[i], *b = ray[(i + 1) % 4];
      double nrm[3] = { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                        a[0] * b[1] - a[1] * b[0] };
      if (nrm[0] * axis[0] + nrm[1] * axis[1] + nrm[2] * axis[2] < 0)
        for (int k = 0; k < 3; k++)
          nrm[k] = -nrm[k];   /* towards the inside of the view */
      n = clip_polygon(v, n, nrm, C);
    }
    /* in front of the camera by 0.1 m at least: axis . (p - C) >= 0.1 */
    const double front[3] = { C[0] + 0.1 * axis[0], C[1] + 0.1 * axis[1], C[2] + 0.1 * axis[2] };
    if (n > 0)
      n = clip_polygon(v, n, axis, front);
    for (int i = 0; i < n; i++) {
      double z = axis[0] * (v[i][0] - C[0]) + axis[1] * (v[i][1] - C[1]) +
                 axis[2] * (v[i][2] - C[2]);
      if (z > 0)
        best = MAX(best, fb / z + doffs);
    }
  }
  return best;
}

bool
calib_ground_plane(const StereoCalib *c, double plane[3])
{
  const double *R = c->pose_rotation;
  double f = c->P1[0], fy = c->P1[5], cx = c->P1[2], cy = c->P1[6], h = c->pose_centre[2];
  if (!(h >= 0.5 && f > 0.0 && fy > 0.0))
    return false;
  /* pitch z of the point at depth Z on the ray (x, y): Z (R[6] (x - cx) / f + R[7]
   * (y - cy) / fy + R[8]) + h = 0, and d = f B / Z + doffs */
  double k = -f * calib_baseline(c) / h;
  double a = k * R[6] / f, b = k * R[7] / fy;
  double cc = k * (R[8] - R[6] * cx / f - R[7] * cy / fy) + calib_doffs(c);
  if (!(fabs(a) <= 0.5 && fabs(b) <= 10.0 && isfinite(cc) && fabs(cc) <= 1.0e5))
    return false;
  plane[0] = a;
  plane[1] = b;
  plane[2] = cc;
  return true;
}

bool
calib_pixel_to_pitch(const StereoCalib *c, double x, double y, double d, double pitch[3])
{
  double cam[3];
  if (!calib_reproject(c, x, y, d, cam))
    return false;
  calib_camera_to_pitch(c, cam, pitch);
  return true;
}

void
calib_rotation_to_quaternion(const double R[9], double q[4])
{
  /* Shepperd's method: divide by the largest of the four candidates. */
  double t = R[0] + R[4] + R[8];
  double w, x, y, z;
  if (t > R[0] && t > R[4] && t > R[8]) {
    double s = 2.0 * sqrt(1.0 + t);
    w = 0.25 * s;
    x = (R[7] - R[5]) / s;
    y = (R[2] - R[6]) / s;
    z = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    double s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
    w = (R[7] - R[5]) / s;
    x = 0.25 * s;
    y = (R[1] + R[3]) / s;
    z = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    double s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
    w = (R[2] - R[6]) / s;
    x = (R[1] + R[3]) / s;
    y = 0.25 * s;
    z = (R[5] + R[7]) / s;
  } else {
    double s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
    w = (R[3] - R[1]) / s;
    x = (R[2] + R[6]) / s;
    y = (R[5] + R[7]) / s;
    z = 0.25 * s;
  }
  double sign = w < 0 ? -1.0 : 1.0;
  double n = sign / sqrt(w * w + x * x + y * y + z * z);
  q[0] = w * n;
  q[1] = x * n;
  q[2] = y * n;
  q[3] = z * n;
}

void
calib_rotation_from_quaternion(const double in[4], double R[9])
{
  double n = sqrt(in[0] * in[0] + in[1] * in[1] + in[2] * in[2] + in[3] * in[3]);
  double w = in[0] / n, x = in[1] / n, y = in[2] / n, z = in[3] / n;
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);
  R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}
