/* test-gpu.c: tests of the gpu/ runtime (suite "gpu"), run on llvmpipe in CI. */
#include "gpu/gpu.h"
#include "tests/common/gpu-test.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#define LOG_DOMAIN "stereod-gpu"
#define SECOND_NS G_GUINT64_CONSTANT(1000000000)

/* ------------------------------------------------------------ host data helpers */

/* Random host pixels for `fmt`, exactly representable in the GPU format (16F values
 * are multiples of 1/16 below 128 in magnitude). */
static void
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
static void
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

static GpuImage *
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

static GpuBuffer *
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

static GpuProgram *
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

static void
assert_gl_ok(GpuContext *ctx, const char *stage)
{
  g_autoptr(GError) error = NULL;
  gpu_context_check(ctx, stage, &error);
  g_assert_no_error(error);
  g_assert_false(gpu_context_is_failed(ctx));
}

/* ------------------------------------------------------------ helper rule */

static const char *self_path;

/* Runs only in a child started by run_helper_child(). */
static void
test_helper_child(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (ctx)
    g_test_fail_printf("a context was made for a device that does not exist");
}

/* Runs this program's helper child with no usable device; returns its wait status and
 * stdout (TAP). */
static int
run_helper_child(bool require_gpu, char **out)
{
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "GPU_TEST_HELPER_CHILD", "1", TRUE);
  env = g_environ_setenv(env, "STEREOD_EGL_DEVICE", "99", TRUE);   /* no such device */
  if (require_gpu)
    env = g_environ_setenv(env, "STEREOD_REQUIRE_GPU", "1", TRUE);
  else
    env = g_environ_unsetenv(env, "STEREOD_REQUIRE_GPU");
  const char *argv[] = { self_path, "-p", "/gpu/helper/child", NULL };
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **) argv, env, G_SPAWN_DEFAULT, NULL, NULL, out,
                             &err, &status, &error));
  g_assert_no_error(error);
  g_test_message("child (STEREOD_REQUIRE_GPU=%d) status %d: %s", require_gpu, status, *out);
  return status;
}

/* No EGL device: skipped normally, failed with STEREOD_REQUIRE_GPU=1. */
static void
test_helper_rule(void)
{
  g_autofree char *skip_out = NULL, *fail_out = NULL;
  int status = run_helper_child(false, &skip_out);
  g_assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  g_assert_nonnull(strstr(skip_out, "ok 1 /gpu/helper/child # SKIP"));

  status = run_helper_child(true, &fail_out);
  g_assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  g_assert_nonnull(strstr(fail_out, "not ok 1 /gpu/helper/child"));
}

/* ------------------------------------------------------------ context */

static void
test_context_create(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  const char *renderer = gpu_context_get_renderer(ctx);
  const char *version = gpu_context_get_version(ctx);
  g_assert_nonnull(renderer);
  g_assert_cmpstr(renderer, !=, "");
  g_assert_nonnull(version);
  g_assert_true(g_str_has_prefix(version, "4."));
  g_assert_cmpint(g_ascii_strtoll(version + 2, NULL, 10), >=, 5);
  g_assert_nonnull(gpu_context_get_device(ctx));
  g_test_message("device %s, GL_RENDERER %s, GL_VERSION %s", gpu_context_get_device(ctx),
                 renderer, version);
  g_assert_true(gpu_context_is_software(ctx) == (strstr(renderer, "llvmpipe") != NULL ||
                                                 strstr(renderer, "softpipe") != NULL));
  /* GL 4.5 minimums. */
  g_assert_cmpint(gpu_context_get_max_shared_memory(ctx), >=, 32768);
  g_assert_cmpint(gpu_context_get_max_invocations(ctx), >=, 1024);
  g_assert_false(gpu_context_is_failed(ctx));
  g_autoptr(GError) error = NULL;
  g_assert_true(gpu_context_check(ctx, "nothing", &error));
  g_assert_no_error(error);
}

/* Creates a context for `device`, checks it can compute, frees it. Returns FALSE with
 * the error when the selection found no device. */
static bool
try_device(const char *device, char **renderer_out, GError **error)
{
  const GpuContextParams params = { .label = device, .device = device };
  g_autoptr(GpuContext) ctx = gpu_context_new(&params, error);
  if (!ctx)
    return false;
  g_autoptr(GpuImage) img = new_image(ctx, "probe", 5, 3, 1, GPU_FORMAT_R32F);
  const float v[4] = { 7.5f, 0, 0, 0 };
  float out[15];
  g_assert_true(gpu_image_fill(img, v, NULL));
  g_assert_true(gpu_image_download(img, 0, out, 5 * sizeof(float), NULL));
  for (int i = 0; i < 15; i++)
    g_assert_cmpfloat(out[i], ==, 7.5f);
  if (renderer_out)
    *renderer_out = g_strdup(gpu_context_get_renderer(ctx));
  g_clear_pointer(&img, gpu_image_free);
  return true;
}

static void
test_context_devices(void)
{
  /* The auto choice follows the helper rule; the others are checked against it. */
  g_autoptr(GpuContext) probe = gpu_test_context();
  if (!probe)
    return;
  bool mesa = gpu_context_is_software(probe);
  g_clear_pointer(&probe, gpu_context_free);

  const char *devices[] = { "auto", "software", "surfaceless", "auto", "software" };
  for (guint round = 0; round < 2; round++) {
    for (guint i = 0; i < G_N_ELEMENTS(devices); i++) {
      g_autoptr(GError) error = NULL;
      g_autofree char *renderer = NULL;
      if (try_device(devices[i], &renderer, &error)) {
        g_test_message("%s: %s", devices[i], renderer);
        continue;
      }
      /* Where auto lands on llvmpipe, Mesa's software device and surfaceless exist. */
      g_assert_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE);
      g_assert_false(mesa);
      g_test_message("%s: not available here (%s)", devices[i], error->message);
    }
  }

  g_autoptr(GError) error = NULL;
  g_assert_false(try_device("99", NULL, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE);
  g_clear_error(&error);
  g_assert_false(try_device("bogus", NULL, &error));
  g_assert_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE);
  g_assert_nonnull(strstr(error->message, "bogus"));
}

/* Two contexts on the same EGL display at once: freeing one must not terminate the
 * display under the other. */
static void
test_context_two_at_once(void)
{
  g_autoptr(GpuContext) a = gpu_test_context();
  if (!a)
    return;
  g_autoptr(GpuImage) img = new_image(a, "a-image", 9, 4, 2, GPU_FORMAT_R32F);
  float v[36];
  for (int i = 0; i < 36; i++)
    v[i] = (float) i;
  g_assert_true(gpu_image_upload(img, 1, v, 9 * sizeof(float), NULL));

  g_autoptr(GpuContext) b = gpu_test_context();
  g_assert_nonnull(b);
  /* b is current now; a's objects are used again only after a is made current. */
  g_autoptr(GpuImage) bimg = new_image(b, "b-image", 3, 3, 1, GPU_FORMAT_R8);
  g_clear_pointer(&bimg, gpu_image_free);
  g_clear_pointer(&b, gpu_context_free);

  g_autoptr(GError) error = NULL;
  g_assert_true(gpu_context_make_current(a, &error));
  g_assert_no_error(error);
  float out[36] = { 0 };
  g_assert_true(gpu_image_download(img, 1, out, 9 * sizeof(float), &error));
  g_assert_no_error(error);
  g_assert_cmpmem(out, sizeof(out), v, sizeof(v));
  assert_gl_ok(a, "after freeing a second context");
}

typedef struct {
  GpuContext *ctx;
  GpuImage *img;
  bool ok;
} ThreadJob;

static gpointer
thread_job(gpointer data)
{
  ThreadJob *job = data;
  if (!gpu_context_make_current(job->ctx, NULL))
    return NULL;
  float px[6] = { 1, 2, 3, 4, 5, 6 }, out[6] = { 0 };
  job->ok = gpu_image_upload(job->img, 0, px, 3 * sizeof(float), NULL) &&
            gpu_image_download(job->img, 0, out, 3 * sizeof(float), NULL) &&
            memcmp(px, out, sizeof(px)) == 0;
  gpu_context_release_current(job->ctx);
  return NULL;
}

/* The context can be handed to another thread and back. */
static void
test_context_handover(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  g_autoptr(GpuImage) img = new_image(ctx, "handover", 3, 2, 1, GPU_FORMAT_R32F);
  gpu_context_release_current(ctx);
  ThreadJob job = { ctx, img, false };
  GThread *t = g_thread_new("gl", thread_job, &job);
  g_thread_join(t);
  g_assert_true(job.ok);
  g_assert_true(gpu_context_make_current(ctx, NULL));
  float out[6] = { 0 };
  g_assert_true(gpu_image_download(img, 0, out, 3 * sizeof(float), NULL));
  g_assert_cmpfloat(out[5], ==, 6.0f);
}

static void
test_context_failed(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  g_assert_false(gpu_context_is_failed(ctx));
  /* In a core profile, names not made by glGen* / glCreate* are invalid. */
  glBindTexture(GL_TEXTURE_2D, 123456);
  g_autoptr(GError) error = NULL;
  g_test_expect_message(LOG_DOMAIN, G_LOG_LEVEL_WARNING,
                        "*GL_INVALID_OPERATION after provoked error*");
  g_assert_false(gpu_context_check(ctx, "provoked error", &error));
  g_test_assert_expected_messages();
  g_assert_error(error, GPU_ERROR, GPU_ERROR_GL);
  g_assert_true(gpu_context_is_failed(ctx));
  g_clear_error(&error);

  /* Nothing pending any more, but the flag is sticky. */
  g_assert_true(gpu_context_check(ctx, "after", &error));
  g_assert_true(gpu_context_is_failed(ctx));
  GpuImage *img = gpu_image_new(ctx, &(GpuImageParams) {
    .width = 4, .height = 4, .format = GPU_FORMAT_R8,
  }, &error);
  g_assert_null(img);
  g_assert_error(error, GPU_ERROR, GPU_ERROR_FAILED);
}

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

/* ------------------------------------------------------------ programs */

static const char uniforms_src[] =
  "#version 450\n"
  "layout(local_size_x = 64) in;\n"
  "uniform int n;\n"
  "uniform float scale;\n"
  "uniform float w[5];\n"
  "uniform ivec2 off;\n"
  "uniform vec2 ab;\n"
  "uniform vec4 c;\n"
  "layout(std430, binding = 0) buffer Counters { uint count; int sum; };\n"
  "layout(std430, binding = 1) buffer Out { float result[]; };\n"
  "void main()\n"
  "{\n"
  "  int i = int(gl_GlobalInvocationID.x);\n"
  "  if (i >= n)\n"
  "    return;\n"
  "  atomicAdd(count, uint(off.y));\n"
  "  atomicAdd(sum, i);\n"
  "  result[i] = float(i + off.x) * scale + w[i % 5] + ab.y + c.z;\n"
  "}\n";

static void
test_program_uniforms_atomics(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { N = 1000, CAP = 1024 };
  g_autoptr(GpuProgram) prog = new_program(ctx, "uniforms", uniforms_src, NULL);
  g_assert_cmpuint(gpu_program_get_id(prog), !=, 0);
  g_autoptr(GpuBuffer) counters = new_buffer(ctx, "counters", 8, GPU_BUFFER_STORAGE);
  g_autoptr(GpuBuffer) result = new_buffer(ctx, "result", CAP * 4, GPU_BUFFER_STORAGE);
  g_assert_null(gpu_buffer_get_map(result));
  g_assert_cmpuint(gpu_buffer_get_size(result), ==, CAP * 4);
  const guint32 zero[2] = { 0, 0 };
  g_assert_true(gpu_buffer_write(counters, 0, zero, sizeof(zero), NULL));
  g_assert_true(gpu_buffer_fill_u32(result, 0x7fc00000u, NULL));   /* NaN */

  const float w[5] = { 0.5f, -1.0f, 2.25f, 8.0f, -0.125f };
  const float c[4] = { 100.0f, 200.0f, 0.75f, 400.0f };
  gpu_program_set_int(prog, "n", N);
  gpu_program_set_float(prog, "scale", 0.5f);
  gpu_program_set_float_array(prog, "w", w, 5);
  gpu_program_set_ivec2(prog, "off", 3, 2);
  gpu_program_set_vec2(prog, "ab", 9.0f, -4.0f);
  gpu_program_set_vec4(prog, "c", c);
  gpu_program_set_float(prog, "not_a_uniform", 1.0f);   /* ignored */
  gpu_program_set_float(prog, "not_a_uniform", 2.0f);
  gpu_bind_storage(0, counters);
  gpu_bind_storage(1, result);
  gpu_program_dispatch(prog, N, 1, 1);
  gpu_barrier();
  assert_gl_ok(ctx, "uniforms dispatch");

  guint32 cnt[2];
  float out[CAP];
  g_assert_true(gpu_buffer_read(counters, 0, cnt, sizeof(cnt), NULL));
  g_assert_true(gpu_buffer_read(result, 0, out, sizeof(out), NULL));
  g_assert_cmpuint(cnt[0], ==, 2 * N);
  g_assert_cmpint((gint32) cnt[1], ==, N * (N - 1) / 2);
  for (int i = 0; i < CAP; i++) {
    if (i >= N) {
      g_assert_true(isnan(out[i]));   /* out of the grid: untouched */
      continue;
    }
    float want = (float) (i + 3) * 0.5f + w[i % 5] - 4.0f + 0.75f;
    g_assert_cmpfloat_with_epsilon(out[i], want, 1e-4f * (1.0f + fabsf(want)));
  }
}

static const char bad_src[] =
  "#version 450\n"                                           /* 1 */
  "layout(local_size_x = 1) in;\n"                           /* 2 */
  "layout(std430, binding = 0) buffer B { float v[]; };\n"  /* 3 */
  "\n"                                                       /* 4 */
  "void main()\n"                                            /* 5 */
  "{\n"                                                      /* 6 */
  "  float b = undefined_thing * 2.0;\n"                     /* 7 */
  "  v[0] = b;\n"                                            /* 8 */
  "}\n";

/* The driver's log says line 7 of source 0: "0:7(" on Mesa, "0(7)" on NVIDIA. */
static bool
log_names_line(const char *msg, int source, int line)
{
  g_autofree char *mesa = g_strdup_printf("%d:%d(", source, line);
  g_autofree char *nv = g_strdup_printf("%d(%d)", source, line);
  return strstr(msg, mesa) || strstr(msg, nv);
}

static void
test_program_compile_error(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  /* Defines go after #version; the #line directive keeps line 7 as line 7. */
  for (int with_defines = 0; with_defines < 2; with_defines++) {
    g_autoptr(GError) error = NULL;
    g_test_expect_message(LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*\"bad\" failed to compile*");
    GpuProgram *prog = gpu_program_new(ctx, &(GpuProgramParams) {
      .label = "bad", .source = bad_src,
      .defines = with_defines ? "#define ONE 1\n#define TWO 2\n#define THREE 3" : NULL,
    }, &error);
    g_test_assert_expected_messages();
    g_assert_null(prog);
    g_assert_error(error, GPU_ERROR, GPU_ERROR_COMPILE);
    g_test_message("%s", error->message);
    g_assert_true(log_names_line(error->message, 0, 7));
    g_assert_nonnull(strstr(error->message, "  0:7   |   float b = undefined_thing * 2.0;"));
    if (with_defines)
      g_assert_nonnull(strstr(error->message, "       +| #define TWO 2\n"));
  }
  /* A failed compile is the caller's problem, not a GL error. */
  assert_gl_ok(ctx, "after compile errors");
}

static void
test_program_include(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(GpuProgram) prog = gpu_program_new(ctx, &(GpuProgramParams) {
    .resource = "test-include.comp", .defines = "#define TEST_OFFSET 0.5\n",
  }, &error);
  g_assert_no_error(error);
  g_assert_nonnull(prog);
  int ls[3];
  gpu_program_get_local_size(prog, ls);
  g_assert_cmpint(ls[0], ==, 32);

  g_autoptr(GpuBuffer) out = new_buffer(ctx, "include-out", 128 * 4, GPU_BUFFER_STORAGE);
  g_assert_true(gpu_buffer_fill_u32(out, 0x7fc00000u, NULL));
  gpu_program_set_int(prog, "n", 100);
  gpu_bind_storage(0, out);
  gpu_program_dispatch(prog, 100, 1, 1);
  gpu_barrier();
  float v[128];
  g_assert_true(gpu_buffer_read(out, 0, v, sizeof(v), NULL));
  for (int i = 0; i < 128; i++) {
    if (i < 100)
      g_assert_cmpfloat(v[i], ==, 2.0f * (float) i + 0.5f);
    else
      g_assert_true(isnan(v[i]));
  }

  /* Source strings can include too. */
  g_autoptr(GpuProgram) inline_prog = new_program(ctx, "inline",
    "#version 450\n#include \"test-nested.glsl\"\nlayout(local_size_x = 1) in;\n"
    "layout(std430, binding = 0) buffer B { float v[]; };\n"
    "void main() { v[0] = test_scale(); }\n", NULL);
  gpu_bind_storage(0, out);
  gpu_program_dispatch(inline_prog, 1, 1, 1);
  gpu_barrier();
  g_assert_true(gpu_buffer_read(out, 0, v, sizeof(float), NULL));
  g_assert_cmpfloat(v[0], ==, 2.0f);

  /* An error inside an included file names that file's source number and line. */
  g_test_expect_message(LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*failed to compile*");
  GpuProgram *bad = gpu_program_new(ctx, &(GpuProgramParams) {
    .resource = "test-broken-include.comp",
  }, &error);
  g_test_assert_expected_messages();
  g_assert_null(bad);
  g_assert_error(error, GPU_ERROR, GPU_ERROR_COMPILE);
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "source 1 = test-broken.glsl"));
  g_assert_true(log_names_line(error->message, 1, 4));
  g_assert_nonnull(strstr(error->message, "  1:4   |   return x * not_declared_anywhere;"));
  g_clear_error(&error);

  bad = gpu_program_new(ctx, &(GpuProgramParams) {
    .resource = "test-missing-include.comp",
  }, &error);
  g_assert_null(bad);
  g_assert_error(error, GPU_ERROR, GPU_ERROR_COMPILE);
  g_assert_nonnull(strstr(error->message, "test-does-not-exist.glsl"));
  g_assert_nonnull(strstr(error->message, "test-missing-include.comp:2"));
  g_clear_error(&error);

  bad = gpu_program_new(ctx, &(GpuProgramParams) { .resource = "no-such.comp" }, &error);
  g_assert_null(bad);
  g_assert_error(error, GPU_ERROR, GPU_ERROR_COMPILE);
  assert_gl_ok(ctx, "include tests");
}

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

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  self_path = argv[0];
  if (g_getenv("GPU_TEST_HELPER_CHILD")) {
    g_test_add_func("/gpu/helper/child", test_helper_child);
    return g_test_run();
  }
  g_test_add_func("/gpu/helper/rule", test_helper_rule);
  g_test_add_func("/gpu/context/create", test_context_create);
  g_test_add_func("/gpu/context/devices", test_context_devices);
  g_test_add_func("/gpu/context/two-at-once", test_context_two_at_once);
  g_test_add_func("/gpu/context/handover", test_context_handover);
  g_test_add_func("/gpu/context/failed", test_context_failed);
  g_test_add_func("/gpu/image/roundtrip", test_image_roundtrip);
  g_test_add_func("/gpu/image/fill", test_image_fill);
  g_test_add_func("/gpu/image/compute-writes-all", test_image_compute_writes_all);
  g_test_add_func("/gpu/image/sampling", test_image_sampling);
  g_test_add_func("/gpu/program/uniforms-atomics", test_program_uniforms_atomics);
  g_test_add_func("/gpu/program/compile-error", test_program_compile_error);
  g_test_add_func("/gpu/program/include", test_program_include);
  g_test_add_func("/gpu/buffer/async-transfers", test_buffer_async_transfers);
  g_test_add_func("/gpu/buffer/write-read", test_buffer_write_read);
  g_test_add_func("/gpu/timer/stamps", test_timer);
  g_test_add_func("/gpu/measure/1080p", test_measure_1080p);
  return g_test_run();
}
