/* imageio-private.h: what the imageio-*.c files share. Not installed; tests may use it
 * to build input files in formats the public writers do not produce. */
#pragma once

#include "tools/imageio.h"

G_BEGIN_DECLS

/* Y8 = round(255 * v / maxval), half up, exact. */
static inline uint8_t
imageio_scale_sample(uint32_t v, uint32_t maxval)
{
  return (uint8_t)(((uint64_t)v * 510u + maxval) / (2u * (uint64_t)maxval));
}

/* Y8 = round(255 * (0.299 r + 0.587 g + 0.114 b) / maxval), half up, exact. */
static inline uint8_t
imageio_luma(uint32_t r, uint32_t g, uint32_t b, uint32_t maxval)
{
  uint64_t num = 299u * (uint64_t)r + 587u * (uint64_t)g + 114u * (uint64_t)b;
  return (uint8_t)((num * 510u + 1000u * (uint64_t)maxval) / (2000u * (uint64_t)maxval));
}

/* Sets an IMAGEIO_ERROR "<name>: <printf message>". Always returns NULL. */
void *imageio_fail(GError **error, ImageioErrorCode code, const char *name,
                   const char *format, ...) G_GNUC_PRINTF(4, 5);

/* `limits` with the defaults filled in (limits may be NULL). */
ImageioLimits imageio_limits_resolve(const ImageioLimits *limits);

/* Refuses sides outside 1..IMAGEIO_MAX_SIDE and more than limits->max_pixels pixels with
 * IMAGEIO_ERROR_TOO_LARGE. `limits` is resolved. */
bool imageio_check_size(int64_t width, int64_t height, const ImageioLimits *limits,
                        const char *name, GError **error);

/* Reads a whole regular file of at most limits->max_file_size bytes (common/file.h).
 * Errors are G_FILE_ERROR "<path>: <reason>", IMAGEIO_ERROR_TOO_LARGE for a larger
 * file. `limits` is resolved. */
GBytes *imageio_read_file(const char *path, const ImageioLimits *limits, GError **error);

/* Writes a whole file: to a temporary name in the same folder, then renamed over `path`
 * (a device or pipe such as /dev/stdout is written directly). G_FILE_ERROR
 * "<path>: <strerror>" on failure, and no temporary file is left behind. */
bool imageio_save_file(const char *path, const void *data, size_t size, GError **error);

/* Decoders behind imageio_decode_gray(), each given a buffer that starts with its magic
 * and resolved limits. */
ImageioU8 *imageio_png_decode_gray(const uint8_t *data, size_t size, const char *name,
                                   const ImageioLimits *limits, GError **error);
ImageioU8 *imageio_pnm_decode_gray(const uint8_t *data, size_t size, const char *name,
                                   const ImageioLimits *limits, GError **error);
ImageioU8 *imageio_jpeg_decode_gray(const uint8_t *data, size_t size, const char *name,
                                    const ImageioLimits *limits, GError **error);

/* PNG encoder for every layout libpng writes. `rows`: `height` rows `stride` bytes apart;
 * 16-bit samples are uint16_t in host order. color_type is a PNG_COLOR_TYPE_* value;
 * palette (n_palette RGB triplets) only for PNG_COLOR_TYPE_PALETTE. Appends to `out`. */
bool imageio_png_encode(const void *rows, int width, int height, size_t stride,
                        int color_type, int bit_depth, const uint8_t *palette, int n_palette,
                        bool interlace, GByteArray *out, const char *name, GError **error);

G_END_DECLS
