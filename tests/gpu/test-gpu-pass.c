/* test-gpu-pass.c: tests of gpu/ passes: uniforms by index, program sharing between
 * passes with their own uniform values, one-call bindings, and the barrier tracker
 * (a barrier exactly where a dispatch or a transfer needs one, counted). */
#include "tests/gpu/test-gpu-util.h"

#include <math.h>
#include <string.h>

/* out[x, y, z] = in[x, y, z] * scale + add (+ z); `in` optional through `use_in`. */
static const char axpy_src[] =
  "#version 450\n"
  "layout(local_size_x = 8, local_size_y = 8) in;\n"
  "layout(r32f, binding = 0) readonly uniform image2DArray src;\n"
  "layout(r32f, binding = 1) writeonly uniform image2DArray dst;\n"
  "uniform ivec2 size;\n"
  "uniform float scale;\n"
  "uniform vec2 add;\n"
  "uniform int unused_by_the_shader;\n"
  "void main()\n"
  "{\n"
  "  ivec3 g = ivec3(gl_GlobalInvocationID);\n"
  "  if (g.x >= size.x || g.y >= size.y)\n"
  "    return;\n"
  "  float v = imageLoad(src, g).r;\n"
  "  imageStore(dst, g, vec4(v * scale + add.x + add.y * float(g.z)));\n"
  "}\n";

/* Sums a storage buffer of floats into word 0 of another (one workgroup). */
static const char sum_src[] =
  "#version 450\n"
  "layout(local_size_x = 64) in;\n"
  "layout(std430, binding = 0) readonly buffer In { float v[]; };\n"
  "layout(std430, binding = 1) writeonly buffer Out { float total; };\n"
  "layout(r32f, binding = 2) readonly uniform image2DArray img;\n"
  "uniform int n;\n"
  "shared float red[64];\n"
  "void main()\n"
  "{\n"
  "  uint t = gl_LocalInvocationID.x;\n"
  "  float acc = 0.0;\n"
  "  for (int i = int(t); i < n; i += 64)\n"
  "    acc += v[i] + imageLoad(img, ivec3(i % 8, 0, 0)).r;\n"
  "  red[t] = acc;\n"
  "  barrier();\n"
  "  for (uint s = 32u; s > 0u; s >>= 1) {\n"
  "    if (t < s) red[t] += red[t + s];\n"
  "    barrier();\n"
  "  }\n"
  "  if (t == 0u) total = red[0];\n"
  "}\n";

enum { U_SIZE, U_SCALE, U_ADD, U_UNUSED };

static GpuPass *
axpy_pass(GpuContext *ctx, const char *label)
{
  GError *error = NULL;
  GpuPassParams pp = { .label = label, .source = axpy_src,
                       .uniforms = { "size", "scale", "add", "unused_by_the_shader" } };
  GpuPass *p = gpu_pass_new(ctx, &pp, &error);
  g_assert_no_error(error);
  return p;
}

static uint64_t
barriers(GpuContext *ctx)
{
  GpuStats st;
  gpu_context_get_stats(ctx, &st);
  return st.barriers;
}

static void
run_axpy(GpuPass *p, GpuImage *src, GpuImage *dst, int w, int h, int layers)
{
  GpuPassRun run = {
    .images = { { src, GPU_ACCESS_READ }, { dst, GPU_ACCESS_WRITE } },
    .size = { w, h, layers },
  };
  gpu_pass_dispatch(p, &run);
}

static float *
read_layer(GpuImage *img, int layer)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  float *v = g_new(float, (size_t)w * h);
  GError *error = NULL;
  g_assert_true(gpu_image_download(img, layer, v, (size_t)w * 4, &error));
  g_assert_no_error(error);
  return v;
}

/* Two passes of one program keep their own uniform values when interleaved; a uniform
 * the compiler dropped is accepted; every layer of the grid is covered. */
static void
test_pass_shared_program(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 37, H = 19, L = 3 };
  GpuStats st0, st1;
  gpu_context_get_stats(ctx, &st0);
  g_autoptr(GpuPass) a = axpy_pass(ctx, "a");
  g_autoptr(GpuPass) b = axpy_pass(ctx, "b");
  gpu_context_get_stats(ctx, &st1);
  g_assert_cmpuint(st1.programs_built - st0.programs_built, ==, 1);
  g_assert_cmpuint(st1.programs_shared - st0.programs_shared, ==, 1);

  g_autoptr(GpuImage) src = new_image(ctx, "src", W, H, L, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) da = new_image(ctx, "da", W, H, L, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) db = new_image(ctx, "db", W, H, L, GPU_FORMAT_R32F);
  g_autofree float *in = g_new(float, W * H);
  for (int l = 0; l < L; l++) {
    for (int i = 0; i < W * H; i++)
      in[i] = (float)(i % 97) - 40.0f * l;
    g_assert_true(gpu_image_upload(src, l, in, W * 4, NULL));
  }
  const float nan4[4] = { NAN, NAN, NAN, NAN };
  g_assert_true(gpu_image_fill(da, nan4, NULL));
  g_assert_true(gpu_image_fill(db, nan4, NULL));

  gpu_pass_set_ivec2(a, U_SIZE, W, H);
  gpu_pass_set_float(a, U_SCALE, 2.0f);
  gpu_pass_set_vec2(a, U_ADD, 1.0f, 0.5f);
  gpu_pass_set_int(a, U_UNUSED, 7);
  gpu_pass_set_ivec2(b, U_SIZE, W, H);
  gpu_pass_set_float(b, U_SCALE, -1.0f);
  gpu_pass_set_vec2(b, U_ADD, 3.0f, 0.0f);
  run_axpy(a, src, da, W, H, L);
  run_axpy(b, src, db, W, H, L);
  /* a runs again with its own values after b used the program */
  gpu_pass_set_float(a, U_SCALE, 4.0f);
  run_axpy(a, src, da, W, H, L);
  assert_gl_ok(ctx, "dispatches");
  for (int l = 0; l < L; l++) {
    g_autofree float *oa = read_layer(da, l), *ob = read_layer(db, l);
    for (int i = 0; i < W * H; i++) {
      float v = (float)(i % 97) - 40.0f * l;
      g_assert_cmpfloat(oa[i], ==, v * 4.0f + 1.0f + 0.5f * l);
      g_assert_cmpfloat(ob[i], ==, -v + 3.0f);
    }
  }
  /* The last pass of a program frees it; a new pass builds it again. */
  g_clear_pointer(&a, gpu_pass_free);
  g_clear_pointer(&b, gpu_pass_free);
  g_autoptr(GpuPass) c = axpy_pass(ctx, "c");
  GpuStats st2;
  gpu_context_get_stats(ctx, &st2);
  g_assert_cmpuint(st2.programs_built - st1.programs_built, ==, 1);
}

/* The tracker: a barrier (counted) before a dispatch that reads what a shader wrote,
 * none before one that reads it again or touches only other images, one before a write
 * over an image a shader read (write after read), one before a download of a shader's
 * output, and the results are right throughout. */
static void
test_pass_barriers(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 16, H = 16 };
  g_autoptr(GpuPass) p = axpy_pass(ctx, "axpy");
  gpu_pass_set_ivec2(p, U_SIZE, W, H);
  gpu_pass_set_float(p, U_SCALE, 1.0f);
  gpu_pass_set_vec2(p, U_ADD, 1.0f, 0.0f);
  g_autoptr(GpuImage) x = new_image(ctx, "x", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) y = new_image(ctx, "y", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) z = new_image(ctx, "z", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) u = new_image(ctx, "u", W, H, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) v = new_image(ctx, "v", W, H, 1, GPU_FORMAT_R32F);
  const float zero[4] = { 0, 0, 0, 0 };
  g_assert_true(gpu_image_fill(x, zero, NULL));
  g_assert_true(gpu_image_fill(u, zero, NULL));

  uint64_t b0 = barriers(ctx);
  run_axpy(p, x, y, W, H, 1);            /* y = x + 1: x was written by a clear only */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 0);
  run_axpy(p, y, z, W, H, 1);            /* reads y written by the shader: barrier */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 1);
  run_axpy(p, u, v, W, H, 1);            /* other images, nothing pending on them */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 1);
  run_axpy(p, y, v, W, H, 1);            /* y is already visible, but v was written since
                                          * the barrier: write after write */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 2);
  run_axpy(p, z, y, W, H, 1);            /* y = z + 1 = 3: y was read since the barrier */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 3);
  g_autofree float *oy = read_layer(y, 0);   /* a download of a shader's output */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 4);
  g_autofree float *oz = read_layer(z, 0);   /* z is already covered */
  g_assert_cmpuint(barriers(ctx) - b0, ==, 4);
  for (int i = 0; i < W * H; i++) {
    g_assert_cmpfloat(oz[i], ==, 2.0f);
    g_assert_cmpfloat(oy[i], ==, 3.0f);
  }

  /* Storage buffers: a shader write, then a read by a shader, then by the host. */
  GError *error = NULL;
  GpuPassParams sp = { .label = "sum", .source = sum_src, .uniforms = { "n" } };
  g_autoptr(GpuPass) sum = gpu_pass_new(ctx, &sp, &error);
  g_assert_no_error(error);
  g_autoptr(GpuBuffer) vals = new_buffer(ctx, "vals", 200 * 4, GPU_BUFFER_STORAGE);
  g_autoptr(GpuBuffer) t1 = new_buffer(ctx, "t1", 4, GPU_BUFFER_STORAGE);
  g_autoptr(GpuBuffer) t2 = new_buffer(ctx, "t2", 4, GPU_BUFFER_STORAGE);
  float host[200];
  for (int i = 0; i < 200; i++)
    host[i] = (float)i;
  g_assert_true(gpu_buffer_write(vals, 0, host, sizeof host, NULL));
  gpu_pass_set_int(sum, 0, 200);
  uint64_t b1 = barriers(ctx);
  GpuPassRun r1 = { .buffers = { { vals, GPU_ACCESS_READ }, { t1, GPU_ACCESS_WRITE } },
                    .images = { [2] = { y, GPU_ACCESS_READ } }, .groups = { 1, 1, 1 } };
  gpu_pass_dispatch(sum, &r1);            /* the download's barrier had the texture-update
                                           * bit only: an image read of y needs its own */
  g_assert_cmpuint(barriers(ctx) - b1, ==, 1);
  gpu_pass_set_int(sum, 0, 1);
  GpuPassRun r2 = { .buffers = { { t1, GPU_ACCESS_READ }, { t2, GPU_ACCESS_WRITE } },
                    .images = { [2] = { y, GPU_ACCESS_READ } }, .groups = { 1, 1, 1 } };
  gpu_pass_dispatch(sum, &r2);            /* reads t1 written by the shader: barrier */
  g_assert_cmpuint(barriers(ctx) - b1, ==, 2);
  float total = 0;
  g_assert_true(gpu_buffer_read(t2, 0, &total, 4, &error));   /* host read: barrier */
  g_assert_cmpuint(barriers(ctx) - b1, ==, 3);
  g_assert_no_error(error);
  g_assert_cmpfloat(total, ==, 19900.0f + 200 * 3.0f + 3.0f);
  assert_gl_ok(ctx, "barrier test");
}

/* A pass built in the background: set up at once, ready after polling (within a
 * minute on a busy machine), then as a synchronous one; a shader with an error is
 * reported by the poll, once, with the compiler's log. */
static void
test_pass_async(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  GError *error = NULL;
  /* a variant of the text, so that the program is not already built by another test */
  GpuPassParams pp = { .label = "async", .source = axpy_src, .defines = "#define ASYNC_TEST 1",
                       .uniforms = { "size", "scale", "add" }, .async = true };
  g_autoptr(GpuPass) p = gpu_pass_new(ctx, &pp, &error);
  g_assert_no_error(error);
  gpu_pass_set_ivec2(p, U_SIZE, 8, 8);   /* uniforms can be set before it is built */
  gpu_pass_set_float(p, U_SCALE, 3.0f);
  gpu_pass_set_vec2(p, U_ADD, 0.5f, 0.0f);
  int64_t deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  int polls = 0;
  while (!gpu_pass_poll(p, &error)) {
    g_assert_no_error(error);
    g_assert_cmpint(g_get_monotonic_time(), <, deadline);
    g_usleep(1000);
    polls++;
  }
  g_test_message("async pass ready after %d polls", polls);
  g_autoptr(GpuImage) x = new_image(ctx, "x", 8, 8, 1, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) y = new_image(ctx, "y", 8, 8, 1, GPU_FORMAT_R32F);
  const float two[4] = { 2, 2, 2, 2 };
  g_assert_true(gpu_image_fill(x, two, NULL));
  run_axpy(p, x, y, 8, 8, 1);
  g_autofree float *oy = read_layer(y, 0);
  for (int i = 0; i < 64; i++)
    g_assert_cmpfloat(oy[i], ==, 6.5f);

  GpuPassParams bad = { .label = "broken", .async = true,
                        .source = "#version 450\nlayout(local_size_x = 1) in;\n"
                                  "void main() { undeclared_name = 1; }\n" };
  g_test_expect_message(LOG_DOMAIN, G_LOG_LEVEL_WARNING, "*\"broken\" failed to compile*");
  g_autoptr(GpuPass) b = gpu_pass_new(ctx, &bad, &error);
  if (b) {   /* asynchronous: the poll reports it */
    while (!gpu_pass_poll(b, &error) && !error) {
      g_assert_cmpint(g_get_monotonic_time(), <, deadline);
      g_usleep(1000);
    }
  }
  g_test_assert_expected_messages();
  g_assert_error(error, GPU_ERROR, GPU_ERROR_COMPILE);
  g_assert_nonnull(strstr(error->message, "undeclared_name"));
  g_clear_error(&error);
  assert_gl_ok(ctx, "async passes");
}

/* A pass freed after its context (as the other GL objects may be): the context takes
 * the program with it, the pass only its own memory (ASan checks it). */
static void
test_pass_outlives_context(void)
{
  GpuContext *ctx = gpu_test_context();
  if (!ctx)
    return;
  GpuPass *a = axpy_pass(ctx, "a"), *b = axpy_pass(ctx, "b");
  gpu_context_free(ctx);
  gpu_pass_free(a);
  gpu_pass_free(b);
}

/* Profiling: every dispatch between start and stop gives one entry, in order, with its
 * pass's label and workgroup counts; beyond the limit nothing is recorded; a second
 * start begins a new list; dispatches outside a profile are not recorded. */
static void
test_pass_profile(void)
{
  g_autoptr(GpuContext) ctx = gpu_test_context();
  if (!ctx)
    return;
  enum { W = 37, H = 19, L = 2 };
  GError *error = NULL;
  g_autoptr(GpuPass) a = axpy_pass(ctx, "first");
  g_autoptr(GpuPass) b = axpy_pass(ctx, "second");
  g_autoptr(GpuImage) src = new_image(ctx, "src", W, H, L, GPU_FORMAT_R32F);
  g_autoptr(GpuImage) dst = new_image(ctx, "dst", W, H, L, GPU_FORMAT_R32F);
  for (GpuPass *p = a; p; p = p == a ? b : NULL) {
    gpu_pass_set_ivec2(p, U_SIZE, W, H);
    gpu_pass_set_float(p, U_SCALE, 1.0f);
    gpu_pass_set_vec2(p, U_ADD, 0.0f, 0.0f);
  }
  run_axpy(a, src, dst, W, H, L);   /* before any profile: not recorded */
  g_assert_true(gpu_context_profile_start(ctx, 3, &error));
  g_assert_no_error(error);
  run_axpy(a, src, dst, W, H, L);
  run_axpy(b, dst, src, W, H, L);
  run_axpy(a, src, dst, W, 8, 1);
  run_axpy(b, dst, src, W, H, L);   /* the fourth: beyond the limit of 3 */
  GpuProfileEntry e[8];
  int n = gpu_context_profile_stop(ctx, e, 8);
  g_assert_cmpint(n, ==, 3);
  g_assert_cmpstr(e[0].label, ==, "first");
  g_assert_cmpstr(e[1].label, ==, "second");
  g_assert_cmpstr(e[2].label, ==, "first");
  g_assert_cmpuint(e[0].groups[0], ==, (W + 7) / 8);
  g_assert_cmpuint(e[0].groups[1], ==, (H + 7) / 8);
  g_assert_cmpuint(e[0].groups[2], ==, L);
  g_assert_cmpuint(e[2].groups[1], ==, 1);
  g_assert_cmpuint(e[2].groups[2], ==, 1);
  for (int i = 0; i < n; i++)
    g_assert_true(e[i].ms >= 0.0 && e[i].ms < 10000.0);
  /* a new profile starts empty and may be larger */
  g_assert_true(gpu_context_profile_start(ctx, 5, &error));
  run_axpy(b, dst, src, W, H, L);
  g_assert_cmpint(gpu_context_profile_stop(ctx, e, 8), ==, 1);
  g_assert_cmpstr(e[0].label, ==, "second");
  /* fewer entries than recorded fit the caller's array */
  g_assert_true(gpu_context_profile_start(ctx, 5, &error));
  run_axpy(a, src, dst, W, H, L);
  run_axpy(b, dst, src, W, H, L);
  g_assert_cmpint(gpu_context_profile_stop(ctx, e, 1), ==, 1);
  g_assert_true(gpu_context_check(ctx, "profile", &error));
  g_assert_no_error(error);
}

void
test_gpu_add_pass_tests(void)
{
  g_test_add_func("/gpu/pass/profile", test_pass_profile);
  g_test_add_func("/gpu/pass/outlives-context", test_pass_outlives_context);
  g_test_add_func("/gpu/pass/async", test_pass_async);
  g_test_add_func("/gpu/pass/shared-program", test_pass_shared_program);
  g_test_add_func("/gpu/pass/barriers", test_pass_barriers);
}
