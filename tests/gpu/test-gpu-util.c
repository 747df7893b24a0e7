/* test-gpu-util.c: host-data helpers of the gpu/ tests. */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ host data helpers */

/* Random host pixels for `fmt`, exactly representable in the GPU format (16F values
 * are multiples of 1/16 below 128 in magnitude). */
void
random_pixels(GpuFormat fmt, guint8 *data, size_t stride, int w, int h)
{
  int ch = gpu_format_channels(fmt);
  for (int y = 0; y < h; y++) {
    guint8 *row = data + (size_t) y * stride;
    for (int i = 0; i < w * ch; i++) {
      switch (fmt) {
      case GPU_FORMAT_R8:
        row[i] = (guint8) g_test_rand_int_range(0, 256);
        break;
      case GPU_FORMAT_R16I:
        ((gint16 *) row)[i] = (gint16) g_test_rand_int_range(-32768, 32768);
        break;
      case GPU_FORMAT_R32UI:
        ((guint32 *) row)[i] = (guint32) g_test_rand_int();
        break;
      case GPU_FORMAT_R16F:
      case GPU_FORMAT_RG16F:
      case GPU_FORMAT_RGBA16F:
        ((float *) row)[i] = (float) g_test_rand_int_range(-2047, 2048) / 16.0f;
        break;
      default:
        ((float *) row)[i] = (float) g_test_rand_double_range(-1e3, 1e3);
        break;
      }
    }
  }
}

/* Compares the w x h pixel area of two host images (bit exact) and checks that the
 * padding bytes of `b` still hold `pad`. */
void
assert_same_pixels(GpuFormat fmt, const guint8 *a, size_t sa, const guint8 *b, size_t sb,
                   int w, int h, guint8 pad, const char *what)
{
  size_t row = gpu_format_host_pixel_size(fmt) * (size_t) w;
  for (int y = 0; y < h; y++) {
    if (memcmp(a + (size_t) y * sa, b + (size_t) y * sb, row) != 0)
      g_error("%s: %s: row %d differs", what, gpu_format_glsl_layout(fmt), y);
    for (size_t x = row; x < sb && y < h - 1; x++)
      if (b[(size_t) y * sb + x] != pad)
        g_error("%s: %s: padding byte %zu of row %d was written", what,
                gpu_format_glsl_layout(fmt), x, y);
  }
}

GpuImage *
new_image(GpuContext *ctx, const char *label, int w, int h, int layers, GpuFormat fmt)
{
  g_autoptr(GError) error = NULL;
  GpuImage *img = gpu_image_new(ctx, &(GpuImageParams) {
    .label = label, .width = w, .height = h, .layers = layers, .format = fmt,
  }, &error);
  g_assert_no_error(error);
  g_assert_nonnull(img);
  return img;
}

GpuBuffer *
new_buffer(GpuContext *ctx, const char *label, size_t size, GpuBufferUsage usage)
{
  g_autoptr(GError) error = NULL;
  GpuBuffer *buf = gpu_buffer_new(ctx, &(GpuBufferParams) {
    .label = label, .size = size, .usage = usage,
  }, &error);
  g_assert_no_error(error);
  g_assert_nonnull(buf);
  return buf;
}

GpuProgram *
new_program(GpuContext *ctx, const char *label, const char *source, const char *defines)
{
  g_autoptr(GError) error = NULL;
  GpuProgram *prog = gpu_program_new(ctx, &(GpuProgramParams) {
    .label = label, .source = source, .defines = defines,
  }, &error);
  g_assert_no_error(error);
  g_assert_nonnull(prog);
  return prog;
}

void
assert_gl_ok(GpuContext *ctx, const char *stage)
{
  g_autoptr(GError) error = NULL;
  gpu_context_check(ctx, stage, &error);
  g_assert_no_error(error);
  g_assert_false(gpu_context_is_failed(ctx));
}

