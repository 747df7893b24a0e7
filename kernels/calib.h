/* calib.h: the calibration of one stereo pair, its file format and its geometry.
 *
 * A calibration file is a GKeyFile documented key by key in config/calib/example.conf:
 * the image size, the intrinsics K and OpenCV distortion (any of OpenCV's models: 4, 5,
 * 8, 12 or 14 coefficients) of both raw cameras, the output of OpenCV's stereoRectify
 * (R1 R2 P1 P2 Q) and the pose of the LEFT RECTIFIED camera in pitch coordinates.
 *
 * Conventions (all lengths in metres, pixels with their centres at integer coordinates,
 * x to the right and y down, as OpenCV):
 *  - camera frame: x right, y down, z forward (optical axis), origin at the centre of
 *    projection;
 *  - pitch frame: origin at the centre spot, x along the touchline, y across the pitch,
 *    z up; the pitch is 105 x 68 m, x in [-52.5, 52.5], y in [-34, 34];
 *  - pose: a point p_cam in the left rectified camera frame is
 *    p_pitch = pose_rotation * p_cam + pose_centre; the columns of pose_rotation are the
 *    camera axes expressed in pitch coordinates and pose_centre is the camera centre;
 *  - rectified disparity d = x_left - x_right (px), d >= 0; depth Z = f B / (d - doffs)
 *    with f = P1[0][0], B = -P2[0][3] / P2[0][0] (the right camera sits at +B along the
 *    left camera's x axis) and doffs = P1[0][2] - P2[0][2] (0 when stereoRectify ran with
 *    CALIB_ZERO_DISPARITY).
 *
 * Matrices are stored row-major. StereoCalib is plain data: copy it freely. The
 * functions below are pure (no global state) and thread safe.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

/* The lens distortion coefficients in OpenCV's order (distCoeffs of calibrateCamera with
 * CALIB_RATIONAL_MODEL, CALIB_THIN_PRISM_MODEL and CALIB_TILTED_MODEL): radial k1..k6
 * (k4..k6 divide), tangential p1 p2, thin prism s1..s4 and the sensor tilt tau_x tau_y
 * (radians). OpenCV's shorter models are this one with the later terms 0. */
typedef enum {
  CALIB_DIST_K1, CALIB_DIST_K2, CALIB_DIST_P1, CALIB_DIST_P2, CALIB_DIST_K3,
  CALIB_DIST_K4, CALIB_DIST_K5, CALIB_DIST_K6,
  CALIB_DIST_S1, CALIB_DIST_S2, CALIB_DIST_S3, CALIB_DIST_S4,
  CALIB_DIST_TAU_X, CALIB_DIST_TAU_Y,
  CALIB_DIST_COUNT
} CalibDistTerm;

typedef struct {
  int width, height;            /* image size, px, same for both cameras and the rectified views */

  double K_left[9];             /* raw left intrinsics: fx s cx / 0 fy cy / 0 0 1 */
  double dist_left[CALIB_DIST_COUNT];   /* CalibDistTerm order; unused terms 0 */
  double K_right[9];
  double dist_right[CALIB_DIST_COUNT];

  double R1[9];                 /* rotation raw left camera -> rectified left camera */
  double R2[9];                 /* rotation raw right camera -> rectified right camera */
  double P1[12];                /* 3x4 projection of the left rectified view */
  double P2[12];                /* 3x4 projection of the right rectified view, P2[3] = -f B */
  double Q[16];                 /* 4x4 reprojection: [X Y Z W]^T = Q [x y d 1]^T */

  double pose_rotation[9];      /* left rectified camera -> pitch */
  double pose_centre[3];        /* left rectified camera centre, pitch metres */
} StereoCalib;

#define CALIB_ERROR (calib_error_quark())
GQuark calib_error_quark(void);

typedef enum {
  CALIB_ERROR_IO,               /* the file cannot be read or written */
  CALIB_ERROR_SYNTAX,           /* not a key file */
  CALIB_ERROR_MISSING,          /* a required group or key is absent */
  CALIB_ERROR_MALFORMED,        /* not a list of numbers, or the wrong count */
  CALIB_ERROR_INVALID,          /* numbers out of range or inconsistent */
  CALIB_ERROR_UNKNOWN,          /* a group or key this version does not know */
  CALIB_ERROR_COUNT
} CalibError;

/* Reads and validates a calibration file. On failure returns FALSE, leaves *calib
 * unspecified and sets an error whose message is "FILE: [group] key: problem". The file
 * is read with common/keyfile.h: only a regular file of at most 1 MiB (a FIFO or a
 * device is CALIB_ERROR_IO at once), no NUL byte, no group or key twice, decimal numbers
 * only. */
bool calib_load(const char *path, StereoCalib *calib, GError **error);

/* Parses calibration text; `name` stands for the file name in error messages. */
bool calib_load_data(const char *data, gsize length, const char *name, StereoCalib *calib,
                     GError **error);

/* Checks a calibration held in memory with the same rules as calib_load(); messages
 * name the group and key the value would be stored under ("calibration: [...] ..."). */
bool calib_validate(const StereoCalib *calib, GError **error);

/* Writes the calibration (validated first) with every number at full precision,
 * atomically (temporary file + rename). Each distortion key gets the shortest of
 * OpenCV's models (5, 8, 12 or 14 numbers) that holds its non-zero coefficients, so a
 * five-coefficient file is written back byte for byte. */
bool calib_save(const char *path, const StereoCalib *calib, GError **error);
/* The file text calib_save() writes; free with g_free(). */
char *calib_to_data(const StereoCalib *calib);

/* An ideal pair: both raw cameras have intrinsics fx = fy = focal, (cx, cy), the given
 * five-coefficient distortion k1 k2 p1 p2 k3 (NULL = none; the higher terms are 0, set
 * dist_left/dist_right afterwards for the others) and are already parallel (R1 = R2 =
 * identity); the rectified views keep the same focal length and principal point; the
 * right camera is at +baseline along the left camera's x axis. `rotation`/`centre` give
 * the pose. */
void calib_init_ideal(StereoCalib *calib, int width, int height, double focal, double cx,
                      double cy, double baseline, const double dist[5],
                      const double rotation[9], const double centre[3]);

/* The number of coefficients of the shortest OpenCV model that holds every non-zero
 * term of `dist`: 5 (k1 k2 p1 p2 k3), 8 (+ k4 k5 k6), 12 (+ s1..s4) or 14 (+ tau). */
int calib_dist_model(const double dist[CALIB_DIST_COUNT]);

/* Derived numbers of the rectified pair. */
double calib_focal(const StereoCalib *calib);      /* f = P1[0][0], px */
double calib_baseline(const StereoCalib *calib);   /* B = -P2[0][3] / P2[0][0], m */
double calib_doffs(const StereoCalib *calib);      /* P1[0][2] - P2[0][2], px */

/* The largest disparity (px) of a point of the box [x0, x1] x [y0, y1] x [0, top_m] of
 * the pitch frame (the pitch, the ground around it and what stands on it) that the left
 * rectified view sees at a depth of at least 0.1 m. On a plane z = h the depth is affine
 * in (x, y), so its smallest over the part of the rectangle inside the view (the
 * rectangle clipped by the view's four side planes) is at a vertex of that polygon; the
 * planes z = 0 and z = top_m are taken, and the larger disparity. 0 when the view sees
 * none of it. */
double calib_pitch_max_disparity(const StereoCalib *calib, double x0, double x1, double y0,
                                 double y1, double top_m);

/* The disparity of the pitch plane z = 0 on the left rectified grid, d = a x + b y + c
 * (plane = a, b, c in px), from the pose: a ray of the view meets the plane at a depth
 * affine in 1 / (d - doffs), so d is affine in (x, y); where the ray does not go down to
 * the plane (above the horizon) d comes out below doffs, which bounds nothing. FALSE
 * when the camera is not at least 0.5 m above the plane or the plane tilts more than
 * 0.5 px of d a px along x (a baseline longer than half the camera's height). */
bool calib_ground_plane(const StereoCalib *calib, double plane[3]);

/* Depth Z of a disparity d (px) in millimetres: 1000 f B / (d - doffs); +inf when
 * d - doffs <= 0 (a point at infinity), NaN when d is NaN. */
double calib_depth_mm(const StereoCalib *calib, double disparity);

/* Rectified left pixel (x, y) with disparity d -> point in the left rectified camera
 * frame (metres) through Q. Returns FALSE (point left untouched) when the homogeneous
 * W <= 0 or d is not finite. */
bool calib_reproject(const StereoCalib *calib, double x, double y, double disparity,
                     double point[3]);

/* Left rectified camera frame -> pitch frame through the pose. */
void calib_camera_to_pitch(const StereoCalib *calib, const double camera[3], double pitch[3]);

/* calib_reproject() followed by calib_camera_to_pitch(). */
bool calib_pixel_to_pitch(const StereoCalib *calib, double x, double y, double disparity,
                          double pitch[3]);

/* The pose rotation as a unit quaternion (w, x, y, z), w >= 0, and back: how stereod
 * publishes the pose in a ring header (<stereod/ring.h>, producer[]). The round trip is
 * exact to ~1e-15 for a proper rotation; from_quaternion normalises its input. */
void calib_rotation_to_quaternion(const double rotation[9], double q[4]);
void calib_rotation_from_quaternion(const double q[4], double rotation[9]);

typedef enum {
  CALIB_LEFT,
  CALIB_RIGHT,
  CALIB_SIDE_COUNT
} CalibSide;

/* The rectification map of OpenCV's initUndistortRectifyMap for one pixel: rectified
 * pixel (x, y) of `side` -> position (u, v) in that side's raw, distorted image, with the
 * full 14-coefficient model (config/calib/README.md gives the formulas). One difference:
 * a skew K[0][1] is applied (u = fx x'' + s y'' + cx), where OpenCV ignores it; its own
 * calibration always leaves it 0. */
void calib_rectified_to_raw(const StereoCalib *calib, CalibSide side, double x, double y,
                            double *u, double *v);

G_END_DECLS
