/* calib-private.h: what calib.c and calib-lens.c share; not part of the module's API. */
#pragma once

#include "calib.h"

/* The lens of one side: every distortion coefficient within its range (|k|, |p|, |s| <=
 * 1000, |tau| <= 0.5 rad), the rectified image in front of the raw camera, and the
 * rational denominator 1 + k4 r^2 + k5 r^4 + k6 r^6 positive over the image. Needs K, R
 * and P checked first. Errors are "FILE: [group] key: problem" (CALIB_ERROR_INVALID). */
bool calib_check_lens(const StereoCalib *calib, CalibSide side, const char *file,
                      GError **error);
