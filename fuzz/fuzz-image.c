/* fuzz-image: the image decoders on any bytes: PNG, PGM/PPM and JPEG through
 * imageio_decode_gray_full, PFM through imageio_decode_pfm_full, and the 16-bit PNG
 * reader (path-based: the bytes go to a temporary file first). An image that decodes
 * has the size its header gives and at most the pixel limit; a failure is one error
 * naming the input. The limit is 4 Mpixel here so that each input decodes in
 * milliseconds; above it the decoders stop at the header, which is what the default
 * 64 Mpixel limit exercises too. Corpus: fuzz/corpus/image/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/imageio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ImageioLimits limits = { .max_pixels = 4u << 20 };
static char *png16_path;

static void
remove_png16(void)
{
  if (png16_path)
    unlink(png16_path);
}

static void
check_error(GError *error, const char *name)
{
  if (!error || !g_str_has_prefix(error->message, name) || strchr(error->message, '\n'))
    __builtin_trap();
  g_error_free(error);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  GError *error = NULL;
  ImageioU8 *gray = imageio_decode_gray_full(data, size, "fuzz", &limits, &error);
  if (gray) {
    if ((uint64_t)gray->width * gray->height > limits.max_pixels ||
        gray->stride != (size_t)gray->width)
      __builtin_trap();
    imageio_u8_free(gray);
  } else {
    check_error(error, "fuzz");
  }

  error = NULL;
  ImageioF32 *pfm = imageio_decode_pfm_full(data, size, "fuzz", &limits, &error);
  if (pfm)
    imageio_f32_free(pfm);
  else
    check_error(error, "fuzz");

  /* The 16-bit PNG reader takes a path. */
  if (size >= 8 && memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0 && size < (1u << 20)) {
    if (!png16_path) {
      png16_path = g_build_filename(g_get_tmp_dir(), "fuzz-image-XXXXXX", NULL);
      int fd = g_mkstemp(png16_path);
      if (fd < 0)
        __builtin_trap();
      close(fd);
      atexit(remove_png16);
    }
    if (!g_file_set_contents(png16_path, (const char *)data, (gssize)size, NULL))
      __builtin_trap();
    error = NULL;
    ImageioU16 *p16 = imageio_read_png16(png16_path, &error);
    if (p16)
      imageio_u16_free(p16);
    else
      check_error(error, png16_path);
  }
  return 0;
}
