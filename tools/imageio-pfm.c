/* imageio-pfm.c: PFM disparity files (Middlebury convention) and the KITTI value mapping
 * (see imageio.h). */
#include "tools/imageio-private.h"

#include <math.h>
#include <string.h>

uint16_t
imageio_disparity_to_kitti(float d)
{
  if (!isfinite(d))
    return 0;
  double v = round((double)d * 256.0);
  return (uint16_t)CLAMP(v, 1.0, 65535.0);
}

static uint32_t
float_bits(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float
bits_float(uint32_t u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

bool
imageio_write_pfm(const char *path, const float *disparity, int width, int height,
                  size_t stride, GError **error)
{
  g_return_val_if_fail(disparity && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  g_autofree char *header = g_strdup_printf("Pf\n%d %d\n-1.0\n", width, height);
  const size_t hlen = strlen(header);
  const size_t total = hlen + 4 * (size_t)width * height;
  g_autofree uint8_t *buf = g_malloc(total);
  memcpy(buf, header, hlen);
  const uint32_t inf = float_bits(INFINITY);
  uint8_t *dst = buf + hlen;
  /* PFM stores the bottom row first. */
  for (int y = height - 1; y >= 0; y--) {
    const float *row = (const float *)((const uint8_t *)disparity + (size_t)y * stride);
    for (int x = 0; x < width; x++) {
      uint32_t u = isnan(row[x]) ? inf : float_bits(row[x]);
      u = GUINT32_TO_LE(u);
      memcpy(dst, &u, 4);
      dst += 4;
    }
  }
  return imageio_save_file(path, buf, total, error);
}

/* Reads one whitespace-delimited header token into buf. */
static bool
pfm_token(const uint8_t **p, const uint8_t *end, char *buf, size_t size)
{
  while (*p < end && g_ascii_isspace(**p))
    (*p)++;
  size_t n = 0;
  while (*p < end && !g_ascii_isspace(**p)) {
    if (n + 1 >= size)
      return false;
    buf[n++] = (char)*(*p)++;
  }
  buf[n] = '\0';
  return n > 0;
}

static bool
parse_int(const char *s, int64_t *v)
{
  char *end;
  if (!g_ascii_isdigit(*s))
    return false;
  *v = g_ascii_strtoll(s, &end, 10);
  return *end == '\0';
}

ImageioF32 *
imageio_decode_pfm(const void *data, size_t size, const char *name, GError **error)
{
  return imageio_decode_pfm_full(data, size, name, NULL, error);
}

ImageioF32 *
imageio_decode_pfm_full(const void *data, size_t size, const char *name,
                        const ImageioLimits *limits, GError **error)
{
  ImageioLimits l = imageio_limits_resolve(limits);
  const uint8_t *p = data, *end = p + size;
  if (size < 2 || p[0] != 'P' || (p[1] != 'f' && p[1] != 'F'))
    return imageio_fail(error, IMAGEIO_ERROR_UNKNOWN_FORMAT, name, "not a PFM file");
  if (p[1] == 'F')
    return imageio_fail(error, IMAGEIO_ERROR_UNSUPPORTED, name,
                        "colour PFM (PF) is not supported, only one channel (Pf)");
  p += 2;
  if (p >= end || !g_ascii_isspace(*p))
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "malformed PFM header");

  char tok[3][64];
  for (int i = 0; i < 3; i++)
    if (!pfm_token(&p, end, tok[i], sizeof tok[i]))
      return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name,
                          "malformed or truncated PFM header");
  int64_t w, h;
  char *scale_end;
  double scale = g_ascii_strtod(tok[2], &scale_end);
  if (!parse_int(tok[0], &w) || !parse_int(tok[1], &h) || *scale_end != '\0' ||
      !isfinite(scale) || scale == 0.0)
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "malformed PFM header");
  if (!imageio_check_size(w, h, &l, name, error))
    return NULL;
  /* One whitespace byte ends the header. */
  if (p >= end || !g_ascii_isspace(*p))
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "truncated PFM data");
  p++;
  if ((size_t)(end - p) < 4 * (size_t)w * (size_t)h)
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "truncated PFM data");

  const bool little = scale < 0.0;
  ImageioF32 *out = imageio_f32_new((int)w, (int)h);
  for (int64_t y = h - 1; y >= 0; y--) {
    float *row = IMAGEIO_ROW(out, y);
    for (int64_t x = 0; x < w; x++, p += 4) {
      uint32_t u;
      memcpy(&u, p, 4);
      u = little ? GUINT32_FROM_LE(u) : GUINT32_FROM_BE(u);
      float f = bits_float(u);
      row[x] = isfinite(f) ? f : NAN;
    }
  }
  return out;
}

ImageioF32 *
imageio_read_pfm(const char *path, GError **error)
{
  return imageio_read_pfm_full(path, NULL, error);
}

ImageioF32 *
imageio_read_pfm_full(const char *path, const ImageioLimits *limits, GError **error)
{
  ImageioLimits l = imageio_limits_resolve(limits);
  g_autoptr(GBytes) bytes = imageio_read_file(path, &l, error);
  if (!bytes)
    return NULL;
  size_t size;
  const void *data = g_bytes_get_data(bytes, &size);
  return imageio_decode_pfm_full(data, size, path, &l, error);
}
