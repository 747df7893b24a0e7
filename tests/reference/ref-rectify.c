/* ref-rectify.c: rectification and depth of the reference (docs/algorithm.md §0). */
#include "reference.h"

#include <math.h>

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
      calib_rectified_to_raw(calib, side, x, y, &u, &v);
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
  return (unsigned)MIN(round(z), 65535.0);
}
