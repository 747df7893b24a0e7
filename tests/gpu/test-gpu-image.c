/* test-gpu-image.c: tests of gpu/ images: round trips, fill, writes, sampling. */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ images */

#define RT_W 37
#define RT_H 23
#define RT_LAYERS 3

static void
roundtrip(GpuContext *ctx, GpuFormat fmt, const size_t up_stride[RT_LAYERS],
          size_t down_stride)
{
  size_t px = gpu_format_host_pixel_size(fmt);
  g_autoptr(GpuImage) img = new_image(ctx, gpu_format_glsl_layout(fmt), RT_W, RT_H,
                                      RT_LAYERS, fmt);
  g_assert_cmpint(gpu_image_get_width(img), ==, RT_W);
  g_assert_cmpint(gpu_image_get_height(img), ==, RT_H);
  g_assert_cmpint(gpu_image_get_layers(img), ==, RT_LAYERS);
  g_assert_cmpint(gpu_image_get_format(img), ==, fmt);
  g_assert_cmpuint(gpu_image_get_id(img), !=, 0);

  /* Poison first so that a layer never written cannot match by accident. */
  const float poison[4] = { 3, 3, 3, 3 };
  g_assert_true(gpu_image_fill(img, poison, NULL));

  guint8 *src[RT_LAYERS];
  for (int l = 0; l < RT_LAYERS; l++) {
    g_assert_cmpuint(up_stride[l] % px, ==, 0);
    src[l] = g_malloc0(up_stride[l] * RT_H);
    random_pixels(fmt, src[l], up_stride[l], RT_W, RT_H);
    g_autoptr(GError) error = NULL;
    g_assert_true(gpu_image_upload(img, l, src[l], up_stride[l], &error));
    g_assert_no_error(error);
  }
  g_autofree guint8 *dst = g_malloc(down_stride * RT_H);
  for (int l = 0; l < RT_LAYERS; l++) {
    memset(dst, 0xa5, down_stride * RT_H);
    g_autoptr(GError) error = NULL;
    g_assert_true(gpu_image_download(img, l, dst, down_stride, &error));
    g_assert_no_error(error);
    assert_same_pixels(fmt, src[l], up_stride[l], dst, down_stride, RT_W, RT_H, 0xa5,
                       "round trip");
    g_free(src[l]);
  }
}

static void
test_image_roundtrip(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  for (GpuFormat fmt = 0; fmt < GPU_FORMAT_COUNT; fmt++) {
    size_t px = gpu_format_host_pixel_size(fmt);
    size_t tight = px * RT_W;
    /* Per layer: tight, one pixel of padding, five pixels of padding. */
    const size_t up[RT_LAYERS] = { tight, tight + px, tight + 5 * px };
    roundtrip(ctx, fmt, up, tight);
    roundtrip(ctx, fmt, up, tight + 3 * px);
  }
  /* GRAY8 rows as GStreamer pads them (multiple of 4) and odd paddings. */
  const size_t strides[] = { 37, 40, 42, 44 };
  for (guint i = 0; i < G_N_ELEMENTS(strides); i++) {
    for (guint j = 0; j < G_N_ELEMENTS(strides); j++) {
      const size_t up[RT_LAYERS] = { strides[i], strides[i], strides[(i + 1) % 4] };
      roundtrip(ctx, GPU_FORMAT_R8, up, strides[j]);
    }
  }
  assert_gl_ok(ctx, "round trips");
}

static void
test_image_fill(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  const float value[4] = { 0.25f, -3.5f, 1024.0f, 51.0f / 255.0f };
  for (GpuFormat fmt = 0; fmt < GPU_FORMAT_COUNT; fmt++) {
    int ch = gpu_format_channels(fmt);
    size_t px = gpu_format_host_pixel_size(fmt);
    g_autoptr(GpuImage) img = new_image(ctx, "fill", 7, 5, 2, fmt);
    const float *v = value;
    float int_value[4] = { -1234.0f, 0, 0, 0 };
    float u8_value[4] = { 51.0f / 255.0f, 0, 0, 0 };
    float u32_value[4] = { 123456.0f, 0, 0, 0 };
    if (fmt == GPU_FORMAT_R16I)
      v = int_value;
    else if (fmt == GPU_FORMAT_R32UI)
      v = u32_value;
    else if (fmt == GPU_FORMAT_R8)
      v = u8_value;
    g_autoptr(GError) error = NULL;
    g_assert_true(gpu_image_fill(img, v, &error));
    g_assert_no_error(error);
    guint8 out[7 * 5 * 16];
    for (int l = 0; l < 2; l++) {
      g_assert_true(gpu_image_download(img, l, out, 7 * px, &error));
      for (int i = 0; i < 7 * 5; i++) {
        for (int c = 0; c < ch; c++) {
          switch (fmt) {
          case GPU_FORMAT_R8:
            g_assert_cmpuint(out[i], ==, 51);
            break;
          case GPU_FORMAT_R16I:
            g_assert_cmpint(((gint16 *) out)[i], ==, -1234);
            break;
          case GPU_FORMAT_R32UI:
            g_assert_cmpuint(((guint32 *) out)[i], ==, 123456);
            break;
          default: {
            float got = ((float *) out)[i * ch + c];
            float want = value[c];
            /* 16F: 51/255 is not exact in half precision. */
            g_assert_cmpfloat_with_epsilon(got, want, fabsf(want) * 1e-3f);
            break;
          }
          }
        }
      }
    }
  }
  assert_gl_ok(ctx, "fills");
}

static const char copy_src[] =
  "#version 450\n"
  "layout(local_size_x = 8, local_size_y = 8) in;\n"
  "layout(binding = 0, r32f) uniform readonly image2DArray src;\n"
  "layout(binding = 1, r32f) uniform writeonly image2DArray dst;\n"
  "void main()\n"
  "{\n"
  "  ivec3 p = ivec3(gl_GlobalInvocationID);\n"
  "  if (any(greaterThanEqual(p, imageSize(src))))\n"
  "    return;\n"
  "  float v = imageLoad(src, p).x;\n"
  "  imageStore(dst, p, vec4(v * SCALE + float(p.z), 0.0, 0.0, 1.0));\n"
  "}\n";

/* Poisoned output, a shader writes every pixel from another image. */
static void
test_image_compute_writes_all(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  g_autoptr(GpuImage) in = new_image(ctx, "in", RT_W, RT_H, RT_LAYERS, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) out = new_image(ctx, "out", RT_W, RT_H, RT_LAYERS, GPU_FORMAT_R32F);
  float src[RT_LAYERS][RT_W * RT_H];
  for (int l = 0; l < RT_LAYERS; l++) {
    random_pixels(GPU_FORMAT_R32F, (guint8 *) src[l], RT_W * 4, RT_W, RT_H);
    g_assert_true(gpu_image_upload(in, l, src[l], RT_W * 4, NULL));
  }
  const float nan4[4] = { NAN, NAN, NAN, NAN };
  g_assert_true(gpu_image_fill(out, nan4, NULL));

  g_autoptr(GpuProgram) prog = new_program(ctx, "copy", copy_src, "#define SCALE 2.0\n");
  int ls[3];
  gpu_program_get_local_size(prog, ls);
  g_assert_cmpint(ls[0], ==, 8);
  g_assert_cmpint(ls[1], ==, 8);
  g_assert_cmpint(ls[2], ==, 1);
  gpu_bind_image(0, in, GPU_ACCESS_READ);
  gpu_bind_image(1, out, GPU_ACCESS_WRITE);
  gpu_program_dispatch(prog, RT_W, RT_H, RT_LAYERS);
  gpu_barrier();
  assert_gl_ok(ctx, "copy dispatch");

  for (int l = 0; l < RT_LAYERS; l++) {
    float got[RT_W * RT_H];
    g_assert_true(gpu_image_download(out, l, got, RT_W * 4, NULL));
    for (int i = 0; i < RT_W * RT_H; i++) {
      if (isnan(got[i]))
        g_error("layer %d pixel (%d, %d) was not written", l, i % RT_W, i / RT_W);
      g_assert_cmpfloat_with_epsilon(got[i], src[l][i] * 2.0f + (float) l, 1e-3);
    }
  }
}

static const char sample_src[] =
  "#version 450\n"
  "layout(local_size_x = 4, local_size_y = 4) in;\n"
  "layout(binding = 0) uniform sampler2DArray tex;\n"
  "layout(binding = 1, rgba32f) uniform writeonly image2DArray dst;\n"
  "void main()\n"
  "{\n"
  "  ivec3 p = ivec3(gl_GlobalInvocationID);\n"
  "  ivec3 size = imageSize(dst);\n"
  "  if (any(greaterThanEqual(p, size)))\n"
  "    return;\n"
  "  /* Halfway between texel x and x + 1: nearest picks one, linear averages. */\n"
  "  vec3 uv = vec3((float(p.x) + 1.0) / float(size.x), (float(p.y) + 0.5) / float(size.y), p.z);\n"
  "  imageStore(dst, p, vec4(texelFetch(tex, p, 0).x, texture(tex, uv).x, 0.0, 1.0));\n"
  "}\n";

/* Sampled textures: texelFetch, nearest and linear filtering, clamp-to-edge. */
static void
test_image_sampling(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 13, H = 6, L = 2 };
  g_autoptr(GpuImage) in = new_image(ctx, "tex", W, H, L, GPU_FORMAT_RGBA16F);
  g_autoptr(GpuImage) out = new_image(ctx, "sampled", W, H, L, GPU_FORMAT_RGBA32F);
  float src[L][W * H * 4];
  for (int l = 0; l < L; l++) {
    random_pixels(GPU_FORMAT_RGBA16F, (guint8 *) src[l], W * 16, W, H);
    g_assert_true(gpu_image_upload(in, l, src[l], W * 16, NULL));
  }
  g_autoptr(GpuProgram) prog = new_program(ctx, "sample", sample_src, NULL);
  for (int linear = 0; linear < 2; linear++) {
    gpu_bind_texture(ctx, 0, in, linear);
    gpu_bind_image(1, out, GPU_ACCESS_WRITE);
    gpu_program_dispatch(prog, W, H, L);
    gpu_barrier();
    assert_gl_ok(ctx, "sample dispatch");
    for (int l = 0; l < L; l++) {
      float got[W * H * 4];
      g_assert_true(gpu_image_download(out, l, got, W * 16, NULL));
      for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
          const float *g = &got[(y * W + x) * 4];
          float a = src[l][(y * W + x) * 4];
          float b = src[l][(y * W + MIN(x + 1, W - 1)) * 4];   /* clamp-to-edge */
          g_assert_cmpfloat(g[0], ==, a);
          if (linear)
            g_assert_cmpfloat_with_epsilon(g[1], 0.5f * (a + b), 0.02f + 0.01f * fabsf(a + b));
          else
            g_assert_true(g[1] == a || g[1] == b);
        }
      }
    }
  }
}


void
test_gpu_add_image_tests(void)
{
  g_test_add_func("/gpu/image/roundtrip", test_image_roundtrip);
  g_test_add_func("/gpu/image/fill", test_image_fill);
  g_test_add_func("/gpu/image/compute-writes-all", test_image_compute_writes_all);
  g_test_add_func("/gpu/image/sampling", test_image_sampling);
}
