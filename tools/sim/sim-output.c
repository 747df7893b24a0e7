/* sim-output.c: image writers. Files are written to a temporary name and renamed, so a
 * reader never sees a half-written frame. */
#include "sim.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <string.h>
#include <turbojpeg.h>

static bool
io_fail(GError **error, const char *path, const char *what)
{
  g_set_error(error, SIM_ERROR, SIM_ERROR_IO, "%s: %s", path, what);
  return false;
}

bool
sim_write_jpeg(const char *path, const uint8_t *gray, int width, int height, int quality,
               GError **error)
{
  tjhandle tj = tjInitCompress();
  if (!tj)
    return io_fail(error, path, "cannot initialise the JPEG encoder");
  unsigned char *jpeg = NULL;
  unsigned long size = 0;
  int rc = tjCompress2(tj, gray, width, width, height, TJPF_GRAY, &jpeg, &size, TJSAMP_GRAY,
                       quality, TJFLAG_ACCURATEDCT);
  bool ok;
  if (rc != 0) {
    ok = io_fail(error, path, tjGetErrorStr2(tj));
  } else {
    g_autoptr(GError) local = NULL;
    ok = g_file_set_contents(path, (const char *)jpeg, (gssize)size, &local);
    if (!ok)
      io_fail(error, path, local->message);
  }
  tjFree(jpeg);
  tjDestroy(tj);
  return ok;
}

typedef struct {
  GByteArray *bytes;
} PngSink;

static void
png_write_cb(png_structp png, png_bytep data, png_size_t length)
{
  PngSink *sink = png_get_io_ptr(png);
  g_byte_array_append(sink->bytes, data, (guint)length);
}

static void
png_flush_cb(png_structp png)
{
}

bool
sim_write_png(const char *path, const uint8_t *gray, int width, int height, GError **error)
{
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    return io_fail(error, path, "cannot initialise the PNG encoder");
  }
  PngSink sink = { g_byte_array_new() };
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    g_byte_array_unref(sink.bytes);
    return io_fail(error, path, "PNG encoding failed");
  }
  png_set_write_fn(png, &sink, png_write_cb, png_flush_cb);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 3);
  png_write_info(png, info);
  for (int y = 0; y < height; y++)
    png_write_row(png, (png_const_bytep)(gray + (size_t)y * width));
  png_write_end(png, info);
  png_destroy_write_struct(&png, &info);
  g_autoptr(GError) local = NULL;
  bool ok = g_file_set_contents(path, (const char *)sink.bytes->data, sink.bytes->len, &local);
  g_byte_array_unref(sink.bytes);
  return ok ? true : io_fail(error, path, local->message);
}

bool
sim_write_pfm(const char *path, const float *data, int width, int height, GError **error)
{
  g_autofree char *header = g_strdup_printf("Pf\n%d %d\n-1.0\n", width, height);
  size_t hlen = strlen(header), row = (size_t)width * sizeof(float);
  g_autofree char *buf = g_malloc(hlen + row * height);
  memcpy(buf, header, hlen);
  for (int y = 0; y < height; y++) {
    const float *src = data + (size_t)(height - 1 - y) * width;   /* bottom-up */
    guint32 *dst = (guint32 *)(void *)(buf + hlen + row * y);
    for (int x = 0; x < width; x++) {
      guint32 bits;
      memcpy(&bits, &src[x], sizeof(bits));
      bits = GUINT32_TO_LE(bits);
      memcpy(&dst[x], &bits, sizeof(bits));
    }
  }
  g_autoptr(GError) local = NULL;
  if (!g_file_set_contents(path, buf, (gssize)(hlen + row * height), &local))
    return io_fail(error, path, local->message);
  return true;
}
