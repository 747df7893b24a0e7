/* render.c: the pictures of the page, as JPEG (see web.h, WebEncoder).
 *
 * A picture wider than max_width is scaled down by the smallest whole factor k that fits:
 * each output pixel is the mean of the valid values of its k x k box (invalid when none
 * is), so a thin object stays visible and invalid pixels never darken their neighbours.
 * Colours come from imageio_colormap_turbo, the colour map of stereod-dump --color, through
 * a table of 1024 entries (the page's colour bars are drawn from the same function).
 */
#include "web/web.h"

#include <math.h>
#include <string.h>
#include <turbojpeg.h>

#include "tools/imageio.h"

#define LUT_SIZE 1024

struct WebEncoder {
  tjhandle tj;
  int quality, max_width;
  uint8_t lut[LUT_SIZE][3];
  uint8_t *pixels;               /* the picture before encoding, reused */
  size_t capacity;
  unsigned char *jpeg;           /* TurboJPEG's buffer, reused */
  unsigned long jpeg_capacity;
};

static const char *const view_names[WEB_VIEW_COUNT] = { "left", "color", "confidence",
                                                        "height" };

const char *
web_view_name(WebView view)
{
  return view >= 0 && view < WEB_VIEW_COUNT ? view_names[view] : NULL;
}

WebView
web_view_from_name(const char *name)
{
  int i = 0;
  while (name && i < WEB_VIEW_COUNT && strcmp(name, view_names[i]) != 0)
    i++;
  return name ? (WebView)i : WEB_VIEW_COUNT;
}

void
web_colormap_table(uint8_t *rgb, int n)
{
  g_return_if_fail(rgb && n >= 2 && n <= LUT_SIZE);
  for (int i = 0; i < n; i++)
    imageio_colormap_turbo((float)i / (float)(n - 1), rgb + 3 * i);
}

WebEncoder *
web_encoder_new(int quality, int max_width)
{
  g_return_val_if_fail(quality >= 1 && quality <= 100 && max_width >= 16, NULL);
  WebEncoder *e = g_new0(WebEncoder, 1);
  e->tj = tjInitCompress();
  g_assert(e->tj);   /* fails only when out of memory */
  e->quality = quality;
  e->max_width = max_width;
  web_colormap_table(&e->lut[0][0], LUT_SIZE);
  return e;
}

void
web_encoder_free(WebEncoder *e)
{
  if (!e)
    return;
  tjDestroy(e->tj);
  tjFree(e->jpeg);
  g_free(e->pixels);
  g_free(e);
}

static uint8_t *
pixels(WebEncoder *e, size_t n)
{
  if (n > e->capacity) {
    g_free(e->pixels);
    e->pixels = g_malloc(n);
    e->capacity = n;
  }
  return e->pixels;
}

static GBytes *
encode(WebEncoder *e, int w, int h, bool color, GError **error)
{
  if (tjCompress2(e->tj, e->pixels, w, 0, h, color ? TJPF_RGB : TJPF_GRAY, &e->jpeg,
                  &e->jpeg_capacity, color ? TJSAMP_420 : TJSAMP_GRAY, e->quality, 0) != 0) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "JPEG encoding failed: %s",
                tjGetErrorStr2(e->tj));
    return NULL;
  }
  /* the buffer is kept from one picture to the next: tjCompress2 takes jpeg_capacity as
   * its size, grows it when a picture needs more, and leaves this JPEG's size there */
  return g_bytes_new(e->jpeg, e->jpeg_capacity);
}

static int
factor(const WebEncoder *e, int width)
{
  return MAX(1, (width + e->max_width - 1) / e->max_width);
}

static inline const void *
row(const void *base, size_t stride, int y)
{
  return (const uint8_t *)base + (size_t)y * stride;
}

static void
put_color(const WebEncoder *e, uint8_t *px, double t)
{
  if (isnan(t)) {
    px[0] = px[1] = px[2] = 0;
    return;
  }
  int i = (int)lround(CLAMP(t, 0.0, 1.0) * (LUT_SIZE - 1));
  memcpy(px, e->lut[i], 3);
}

/* The mean of the valid values of box (x, y) of a plane: `kind` picks the element type
 * and what is invalid. NaN when no value of the box is valid. */
static double
box_mean(const StereodFrame *f, int kind, int x0, int y0, int k)
{
  const uint8_t *base = kind == STEREOD_RING_PLANE_DISPARITY ? (const uint8_t *)f->disparity
                      : kind == STEREOD_RING_PLANE_DEPTH ? (const uint8_t *)f->depth
                      : kind == STEREOD_RING_PLANE_CONFIDENCE ? f->confidence
                      : (const uint8_t *)f->float32;
  size_t stride = f->strides[kind];
  double sum = 0;
  int n = 0;
  for (int y = y0; y < y0 + k; y++) {
    const void *r = row(base, stride, y);
    for (int x = x0; x < x0 + k; x++) {
      double v;
      switch (kind) {
      case STEREOD_RING_PLANE_DISPARITY: {
        int16_t d = ((const int16_t *)r)[x];
        if (d == STEREOD_RING_DISPARITY_INVALID)
          continue;
        v = d;
        break;
      }
      case STEREOD_RING_PLANE_DEPTH:
        v = ((const uint16_t *)r)[x];
        if (v == 0)
          continue;
        break;
      case STEREOD_RING_PLANE_CONFIDENCE:
        v = ((const uint8_t *)r)[x];
        if (v == 0)
          continue;
        break;
      default:
        v = ((const float *)r)[x];
        if (!isfinite(v))
          continue;
        break;
      }
      sum += v;
      n++;
    }
  }
  return n ? sum / n : NAN;
}

GBytes *
web_encoder_frame(WebEncoder *e, const StereodFrame *f, WebView view, const WebScale *s,
                  GError **error)
{
  g_return_val_if_fail(e && f && s, NULL);
  int kind;
  if (view == WEB_VIEW_COLOR)
    kind = s->color == WEB_COLOR_DEPTH ? STEREOD_RING_PLANE_DEPTH : STEREOD_RING_PLANE_DISPARITY;
  else if (view == WEB_VIEW_CONFIDENCE)
    kind = STEREOD_RING_PLANE_CONFIDENCE;
  else if (view == WEB_VIEW_HEIGHT)
    kind = f->float32 ? STEREOD_RING_PLANE_FLOAT32 : STEREOD_RING_PLANE_DEPTH;
  else
    g_return_val_if_reached(NULL);
  if (!(f->formats & STEREOD_RING_FORMAT(kind)) || f->width == 0 || f->height == 0) {
    static const char *const plane_names[] = { "disparity", "depth", "confidence", "float32",
                                               "flow_u", "flow_v" };
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "the ring has no %s plane",
                plane_names[kind]);
    return NULL;
  }
  int k = factor(e, (int)f->width);
  int w = (int)f->width / k, h = (int)f->height / k;
  if (w < 1 || h < 1) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a %ux%u frame is too small",
                f->width, f->height);
    return NULL;
  }
  bool color = view != WEB_VIEW_CONFIDENCE;
  uint8_t *out = pixels(e, (size_t)w * h * (color ? 3 : 1));
  double near = s->min_depth * 1000, far = s->max_depth * 1000;   /* mm */
  for (int y = 0; y < h; y++) {
    /* the height map's row 0 is the y0 side of the pitch: the far side goes on top */
    int oy = view == WEB_VIEW_HEIGHT ? h - 1 - y : y;
    uint8_t *o = out + (size_t)oy * w * (color ? 3 : 1);
    for (int x = 0; x < w; x++) {
      double v = box_mean(f, kind, x * k, y * k, k);
      switch (view) {
      case WEB_VIEW_CONFIDENCE:
        o[x] = isnan(v) ? 0 : (uint8_t)lround(v);
        break;
      case WEB_VIEW_HEIGHT:
        if (kind == STEREOD_RING_PLANE_DEPTH)
          v *= 1e-3;
        put_color(e, o + 3 * x, v / s->max_height);
        break;
      default:
        if (kind == STEREOD_RING_PLANE_DEPTH)
          /* near warm, as with disparity */
          put_color(e, o + 3 * x, far > near ? (far - v) / (far - near) : NAN);
        else
          put_color(e, o + 3 * x, v * f->disparity_scale / s->max_disparity);
        break;
      }
    }
  }
  return encode(e, w, h, color, error);
}

GBytes *
web_encoder_gray(WebEncoder *e, const uint8_t *data, int width, int height, size_t stride,
                 GError **error)
{
  g_return_val_if_fail(e && data && width > 0 && height > 0 && stride >= (size_t)width, NULL);
  int k = factor(e, width);
  int w = width / k, h = height / k;
  if (w < 1 || h < 1) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "a %dx%d picture is too small",
                width, height);
    return NULL;
  }
  uint8_t *out = pixels(e, (size_t)w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      unsigned sum = 0;
      for (int j = 0; j < k; j++) {
        const uint8_t *r = row(data, stride, y * k + j);
        for (int i = 0; i < k; i++)
          sum += r[x * k + i];
      }
      out[(size_t)y * w + x] = (uint8_t)((sum + (unsigned)(k * k) / 2) / (unsigned)(k * k));
    }
  return encode(e, w, h, false, error);
}

/* The valid values of a plane in its unit (px for disparity, m for depth). */
static float *
valid_values(const StereodFrame *f, int kind, size_t *n)
{
  float *v = g_new(float, (size_t)f->width * f->height);
  *n = 0;
  for (uint32_t y = 0; y < f->height; y++) {
    if (kind == STEREOD_RING_PLANE_DISPARITY) {
      const int16_t *r = row(f->disparity, f->strides[kind], (int)y);
      for (uint32_t x = 0; x < f->width; x++)
        if (r[x] != STEREOD_RING_DISPARITY_INVALID && r[x] > 0)
          v[(*n)++] = (float)(r[x] * f->disparity_scale);
    } else {
      const uint16_t *r = row(f->depth, f->strides[kind], (int)y);
      for (uint32_t x = 0; x < f->width; x++)
        if (r[x])
          v[(*n)++] = (float)(r[x] * 1e-3);
    }
  }
  return v;
}

bool
web_scale_auto(WebScale *s, const StereodFrame *f)
{
  g_return_val_if_fail(s && f, false);
  bool filled = false;
  if (!(s->max_disparity > 0) && f->disparity) {
    size_t n;
    g_autofree float *v = valid_values(f, STEREOD_RING_PLANE_DISPARITY, &n);
    float p = n ? imageio_disparity_percentile(v, (int)n, 1, n * sizeof(float), 0.99) : NAN;
    if (p > 0) {
      s->max_disparity = MAX(8.0, 8.0 * ceil(p / 8.0));
      filled = true;
    }
  }
  if (!(s->max_depth > s->min_depth) && f->depth) {
    size_t n;
    g_autofree float *v = valid_values(f, STEREOD_RING_PLANE_DEPTH, &n);
    if (n) {
      float lo = imageio_disparity_percentile(v, (int)n, 1, n * sizeof(float), 0.01);
      float hi = imageio_disparity_percentile(v, (int)n, 1, n * sizeof(float), 0.99);
      s->min_depth = floor(lo);
      s->max_depth = MAX(ceil(hi), s->min_depth + 1);
      filled = true;
    }
  }
  return filled;
}
