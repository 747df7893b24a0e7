/* gpu-private.h: what the files of gpu/ share; not part of the public API.
 *
 * Every file includes this instead of the GL/EGL headers directly so that the
 * macros the headers depend on (EGL_NO_X11, GL_GLEXT_PROTOTYPES) are set the same
 * way everywhere, even when the build system does not define them.
 */
#pragma once

#ifndef EGL_NO_X11
#define EGL_NO_X11
#endif
#ifndef GL_GLEXT_PROTOTYPES
#define GL_GLEXT_PROTOTYPES
#endif

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/glcorearb.h>

#include "gpu/gpu.h"

struct GpuContext {
  char *label;
  EGLDisplay dpy;
  EGLContext egl_ctx;
  char *device_desc;       /* "EGL device 0 (software)", "surfaceless", ... */
  char *renderer;
  char *version;
  bool software;
  bool debug;
  bool failed;

  /* The debug callback may run on a driver thread (non-synchronous output), so the
   * last API error text it saw is kept under a lock for gpu_context_check(). */
  GMutex debug_lock;
  char *last_debug_error;

  /* Limits, queried once. */
  int max_shared_memory;
  int max_invocations;
  int max_texture_size;
  int max_array_layers;
  int max_group_count[3];
  int max_group_size[3];

  GLuint sampler_nearest;
  GLuint sampler_linear;
};

/* Sets GPU_ERROR_FAILED and returns FALSE when the context is already failed. */
bool gpu_context_require_ok(GpuContext *ctx, const char *what, GError **error);
/* Marks the context failed (e.g. after a fence wait reported EGL/GL failure). */
void gpu_context_mark_failed(GpuContext *ctx);

/* Host-side description of a format for glTex*Image / glGet*Image / glClearTexImage. */
typedef struct {
  GLenum internal_format;
  GLenum host_format;
  GLenum host_type;
  int channels;
  size_t host_pixel_size;
  const char *glsl_layout;
  bool integer;
} GpuFormatInfo;

const GpuFormatInfo *gpu_format_get_info(GpuFormat fmt);
