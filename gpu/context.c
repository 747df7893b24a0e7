/* context.c: headless EGL bring-up and the GL 4.5 core context.
 *
 * Order, as in kmscube's common.c: client extensions, pick a platform display
 * (EGL device platform: hardware devices first, then Mesa's software device; Mesa's
 * surfaceless platform last), initialise it, check display extensions, bind the
 * OpenGL API, create a config-less 4.5 core context and make it current without a
 * surface. Every candidate that fails is logged at debug level and the next one is
 * tried, so "auto" finds a working device wherever one exists.
 */
#include "gpu/gpu-private.h"

#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(gpu-error-quark, gpu_error)

/* ------------------------------------------------------------ display references
 *
 * eglGetPlatformDisplayEXT returns the same EGLDisplay for the same device, and
 * eglTerminate on it would destroy the resources of every other context made on it.
 * So displays are reference counted here: initialised by the first context made on
 * them, terminated when the last one goes. */

static GMutex display_lock;
static GHashTable *contexts;       /* EGLContext -> GpuContext, under display_lock */
static GHashTable *display_refs;   /* EGLDisplay -> count */

static bool
display_ref(EGLDisplay dpy, EGLint *major, EGLint *minor)
{
  g_mutex_lock(&display_lock);
  if (!display_refs)
    display_refs = g_hash_table_new(NULL, NULL);
  bool ok = eglInitialize(dpy, major, minor);
  if (ok) {
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(display_refs, dpy));
    g_hash_table_insert(display_refs, dpy, GUINT_TO_POINTER(n + 1));
  }
  g_mutex_unlock(&display_lock);
  return ok;
}

static void
display_unref(EGLDisplay dpy)
{
  g_mutex_lock(&display_lock);
  guint n = display_refs ? GPOINTER_TO_UINT(g_hash_table_lookup(display_refs, dpy)) : 0;
  if (n <= 1) {
    if (display_refs)
      g_hash_table_remove(display_refs, dpy);
    eglTerminate(dpy);
  } else {
    g_hash_table_insert(display_refs, dpy, GUINT_TO_POINTER(n - 1));
  }
  g_mutex_unlock(&display_lock);
}

/* ------------------------------------------------------------ helpers */

static const char *
egl_error_name(EGLint err)
{
  switch (err) {
  case EGL_SUCCESS: return "EGL_SUCCESS";
  case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
  case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
  case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
  case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
  case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
  case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
  case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
  case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
  case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
  case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
  case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
  case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
  case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
  case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
  default: return "unknown EGL error";
  }
}

static const char *
gl_error_name(GLenum err)
{
  switch (err) {
  case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
  case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
  case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
  case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
  case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
  case GL_STACK_UNDERFLOW: return "GL_STACK_UNDERFLOW";
  case GL_STACK_OVERFLOW: return "GL_STACK_OVERFLOW";
  case GL_CONTEXT_LOST: return "GL_CONTEXT_LOST";
  default: return "unknown GL error";
  }
}

/* Whole-word search in a space separated extension list. */
static bool
has_extension(const char *list, const char *name)
{
  if (!list)
    return false;
  size_t len = strlen(name);
  for (const char *p = list; (p = strstr(p, name)); p += len) {
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
      return true;
  }
  return false;
}

/* ------------------------------------------------------------ debug output */

static void APIENTRY
debug_callback(GLenum source, GLenum type, GLuint id, GLenum severity, GLsizei length,
               const GLchar *message, const void *user)
{
  GpuContext *ctx = (GpuContext *) user;

  /* API errors are reported by gpu_context_check() (with the stage that raised them),
   * so they are remembered here for its message and only traced now. */
  if (type == GL_DEBUG_TYPE_ERROR && source == GL_DEBUG_SOURCE_API) {
    g_mutex_lock(&ctx->debug_lock);
    g_free(ctx->last_debug_error);
    ctx->last_debug_error = g_strdup(message);
    g_mutex_unlock(&ctx->debug_lock);
    g_debug("%s: GL debug (error %u): %s", ctx->label, id, message);
    return;
  }
  /* Compiler errors reach the caller through the GError of gpu_program_new(); Mesa
   * also sends compiler warnings at high severity, which are no run-time problem. */
  if (source == GL_DEBUG_SOURCE_SHADER_COMPILER) {
    g_debug("%s: GL debug (compiler %u): %s", ctx->label, id, message);
    return;
  }
  switch (severity) {
  case GL_DEBUG_SEVERITY_HIGH:
    g_warning("%s: GL debug (%u): %s", ctx->label, id, message);
    break;
  case GL_DEBUG_SEVERITY_MEDIUM:
    g_message("%s: GL debug (%u): %s", ctx->label, id, message);
    break;
  default:
    g_debug("%s: GL debug (%u): %s", ctx->label, id, message);
    break;
  }
}

static void
setup_debug_output(GpuContext *ctx)
{
  glDebugMessageCallback(debug_callback, ctx);
  glEnable(GL_DEBUG_OUTPUT);
  if (ctx->debug) {
    glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, NULL, GL_TRUE);
  } else {
    /* Without debug, only what matters: errors and high-severity messages. */
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, NULL, GL_FALSE);
    glDebugMessageControl(GL_DONT_CARE, GL_DEBUG_TYPE_ERROR, GL_DONT_CARE, 0, NULL, GL_TRUE);
    glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DEBUG_SEVERITY_HIGH, 0, NULL,
                          GL_TRUE);
  }
}

/* ------------------------------------------------------------ device candidates */

typedef enum {
  SELECT_AUTO,
  SELECT_HARDWARE,
  SELECT_SOFTWARE,
  SELECT_SURFACELESS,
  SELECT_INDEX,
} DeviceSelect;

typedef struct {
  EGLenum platform;
  void *native;
  char *desc;
} Candidate;

static void
candidate_clear(gpointer p)
{
  g_free(((Candidate *) p)->desc);
}

static bool
parse_selection(const char *s, DeviceSelect *sel, int *index, GError **error)
{
  if (!s || !*s || g_str_equal(s, "auto")) {
    *sel = SELECT_AUTO;
  } else if (g_str_equal(s, "hardware")) {
    *sel = SELECT_HARDWARE;
  } else if (g_str_equal(s, "software")) {
    *sel = SELECT_SOFTWARE;
  } else if (g_str_equal(s, "surfaceless")) {
    *sel = SELECT_SURFACELESS;
  } else {
    guint64 v;
    if (!g_ascii_string_to_unsigned(s, 10, 0, 1023, &v, NULL)) {
      g_set_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE,
                  "unknown EGL device selection \"%s\" (expected auto, hardware, software, "
                  "surfaceless or a device index)", s);
      return false;
    }
    *sel = SELECT_INDEX;
    *index = (int) v;
  }
  return true;
}

/* Fills `out` with the platform displays to try, in order. */
static void
list_candidates(const char *client_exts, DeviceSelect sel, int want_index, GArray *out)
{
  bool has_devices = has_extension(client_exts, "EGL_EXT_device_base") ||
                     has_extension(client_exts, "EGL_EXT_device_enumeration");
  bool has_platform_device = has_extension(client_exts, "EGL_EXT_platform_device");
  bool has_surfaceless = has_extension(client_exts, "EGL_MESA_platform_surfaceless");

  if (has_devices && has_platform_device && sel != SELECT_SURFACELESS) {
    PFNEGLQUERYDEVICESEXTPROC query_devices =
      (PFNEGLQUERYDEVICESEXTPROC) eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC query_string =
      (PFNEGLQUERYDEVICESTRINGEXTPROC) eglGetProcAddress("eglQueryDeviceStringEXT");
    EGLDeviceEXT devices[32];
    EGLint n = 0;
    if (query_devices && query_string && query_devices(G_N_ELEMENTS(devices), devices, &n)) {
      /* Two passes: hardware devices first, then software ones. */
      for (int pass = 0; pass < 2; pass++) {
        for (EGLint i = 0; i < n; i++) {
          const char *dev_exts = query_string(devices[i], EGL_EXTENSIONS);
          bool software = has_extension(dev_exts, "EGL_MESA_device_software");
          if (sel == SELECT_INDEX ? (i != want_index || pass != 0)
                                  : (software != (pass == 1)))
            continue;
          if ((sel == SELECT_HARDWARE && software) || (sel == SELECT_SOFTWARE && !software))
            continue;
          const char *node = NULL;
          if (has_extension(dev_exts, "EGL_EXT_device_drm"))
            node = query_string(devices[i], EGL_DRM_DEVICE_FILE_EXT);
          Candidate c = {
            .platform = EGL_PLATFORM_DEVICE_EXT,
            .native = devices[i],
            .desc = g_strdup_printf("EGL device %d (%s%s%s)", (int) i,
                                    software ? "software" : "hardware",
                                    node ? ", " : "", node ? node : ""),
          };
          g_array_append_val(out, c);
        }
      }
    }
  }
  if (has_surfaceless && (sel == SELECT_AUTO || sel == SELECT_SURFACELESS)) {
    Candidate c = {
      .platform = EGL_PLATFORM_SURFACELESS_MESA,
      .native = EGL_DEFAULT_DISPLAY,
      .desc = g_strdup("Mesa surfaceless platform"),
    };
    g_array_append_val(out, c);
  }
}

/* ------------------------------------------------------------ bring-up */

static bool
try_candidate(GpuContext *ctx, PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display,
              const Candidate *cand, GError **error)
{
  EGLDisplay dpy = get_platform_display(cand->platform, cand->native, NULL);
  if (dpy == EGL_NO_DISPLAY) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE, "%s: no display (%s)", cand->desc,
                egl_error_name(eglGetError()));
    return false;
  }
  EGLint major = 0, minor = 0;
  if (!display_ref(dpy, &major, &minor)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE, "%s: eglInitialize failed (%s)",
                cand->desc, egl_error_name(eglGetError()));
    return false;
  }
  ctx->dpy = dpy;

  const char *exts = eglQueryString(dpy, EGL_EXTENSIONS);
  bool egl15 = major > 1 || (major == 1 && minor >= 5);
  const char *missing = NULL;
  if (!egl15 && !has_extension(exts, "EGL_KHR_create_context"))
    missing = "EGL_KHR_create_context";
  else if (!has_extension(exts, "EGL_KHR_no_config_context") &&
           !has_extension(exts, "EGL_MESA_configless_context"))
    missing = "EGL_KHR_no_config_context";
  else if (!egl15 && !has_extension(exts, "EGL_KHR_surfaceless_context"))
    missing = "EGL_KHR_surfaceless_context";
  if (missing) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT, "%s: EGL %d.%d without %s",
                cand->desc, major, minor, missing);
    return false;
  }
  if (!eglBindAPI(EGL_OPENGL_API)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT, "%s: no OpenGL API (%s)", cand->desc,
                egl_error_name(eglGetError()));
    return false;
  }

  EGLint attribs[] = {
    EGL_CONTEXT_MAJOR_VERSION_KHR, 4,
    EGL_CONTEXT_MINOR_VERSION_KHR, 5,
    EGL_CONTEXT_OPENGL_PROFILE_MASK_KHR, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT_KHR,
    EGL_CONTEXT_FLAGS_KHR, ctx->debug ? EGL_CONTEXT_OPENGL_DEBUG_BIT_KHR : 0,
    EGL_NONE,
  };
  ctx->egl_ctx = eglCreateContext(dpy, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attribs);
  if (ctx->egl_ctx == EGL_NO_CONTEXT) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT,
                "%s: no OpenGL 4.5 core context (%s)", cand->desc,
                egl_error_name(eglGetError()));
    return false;
  }
  if (!eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx->egl_ctx)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT, "%s: eglMakeCurrent failed (%s)",
                cand->desc, egl_error_name(eglGetError()));
    return false;
  }
  GLint gl_major = 0, gl_minor = 0;
  glGetIntegerv(GL_MAJOR_VERSION, &gl_major);
  glGetIntegerv(GL_MINOR_VERSION, &gl_minor);
  if (gl_major < 4 || (gl_major == 4 && gl_minor < 5)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT, "%s: OpenGL %d.%d is too old (4.5 needed)",
                cand->desc, gl_major, gl_minor);
    return false;
  }
  ctx->device_desc = g_strdup(cand->desc);
  return true;
}

/* Undoes a failed try_candidate() so the next candidate starts clean. */
static void
drop_candidate(GpuContext *ctx)
{
  if (ctx->egl_ctx != EGL_NO_CONTEXT) {
    if (eglGetCurrentContext() == ctx->egl_ctx)
      eglMakeCurrent(ctx->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    g_mutex_lock(&display_lock);
    if (contexts)
      g_hash_table_remove(contexts, ctx->egl_ctx);
    g_mutex_unlock(&display_lock);
    eglDestroyContext(ctx->dpy, ctx->egl_ctx);
    ctx->egl_ctx = EGL_NO_CONTEXT;
  }
  if (ctx->dpy != EGL_NO_DISPLAY) {
    display_unref(ctx->dpy);
    ctx->dpy = EGL_NO_DISPLAY;
  }
}

static void
query_limits(GpuContext *ctx)
{
  glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &ctx->max_shared_memory);
  glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &ctx->max_invocations);
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &ctx->max_texture_size);
  glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &ctx->max_array_layers);
  for (GLuint i = 0; i < 3; i++) {
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i, &ctx->max_group_count[i]);
    glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, i, &ctx->max_group_size[i]);
  }
}

static void
create_samplers(GpuContext *ctx)
{
  GLuint s[2];
  glCreateSamplers(2, s);
  for (int i = 0; i < 2; i++) {
    GLint filter = i == 0 ? GL_NEAREST : GL_LINEAR;
    glSamplerParameteri(s[i], GL_TEXTURE_MIN_FILTER, filter);
    glSamplerParameteri(s[i], GL_TEXTURE_MAG_FILTER, filter);
    glSamplerParameteri(s[i], GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glSamplerParameteri(s[i], GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glSamplerParameteri(s[i], GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  }
  ctx->sampler_nearest = s[0];
  ctx->sampler_linear = s[1];
}

GpuContext *
gpu_context_new(const GpuContextParams *params, GError **error)
{
  static const GpuContextParams defaults = { 0 };
  if (!params)
    params = &defaults;
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  g_autoptr(GpuContext) ctx = g_new0(GpuContext, 1);
  g_mutex_init(&ctx->debug_lock);
  ctx->label = g_strdup(params->label ? params->label : "gpu");
  ctx->dpy = EGL_NO_DISPLAY;
  ctx->egl_ctx = EGL_NO_CONTEXT;
  ctx->debug = params->debug;

  const char *select_str = params->device ? params->device : g_getenv("STEREOD_EGL_DEVICE");
  DeviceSelect sel;
  int want_index = -1;
  if (!parse_selection(select_str, &sel, &want_index, error))
    return NULL;

  const char *client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display = NULL;
  if (has_extension(client_exts, "EGL_EXT_platform_base"))
    get_platform_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC) eglGetProcAddress("eglGetPlatformDisplayEXT");
  if (!get_platform_display) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE,
                "%s: EGL has no platform displays (EGL_EXT_platform_base missing)", ctx->label);
    return NULL;
  }

  g_autoptr(GArray) cands = g_array_new(FALSE, TRUE, sizeof(Candidate));
  g_array_set_clear_func(cands, candidate_clear);
  list_candidates(client_exts, sel, want_index, cands);
  if (cands->len == 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_NO_DEVICE, "%s: no EGL device matches \"%s\"",
                ctx->label, select_str ? select_str : "auto");
    return NULL;
  }

  /* Try in order; report the most advanced failure (a context error beats "no
   * display") when nothing works. */
  g_autoptr(GError) best = NULL;
  bool ok = false;
  for (guint i = 0; i < cands->len && !ok; i++) {
    const Candidate *c = &g_array_index(cands, Candidate, i);
    g_autoptr(GError) local = NULL;
    ok = try_candidate(ctx, get_platform_display, c, &local);
    if (!ok) {
      g_debug("%s: %s, trying the next device", ctx->label, local->message);
      drop_candidate(ctx);
      if (!best || (best->code == GPU_ERROR_NO_DEVICE && local->code != GPU_ERROR_NO_DEVICE)) {
        g_clear_error(&best);
        best = g_steal_pointer(&local);
      }
    }
  }
  if (!ok) {
    g_propagate_prefixed_error(error, g_steal_pointer(&best), "%s: ", ctx->label);
    return NULL;
  }

  ctx->renderer = g_strdup((const char *) glGetString(GL_RENDERER));
  ctx->version = g_strdup((const char *) glGetString(GL_VERSION));
  ctx->software = ctx->renderer && (strstr(ctx->renderer, "llvmpipe") ||
                                    strstr(ctx->renderer, "softpipe") ||
                                    strstr(ctx->renderer, "Software Rasterizer"));
  setup_debug_output(ctx);
  query_limits(ctx);
  GLint n_ext = 0;
  glGetIntegerv(GL_NUM_EXTENSIONS, &n_ext);
  for (GLint i = 0; i < n_ext; i++)
    if (!strcmp((const char *) glGetStringi(GL_EXTENSIONS, (GLuint) i),
                "GL_KHR_parallel_shader_compile"))
      ctx->parallel_compile = true;
  if (ctx->parallel_compile) {
    /* an extension entry point: from EGL, not from the loader library */
    PFNGLMAXSHADERCOMPILERTHREADSKHRPROC max_threads =
      (PFNGLMAXSHADERCOMPILERTHREADSKHRPROC) eglGetProcAddress("glMaxShaderCompilerThreadsKHR");
    if (max_threads)
      max_threads(0xffffffffu);   /* as many as the driver likes */
    else
      ctx->parallel_compile = false;
  }
  create_samplers(ctx);
  if (!gpu_context_check(ctx, "context creation", error))
    return NULL;

  g_mutex_lock(&display_lock);
  if (!contexts)
    contexts = g_hash_table_new(g_direct_hash, g_direct_equal);
  g_hash_table_insert(contexts, ctx->egl_ctx, ctx);
  g_mutex_unlock(&display_lock);
  g_info("%s: %s, GL_RENDERER \"%s\", GL_VERSION \"%s\"", ctx->label, ctx->device_desc,
         ctx->renderer, ctx->version);
  return g_steal_pointer(&ctx);
}

void
gpu_context_free(GpuContext *ctx)
{
  if (!ctx)
    return;
  if (ctx->egl_ctx != EGL_NO_CONTEXT) {
    /* GL objects can only be deleted with the context current; whatever was current
     * on this thread before is restored afterwards. */
    eglBindAPI(EGL_OPENGL_API);
    EGLContext prev_ctx = eglGetCurrentContext();
    EGLDisplay prev_dpy = eglGetCurrentDisplay();
    EGLSurface prev_draw = eglGetCurrentSurface(EGL_DRAW);
    EGLSurface prev_read = eglGetCurrentSurface(EGL_READ);
    bool current = prev_ctx == ctx->egl_ctx ||
      eglMakeCurrent(ctx->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx->egl_ctx);
    if (current) {
      gpu_pass_cache_clear(ctx);
      gpu_context_profile_free(ctx);
      if (ctx->sampler_nearest)
        glDeleteSamplers(1, &ctx->sampler_nearest);
      if (ctx->sampler_linear)
        glDeleteSamplers(1, &ctx->sampler_linear);
      glDebugMessageCallback(NULL, NULL);
      eglMakeCurrent(ctx->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    } else {
      g_warning("%s: cannot make the context current to free it (%s), leaking its objects",
                ctx->label, egl_error_name(eglGetError()));
    }
    eglDestroyContext(ctx->dpy, ctx->egl_ctx);
    if (prev_ctx != EGL_NO_CONTEXT && prev_ctx != ctx->egl_ctx)
      eglMakeCurrent(prev_dpy, prev_draw, prev_read, prev_ctx);
  }
  if (ctx->dpy != EGL_NO_DISPLAY)
    display_unref(ctx->dpy);
  g_free(ctx->profile_queries);
  g_free(ctx->profile_entries);
  g_free(ctx->last_debug_error);
  g_mutex_clear(&ctx->debug_lock);
  g_free(ctx->device_desc);
  g_free(ctx->renderer);
  g_free(ctx->version);
  g_free(ctx->label);
  g_free(ctx);
}

const char *
gpu_context_get_renderer(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, NULL);
  return ctx->renderer;
}

const char *
gpu_context_get_version(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, NULL);
  return ctx->version;
}

const char *
gpu_context_get_device(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, NULL);
  return ctx->device_desc;
}

bool
gpu_context_is_software(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, false);
  return ctx->software;
}

bool
gpu_context_check(GpuContext *ctx, const char *stage, GError **error)
{
  g_return_val_if_fail(ctx, false);
  GLenum errs[8];
  int n = 0;
  /* Bounded: a lost context may report GL_CONTEXT_LOST forever. */
  for (int i = 0; i < 64; i++) {
    GLenum e = glGetError();
    if (e == GL_NO_ERROR)
      break;
    if (n < (int) G_N_ELEMENTS(errs))
      errs[n++] = e;
    if (e == GL_CONTEXT_LOST)
      break;
  }
  g_mutex_lock(&ctx->debug_lock);
  g_autofree char *detail = g_steal_pointer(&ctx->last_debug_error);
  g_mutex_unlock(&ctx->debug_lock);
  if (n == 0)
    return true;

  g_autoptr(GString) names = g_string_new(NULL);
  for (int i = 0; i < n; i++)
    g_string_append_printf(names, "%s%s", i ? ", " : "", gl_error_name(errs[i]));
  ctx->failed = true;
  g_autofree char *msg = g_strdup_printf("%s: %s after %s%s%s", ctx->label, names->str,
                                         stage ? stage : "(unknown stage)",
                                         detail ? ": " : "", detail ? detail : "");
  g_warning("%s", msg);
  g_set_error_literal(error, GPU_ERROR, GPU_ERROR_GL, msg);
  return false;
}

bool
gpu_context_is_failed(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, true);
  return ctx->failed;
}

bool
gpu_context_require_ok(GpuContext *ctx, const char *what, GError **error)
{
  if (!ctx->failed)
    return true;
  g_set_error(error, GPU_ERROR, GPU_ERROR_FAILED, "%s: the context has failed, cannot %s",
              ctx->label, what);
  return false;
}

void
gpu_context_mark_failed(GpuContext *ctx)
{
  ctx->failed = true;
}

int
gpu_context_get_max_shared_memory(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, 0);
  return ctx->max_shared_memory;
}

int
gpu_context_get_max_invocations(GpuContext *ctx)
{
  g_return_val_if_fail(ctx, 0);
  return ctx->max_invocations;
}

void
gpu_context_finish(GpuContext *ctx)
{
  g_return_if_fail(ctx);
  glFinish();
}

bool
gpu_context_make_current(GpuContext *ctx, GError **error)
{
  g_return_val_if_fail(ctx, false);
  /* eglMakeCurrent acts on the thread's bound API, which is per thread. */
  if (!eglBindAPI(EGL_OPENGL_API) ||
      !eglMakeCurrent(ctx->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx->egl_ctx)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_CONTEXT, "%s: eglMakeCurrent failed (%s)",
                ctx->label, egl_error_name(eglGetError()));
    return false;
  }
  return true;
}

GpuContext *
gpu_context_current(void)
{
  EGLContext cur = eglGetCurrentContext();
  if (cur == EGL_NO_CONTEXT)
    return NULL;
  g_mutex_lock(&display_lock);
  GpuContext *ctx = contexts ? g_hash_table_lookup(contexts, cur) : NULL;
  g_mutex_unlock(&display_lock);
  return ctx;
}

void
gpu_context_release_current(GpuContext *ctx)
{
  g_return_if_fail(ctx);
  eglBindAPI(EGL_OPENGL_API);
  if (eglGetCurrentContext() == ctx->egl_ctx)
    eglMakeCurrent(ctx->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}
