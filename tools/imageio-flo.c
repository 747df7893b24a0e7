/* imageio-flo.c: optical-flow files (see imageio.h): Middlebury .flo, KITTI flow PNG and
 * the Middlebury colour-wheel picture. */
#include "tools/imageio-private.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <string.h>
#include <turbojpeg.h>

#define FLO_MAGIC 202021.25f
#define FLO_UNKNOWN 1e10f
#define KITTI_SCALE 64.0
#define KITTI_ZERO 32768.0

bool
imageio_flow_known(float u, float v)
{
  return isfinite(u) && isfinite(v) && fabsf(u) < 1e9f && fabsf(v) < 1e9f;
}

ImageioFlow *
imageio_flow_new(int width, int height)
{
  ImageioFlow *f = g_new0(ImageioFlow, 1);
  f->u = imageio_f32_new(width, height);
  f->v = imageio_f32_new(width, height);
  return f;
}

void
imageio_flow_free(ImageioFlow *flow)
{
  if (!flow)
    return;
  imageio_f32_free(flow->u);
  imageio_f32_free(flow->v);
  g_free(flow);
}

static void
put_f32(uint8_t *dst, float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  u = GUINT32_TO_LE(u);
  memcpy(dst, &u, 4);
}

static float
get_f32(const uint8_t *src)
{
  uint32_t u;
  memcpy(&u, src, 4);
  u = GUINT32_FROM_LE(u);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int32_t
get_i32(const uint8_t *src)
{
  uint32_t u;
  memcpy(&u, src, 4);
  return (int32_t)GUINT32_FROM_LE(u);
}

#define ROWF(base, stride, y) ((const float *)((const uint8_t *)(base) + (size_t)(y) * (stride)))

bool
imageio_write_flo(const char *path, const float *u, const float *v, int width, int height,
                  size_t stride, GError **error)
{
  g_return_val_if_fail(u && v && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  size_t total = 12 + 8 * (size_t)width * height;
  g_autofree uint8_t *buf = g_malloc(total);
  put_f32(buf, FLO_MAGIC);
  uint32_t w = GUINT32_TO_LE((uint32_t)width), h = GUINT32_TO_LE((uint32_t)height);
  memcpy(buf + 4, &w, 4);
  memcpy(buf + 8, &h, 4);
  uint8_t *dst = buf + 12;
  for (int y = 0; y < height; y++) {
    const float *ru = ROWF(u, stride, y), *rv = ROWF(v, stride, y);
    for (int x = 0; x < width; x++) {
      bool known = imageio_flow_known(ru[x], rv[x]);
      put_f32(dst, known ? ru[x] : FLO_UNKNOWN);
      put_f32(dst + 4, known ? rv[x] : FLO_UNKNOWN);
      dst += 8;
    }
  }
  return imageio_save_file(path, buf, total, error);
}

static ImageioFlow *
decode_flo(const void *data, size_t size, const char *name, const ImageioLimits *limits,
           GError **error)
{
  const uint8_t *p = data;
  if (size < 12 || get_f32(p) != FLO_MAGIC)
    return imageio_fail(error, IMAGEIO_ERROR_UNKNOWN_FORMAT, name,
                        "not a Middlebury .flo file (magic 202021.25)");
  int64_t w = get_i32(p + 4), h = get_i32(p + 8);
  if (!imageio_check_size(w, h, limits, name, error))
    return NULL;
  if ((uint64_t)(size - 12) != 8 * (uint64_t)w * (uint64_t)h)
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name,
                        "%zu bytes of flow data for %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                        " pixels (%" G_GUINT64_FORMAT " expected)", size - 12, w, h,
                        (guint64)(8 * (uint64_t)w * (uint64_t)h));
  ImageioFlow *f = imageio_flow_new((int)w, (int)h);
  const uint8_t *src = p + 12;
  for (int y = 0; y < h; y++) {
    float *ru = IMAGEIO_ROW(f->u, y), *rv = IMAGEIO_ROW(f->v, y);
    for (int x = 0; x < w; x++) {
      float a = get_f32(src), b = get_f32(src + 4);
      bool known = imageio_flow_known(a, b);
      ru[x] = known ? a : NAN;
      rv[x] = known ? b : NAN;
      src += 8;
    }
  }
  return f;
}

ImageioFlow *
imageio_decode_flo(const void *data, size_t size, const char *name, GError **error)
{
  ImageioLimits limits = imageio_limits_resolve(NULL);
  return decode_flo(data, size, name, &limits, error);
}

ImageioFlow *
imageio_read_flo_full(const char *path, const ImageioLimits *limits, GError **error)
{
  ImageioLimits lim = imageio_limits_resolve(limits);
  g_autoptr(GBytes) bytes = imageio_read_file(path, &lim, error);
  if (!bytes)
    return NULL;
  size_t size;
  const void *data = g_bytes_get_data(bytes, &size);
  return decode_flo(data, size, path, &lim, error);
}

ImageioFlow *
imageio_read_flo(const char *path, GError **error)
{
  return imageio_read_flo_full(path, NULL, error);
}

/* ---------------------------------------------------------------- KITTI PNG */

void
imageio_flow_to_kitti(float u, float v, uint16_t rgb[3])
{
  if (!imageio_flow_known(u, v)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  rgb[0] = (uint16_t)CLAMP(round(u * KITTI_SCALE + KITTI_ZERO), 0.0, 65535.0);
  rgb[1] = (uint16_t)CLAMP(round(v * KITTI_SCALE + KITTI_ZERO), 0.0, 65535.0);
  rgb[2] = 1;
}

bool
imageio_write_kitti_flow(const char *path, const float *u, const float *v, int width,
                         int height, size_t stride, GError **error)
{
  g_return_val_if_fail(u && v && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  size_t row = 3 * (size_t)width;
  g_autofree uint16_t *px = g_new(uint16_t, row * height);
  for (int y = 0; y < height; y++) {
    const float *ru = ROWF(u, stride, y), *rv = ROWF(v, stride, y);
    for (int x = 0; x < width; x++)
      imageio_flow_to_kitti(ru[x], rv[x], px + (size_t)y * row + 3 * x);
  }
  g_autoptr(GByteArray) out = g_byte_array_new();
  if (!imageio_png_encode(px, width, height, row * sizeof(uint16_t), PNG_COLOR_TYPE_RGB, 16,
                          NULL, 0, false, out, path, error))
    return false;
  return imageio_save_file(path, out->data, out->len, error);
}

/* Classic libpng reading of a 16-bit RGB(A) PNG; libpng's longjmp lands in one place. */
typedef struct {
  const uint8_t *data;
  size_t size, pos;
  char msg[128];
} KittiRead;

static void
kitti_error(png_structp png, png_const_charp msg)
{
  KittiRead *r = png_get_error_ptr(png);
  g_strlcpy(r->msg, msg, sizeof(r->msg));
  png_longjmp(png, 1);
}

static void
kitti_warning(png_structp png, png_const_charp msg)
{
}

static void
kitti_read_fn(png_structp png, png_bytep out, size_t n)
{
  KittiRead *r = png_get_io_ptr(png);
  if (n > r->size - r->pos)
    png_error(png, "truncated PNG data");
  memcpy(out, r->data + r->pos, n);
  r->pos += n;
}

ImageioFlow *
imageio_read_kitti_flow(const char *path, GError **error)
{
  static const uint8_t magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  ImageioLimits limits = imageio_limits_resolve(NULL);
  g_autoptr(GBytes) bytes = imageio_read_file(path, &limits, error);
  if (!bytes)
    return NULL;
  KittiRead r = { 0 };
  r.data = g_bytes_get_data(bytes, &r.size);
  if (r.size < 8 || memcmp(r.data, magic, 8) != 0)
    return imageio_fail(error, IMAGEIO_ERROR_UNKNOWN_FORMAT, path, "not a PNG file");
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &r, kitti_error,
                                           kitti_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    png_destroy_read_struct(png ? &png : NULL, NULL, NULL);
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, path, "libpng initialisation failed");
  }
  /* Volatile: assigned between setjmp and a possible longjmp. */
  ImageioFlow *volatile flow = NULL;
  uint16_t *volatile rowbuf = NULL;
  volatile ImageioErrorCode code = IMAGEIO_ERROR_CORRUPT;
  if (setjmp(png_jmpbuf(png))) {
    imageio_flow_free(flow);
    g_free(rowbuf);
    png_destroy_read_struct(&png, &info, NULL);
    return imageio_fail(error, code, path, "%s", r.msg);
  }
  png_set_read_fn(png, &r, kitti_read_fn);
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  int depth = png_get_bit_depth(png, info), color = png_get_color_type(png, info);
  if (!imageio_check_size(w, h, &limits, path, error)) {
    png_destroy_read_struct(&png, &info, NULL);
    return NULL;
  }
  if (depth != 16 || (color != PNG_COLOR_TYPE_RGB && color != PNG_COLOR_TYPE_RGB_ALPHA)) {
    code = IMAGEIO_ERROR_UNSUPPORTED;
    g_snprintf(r.msg, sizeof(r.msg), "a KITTI flow PNG is 16-bit RGB (this one: %d-bit, "
               "colour type %d)", depth, color);
    png_longjmp(png, 1);
  }
  if (png_get_interlace_type(png, info) != PNG_INTERLACE_NONE) {
    code = IMAGEIO_ERROR_UNSUPPORTED;
    g_strlcpy(r.msg, "interlaced KITTI flow PNGs are not read", sizeof(r.msg));
    png_longjmp(png, 1);
  }
  if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
    png_set_swap(png);
  int channels = color == PNG_COLOR_TYPE_RGB ? 3 : 4;
  png_read_update_info(png, info);
  flow = imageio_flow_new((int)w, (int)h);
  rowbuf = g_new(uint16_t, (size_t)w * channels);
  for (png_uint_32 y = 0; y < h; y++) {
    png_read_row(png, (png_bytep)rowbuf, NULL);
    float *ru = IMAGEIO_ROW(flow->u, y), *rv = IMAGEIO_ROW(flow->v, y);
    for (png_uint_32 x = 0; x < w; x++) {
      const uint16_t *px = rowbuf + (size_t)x * channels;
      bool valid = px[2] != 0;
      ru[x] = valid ? (float)((px[0] - KITTI_ZERO) / KITTI_SCALE) : NAN;
      rv[x] = valid ? (float)((px[1] - KITTI_ZERO) / KITTI_SCALE) : NAN;
    }
  }
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  g_free(rowbuf);
  return flow;
}

/* ---------------------------------------------------------------- colour wheel */

/* The Middlebury colour wheel (Baker et al. 2011, flowToColor): 55 hues, red to yellow
 * (15), yellow to green (6), green to cyan (4), cyan to blue (11), blue to magenta (13),
 * magenta to red (6). */
#define WHEEL_SIZE 55

static void
wheel_color(int i, double rgb[3])
{
  static const int seg[6] = { 15, 6, 4, 11, 13, 6 };
  /* Each segment ramps one channel from its start colour to the next corner. */
  static const double corner[7][3] = {
    { 1, 0, 0 }, { 1, 1, 0 }, { 0, 1, 0 }, { 0, 1, 1 }, { 0, 0, 1 }, { 1, 0, 1 }, { 1, 0, 0 },
  };
  int s = 0;
  while (i >= seg[s]) {
    i -= seg[s];
    s++;
  }
  double t = (double)i / seg[s];
  for (int c = 0; c < 3; c++)
    rgb[c] = corner[s][c] + t * (corner[s + 1][c] - corner[s][c]);
}

void
imageio_flow_color(float u, float v, float max_flow, uint8_t rgb[3])
{
  if (!imageio_flow_known(u, v) || !(max_flow > 0.0f)) {
    rgb[0] = rgb[1] = rgb[2] = 0;
    return;
  }
  double fu = u / max_flow, fv = v / max_flow;
  double rad = sqrt(fu * fu + fv * fv);
  double a = atan2(-fv, -fu) / G_PI;           /* -1..1 */
  double fk = (a + 1.0) / 2.0 * (WHEEL_SIZE - 1);
  int k0 = (int)floor(fk), k1 = (k0 + 1) % WHEEL_SIZE;
  double f = fk - k0;
  double c0[3], c1[3];
  wheel_color(k0 % WHEEL_SIZE, c0);
  wheel_color(k1, c1);
  for (int c = 0; c < 3; c++) {
    double col = (1.0 - f) * c0[c] + f * c1[c];
    /* Saturation grows with the magnitude; beyond max_flow the colour darkens. */
    col = rad <= 1.0 ? 1.0 - rad * (1.0 - col) : col * 0.75;
    rgb[c] = (uint8_t)lround(CLAMP(col, 0.0, 1.0) * 255.0);
  }
}

bool
imageio_write_flow_color_jpeg(const char *path, const float *u, const float *v, int width,
                              int height, size_t stride, float max_flow, int quality,
                              float *used_max, GError **error)
{
  g_return_val_if_fail(u && v && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  g_return_val_if_fail(quality >= 0 && quality <= 100, false);
  if (!(max_flow > 0.0f)) {
    g_autofree float *mag = g_new(float, (size_t)width * height);
    for (int y = 0; y < height; y++) {
      const float *ru = ROWF(u, stride, y), *rv = ROWF(v, stride, y);
      for (int x = 0; x < width; x++)
        mag[(size_t)y * width + x] = imageio_flow_known(ru[x], rv[x]) ?
                                       hypotf(ru[x], rv[x]) : NAN;
    }
    max_flow = imageio_disparity_percentile(mag, width, height, width * sizeof(float), 0.99);
    if (!(max_flow > 0.0f))
      max_flow = 1.0f;
  }
  if (used_max)
    *used_max = max_flow;
  g_autofree uint8_t *rgb = g_malloc((size_t)width * height * 3);
  for (int y = 0; y < height; y++) {
    const float *ru = ROWF(u, stride, y), *rv = ROWF(v, stride, y);
    for (int x = 0; x < width; x++)
      imageio_flow_color(ru[x], rv[x], max_flow, rgb + ((size_t)y * width + x) * 3);
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
