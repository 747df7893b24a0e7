/* imageio-png.c: PNG through libpng (see imageio.h).
 *
 * libpng reports errors by longjmp. Every libpng call runs inside png_guarded(), whose
 * frame holds no local that changes after setjmp; the state lives in a PngJob owned by
 * the caller, so nothing is indeterminate after a jump.
 */
#include "tools/imageio-private.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <string.h>

/* Deflate expands at most ~1032:1: a file this many times smaller than its declared raw
 * size cannot be a complete image. Lets us refuse before allocating. */
#define PNG_MAX_RATIO 1100

typedef struct PngJob PngJob;
struct PngJob {
  png_structp png;
  png_infop info;
  const char *name;
  /* decode */
  const uint8_t *src;
  size_t size, pos;
  /* encode */
  GByteArray *out;
  /* outcome */
  char msg[200];
  ImageioErrorCode code;
  GError *error;         /* set by a step that fails for a reason of its own */
  void *user;
};

static void
job_error(png_structp png, png_const_charp msg)
{
  PngJob *job = png_get_error_ptr(png);
  g_strlcpy(job->msg, msg, sizeof job->msg);
  png_longjmp(png, 1);
}

static void
job_warning(png_structp png, png_const_charp msg)
{
  /* Ancillary-chunk problems (bad gAMA, unknown profile...) do not affect the pixels. */
}

static void
job_read(png_structp png, png_bytep out, size_t n)
{
  PngJob *job = png_get_io_ptr(png);
  if (n > job->size - job->pos)
    png_error(png, "truncated PNG data");
  memcpy(out, job->src + job->pos, n);
  job->pos += n;
}

static void
job_write(png_structp png, png_bytep data, size_t n)
{
  PngJob *job = png_get_io_ptr(png);
  g_byte_array_append(job->out, data, (guint)n);
}

static void
job_flush(png_structp png)
{
}

static bool
png_guarded(PngJob *job, bool (*step)(PngJob *job))
{
  if (setjmp(png_jmpbuf(job->png)))
    return false;
  return step(job);
}

/* Fails the job with its own code and message (outside libpng's error path). */
static bool
job_fail(PngJob *job, ImageioErrorCode code, const char *msg)
{
  job->code = code;
  g_strlcpy(job->msg, msg, sizeof job->msg);
  return false;
}

/* ---------------------------------------------------------------- decoding */

typedef struct {
  int want_gray16;       /* imageio_read_png16: 16-bit gray only, no conversion */
  const ImageioLimits *limits;
  ImageioU8 *gray;
  ImageioU16 *gray16;
  uint8_t *rows;         /* interlaced images: the whole image */
} DecodeState;

static void
convert_row(const uint8_t *src, int width, int channels, int depth, uint8_t *dst)
{
  if (depth == 8) {
    for (int x = 0; x < width; x++, src += channels)
      dst[x] = channels >= 3 ? imageio_luma(src[0], src[1], src[2], 255) : src[0];
    return;
  }
  for (int x = 0; x < width; x++, src += 2 * channels) {
    uint32_t r = ((uint32_t)src[0] << 8) | src[1];
    if (channels >= 3) {
      uint32_t g = ((uint32_t)src[2] << 8) | src[3];
      uint32_t b = ((uint32_t)src[4] << 8) | src[5];
      dst[x] = imageio_luma(r, g, b, 65535);
    } else {
      dst[x] = imageio_scale_sample(r, 65535);
    }
  }
}

static bool
decode_step(PngJob *job)
{
  DecodeState *st = job->user;
  png_structp png = job->png;
  png_infop info = job->info;

  png_set_read_fn(png, job, job_read);
  /* An ancillary chunk (text, ICC profile) larger than 8 MB is not read into memory. */
  png_set_chunk_malloc_max(png, 8u << 20);
  png_read_info(png, info);
  png_uint_32 w, h;
  int depth, color, interlace;
  png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);

  g_autoptr(GError) size_error = NULL;
  if (!imageio_check_size(w, h, st->limits, "", &size_error)) {
    /* The message without the "name: " prefix that imageio_fail adds again. */
    g_strlcpy(job->msg, size_error->message + 2, sizeof job->msg);
    job->code = IMAGEIO_ERROR_TOO_LARGE;
    return false;
  }
  if (st->want_gray16 && (color != PNG_COLOR_TYPE_GRAY || depth != 16))
    return job_fail(job, IMAGEIO_ERROR_UNSUPPORTED, "not a 16-bit single-channel PNG");

  if (color == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  int passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);

  const int channels = png_get_channels(png, info);
  depth = png_get_bit_depth(png, info);
  const size_t rowbytes = png_get_rowbytes(png, info);
  if ((uint64_t)h * (rowbytes + 1) / PNG_MAX_RATIO > job->size)
    return job_fail(job, IMAGEIO_ERROR_CORRUPT, "truncated PNG data");

  if (st->want_gray16) {
    st->gray16 = imageio_u16_new((int)w, (int)h);
    if (G_BYTE_ORDER == G_LITTLE_ENDIAN)
      png_set_swap(png);
    for (int pass = 0; pass < passes; pass++)
      for (png_uint_32 y = 0; y < h; y++)
        png_read_row(png, IMAGEIO_ROW(st->gray16, y), NULL);
    png_read_end(png, NULL);
    return true;
  }

  st->gray = imageio_u8_new((int)w, (int)h);
  if (passes == 1) {
    st->rows = g_malloc(rowbytes);
    for (png_uint_32 y = 0; y < h; y++) {
      png_read_row(png, st->rows, NULL);
      convert_row(st->rows, (int)w, channels, depth, IMAGEIO_ROW(st->gray, y));
    }
  } else {
    /* Interlaced: libpng fills the rows over several passes, so keep them all. */
    st->rows = g_malloc(rowbytes * h);
    for (int pass = 0; pass < passes; pass++)
      for (png_uint_32 y = 0; y < h; y++)
        png_read_row(png, st->rows + rowbytes * y, NULL);
    for (png_uint_32 y = 0; y < h; y++)
      convert_row(st->rows + rowbytes * y, (int)w, channels, depth, IMAGEIO_ROW(st->gray, y));
  }
  png_read_end(png, NULL);
  return true;
}

static bool
png_decode(const uint8_t *data, size_t size, const char *name, DecodeState *st,
           GError **error)
{
  PngJob job = { .name = name, .src = data, .size = size, .user = st,
                 .code = IMAGEIO_ERROR_CORRUPT };
  job.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &job, job_error, job_warning);
  if (job.png)
    job.info = png_create_info_struct(job.png);
  if (!job.png || !job.info) {
    png_destroy_read_struct(job.png ? &job.png : NULL, NULL, NULL);
    imageio_fail(error, IMAGEIO_ERROR_ENCODE, name, "libpng initialisation failed");
    return false;
  }
  bool ok = png_guarded(&job, decode_step);
  png_destroy_read_struct(&job.png, &job.info, NULL);
  g_clear_pointer(&st->rows, g_free);
  if (!ok) {
    g_clear_pointer(&st->gray, imageio_u8_free);
    g_clear_pointer(&st->gray16, imageio_u16_free);
    /* libpng's own messages name a chunk ("IDAT: CRC error"); say which format. */
    bool ours = job.code != IMAGEIO_ERROR_CORRUPT || g_str_has_prefix(job.msg, "truncated");
    imageio_fail(error, job.code, name, "%s%s", ours ? "" : "corrupt PNG data: ", job.msg);
  }
  return ok;
}

ImageioU8 *
imageio_png_decode_gray(const uint8_t *data, size_t size, const char *name,
                        const ImageioLimits *limits, GError **error)
{
  DecodeState st = { .limits = limits };
  if (!png_decode(data, size, name, &st, error))
    return NULL;
  return st.gray;
}

ImageioU16 *
imageio_read_png16(const char *path, GError **error)
{
  static const uint8_t magic[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  ImageioLimits limits = imageio_limits_resolve(NULL);
  g_autoptr(GBytes) bytes = imageio_read_file(path, &limits, error);
  if (!bytes)
    return NULL;
  size_t size;
  const uint8_t *data = g_bytes_get_data(bytes, &size);
  if (size < 8 || memcmp(data, magic, 8) != 0)
    return imageio_fail(error, IMAGEIO_ERROR_UNSUPPORTED, path, "not a PNG file");
  DecodeState st = { .want_gray16 = 1, .limits = &limits };
  if (!png_decode(data, size, path, &st, error))
    return NULL;
  return st.gray16;
}

/* ---------------------------------------------------------------- encoding */

typedef struct {
  const uint8_t *rows;
  int width, height;
  size_t stride;
  int color, depth;
  const uint8_t *palette;
  int n_palette;
  bool interlace;
} EncodeState;

static bool
encode_step(PngJob *job)
{
  EncodeState *st = job->user;
  png_structp png = job->png;
  png_set_write_fn(png, job, job_write, job_flush);
  png_set_IHDR(png, job->info, (png_uint_32)st->width, (png_uint_32)st->height, st->depth,
               st->color, st->interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (st->color == PNG_COLOR_TYPE_PALETTE) {
    png_color pal[256];
    for (int i = 0; i < st->n_palette; i++)
      pal[i] = (png_color){ st->palette[3 * i], st->palette[3 * i + 1], st->palette[3 * i + 2] };
    png_set_PLTE(png, job->info, pal, st->n_palette);
  }
  /* Fast settings: these files are written per frame by tools. */
  png_set_compression_level(png, 3);
  png_write_info(png, job->info);
  if (st->depth == 16 && G_BYTE_ORDER == G_LITTLE_ENDIAN)
    png_set_swap(png);
  if (st->depth < 8)
    png_set_packing(png);
  int passes = png_set_interlace_handling(png);
  for (int pass = 0; pass < passes; pass++)
    for (int y = 0; y < st->height; y++)
      png_write_row(png, st->rows + (size_t)y * st->stride);
  png_write_end(png, NULL);
  return true;
}

bool
imageio_png_encode(const void *rows, int width, int height, size_t stride, int color_type,
                   int bit_depth, const uint8_t *palette, int n_palette, bool interlace,
                   GByteArray *out, const char *name, GError **error)
{
  g_return_val_if_fail(rows && out && width > 0 && height > 0, false);
  g_return_val_if_fail(color_type != PNG_COLOR_TYPE_PALETTE ||
                       (palette && n_palette >= 1 && n_palette <= 256), false);
  EncodeState st = { rows, width, height, stride, color_type, bit_depth, palette, n_palette,
                     interlace };
  PngJob job = { .name = name, .out = out, .user = &st, .code = IMAGEIO_ERROR_ENCODE };
  job.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &job, job_error, job_warning);
  if (job.png)
    job.info = png_create_info_struct(job.png);
  if (!job.png || !job.info) {
    png_destroy_write_struct(job.png ? &job.png : NULL, NULL);
    imageio_fail(error, IMAGEIO_ERROR_ENCODE, name, "libpng initialisation failed");
    return false;
  }
  bool ok = png_guarded(&job, encode_step);
  png_destroy_write_struct(&job.png, &job.info);
  if (!ok)
    imageio_fail(error, IMAGEIO_ERROR_ENCODE, name, "PNG encoding failed: %s", job.msg);
  return ok;
}

static bool
write_png(const char *path, const void *rows, int width, int height, size_t stride, int depth,
          GError **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new();
  if (!imageio_png_encode(rows, width, height, stride, PNG_COLOR_TYPE_GRAY, depth, NULL, 0,
                          false, out, path, error))
    return false;
  return imageio_save_file(path, out->data, out->len, error);
}

bool
imageio_write_png8(const char *path, const uint8_t *data, int width, int height,
                   size_t stride, GError **error)
{
  g_return_val_if_fail(data && width > 0 && height > 0 && stride >= (size_t)width, false);
  return write_png(path, data, width, height, stride, 8, error);
}

bool
imageio_write_png16(const char *path, const uint16_t *data, int width, int height,
                    size_t stride, GError **error)
{
  g_return_val_if_fail(data && width > 0 && height > 0 &&
                       stride >= sizeof(uint16_t) * (size_t)width, false);
  return write_png(path, data, width, height, stride, 16, error);
}

bool
imageio_write_png16_disparity(const char *path, const float *disparity, int width,
                              int height, size_t stride, GError **error)
{
  g_return_val_if_fail(disparity && width > 0 && height > 0 &&
                       stride >= sizeof(float) * (size_t)width, false);
  g_autoptr(ImageioU16) img = imageio_u16_new(width, height);
  for (int y = 0; y < height; y++) {
    const float *src = (const float *)((const uint8_t *)disparity + (size_t)y * stride);
    uint16_t *dst = IMAGEIO_ROW(img, y);
    for (int x = 0; x < width; x++)
      dst[x] = imageio_disparity_to_kitti(src[x]);
  }
  return write_png(path, img->data, width, height, img->stride, 16, error);
}

ImageioF32 *
imageio_read_png16_disparity(const char *path, GError **error)
{
  g_autoptr(ImageioU16) raw = imageio_read_png16(path, error);
  if (!raw)
    return NULL;
  ImageioF32 *out = imageio_f32_new(raw->width, raw->height);
  for (int y = 0; y < raw->height; y++) {
    const uint16_t *src = IMAGEIO_ROW(raw, y);
    float *dst = IMAGEIO_ROW(out, y);
    for (int x = 0; x < raw->width; x++)
      dst[x] = src[x] ? (float)src[x] / 256.0f : NAN;
  }
  return out;
}
