/* imageio-jpeg.c: JPEG through TurboJPEG 2.x, and the colour view of a disparity map
 * (see imageio.h). */
#include "tools/imageio-private.h"

#include <math.h>
#include <string.h>
#include <turbojpeg.h>

ImageioU8 *
imageio_jpeg_decode_gray(const uint8_t *data, size_t size, const char *name,
                         const ImageioLimits *limits, GError **error)
{
  tjhandle tj = tjInitDecompress();
  if (!tj)
    return imageio_fail(error, IMAGEIO_ERROR_ENCODE, name, "TurboJPEG initialisation failed");

  ImageioU8 *out = NULL;
  int w, h, subsamp, colorspace;
  if (tjDecompressHeader3(tj, data, (unsigned long)size, &w, &h, &subsamp, &colorspace) < 0) {
    imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "corrupt JPEG header: %s",
                 tjGetErrorStr2(tj));
  } else if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
    imageio_fail(error, IMAGEIO_ERROR_UNSUPPORTED, name, "CMYK JPEG files are not supported");
  } else if (imageio_check_size(w, h, limits, name, error)) {
    out = imageio_u8_new(w, h);
    /* Warnings (premature end of data, corrupt segments) count as failures: a file tool
     * should not silently compute on a half-grey image. LIMITSCANS bounds the work a
     * malicious progressive file can cause. */
    if (tjDecompress2(tj, data, (unsigned long)size, out->data, w, (int)out->stride, h,
                      TJPF_GRAY, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) < 0) {
      imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "corrupt or truncated JPEG data: %s",
                   tjGetErrorStr2(tj));
      g_clear_pointer(&out, imageio_u8_free);
    }
  }
  tjDestroy(tj);
  return out;
}

/* ---------------------------------------------------------------- colour view */

void
imageio_colormap_turbo(float t, uint8_t rgb[3])
{
  if (isnan(t)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  /* Polynomial approximation of the Turbo colour map (A. Mikhailov, Google, 2019;
   * approximation by R. Du, Apache-2.0). Close to the published table in the middle, a
   * little darker at both ends; this is a picture for people, not a measurement. */
  static const double k[3][6] = {
    { 0.13572138, 4.61539260, -42.66032258, 132.13108234, -152.94239396, 59.28637943 },
    { 0.09140261, 2.19418839, 4.84296658, -14.18503333, 4.27729857, 2.82956604 },
    { 0.10667330, 12.64194608, -60.58204836, 110.36276771, -89.90310912, 27.34824973 },
  };
  double x = CLAMP((double)t, 0.0, 1.0);
  double p[6] = { 1.0, x, x * x, x * x * x, x * x * x * x, x * x * x * x * x };
  for (int c = 0; c < 3; c++) {
    double v = 0.0;
    for (int i = 0; i < 6; i++)
      v += k[c][i] * p[i];
    rgb[c] = (uint8_t)lround(CLAMP(v, 0.0, 1.0) * 255.0);
  }
}

/* k-th smallest of v[0..n-1] (0-based, no NaN); reorders v. Three-way quickselect. */
static float
select_kth(float *v, size_t n, size_t k)
{
  size_t lo = 0, hi = n - 1;
  while (lo < hi) {
    float pivot = v[lo + (hi - lo) / 2];
    /* [lo, lt) < pivot, [lt, i) == pivot, (gt, hi] > pivot. An element equal to the
     * pivot always stays in the middle, so gt never passes below lo. */
    size_t lt = lo, i = lo, gt = hi;
    while (i <= gt) {
      float t = v[i];
      if (t < pivot) {
        v[i++] = v[lt];
        v[lt++] = t;
      } else if (t > pivot) {
        v[i] = v[gt];
        v[gt--] = t;
      } else {
        i++;
      }
    }
    if (k < lt)
      hi = lt - 1;
    else if (k > gt)
      lo = gt + 1;
    else
      return pivot;
  }
  return v[lo];
}

float
imageio_disparity_percentile(const float *disparity, int width, int height, size_t stride,
                             double q)
{
  g_return_val_if_fail(disparity && width > 0 && height > 0, NAN);
  g_autofree float *v = g_new(float, (size_t)width * height);
  size_t n = 0;
  for (int y = 0; y < height; y++) {
    const float *row = (const float *)((const uint8_t *)disparity + (size_t)y * stride);
    for (int x = 0; x < width; x++)
      if (isfinite(row[x]))
        v[n++] = row[x];
  }
  if (n == 0)
    return NAN;
  double rank = ceil(CLAMP(q, 0.0, 1.0) * (double)n);
  size_t k = rank < 1.0 ? 0 : (size_t)rank - 1;
  return select_kth(v, n, MIN(k, n - 1));
}

bool
imageio_write_color_jpeg(const char *path, const float *disparity, int width, int height,
                         size_t stride, float max_disparity, int quality, float *used_max,
                         GError **error)
{
  g_return_val_if_fail(disparity && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  g_return_val_if_fail(quality >= 0 && quality <= 100, false);
  if (!(max_disparity > 0.0f)) {
    max_disparity = imageio_disparity_percentile(disparity, width, height, stride, 0.99);
    if (!(max_disparity > 0.0f))
      max_disparity = 1.0f;
  }
  if (used_max)
    *used_max = max_disparity;

  g_autofree uint8_t *rgb = g_malloc((size_t)width * height * 3);
  for (int y = 0; y < height; y++) {
    const float *row = (const float *)((const uint8_t *)disparity + (size_t)y * stride);
    uint8_t *dst = rgb + (size_t)y * width * 3;
    for (int x = 0; x < width; x++) {
      /* +-inf is invalid too (PFM files mark invalid pixels with inf). */
      float d = row[x];
      imageio_colormap_turbo(isfinite(d) ? d / max_disparity : NAN, dst + 3 * x);
    }
  }

  tjhandle tj = tjInitCompress();
  if (!tj) {
    imageio_fail(error, IMAGEIO_ERROR_ENCODE, path, "TurboJPEG initialisation failed");
    return false;
  }
  unsigned char *jpeg = NULL;
  unsigned long jpeg_size = 0;
  bool ok = tjCompress2(tj, rgb, width, width * 3, height, TJPF_RGB, &jpeg, &jpeg_size,
                        TJSAMP_444, quality ? quality : 90, 0) == 0;
  if (!ok)
    imageio_fail(error, IMAGEIO_ERROR_ENCODE, path, "JPEG encoding failed: %s",
                 tjGetErrorStr2(tj));
  else
    ok = imageio_save_file(path, jpeg, jpeg_size, error);
  tjFree(jpeg);
  tjDestroy(tj);
  return ok;
}
