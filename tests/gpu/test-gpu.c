/* test-gpu.c: tests of the gpu/ runtime (suite "gpu"), run on llvmpipe in CI: the
 * skip-or-fail rule of the GPU test helper and contexts; the other objects are tested in
 * test-gpu-{image,program,buffer,measure}.c. */
#include "tests/gpu/test-gpu-util.h"

#include <GL/glcorearb.h>
#include <string.h>
#include <sys/wait.h>

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
  test_gpu_add_image_tests();
  test_gpu_add_program_tests();
  test_gpu_add_buffer_tests();
  test_gpu_add_measure_tests();
  test_gpu_add_pass_tests();
  return g_test_run();
}
