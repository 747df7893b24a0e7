/* gpu.h: the headless GPU runtime of stereod.
 *
 * A GpuContext owns one EGL display + OpenGL 4.5 core context, created without any
 * window system (EGL device platform, Mesa surfaceless as the last resort). Every
 * other object here is created from a context and used on the thread that made the
 * context current (gpu_context_new makes it current on the calling thread). None of
 * these functions is thread safe; the stereod design has exactly one GL thread.
 *
 * Errors: constructors return NULL and set a GError (domain GPU_ERROR). A GL error
 * seen by gpu_context_check() sets a sticky "failed" flag on the context: once set,
 * gpu_context_is_failed() stays TRUE and callers should tear the context down.
 * Destructors accept NULL.
 *
 * Images are always GL_TEXTURE_2D_ARRAY (one layer per camera pair when pairs are
 * batched; layers = 1 otherwise), one mip level, clamp-to-edge. Shaders see them as
 * image2DArray / sampler2DArray.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

G_BEGIN_DECLS

#define GPU_ERROR (gpu_error_quark())
GQuark gpu_error_quark(void);

typedef enum {
  GPU_ERROR_NO_DEVICE,     /* no EGL device / display could be opened */
  GPU_ERROR_CONTEXT,       /* context creation or GL version too old */
  GPU_ERROR_COMPILE,       /* shader compile or link failure (message has log + numbered source) */
  GPU_ERROR_GL,            /* a GL error was raised */
  GPU_ERROR_LIMIT,         /* a request exceeds an implementation limit */
  GPU_ERROR_TIMEOUT,       /* a fence did not signal in time */
  GPU_ERROR_FAILED,        /* the context is in the failed state */
  GPU_ERROR_COUNT
} GpuErrorCode;

/* ---------------------------------------------------------------- context */

typedef struct GpuContext GpuContext;

typedef struct {
  const char *label;     /* for log lines; may be NULL ("gpu") */
  /* Which device: NULL or "auto" = first hardware EGL device, then Mesa's software
   * device, then the surfaceless platform; "hardware", "software", "surfaceless",
   * or a decimal index into eglQueryDevicesEXT's list. When NULL, the environment
   * variable STEREOD_EGL_DEVICE (same values) is consulted first. */
  const char *device;
  bool debug;            /* KHR_debug context; messages are routed to g_log */
} GpuContextParams;

GpuContext *gpu_context_new(const GpuContextParams *params, GError **error);
void gpu_context_free(GpuContext *ctx);
const char *gpu_context_get_renderer(GpuContext *ctx);  /* GL_RENDERER string */
const char *gpu_context_get_version(GpuContext *ctx);   /* GL_VERSION string */
/* Which EGL device or platform was chosen, for logs: "EGL device 1 (software)",
 * "EGL device 0 (hardware, /dev/dri/card0)", "Mesa surfaceless platform". */
const char *gpu_context_get_device(GpuContext *ctx);
bool gpu_context_is_software(GpuContext *ctx);          /* llvmpipe/softpipe */
/* Drains glGetError(). Returns TRUE when no error was pending; otherwise logs once with
 * `stage`, sets the sticky failed flag and a GError (GPU_ERROR_GL). */
bool gpu_context_check(GpuContext *ctx, const char *stage, GError **error);
bool gpu_context_is_failed(GpuContext *ctx);
/* Limits queried once at creation. */
int gpu_context_get_max_shared_memory(GpuContext *ctx);     /* bytes */
int gpu_context_get_max_invocations(GpuContext *ctx);       /* per workgroup */
void gpu_context_finish(GpuContext *ctx);                   /* glFinish */
/* Make the context current on the calling thread (after handing it over). */
bool gpu_context_make_current(GpuContext *ctx, GError **error);
void gpu_context_release_current(GpuContext *ctx);

/* ---------------------------------------------------------------- images */

typedef enum {
  GPU_FORMAT_R8,        /* unorm 8, shader sees float [0,1]   (layout r8) */
  GPU_FORMAT_R16I,      /* signed 16                          (layout r16i) */
  GPU_FORMAT_R32UI,     /*                                   (layout r32ui) */
  GPU_FORMAT_R32F,      /*                                   (layout r32f) */
  GPU_FORMAT_RG32F,     /*                                   (layout rg32f) */
  GPU_FORMAT_RGBA32F,   /*                                   (layout rgba32f) */
  GPU_FORMAT_R16F,      /* host data for up/download is float (layout r16f) */
  GPU_FORMAT_RG16F,     /* host data for up/download is float (layout rg16f) */
  GPU_FORMAT_RGBA16F,   /* host data for up/download is float (layout rgba16f) */
  GPU_FORMAT_COUNT
} GpuFormat;

int gpu_format_channels(GpuFormat fmt);
/* Size of one pixel as the HOST sees it in upload/download (float for the 16F formats). */
size_t gpu_format_host_pixel_size(GpuFormat fmt);
const char *gpu_format_glsl_layout(GpuFormat fmt);          /* "rgba32f", ... */

typedef struct GpuImage GpuImage;

typedef struct {
  const char *label;
  int width, height;     /* >= 1 */
  int layers;            /* >= 1 (0 is taken as 1) */
  GpuFormat format;
} GpuImageParams;

GpuImage *gpu_image_new(GpuContext *ctx, const GpuImageParams *params, GError **error);
void gpu_image_free(GpuImage *img);
unsigned gpu_image_get_id(GpuImage *img);   /* GL texture name */
int gpu_image_get_width(GpuImage *img);
int gpu_image_get_height(GpuImage *img);
int gpu_image_get_layers(GpuImage *img);
GpuFormat gpu_image_get_format(GpuImage *img);
const char *gpu_image_get_label(GpuImage *img);

/* Synchronous transfers of one layer. `data` holds host pixels of the image's format
 * (see gpu_format_host_pixel_size), rows `stride` bytes apart (stride may be any multiple
 * of the pixel size >= width * pixel size). Slow path, for start-up and tests. */
bool gpu_image_upload(GpuImage *img, int layer, const void *data, size_t stride, GError **error);
/* The same from data whose size is known (frames from another process, files): FALSE
 * with GPU_ERROR_LIMIT, and nothing read, when `size` bytes do not hold the layer's
 * rows (stride * (height - 1) + width * pixel size) or the stride does not fit the
 * image. gpu_image_upload trusts the caller for both. */
bool gpu_image_upload_sized(GpuImage *img, int layer, const void *data, size_t size,
                            size_t stride, GError **error);
bool gpu_image_download(GpuImage *img, int layer, void *data, size_t stride, GError **error);
/* Fills every texel of every layer with `value` (channels beyond the format's are
 * ignored; integer formats take the values rounded to the nearest integer and clamped,
 * NaN as 0). Tests use it to poison outputs. */
bool gpu_image_fill(GpuImage *img, const float value[4], GError **error);
/* Queues a GPU-side copy of one whole layer between images of the same size and format
 * (glCopyImageSubData); no host wait. FALSE (GPU_ERROR_LIMIT) when they do not match. */
bool gpu_image_copy_layer(GpuImage *dst, int dst_layer, GpuImage *src, int src_layer,
                          GError **error);
/* The same for `count` consecutive layers (src == dst only when the ranges do not
 * overlap). */
bool gpu_image_copy_layers(GpuImage *dst, int dst_layer, GpuImage *src, int src_layer,
                           int count, GError **error);

/* Asynchronous transfers through a buffer (a pixel-unpack / pixel-pack source):
 * the host pixels live in `buf` at `offset`, rows `stride` bytes apart. These only
 * queue GL commands; use a fence to know when the buffer may be reused or read.
 * They return FALSE (GPU_ERROR_LIMIT) when the layer does not fit in the buffer, but do
 * not drain glGetError: call gpu_context_check() after the stage. */
typedef struct GpuBuffer GpuBuffer;
bool gpu_image_upload_from_buffer(GpuImage *img, int layer, GpuBuffer *buf, size_t offset,
                                  size_t stride, GError **error);
bool gpu_image_download_to_buffer(GpuImage *img, int layer, GpuBuffer *buf, size_t offset,
                                  size_t stride, GError **error);

/* ---------------------------------------------------------------- buffers */

typedef enum {
  GPU_BUFFER_STORAGE  = 1 << 0,  /* shader storage / uniform buffer, device local */
  GPU_BUFFER_UPLOAD   = 1 << 1,  /* persistently mapped, host writes (coherent) */
  GPU_BUFFER_READBACK = 1 << 2,  /* persistently mapped, host reads (coherent) */
} GpuBufferUsage;

typedef struct {
  const char *label;
  size_t size;             /* bytes, > 0 */
  GpuBufferUsage usage;    /* exactly one of the three */
} GpuBufferParams;

GpuBuffer *gpu_buffer_new(GpuContext *ctx, const GpuBufferParams *params, GError **error);
void gpu_buffer_free(GpuBuffer *buf);
unsigned gpu_buffer_get_id(GpuBuffer *buf);
size_t gpu_buffer_get_size(GpuBuffer *buf);
/* Persistent mapping of UPLOAD and READBACK buffers (valid for the buffer's lifetime);
 * NULL for STORAGE buffers. */
void *gpu_buffer_get_map(GpuBuffer *buf);
/* Synchronous write/read of a byte range (any usage; waits for the GPU on read). */
bool gpu_buffer_write(GpuBuffer *buf, size_t offset, const void *data, size_t size, GError **error);
bool gpu_buffer_read(GpuBuffer *buf, size_t offset, void *data, size_t size, GError **error);
/* Fills with a 32-bit pattern (size must be a multiple of 4). */
bool gpu_buffer_fill_u32(GpuBuffer *buf, uint32_t value, GError **error);
/* Queues a GPU-side copy of `size` bytes (glCopyNamedBufferSubData); no host wait. */
void gpu_buffer_copy(GpuBuffer *dst, size_t dst_offset, GpuBuffer *src, size_t src_offset,
                     size_t size);

/* ---------------------------------------------------------------- fences */

typedef struct GpuFence GpuFence;
/* Inserts a fence after the commands queued so far (and flushes). */
GpuFence *gpu_fence_new(GpuContext *ctx, GError **error);
void gpu_fence_free(GpuFence *fence);
/* timeout_ns 0 = poll. Returns TRUE once signalled, FALSE on timeout (error set to
 * GPU_ERROR_TIMEOUT) or failure. */
bool gpu_fence_wait(GpuFence *fence, uint64_t timeout_ns, GError **error);
bool gpu_fence_is_signaled(GpuFence *fence);
/* Replaces the fence's sync object by a new one after the commands queued so far (the
 * hot path re-arms its fences instead of allocating new GpuFence objects). */
bool gpu_fence_reset(GpuFence *fence, GError **error);

/* ---------------------------------------------------------------- programs */

typedef struct GpuProgram GpuProgram;

typedef struct {
  const char *label;
  /* Exactly one of: a resource name under the embedded shader bundle
   * ("stereo_reduce.comp"), or GLSL source text. Lines `#include "name.glsl"` are
   * replaced by the embedded resource of that name (one level of nesting is enough,
   * but nesting is allowed; a file is included once). */
  const char *resource;
  const char *source;
  /* Extra lines inserted right after the #version line, e.g. "#define RADIUS 5\n". */
  const char *defines;
  /* Build in the background (GL_KHR_parallel_shader_compile, where the driver has it):
   * gpu_program_new returns at once; gpu_program_poll() says when it is built. Without
   * the extension the build is synchronous. A compile error is then reported by
   * gpu_program_poll() (or gpu_program_wait()) instead of gpu_program_new(). */
  bool async;
} GpuProgramParams;

/* Compiles and links a compute program. On failure the GError message holds the
 * driver's log and the source with line numbers (also logged at warning level). */
GpuProgram *gpu_program_new(GpuContext *ctx, const GpuProgramParams *params, GError **error);
void gpu_program_free(GpuProgram *prog);
/* TRUE once the program is built; FALSE without an error while an asynchronous build is
 * still running; FALSE with an error (once: GPU_ERROR_COMPILE, log and source as for
 * gpu_program_new) when it failed. Never blocks. */
bool gpu_program_poll(GpuProgram *prog, GError **error);
/* The same, waiting for the build to end. */
bool gpu_program_wait(GpuProgram *prog, GError **error);
unsigned gpu_program_get_id(GpuProgram *prog);
void gpu_program_get_local_size(GpuProgram *prog, int size[3]);
/* glUseProgram. Uniform setters act on the program (glProgramUniform*), so `use` is
 * needed only before dispatch. Unknown names are ignored (the compiler may drop unused
 * uniforms) but logged once at debug level. */
void gpu_program_use(GpuProgram *prog);
void gpu_program_set_int(GpuProgram *prog, const char *name, int v);
void gpu_program_set_ivec2(GpuProgram *prog, const char *name, int x, int y);
void gpu_program_set_float(GpuProgram *prog, const char *name, float v);
void gpu_program_set_vec2(GpuProgram *prog, const char *name, float x, float y);
void gpu_program_set_vec4(GpuProgram *prog, const char *name, const float v[4]);
void gpu_program_set_float_array(GpuProgram *prog, const char *name, const float *v, int count);

/* Dispatches ceil(n / local_size) workgroups in each dimension for an n[0] x n[1] x n[2]
 * grid of invocations (n[2] usually = layers). Uses the program. */
void gpu_program_dispatch(GpuProgram *prog, int nx, int ny, int nz);

/* ---------------------------------------------------------------- binding */

typedef enum { GPU_ACCESS_READ, GPU_ACCESS_WRITE, GPU_ACCESS_READ_WRITE } GpuAccess;
/* glBindImageTexture(unit, img, level 0, layered = TRUE, access, format). */
void gpu_bind_image(int unit, GpuImage *img, GpuAccess access);
/* glBindTextureUnit + a sampler (linear or nearest filtering, clamp-to-edge). */
void gpu_bind_texture(GpuContext *ctx, int unit, GpuImage *img, bool linear);
void gpu_bind_storage(int binding, GpuBuffer *buf);   /* GL_SHADER_STORAGE_BUFFER */
void gpu_bind_uniform(int binding, GpuBuffer *buf);   /* GL_UNIFORM_BUFFER */
/* glMemoryBarrier with image-access, texture-fetch, storage and pixel-buffer bits, plus
 * texture-update, buffer-update, uniform and client-mapped-buffer bits (so downloads,
 * buffer reads and persistent maps after a fence see shader writes). */
void gpu_barrier(void);

/* ---------------------------------------------------------------- passes */

/* A GpuPass is a compute program prepared for repeated dispatch, after libplacebo's
 * pl_pass: made once from a parameter struct, with the locations of its uniforms
 * resolved at creation (set by index afterwards, no name lookups on the hot path), all
 * its images and storage buffers bound in one call per dispatch, and the memory
 * barriers issued by the context's tracker only where a dispatch accesses what an
 * earlier command wrote (or, for writes, read) since the last barrier of the kind the
 * access needs, with only the bits it needs (glMemoryBarrier is global in GL; the
 * tracker keeps, per image and buffer, the serial numbers of its last shader read and
 * write and, per barrier bit, the serial of the last barrier with that bit).
 *
 * Programs are shared: passes made from the same shader text and defines on one
 * context use one compiled program (compiled on the first use, freed with the last
 * pass). Uniform values belong to the pass: a dispatch applies the pass's values to
 * the program when another pass of the same program ran in between, otherwise only
 * those that changed. Put constants into `defines` (they are part of the program's
 * identity), per-dispatch values into uniforms.
 *
 * The legacy gpu_program_dispatch()/gpu_bind_*() path is not tracked: after such a
 * dispatch call gpu_barrier(), which also resets the tracker. */

#define GPU_PASS_MAX_UNIFORMS 16
#define GPU_PASS_MAX_IMAGES 8
#define GPU_PASS_MAX_BUFFERS 8

typedef struct GpuPass GpuPass;

typedef struct {
  const char *label;
  const char *resource;                 /* exactly one of resource and source, as */
  const char *source;                   /* in GpuProgramParams */
  const char *defines;
  /* Uniform names; the index in this array is the handle for gpu_pass_set_*. A NULL
   * entry ends the list. A name the compiler dropped is accepted (setting it is a no-op). */
  const char *uniforms[GPU_PASS_MAX_UNIFORMS];
  /* Build the program in the background (GpuProgramParams.async): the pass can be set up
   * at once; gpu_pass_poll() says when it is ready (a dispatch before that waits). */
  bool async;
} GpuPassParams;

GpuPass *gpu_pass_new(GpuContext *ctx, const GpuPassParams *params, GError **error);
/* TRUE once the pass's program is built (always for a pass made without async); FALSE
 * without an error while it is building; FALSE with an error when it failed. Never
 * blocks. */
bool gpu_pass_poll(GpuPass *pass, GError **error);
void gpu_pass_free(GpuPass *pass);
const char *gpu_pass_get_label(GpuPass *pass);
void gpu_pass_get_local_size(GpuPass *pass, int size[3]);

void gpu_pass_set_int(GpuPass *pass, int uniform, int v);
void gpu_pass_set_ivec2(GpuPass *pass, int uniform, int x, int y);
void gpu_pass_set_float(GpuPass *pass, int uniform, float v);
void gpu_pass_set_vec2(GpuPass *pass, int uniform, float x, float y);
void gpu_pass_set_vec4(GpuPass *pass, int uniform, const float v[4]);
void gpu_pass_set_ivec4(GpuPass *pass, int uniform, const int v[4]);

typedef struct {
  GpuImage *image;                      /* NULL: unit not used */
  GpuAccess access;                     /* what the shader does with it */
} GpuPassImage;

typedef struct {
  GpuBuffer *buffer;                    /* NULL: binding not used */
  GpuAccess access;
} GpuPassBuffer;

typedef struct {
  GpuPassImage images[GPU_PASS_MAX_IMAGES];     /* image unit = index */
  GpuPassBuffer buffers[GPU_PASS_MAX_BUFFERS];  /* shader storage binding = index */
  /* The grid: `groups` workgroups when groups[0] > 0, else enough workgroups to cover
   * `size` invocations (like gpu_program_dispatch); a zero count dispatches nothing. */
  int groups[3];
  int size[3];
} GpuPassRun;

/* Issues the barrier the bindings need, binds them (glBindImageTextures: layered,
 * level 0, the image's format; glBindBuffersBase), applies the uniforms and dispatches. */
void gpu_pass_dispatch(GpuPass *pass, const GpuPassRun *run);

/* Counters of the context since its creation (for tests and the benchmark). */
typedef struct {
  uint64_t dispatches;       /* glDispatchCompute calls (passes and legacy programs) */
  uint64_t barriers;         /* glMemoryBarrier calls */
  uint64_t programs_built;   /* programs compiled and linked */
  uint64_t programs_shared;  /* passes that found their program already built */
} GpuStats;

void gpu_context_get_stats(GpuContext *ctx, GpuStats *stats);
/* Dry run: with `dry` set, dispatches are counted, tracked and their barriers issued as
 * usual, but glDispatchCompute is skipped (what they would write stays as it was). For
 * counting the work of a configuration too large to run on a software renderer. */
void gpu_context_set_dry_run(GpuContext *ctx, bool dry);

/* Profiling (benchmarks only): between gpu_context_profile_start() and
 * gpu_context_profile_stop() every pass dispatch is bracketed by two GL_TIMESTAMP
 * queries (at most `max_dispatches`; the queries are made at the start, not per
 * dispatch). Stop waits for the results and fills, per dispatch in the order issued, the
 * pass's label (valid while the pass lives), its workgroup counts and its GPU time; it
 * returns how many it filled (dispatches beyond `max_dispatches` are not timed). The
 * timestamps serialize the GPU between dispatches, so the times are an upper bound of a
 * pass's share in the unprofiled run. */
typedef struct {
  const char *label;
  unsigned groups[3];
  double ms;
} GpuProfileEntry;

bool gpu_context_profile_start(GpuContext *ctx, int max_dispatches, GError **error);
int gpu_context_profile_stop(GpuContext *ctx, GpuProfileEntry *out, int max);

/* ---------------------------------------------------------------- timers */

/* A set of GL_TIMESTAMP queries. Writing stamps costs no stall; reading waits only if
 * asked to. On llvmpipe timestamps work (GL_TIME_ELAPSED does not). */
typedef struct GpuTimer GpuTimer;
GpuTimer *gpu_timer_new(GpuContext *ctx, int count, GError **error);
void gpu_timer_free(GpuTimer *timer);
void gpu_timer_stamp(GpuTimer *timer, int index);       /* glQueryCounter */
/* Fills ns[0..count-1] with GPU timestamps in ns. wait = FALSE returns FALSE when some
 * stamp is not available yet. A stamp never written reads 0 and makes it return FALSE. */
bool gpu_timer_read(GpuTimer *timer, bool wait, uint64_t *ns);
int gpu_timer_get_count(GpuTimer *timer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuContext, gpu_context_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuImage, gpu_image_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuBuffer, gpu_buffer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuFence, gpu_fence_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuProgram, gpu_program_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuTimer, gpu_timer_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(GpuPass, gpu_pass_free)

G_END_DECLS
