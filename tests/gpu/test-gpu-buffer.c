/* test-gpu-buffer.c: tests of gpu/ buffers, fences and timers. */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ buffers and fences */

static void
async_roundtrip(GpuContext *ctx, GpuFormat fmt, int w, int h, int layers, size_t stride)
{
  size_t layer_size = stride * (size_t) h;
  const size_t up_base = 256, down_base = 64;
  g_autoptr(GpuImage) img = new_image(ctx, "async", w, h, layers, fmt);
  g_autoptr(GpuBuffer) up = new_buffer(ctx, "upload", up_base + layers * layer_size,
                                       GPU_BUFFER_UPLOAD);
  g_autoptr(GpuBuffer) down = new_buffer(ctx, "readback", down_base + layers * layer_size,
                                         GPU_BUFFER_READBACK);
  guint8 *upmap = gpu_buffer_get_map(up);
  guint8 *downmap = gpu_buffer_get_map(down);
  g_assert_nonnull(upmap);
  g_assert_nonnull(downmap);
  g_autoptr(GError) error = NULL;

  for (int l = 0; l < layers; l++) {
    random_pixels(fmt, upmap + up_base + l * layer_size, stride, w, h);
    g_assert_true(gpu_image_upload_from_buffer(img, l, up, up_base + l * layer_size, stride,
                                               &error));
    g_assert_no_error(error);
  }
  g_autoptr(GpuFence) uploaded = gpu_fence_new(ctx, &error);
  g_assert_no_error(error);
  g_assert_true(gpu_fence_wait(uploaded, SECOND_NS, &error));
  g_assert_no_error(error);
  g_assert_true(gpu_fence_is_signaled(uploaded));

  memset(downmap, 0xa5, gpu_buffer_get_size(down));
  for (int l = 0; l < layers; l++)
    g_assert_true(gpu_image_download_to_buffer(img, l, down, down_base + l * layer_size,
                                               stride, &error));
  g_autoptr(GpuFence) downloaded = gpu_fence_new(ctx, &error);
  g_assert_true(gpu_fence_wait(downloaded, SECOND_NS, &error));
  g_assert_no_error(error);
  assert_gl_ok(ctx, "async transfers");

  g_autofree guint8 *sync = g_malloc(layer_size);
  for (int l = 0; l < layers; l++) {
    memset(sync, 0xa5, layer_size);
    g_assert_true(gpu_image_download(img, l, sync, stride, NULL));
    /* sync path == what went up; readback buffer == sync path. */
    assert_same_pixels(fmt, upmap + up_base + l * layer_size, stride, sync, stride, w, h,
                       0xa5, "sync download");
    assert_same_pixels(fmt, sync, stride, downmap + down_base + l * layer_size, stride, w, h,
                       0xa5, "async download");
  }
  for (size_t i = 0; i < down_base; i++)
    g_assert_cmpuint(downmap[i], ==, 0xa5);
}

static void
test_buffer_async_transfers(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  async_roundtrip(ctx, GPU_FORMAT_R8, 37, 23, 3, 40);
  async_roundtrip(ctx, GPU_FORMAT_R8, 37, 23, 2, 37);
  async_roundtrip(ctx, GPU_FORMAT_RG32F, 37, 23, 2, 37 * 8 + 24);
  async_roundtrip(ctx, GPU_FORMAT_R16F, 19, 7, 1, 19 * 4);

  /* A range outside the buffer is refused without a GL error. */
  g_autoptr(GpuImage) img = new_image(ctx, "small", 8, 8, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuBuffer) up = new_buffer(ctx, "too-small", 8 * 8 * 4, GPU_BUFFER_UPLOAD);
  g_autoptr(GError) error = NULL;
  g_assert_false(gpu_image_upload_from_buffer(img, 0, up, 4, 32, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  g_clear_error(&error);
  g_assert_true(gpu_image_upload_from_buffer(img, 0, up, 0, 32, &error));
  g_assert_false(gpu_buffer_write(up, 250, "12345678", 8, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_LIMIT);
  assert_gl_ok(ctx, "range checks");
}

/* Synchronous write/read and fill on every usage. */
static void
test_buffer_write_read(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  const GpuBufferUsage usages[] = { GPU_BUFFER_STORAGE, GPU_BUFFER_UPLOAD, GPU_BUFFER_READBACK };
  for (guint u = 0; u < G_N_ELEMENTS(usages); u++) {
    g_autoptr(GpuBuffer) buf = new_buffer(ctx, "rw", 1024, usages[u]);
    g_assert_cmpuint(gpu_buffer_get_id(buf), !=, 0);
    g_assert_true((gpu_buffer_get_map(buf) != NULL) == (usages[u] != GPU_BUFFER_STORAGE));
    g_assert_true(gpu_buffer_fill_u32(buf, 0xdeadbeefu, NULL));
    guint8 data[100];
    for (int i = 0; i < 100; i++)
      data[i] = (guint8) g_test_rand_int_range(0, 256);
    g_assert_true(gpu_buffer_write(buf, 300, data, sizeof(data), NULL));
    guint32 all[256];
    g_assert_true(gpu_buffer_read(buf, 0, all, sizeof(all), NULL));
    g_assert_cmpmem((guint8 *) all + 300, 100, data, 100);
    g_assert_cmpuint(all[0], ==, 0xdeadbeefu);
    g_assert_cmpuint(all[74], ==, 0xdeadbeefu);   /* bytes 296..299 */
    g_assert_cmpuint(all[100], ==, 0xdeadbeefu);  /* bytes 400.. */
    if (usages[u] == GPU_BUFFER_READBACK) {
      /* The coherent map shows the same bytes once the GPU is done. */
      g_autoptr(GpuFence) f = gpu_fence_new(ctx, NULL);
      g_assert_true(gpu_fence_wait(f, SECOND_NS, NULL));
      g_assert_cmpmem((guint8 *) gpu_buffer_get_map(buf) + 300, 100, data, 100);
    }
  }
  assert_gl_ok(ctx, "buffer write/read");
}

/* ------------------------------------------------------------ timers */

static const char busy_src[] =
  "#version 450\n"
  "layout(local_size_x = 64) in;\n"
  "layout(std430, binding = 0) buffer B { float v[]; };\n"
  "void main()\n"
  "{\n"
  "  uint i = gl_GlobalInvocationID.x;\n"
  "  float x = v[i];\n"
  "  for (int k = 0; k < 200; k++)\n"
  "    x = sin(x) + 1.0;\n"
  "  v[i] = x;\n"
  "}\n";

static void
test_timer(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(GpuTimer) timer = gpu_timer_new(ctx, 4, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gpu_timer_get_count(timer), ==, 4);
  uint64_t ns[4];
  g_assert_false(gpu_timer_read(timer, false, ns));   /* nothing stamped yet */

  g_autoptr(GpuProgram) prog = new_program(ctx, "busy", busy_src, NULL);
  g_autoptr(GpuBuffer) buf = new_buffer(ctx, "busy", 65536 * 4, GPU_BUFFER_STORAGE);
  g_assert_true(gpu_buffer_fill_u32(buf, 0, NULL));
  gpu_bind_storage(0, buf);
  gpu_timer_stamp(timer, 0);
  gpu_program_dispatch(prog, 65536, 1, 1);
  gpu_timer_stamp(timer, 1);
  gpu_barrier();
  gpu_program_dispatch(prog, 65536, 1, 1);
  gpu_timer_stamp(timer, 2);
  gpu_context_finish(ctx);
  gpu_timer_stamp(timer, 3);
  g_assert_true(gpu_timer_read(timer, true, ns));
  for (int i = 0; i < 4; i++) {
    g_assert_cmpuint(ns[i], !=, 0);
    if (i > 0)
      g_assert_cmpuint(ns[i], >=, ns[i - 1]);
  }
  g_assert_cmpuint(ns[2], >, ns[0]);
  g_test_message("two dispatches of 65536 x 200 sin: %.3f ms, %.3f ms",
                 (double) (ns[1] - ns[0]) / 1e6, (double) (ns[2] - ns[1]) / 1e6);
  /* Restamping moves forward. */
  uint64_t before = ns[3];
  gpu_timer_stamp(timer, 0);
  gpu_context_finish(ctx);
  g_assert_true(gpu_timer_read(timer, false, ns));
  g_assert_cmpuint(ns[0], >=, before);
  assert_gl_ok(ctx, "timers");
}


void
test_gpu_add_buffer_tests(void)
{
  g_test_add_func("/gpu/buffer/async-transfers", test_buffer_async_transfers);
  g_test_add_func("/gpu/buffer/write-read", test_buffer_write_read);
  g_test_add_func("/gpu/timer/stamps", test_timer);
}
