/* imageio.c: planes, format detection, PGM/PPM, shared helpers (see imageio.h). */
#include "tools/imageio-private.h"

#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(imageio-error-quark, imageio_error)

/* ---------------------------------------------------------------- planes */

static void *
plane_alloc(int width, int height, size_t pixel, size_t *stride)
{
  g_assert(width >= 1 && height >= 1 && width <= IMAGEIO_MAX_SIDE &&
           height <= IMAGEIO_MAX_SIDE);
  *stride = (size_t)width * pixel;
  return g_malloc0(*stride * (size_t)height);
}

ImageioU8 *
imageio_u8_new(int width, int height)
{
  ImageioU8 *img = g_new0(ImageioU8, 1);
  img->width = width;
  img->height = height;
  img->data = plane_alloc(width, height, 1, &img->stride);
  return img;
}

ImageioU16 *
imageio_u16_new(int width, int height)
{
  ImageioU16 *img = g_new0(ImageioU16, 1);
  img->width = width;
  img->height = height;
  img->data = plane_alloc(width, height, 2, &img->stride);
  return img;
}

ImageioF32 *
imageio_f32_new(int width, int height)
{
  ImageioF32 *img = g_new0(ImageioF32, 1);
  img->width = width;
  img->height = height;
  img->data = plane_alloc(width, height, 4, &img->stride);
  return img;
}

void
imageio_u8_free(ImageioU8 *img)
{
  if (img) {
    g_free(img->data);
    g_free(img);
  }
}

void
imageio_u16_free(ImageioU16 *img)
{
  if (img) {
    g_free(img->data);
    g_free(img);
  }
}

void
imageio_f32_free(ImageioF32 *img)
{
  if (img) {
    g_free(img->data);
    g_free(img);
  }
}

/* ---------------------------------------------------------------- helpers */

void *
imageio_fail(GError **error, ImageioErrorCode code, const char *name, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *msg = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error(error, IMAGEIO_ERROR, code, "%s: %s", name, msg);
  return NULL;
}

ImageioLimits
imageio_limits_resolve(const ImageioLimits *limits)
{
  ImageioLimits l = limits ? *limits : (ImageioLimits){ 0 };
  if (!l.max_pixels)
    l.max_pixels = IMAGEIO_DEFAULT_MAX_PIXELS;
  if (!l.max_file_size) {
    /* Saturating: a huge pixel limit must not wrap round to a small file limit. */
    uint64_t per_pixel = IMAGEIO_FILE_BYTES_PER_PIXEL;
    l.max_file_size = l.max_pixels > (G_MAXUINT64 - IMAGEIO_FILE_SLACK) / per_pixel
                        ? G_MAXUINT64
                        : l.max_pixels * per_pixel + IMAGEIO_FILE_SLACK;
  }
  /* What one read can hold: the address space, less room for the terminator. */
  l.max_file_size = MIN(l.max_file_size, (uint64_t)G_MAXSSIZE - 1);
  return l;
}

bool
imageio_check_size(int64_t width, int64_t height, const ImageioLimits *limits,
                   const char *name, GError **error)
{
  if (width < 1 || height < 1 || width > IMAGEIO_MAX_SIDE || height > IMAGEIO_MAX_SIDE) {
    imageio_fail(error, IMAGEIO_ERROR_TOO_LARGE, name,
                 "image size %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                 " is outside 1..%d per side", width, height, IMAGEIO_MAX_SIDE);
    return false;
  }
  uint64_t pixels = (uint64_t)width * (uint64_t)height;
  if (pixels > limits->max_pixels) {
    imageio_fail(error, IMAGEIO_ERROR_TOO_LARGE, name,
                 "image size %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " is %" G_GUINT64_FORMAT
                 " pixels, more than the limit of %" G_GUINT64_FORMAT, width, height, pixels,
                 limits->max_pixels);
    return false;
  }
  return true;
}

GBytes *
imageio_read_file(const char *path, const ImageioLimits *limits, GError **error)
{
  char *data = NULL;
  gsize size = 0;
  g_autoptr(GError) local = NULL;
  if (!file_read_regular(path, (gsize)limits->max_file_size, &data, &size, &local)) {
    if (g_error_matches(local, G_FILE_ERROR, FILE_ERROR_TOO_LARGE))
      g_set_error_literal(error, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE, local->message);
    else
      g_propagate_error(error, g_steal_pointer(&local));
    return NULL;
  }
  return g_bytes_new_take(data, size);
}

static void
set_errno_error(GError **error, int err, const char *path)
{
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s", path,
              g_strerror(err));
}

static bool
write_all(int fd, const uint8_t *data, size_t size)
{
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= (size_t)n;
  }
  return true;
}

bool
imageio_save_file(const char *path, const void *data, size_t size, GError **error)
{
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    /* A device or pipe (/dev/stdout): write into it, never rename over it. */
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0 && !write_all(fd, data, size))
      err = errno ? errno : EIO;
    if (fd >= 0 && close(fd) < 0 && !err)
      err = errno;
    if (err) {
      set_errno_error(error, err, path);
      return false;
    }
    return true;
  }
  /* A new name next to the target, then rename: readers never see half a file. */
  g_autofree char *tmp = g_strdup_printf("%s.tmp-XXXXXX", path);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0) {
    set_errno_error(error, errno, path);
    return false;
  }
  int err = 0;
  if (!write_all(fd, data, size))
    err = errno ? errno : EIO;
  if (close(fd) < 0 && !err)
    err = errno;
  if (!err && rename(tmp, path) < 0)
    err = errno;
  if (err) {
    unlink(tmp);
    set_errno_error(error, err, path);
    return false;
  }
  return true;
}

/* ---------------------------------------------------------------- detection */

ImageioU8 *
imageio_decode_gray(const void *data, size_t size, const char *name, GError **error)
{
  return imageio_decode_gray_full(data, size, name, NULL, error);
}

ImageioU8 *
imageio_decode_gray_full(const void *data, size_t size, const char *name,
                         const ImageioLimits *limits, GError **error)
{
  ImageioLimits l = imageio_limits_resolve(limits);
  static const uint8_t png_magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  const uint8_t *b = data;

  if (size == 0)
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "empty file");
  if (size >= 8 && memcmp(b, png_magic, 8) == 0)
    return imageio_png_decode_gray(b, size, name, &l, error);
  if (size >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
    return imageio_jpeg_decode_gray(b, size, name, &l, error);
  if (size >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7')
    return imageio_pnm_decode_gray(b, size, name, &l, error);
  if (size >= 2 && b[0] == 'P' && (b[1] == 'f' || b[1] == 'F'))
    return imageio_fail(error, IMAGEIO_ERROR_UNSUPPORTED, name,
                        "PFM holds float data, not an image");
  return imageio_fail(error, IMAGEIO_ERROR_UNKNOWN_FORMAT, name,
                      "not a PNG, PGM/PPM or JPEG file");
}

ImageioU8 *
imageio_read_gray(const char *path, GError **error)
{
  return imageio_read_gray_full(path, NULL, error);
}

ImageioU8 *
imageio_read_gray_full(const char *path, const ImageioLimits *limits, GError **error)
{
  ImageioLimits l = imageio_limits_resolve(limits);
  g_autoptr(GBytes) bytes = imageio_read_file(path, &l, error);
  if (!bytes)
    return NULL;
  size_t size;
  const void *data = g_bytes_get_data(bytes, &size);
  return imageio_decode_gray_full(data, size, path, &l, error);
}

/* ---------------------------------------------------------------- PGM / PPM */

typedef struct {
  const uint8_t *p, *end;
} Cursor;

/* Skips whitespace and '#' comments (to the end of the line). */
static void
pnm_skip_space(Cursor *c)
{
  while (c->p < c->end) {
    if (*c->p == '#') {
      while (c->p < c->end && *c->p != '\n' && *c->p != '\r')
        c->p++;
    } else if (g_ascii_isspace(*c->p)) {
      c->p++;
    } else {
      break;
    }
  }
}

/* Reads an unsigned decimal number; FALSE when none is there or it exceeds `limit`. */
static bool
pnm_read_uint(Cursor *c, uint32_t limit, uint32_t *value)
{
  pnm_skip_space(c);
  if (c->p >= c->end || !g_ascii_isdigit(*c->p))
    return false;
  uint64_t v = 0;
  while (c->p < c->end && g_ascii_isdigit(*c->p)) {
    v = v * 10 + (uint64_t)(*c->p - '0');
    if (v > limit)
      return false;
    c->p++;
  }
  *value = (uint32_t)v;
  return true;
}

ImageioU8 *
imageio_pnm_decode_gray(const uint8_t *data, size_t size, const char *name,
                        const ImageioLimits *limits, GError **error)
{
  char kind = (char)data[1];
  if (kind != '2' && kind != '3' && kind != '5' && kind != '6')
    return imageio_fail(error, IMAGEIO_ERROR_UNSUPPORTED, name,
                        "P%c (bitmap or PAM) files are not supported", kind);
  const bool plain = kind == '2' || kind == '3';
  const int channels = (kind == '3' || kind == '6') ? 3 : 1;
  const char *what = channels == 3 ? "PPM" : "PGM";

  Cursor c = { data + 2, data + size };
  if (c.p < c.end && !g_ascii_isspace(*c.p) && *c.p != '#')
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "malformed %s header", what);
  uint32_t w, h, maxval;
  if (!pnm_read_uint(&c, 1u << 30, &w) || !pnm_read_uint(&c, 1u << 30, &h) ||
      !pnm_read_uint(&c, 1u << 30, &maxval))
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "malformed or truncated %s header",
                        what);
  if (maxval < 1 || maxval > 65535)
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "%s maxval %u is outside 1..65535",
                        what, maxval);
  if (!imageio_check_size(w, h, limits, name, error))
    return NULL;

  const size_t samples = (size_t)w * h * channels;
  const size_t bps = maxval > 255 ? 2 : 1;
  if (!plain) {
    /* Exactly one whitespace byte separates maxval from the raster. */
    if (c.p >= c.end || !g_ascii_isspace(*c.p))
      return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "truncated %s data", what);
    c.p++;
    if ((size_t)(c.end - c.p) < samples * bps)
      return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "truncated %s data", what);
  } else if ((size_t)(c.end - c.p) < samples) {
    /* Every plain sample takes at least one byte: refuse before allocating. */
    return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name, "truncated %s data", what);
  }

  g_autoptr(ImageioU8) out = imageio_u8_new((int)w, (int)h);
  for (uint32_t y = 0; y < h; y++) {
    uint8_t *row = out->data + (size_t)y * out->stride;
    for (uint32_t x = 0; x < w; x++) {
      uint32_t s[3];
      for (int k = 0; k < channels; k++) {
        if (plain) {
          if (!pnm_read_uint(&c, 65535, &s[k]))
            return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name,
                                "truncated or malformed %s data", what);
        } else if (bps == 2) {
          s[k] = ((uint32_t)c.p[0] << 8) | c.p[1];
          c.p += 2;
        } else {
          s[k] = *c.p++;
        }
        if (s[k] > maxval)
          return imageio_fail(error, IMAGEIO_ERROR_CORRUPT, name,
                              "%s sample %u exceeds maxval %u", what, s[k], maxval);
      }
      row[x] = channels == 3 ? imageio_luma(s[0], s[1], s[2], maxval)
                             : imageio_scale_sample(s[0], maxval);
    }
  }
  return g_steal_pointer(&out);
}

bool
imageio_write_pgm(const char *path, const uint8_t *data, int width, int height,
                  size_t stride, GError **error)
{
  g_return_val_if_fail(data && width > 0 && height > 0 && stride >= (size_t)width, false);
  g_autofree char *header = g_strdup_printf("P5\n%d %d\n255\n", width, height);
  size_t hlen = strlen(header);
  size_t total = hlen + (size_t)width * height;
  g_autofree uint8_t *buf = g_malloc(total);
  memcpy(buf, header, hlen);
  for (int y = 0; y < height; y++)
    memcpy(buf + hlen + (size_t)y * width, data + (size_t)y * stride, (size_t)width);
  return imageio_save_file(path, buf, total, error);
}

bool
imageio_write_gray(const char *path, const uint8_t *data, int width, int height,
                   size_t stride, GError **error)
{
  size_t n = strlen(path);
  if (n >= 4 && g_ascii_strcasecmp(path + n - 4, ".pgm") == 0)
    return imageio_write_pgm(path, data, width, height, stride, error);
  return imageio_write_png8(path, data, width, height, stride, error);
}
