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

/* ------------------------------------------------------------ barrier tracking */

/* The kinds of consumers glMemoryBarrier distinguishes that stereod uses. */
typedef enum {
  GPU_SYNC_IMAGE,            /* shader image load/store: GL_SHADER_IMAGE_ACCESS_BARRIER_BIT */
  GPU_SYNC_STORAGE,          /* shader storage buffers: GL_SHADER_STORAGE_BARRIER_BIT */
  GPU_SYNC_TEXTURE_FETCH,    /* samplers: GL_TEXTURE_FETCH_BARRIER_BIT */
  GPU_SYNC_UNIFORM,          /* uniform buffers: GL_UNIFORM_BARRIER_BIT */
  GPU_SYNC_TEXTURE_UPDATE,   /* glTex(Sub)Image, glGetTexImage, glClearTexImage */
  GPU_SYNC_BUFFER_UPDATE,    /* glCopyBufferSubData, glGet/BufferSubData, glClearBufferData */
  GPU_SYNC_PIXEL_BUFFER,     /* pixel pack/unpack buffers */
  GPU_SYNC_MAPPED,           /* host access through a persistent map */
  GPU_SYNC_COUNT
} GpuSyncType;

/* Serial numbers (of the context's counter) of the last shader read and write of one
 * image or buffer; 0 = never. */
typedef struct {
  uint64_t read, write;
} GpuTrack;

GpuTrack *gpu_image_get_track(GpuImage *img);
GpuTrack *gpu_buffer_get_track(GpuBuffer *buf);
/* Adds to *bits the barrier an access of kind `type` to a resource needs: a read needs
 * the shader writes before it made visible, a write also needs the shader reads before
 * it finished. */
void gpu_track_need(GpuContext *ctx, const GpuTrack *t, GpuSyncType type, bool reads,
                    bool writes, GLbitfield *bits);
/* Issues glMemoryBarrier(bits) when bits != 0 (counted) and records it. */
void gpu_track_barrier(GpuContext *ctx, GLbitfield bits);
/* Records a shader access made by the dispatch being issued now. */
void gpu_track_shader_access(GpuContext *ctx, GpuTrack *t, bool reads, bool writes);
/* The barrier a non-shader command of kind `type` needs before it reads (and, if
 * `writes`, writes) the resource, issued at once. */
void gpu_track_command(GpuContext *ctx, GpuTrack *t, GpuSyncType type, bool writes);

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

  /* Barrier tracking (pass.c) and counters. */
  uint64_t serial;
  uint64_t barrier_serial[GPU_SYNC_COUNT];
  GpuStats stats;
  bool dry_run;
  bool parallel_compile;   /* GL_KHR_parallel_shader_compile */
  GHashTable *programs;    /* shared programs of passes: text key -> ProgramEntry */
  /* Pass profiling (gpu_context_profile_start): query pairs, the dispatches so far. */
  GLuint *profile_queries;
  GpuProfileEntry *profile_entries;
  int profile_max, profile_count;
  bool profiling;
};

/* Frees the shared programs (the context is current); warns about passes still alive. */
void gpu_pass_cache_clear(GpuContext *ctx);
/* Deletes the profiling queries (the context is current). */
void gpu_context_profile_free(GpuContext *ctx);
/* The GpuContext current on the calling thread, or NULL. */
GpuContext *gpu_context_current(void);
/* Counts a dispatch (program.c and pass.c). */
void gpu_context_count_dispatch(GpuContext *ctx);

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
