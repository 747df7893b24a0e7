/* buffer.c: buffer objects (immutable storage, persistent maps) and fences. */
#include "gpu/gpu-private.h"

#include <string.h>

struct GpuBuffer {
  GpuContext *ctx;
  char *label;
  GLuint id;
  size_t size;
  GpuBufferUsage usage;
  void *map;
  GpuTrack track;
};

GpuTrack *
gpu_buffer_get_track(GpuBuffer *buf)
{
  return &buf->track;
}

GpuBuffer *
gpu_buffer_new(GpuContext *ctx, const GpuBufferParams *params, GError **error)
{
  g_return_val_if_fail(ctx && params, NULL);
  g_return_val_if_fail(params->size > 0, NULL);
  g_return_val_if_fail(params->usage == GPU_BUFFER_STORAGE ||
                       params->usage == GPU_BUFFER_UPLOAD ||
                       params->usage == GPU_BUFFER_READBACK, NULL);
  const char *label = params->label ? params->label : "buffer";
  if (!gpu_context_require_ok(ctx, "create a buffer", error))
    return NULL;
  if (params->size > (size_t) G_MAXSSIZE) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: buffer \"%s\" of %zu bytes is too big",
                ctx->label, label, params->size);
    return NULL;
  }

  g_autoptr(GpuBuffer) buf = g_new0(GpuBuffer, 1);
  buf->ctx = ctx;
  buf->label = g_strdup(label);
  buf->size = params->size;
  buf->usage = params->usage;

  /* Every usage gets DYNAMIC_STORAGE so gpu_buffer_write() can go through
   * glNamedBufferSubData, which GL orders against the commands already queued. */
  GLbitfield flags = GL_DYNAMIC_STORAGE_BIT, map_flags = 0;
  switch (params->usage) {
  case GPU_BUFFER_UPLOAD:
    map_flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    break;
  case GPU_BUFFER_READBACK:
    map_flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    flags |= GL_CLIENT_STORAGE_BIT;
    break;
  case GPU_BUFFER_STORAGE:
    break;
  }
  flags |= map_flags;

  glCreateBuffers(1, &buf->id);
  glNamedBufferStorage(buf->id, (GLsizeiptr) buf->size, NULL, flags);
  glObjectLabel(GL_BUFFER, buf->id, -1, buf->label);
  if (map_flags)
    buf->map = glMapNamedBufferRange(buf->id, 0, (GLsizeiptr) buf->size, map_flags);

  g_autofree char *stage = g_strdup_printf("creating buffer \"%s\"", buf->label);
  if (!gpu_context_check(ctx, stage, error))
    return NULL;
  if (map_flags && !buf->map) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_GL, "%s: mapping buffer \"%s\" failed",
                ctx->label, buf->label);
    return NULL;
  }
  return g_steal_pointer(&buf);
}

void
gpu_buffer_free(GpuBuffer *buf)
{
  if (!buf)
    return;
  /* Deleting a buffer unmaps it. */
  if (buf->id)
    glDeleteBuffers(1, &buf->id);
  g_free(buf->label);
  g_free(buf);
}

unsigned
gpu_buffer_get_id(GpuBuffer *buf)
{
  g_return_val_if_fail(buf, 0);
  return buf->id;
}

size_t
gpu_buffer_get_size(GpuBuffer *buf)
{
  g_return_val_if_fail(buf, 0);
  return buf->size;
}

void *
gpu_buffer_get_map(GpuBuffer *buf)
{
  g_return_val_if_fail(buf, NULL);
  return buf->map;
}

static bool
range_ok(GpuBuffer *buf, size_t offset, size_t size, const char *what, GError **error)
{
  if (offset <= buf->size && size <= buf->size - offset)
    return true;
  g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
              "%s: %s of %zu bytes at offset %zu is outside buffer \"%s\" (%zu bytes)",
              buf->ctx->label, what, size, offset, buf->label, buf->size);
  return false;
}

bool
gpu_buffer_write(GpuBuffer *buf, size_t offset, const void *data, size_t size, GError **error)
{
  g_return_val_if_fail(buf && (data || size == 0), false);
  if (!gpu_context_require_ok(buf->ctx, "write a buffer", error) ||
      !range_ok(buf, offset, size, "write", error))
    return false;
  gpu_track_command(buf->ctx, &buf->track, GPU_SYNC_BUFFER_UPDATE, true);
  glNamedBufferSubData(buf->id, (GLintptr) offset, (GLsizeiptr) size, data);
  g_autofree char *stage = g_strdup_printf("write to buffer \"%s\"", buf->label);
  return gpu_context_check(buf->ctx, stage, error);
}

bool
gpu_buffer_read(GpuBuffer *buf, size_t offset, void *data, size_t size, GError **error)
{
  g_return_val_if_fail(buf && (data || size == 0), false);
  if (!gpu_context_require_ok(buf->ctx, "read a buffer", error) ||
      !range_ok(buf, offset, size, "read", error))
    return false;
  /* Shader writes become visible to glGetBufferSubData only after a barrier. */
  gpu_track_command(buf->ctx, &buf->track, GPU_SYNC_BUFFER_UPDATE, false);
  glGetNamedBufferSubData(buf->id, (GLintptr) offset, (GLsizeiptr) size, data);
  g_autofree char *stage = g_strdup_printf("read from buffer \"%s\"", buf->label);
  return gpu_context_check(buf->ctx, stage, error);
}

bool
gpu_buffer_fill_u32(GpuBuffer *buf, uint32_t value, GError **error)
{
  g_return_val_if_fail(buf, false);
  g_return_val_if_fail(buf->size % 4 == 0, false);
  if (!gpu_context_require_ok(buf->ctx, "fill a buffer", error))
    return false;
  gpu_track_command(buf->ctx, &buf->track, GPU_SYNC_BUFFER_UPDATE, true);
  glClearNamedBufferData(buf->id, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, &value);
  g_autofree char *stage = g_strdup_printf("fill of buffer \"%s\"", buf->label);
  return gpu_context_check(buf->ctx, stage, error);
}

void
gpu_bind_storage(int binding, GpuBuffer *buf)
{
  g_return_if_fail(buf && binding >= 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, (GLuint) binding, buf->id);
}

void
gpu_bind_uniform(int binding, GpuBuffer *buf)
{
  g_return_if_fail(buf && binding >= 0);
  glBindBufferBase(GL_UNIFORM_BUFFER, (GLuint) binding, buf->id);
}

/* ------------------------------------------------------------ fences */

struct GpuFence {
  GpuContext *ctx;
  GLsync sync;
  bool signaled;
};

GpuFence *
gpu_fence_new(GpuContext *ctx, GError **error)
{
  g_return_val_if_fail(ctx, NULL);
  if (!gpu_context_require_ok(ctx, "create a fence", error))
    return NULL;
  GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (!sync) {
    gpu_context_check(ctx, "glFenceSync", NULL);
    g_set_error(error, GPU_ERROR, GPU_ERROR_GL, "%s: glFenceSync failed", ctx->label);
    return NULL;
  }
  /* Flush so that a wait from another context or a poll sees the fence submitted. */
  glFlush();
  GpuFence *fence = g_new0(GpuFence, 1);
  fence->ctx = ctx;
  fence->sync = sync;
  return fence;
}

void
gpu_fence_free(GpuFence *fence)
{
  if (!fence)
    return;
  if (fence->sync)
    glDeleteSync(fence->sync);
  g_free(fence);
}

bool
gpu_fence_wait(GpuFence *fence, uint64_t timeout_ns, GError **error)
{
  g_return_val_if_fail(fence, false);
  if (fence->signaled)
    return true;
  GLenum r = glClientWaitSync(fence->sync, GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns);
  switch (r) {
  case GL_ALREADY_SIGNALED:
  case GL_CONDITION_SATISFIED:
    fence->signaled = true;
    return true;
  case GL_TIMEOUT_EXPIRED:
    g_set_error(error, GPU_ERROR, GPU_ERROR_TIMEOUT,
                "%s: fence not signalled after %" G_GUINT64_FORMAT " ns", fence->ctx->label,
                (guint64) timeout_ns);
    return false;
  default:
    gpu_context_check(fence->ctx, "fence wait", NULL);
    gpu_context_mark_failed(fence->ctx);
    g_set_error(error, GPU_ERROR, GPU_ERROR_GL, "%s: glClientWaitSync failed",
                fence->ctx->label);
    return false;
  }
}

bool
gpu_fence_is_signaled(GpuFence *fence)
{
  g_return_val_if_fail(fence, false);
  if (!fence->signaled) {
    GLint status = GL_UNSIGNALED;
    glGetSynciv(fence->sync, GL_SYNC_STATUS, 1, NULL, &status);
    fence->signaled = status == GL_SIGNALED;
  }
  return fence->signaled;
}

bool
gpu_fence_reset(GpuFence *fence, GError **error)
{
  g_return_val_if_fail(fence, false);
  if (!gpu_context_require_ok(fence->ctx, "re-arm a fence", error))
    return false;
  if (fence->sync)
    glDeleteSync(fence->sync);
  fence->sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  fence->signaled = false;
  if (!fence->sync) {
    gpu_context_check(fence->ctx, "glFenceSync", NULL);
    g_set_error(error, GPU_ERROR, GPU_ERROR_GL, "%s: glFenceSync failed", fence->ctx->label);
    return false;
  }
  glFlush();
  return true;
}

void
gpu_buffer_copy(GpuBuffer *dst, size_t dst_offset, GpuBuffer *src, size_t src_offset,
                size_t size)
{
  g_return_if_fail(dst && src);
  g_return_if_fail(dst_offset + size <= dst->size && src_offset + size <= src->size);
  GLbitfield bits = 0;
  gpu_track_need(src->ctx, &src->track, GPU_SYNC_BUFFER_UPDATE, true, false, &bits);
  gpu_track_need(dst->ctx, &dst->track, GPU_SYNC_BUFFER_UPDATE, false, true, &bits);
  gpu_track_barrier(src->ctx, bits);
  glCopyNamedBufferSubData(src->id, dst->id, (GLintptr)src_offset, (GLintptr)dst_offset,
                           (GLsizeiptr)size);
}
