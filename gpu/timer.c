/* timer.c: sets of GL_TIMESTAMP queries. */
#include "gpu/gpu-private.h"

#define MAX_STAMPS 4096

struct GpuTimer {
  GpuContext *ctx;
  int count;
  GLuint *ids;
  bool *stamped;   /* a query never issued has no result to read */
};

GpuTimer *
gpu_timer_new(GpuContext *ctx, int count, GError **error)
{
  g_return_val_if_fail(ctx && count > 0, NULL);
  if (!gpu_context_require_ok(ctx, "create a timer", error))
    return NULL;
  if (count > MAX_STAMPS) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: %d timestamps requested, at most %d",
                ctx->label, count, MAX_STAMPS);
    return NULL;
  }
  g_autoptr(GpuTimer) timer = g_new0(GpuTimer, 1);
  timer->ctx = ctx;
  timer->count = count;
  timer->ids = g_new0(GLuint, count);
  timer->stamped = g_new0(bool, count);
  glCreateQueries(GL_TIMESTAMP, count, timer->ids);
  if (!gpu_context_check(ctx, "creating timer queries", error))
    return NULL;
  return g_steal_pointer(&timer);
}

void
gpu_timer_free(GpuTimer *timer)
{
  if (!timer)
    return;
  if (timer->ids)
    glDeleteQueries(timer->count, timer->ids);
  g_free(timer->ids);
  g_free(timer->stamped);
  g_free(timer);
}

void
gpu_timer_stamp(GpuTimer *timer, int index)
{
  g_return_if_fail(timer && index >= 0 && index < timer->count);
  glQueryCounter(timer->ids[index], GL_TIMESTAMP);
  timer->stamped[index] = true;
}

bool
gpu_timer_read(GpuTimer *timer, bool wait, uint64_t *ns)
{
  g_return_val_if_fail(timer && ns, false);
  bool all = true;
  for (int i = 0; i < timer->count; i++) {
    ns[i] = 0;
    if (!timer->stamped[i]) {
      all = false;
      continue;
    }
    if (!wait) {
      GLuint available = GL_FALSE;
      glGetQueryObjectuiv(timer->ids[i], GL_QUERY_RESULT_AVAILABLE, &available);
      if (!available) {
        all = false;
        continue;
      }
    }
    GLuint64 v = 0;
    glGetQueryObjectui64v(timer->ids[i], GL_QUERY_RESULT, &v);
    ns[i] = v;
  }
  return all;
}

int
gpu_timer_get_count(GpuTimer *timer)
{
  g_return_val_if_fail(timer, 0);
  return timer->count;
}
