/* test-gpu-program.c: tests of gpu/ programs: uniforms, atomics, compile errors, includes. */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <math.h>
#include <string.h>

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


void
test_gpu_add_program_tests(void)
{
  g_test_add_func("/gpu/program/uniforms-atomics", test_program_uniforms_atomics);
  g_test_add_func("/gpu/program/compile-error", test_program_compile_error);
  g_test_add_func("/gpu/program/include", test_program_include);
}
