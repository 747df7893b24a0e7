/* gpu-test.h: the GPU context for tests. Skips when no EGL device can be opened, and
 * fails instead when STEREOD_REQUIRE_GPU=1 (CI), so a broken EGL setup cannot pass. */
#pragma once
#include <glib.h>
#include "gpu/gpu.h"

static inline GpuContext *
gpu_test_context(void)
{
  GError *error = NULL;
  GpuContextParams p = { .label = "test", .debug = true };
  GpuContext *ctx = gpu_context_new(&p, &error);
  if (ctx)
    return ctx;
  if (g_strcmp0(g_getenv("STEREOD_REQUIRE_GPU"), "1") == 0)
    g_error("no GPU context and STEREOD_REQUIRE_GPU=1: %s", error->message);
  g_test_skip(error->message);
  g_error_free(error);
  return NULL;
}
