/* test-gpu-measure.c: the 1080p transfer and filter timings of gpu/ on this device (printed, not asserted). */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ measurement */

static const char sep_src[] =
  "#version 450\n"
  "layout(local_size_x = 16, local_size_y = 16) in;\n"
  "layout(binding = 0, r32f) uniform readonly image2DArray src;\n"
  "layout(binding = 1, r32f) uniform writeonly image2DArray dst;\n"
  "uniform float w[11];\n"
  "void main()\n"
  "{\n"
  "  ivec3 p = ivec3(gl_GlobalInvocationID);\n"
  "  ivec3 size = imageSize(src);\n"
  "  if (any(greaterThanEqual(p, size)))\n"
  "    return;\n"
  "  float acc = 0.0;\n"
  "  for (int k = -5; k <= 5; k++) {\n"
  "    ivec3 q = p;\n"
  "    q[AXIS] = clamp(p[AXIS] + k, 0, size[AXIS] - 1);\n"
  "    acc += w[k + 5] * imageLoad(src, q).x;\n"
  "  }\n"
  "  imageStore(dst, p, vec4(acc));\n"
  "}\n";

static double
ms_since(gint64 t0)
{
  return (double) (g_get_monotonic_time() - t0) / 1000.0;
}

static void
test_measure_1080p(void)
{
  /* Without debug output, as in production (a debug context is ~2x slower on llvmpipe). */
  const GpuContextParams params = { .label = "measure" };
  g_autoptr(GpuContext) ctx = gpu_test_context_with_params(&params);
  if (!ctx)
    return;
  enum { W = 1920, H = 1080, RUNS = 5 };
  size_t stride = W * sizeof(float);
  g_autofree float *src = g_new(float, W * H);
  g_autofree float *got = g_new(float, W * H);
  for (int i = 0; i < W * H; i++)
    src[i] = (float) g_test_rand_double_range(0.0, 1.0);
  g_autoptr(GpuImage) a = new_image(ctx, "a", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) b = new_image(ctx, "b", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) c = new_image(ctx, "c", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuBuffer) up = new_buffer(ctx, "up", stride * H, GPU_BUFFER_UPLOAD);
  g_autoptr(GpuBuffer) down = new_buffer(ctx, "down", stride * H, GPU_BUFFER_READBACK);
  memcpy(gpu_buffer_get_map(up), src, stride * H);

  double t_up = 1e9, t_down = 1e9, t_pbo_up = 1e9, t_pbo_down = 1e9, t_h = 1e9, t_v = 1e9;
  g_autoptr(GpuProgram) ph = new_program(ctx, "sep-h", sep_src, "#define AXIS 0\n");
  g_autoptr(GpuProgram) pv = new_program(ctx, "sep-v", sep_src, "#define AXIS 1\n");
  float w[11], wsum = 0;
  for (int k = 0; k < 11; k++)
    wsum += w[k] = expf(-(float) ((k - 5) * (k - 5)) / 8.0f);
  for (int k = 0; k < 11; k++)
    w[k] /= wsum;
  gpu_program_set_float_array(ph, "w", w, 11);
  gpu_program_set_float_array(pv, "w", w, 11);

  for (int run = 0; run < RUNS; run++) {
    gpu_context_finish(ctx);
    gint64 t0 = g_get_monotonic_time();
    g_assert_true(gpu_image_upload(a, 0, src, stride, NULL));
    gpu_context_finish(ctx);
    t_up = MIN(t_up, ms_since(t0));

    t0 = g_get_monotonic_time();
    g_assert_true(gpu_image_upload_from_buffer(a, 0, up, 0, stride, NULL));
    g_autoptr(GpuFence) f1 = gpu_fence_new(ctx, NULL);
    g_assert_true(gpu_fence_wait(f1, 10 * SECOND_NS, NULL));
    t_pbo_up = MIN(t_pbo_up, ms_since(t0));

    /* The first run includes the shader's first-dispatch compile. */
    t0 = g_get_monotonic_time();
    gpu_bind_image(0, a, GPU_ACCESS_READ);
    gpu_bind_image(1, b, GPU_ACCESS_WRITE);
    gpu_program_dispatch(ph, W, H, 1);
    gpu_barrier();
    gpu_context_finish(ctx);
    if (run > 0)
      t_h = MIN(t_h, ms_since(t0));
    t0 = g_get_monotonic_time();
    gpu_bind_image(0, b, GPU_ACCESS_READ);
    gpu_bind_image(1, c, GPU_ACCESS_WRITE);
    gpu_program_dispatch(pv, W, H, 1);
    gpu_barrier();
    gpu_context_finish(ctx);
    if (run > 0)
      t_v = MIN(t_v, ms_since(t0));

    t0 = g_get_monotonic_time();
    g_assert_true(gpu_image_download(c, 0, got, stride, NULL));
    t_down = MIN(t_down, ms_since(t0));

    t0 = g_get_monotonic_time();
    g_assert_true(gpu_image_download_to_buffer(c, 0, down, 0, stride, NULL));
    g_autoptr(GpuFence) f2 = gpu_fence_new(ctx, NULL);
    g_assert_true(gpu_fence_wait(f2, 10 * SECOND_NS, NULL));
    t_pbo_down = MIN(t_pbo_down, ms_since(t0));
  }
  assert_gl_ok(ctx, "1080p measurement");
  g_test_message("%s, 1920x1080 r32f, best of %d: upload %.2f ms, download %.2f ms, "
                 "upload via buffer+fence %.2f ms, readback via buffer+fence %.2f ms, "
                 "11-tap pass horizontal %.2f ms, vertical %.2f ms",
                 gpu_context_get_renderer(ctx), RUNS, t_up, t_down, t_pbo_up, t_pbo_down,
                 t_h, t_v);

  /* The numbers are only worth printing if the passes are right. */
  g_assert_cmpmem(got, stride * H, gpu_buffer_get_map(down), stride * H);
  g_autofree float *tmp = g_new(float, W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float acc = 0;
      for (int k = -5; k <= 5; k++)
        acc += w[k + 5] * src[y * W + CLAMP(x + k, 0, W - 1)];
      tmp[y * W + x] = acc;
    }
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      float acc = 0;
      for (int k = -5; k <= 5; k++)
        acc += w[k + 5] * tmp[CLAMP(y + k, 0, H - 1) * W + x];
      if (fabsf(acc - got[y * W + x]) > 1e-5f)
        g_error("separable pass differs at (%d, %d): %g vs %g", x, y, got[y * W + x], acc);
    }
}

void
test_gpu_add_measure_tests(void)
{
  g_test_add_func("/gpu/measure/1080p", test_measure_1080p);
}
