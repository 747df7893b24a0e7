/* gpu-test.h: how a GPU test gets its context.
 *
 * The rule for every test that needs EGL: when no EGL device can be opened, the test
 * is skipped, unless STEREOD_REQUIRE_GPU=1 (set by CI), in which case it FAILS, so
 * that a broken EGL setup never passes as "skipped". Any other failure to make a
 * context (a device was found but gave no GL 4.5 context, ...) always fails.
 *
 * Usage:  g_autoptr(GpuContext) ctx = gpu_test_context();
 *         if (!ctx) return;   (already marked skipped or failed)
 */
#pragma once

#include <glib.h>
#include "gpu/gpu.h"

/* Sets `name` to `value`, or unsets it for NULL: the switches (STEREOD_PHASE_SPLIT, ...)
 * that passes read when they are made, and their restoring to a saved value. */
static inline void
gpu_test_setenv(const char *name, const char *value)
{
  if (value)
    g_setenv(name, value, TRUE);
  else
    g_unsetenv(name);
}

static inline bool
gpu_test_require_gpu(void)
{
  const char *v = g_getenv("STEREOD_REQUIRE_GPU");
  return v && *v && !g_str_equal(v, "0");
}

/* Returns a new context for `params` made current on the calling thread (the device
 * comes from STEREOD_EGL_DEVICE unless params->device is set), or NULL after calling
 * g_test_skip / g_test_fail. Free it with gpu_context_free. */
static inline GpuContext *
gpu_test_context_with_params(const GpuContextParams *params)
{
  g_autoptr(GError) error = NULL;
  GpuContext *ctx = gpu_context_new(params, &error);
  if (ctx)
    return ctx;
  if (g_error_matches(error, GPU_ERROR, GPU_ERROR_NO_DEVICE) && !gpu_test_require_gpu()) {
    g_test_skip_printf("no EGL device (%s); set STEREOD_REQUIRE_GPU=1 to fail instead",
                       error->message);
    return NULL;
  }
  g_test_fail_printf("no GPU context%s: %s",
                     gpu_test_require_gpu() ? " and STEREOD_REQUIRE_GPU=1" : "",
                     error->message);
  return NULL;
}

/* The usual test context: debug output on (GL messages go to the test log). Debug
 * contexts run compute about 2x slower on llvmpipe: measure with debug off. */
static inline GpuContext *
gpu_test_context(void)
{
  const GpuContextParams params = { .label = "test", .debug = true };
  return gpu_test_context_with_params(&params);
}
