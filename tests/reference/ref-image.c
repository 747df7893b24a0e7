/* ref-image.c: images, ingest, pyramid, quadrature filter and the shared convolution of
 * the reference (docs/algorithm.md §1-§4). */
#include "reference.h"

#include <math.h>
#include <string.h>

RefImage *
ref_image_new(int w, int h, int ch)
{
  g_return_val_if_fail(w > 0 && h > 0 && ch > 0, NULL);
  RefImage *img = g_new(RefImage, 1);
  img->w = w;
  img->h = h;
  img->ch = ch;
  img->data = g_new0(double, (size_t)w * h * ch);
  return img;
}

RefImage *
ref_image_copy(const RefImage *img)
{
  RefImage *c = ref_image_new(img->w, img->h, img->ch);
  memcpy(c->data, img->data, sizeof(double) * (size_t)img->w * img->h * img->ch);
  return c;
}

void
ref_image_free(RefImage *img)
{
  if (!img)
    return;
  g_free(img->data);
  g_free(img);
}

static inline int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

RefImage *
ref_ingest(const uint8_t *y, int w, int h, size_t stride)
{
  RefImage *img = ref_image_new(w, h, 1);
  for (int j = 0; j < h; j++)
    for (int i = 0; i < w; i++)
      img->data[(size_t)j * w + i] = y[(size_t)j * stride + i] / 255.0;
  return img;
}

RefImage *
ref_reduce(const RefImage *in)
{
  static const double b[5] = { 1 / 16.0, 4 / 16.0, 6 / 16.0, 4 / 16.0, 1 / 16.0 };
  int W = in->w, H = in->h, ch = in->ch;
  int w = (W + 1) / 2, h = (H + 1) / 2;
  /* Rows first (on the even columns only), then columns. */
  g_autoptr(RefImage) t = ref_image_new(w, H, ch);
  for (int y = 0; y < H; y++)
    for (int i = 0; i < w; i++)
      for (int c = 0; c < ch; c++) {
        double s = 0.0;
        for (int m = -2; m <= 2; m++)
          s += b[m + 2] * ref_image_at(in, clampi(2 * i + m, 0, W - 1), y)[c];
        ref_image_at(t, i, y)[c] = s;
      }
  RefImage *out = ref_image_new(w, h, ch);
  for (int j = 0; j < h; j++)
    for (int i = 0; i < w; i++)
      for (int c = 0; c < ch; c++) {
        double s = 0.0;
        for (int n = -2; n <= 2; n++)
          s += b[n + 2] * ref_image_at(t, i, clampi(2 * j + n, 0, H - 1))[c];
        ref_image_at(out, i, j)[c] = s;
      }
  return out;
}

RefImage *
ref_quadrature(const StereoParams *p, const RefImage *in)
{
  g_return_val_if_fail(in->ch == 1, NULL);
  int R = p->radius, W = in->w, H = in->h;
  double hre[2 * STEREO_MAX_RADIUS + 1], him[2 * STEREO_MAX_RADIUS + 1];
  double v[2 * STEREO_MAX_RADIUS + 1];
  stereo_params_filter_taps(p, hre, him, v);

  g_autoptr(RefImage) t = ref_image_new(W, H, 2);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double re = 0.0, im = 0.0;
      for (int k = -R; k <= R; k++) {
        double a = in->data[(size_t)y * W + clampi(x + k, 0, W - 1)];
        re += a * hre[k + R];
        im += a * him[k + R];
      }
      ref_image_at(t, x, y)[0] = re;
      ref_image_at(t, x, y)[1] = im;
    }
  RefImage *q = ref_image_new(W, H, 2);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double re = 0.0, im = 0.0;
      for (int j = -R; j <= R; j++) {
        const double *s = ref_image_at(t, x, clampi(y + j, 0, H - 1));
        re += v[j + R] * s[0];
        im += v[j + R] * s[1];
      }
      ref_image_at(q, x, y)[0] = re;
      ref_image_at(q, x, y)[1] = im;
    }
  return q;
}

double
ref_mean_magnitude(const RefImage *q)
{
  g_return_val_if_fail(q->ch == 2, 0.0);
  size_t n = (size_t)q->w * q->h;
  double s = 0.0;
  for (size_t i = 0; i < n; i++)
    s += hypot(q->data[2 * i], q->data[2 * i + 1]);
  return s / (double)n;
}

RefImage *
ref_convolve_zero(const RefImage *in, const double *taps, int r)
{
  int W = in->w, H = in->h, ch = in->ch;
  g_autoptr(RefImage) t = ref_image_new(W, H, ch);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double *o = ref_image_at(t, x, y);
      for (int k = -r; k <= r; k++) {
        int xx = x + k;
        if (xx < 0 || xx >= W)
          continue;
        const double *s = ref_image_at(in, xx, y);
        for (int c = 0; c < ch; c++)
          o[c] += taps[k + r] * s[c];
      }
    }
  RefImage *out = ref_image_new(W, H, ch);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double *o = ref_image_at(out, x, y);
      for (int k = -r; k <= r; k++) {
        int yy = y + k;
        if (yy < 0 || yy >= H)
          continue;
        const double *s = ref_image_at(t, x, yy);
        for (int c = 0; c < ch; c++)
          o[c] += taps[k + r] * s[c];
      }
    }
  return out;
}

RefPyramid *
ref_pyramid_new(const StereoParams *p, const uint8_t *left, size_t left_stride,
                const uint8_t *right, size_t right_stride)
{
  RefPyramid *pyr = g_new0(RefPyramid, 1);
  pyr->levels = stereo_params_get_levels(p);
  int S = pyr->levels;
  /* The search level may lie below the phase levels' coarsest level only if
   * start_level clamps it; build what either needs. */
  if (p->search_level >= S)
    S = p->search_level + 1;
  pyr->img[0][0] = ref_ingest(left, p->width, p->height, left_stride);
  pyr->img[1][0] = ref_ingest(right, p->width, p->height, right_stride);
  for (int s = 1; s < S; s++)
    for (int i = 0; i < 2; i++)
      pyr->img[i][s] = ref_reduce(pyr->img[i][s - 1]);
  for (int s = 0; s < pyr->levels; s++)
    for (int i = 0; i < 2; i++)
      pyr->q[i][s] = ref_quadrature(p, pyr->img[i][s]);
  return pyr;
}

void
ref_pyramid_free(RefPyramid *pyr)
{
  if (!pyr)
    return;
  for (int s = 0; s < STEREO_MAX_LEVELS; s++)
    for (int i = 0; i < 2; i++) {
      ref_image_free(pyr->img[i][s]);
      ref_image_free(pyr->q[i][s]);
    }
  g_free(pyr);
}
