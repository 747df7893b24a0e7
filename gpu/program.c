/* program.c: compute programs, the #include step, uniforms and dispatch.
 *
 * The source that reaches the driver is assembled here: `#include "x.glsl"` lines are
 * replaced by the embedded resource /stereod/kernels/x.glsl, and the caller's defines
 * go right after #version. `#line L S` directives keep the driver's line numbers equal
 * to the lines of the files: source string 0 is the main file, 1, 2, ... the included
 * files in order of first inclusion (GLSL has no file names in #line). On failure the
 * assembled source is printed with the file:line of every line.
 */
#include "gpu/gpu-private.h"

#include <gio/gio.h>
#include <string.h>

#define RESOURCE_PREFIX "/stereod/kernels/"
#define MAX_INCLUDE_DEPTH 16

typedef struct Assembler Assembler;

struct GpuProgram {
  GpuContext *ctx;
  char *label;
  GLuint id;
  int local_size[3];
  GHashTable *uniforms;   /* name -> location (-1 = absent, kept to log once) */
  /* An asynchronous build in progress: the shader (for its log) and the assembled source
   * (for the numbered listing of an error); NULL once finished. */
  GLuint shader;
  Assembler *pending;
  bool failed;            /* the build failed (asynchronous builds report it once) */
};

/* ------------------------------------------------------------ assembling the source */

typedef struct {
  int source;   /* source string number, -1 for lines inserted here */
  int line;
} LineTag;

struct Assembler {
  GString *text;
  GArray *tags;          /* one LineTag per line of text */
  GPtrArray *names;      /* source string number -> file name */
  GHashTable *included;  /* file names already included */
  const char *defines;
  bool defines_done;
};

static void
assembler_free(Assembler *a)
{
  if (!a)
    return;
  g_string_free(a->text, TRUE);
  g_array_unref(a->tags);
  g_ptr_array_unref(a->names);
  g_hash_table_unref(a->included);
  g_free(a);
}

static void
emit(Assembler *a, const char *line, size_t len, int source, int lineno)
{
  g_string_append_len(a->text, line, (gssize) len);
  g_string_append_c(a->text, '\n');
  LineTag t = { source, lineno };
  g_array_append_val(a->tags, t);
}

static void
emit_generated(Assembler *a, const char *line)
{
  emit(a, line, strlen(line), -1, 0);
}

/* `#line L S`: the line that follows is line L of source string S (GLSL >= 3.30). */
static void
emit_line_directive(Assembler *a, int line, int source)
{
  g_autofree char *d = g_strdup_printf("#line %d %d", line, source);
  emit_generated(a, d);
}

static void
emit_defines(Assembler *a)
{
  a->defines_done = true;
  if (!a->defines)
    return;
  g_auto(GStrv) lines = g_strsplit(a->defines, "\n", -1);
  for (char **l = lines; *l; l++) {
    if (**l)
      emit_generated(a, *l);
  }
}

/* Returns the directive name after '#' (e.g. "version") or NULL, and where its
 * argument starts. */
static bool
is_directive(const char *line, size_t len, const char *name, const char **rest)
{
  const char *p = line, *end = line + len;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || *p != '#')
    return false;
  p++;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  size_t n = strlen(name);
  if ((size_t) (end - p) < n || strncmp(p, name, n) != 0)
    return false;
  p += n;
  if (p < end && *p != ' ' && *p != '\t')
    return false;
  *rest = p;
  return true;
}

static char *
include_name(const char *rest, const char *end)
{
  const char *p = rest;
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  if (p == end || *p != '"')
    return NULL;
  const char *q = memchr(p + 1, '"', (size_t) (end - p - 1));
  if (!q || q == p + 1)
    return NULL;
  return g_strndup(p + 1, (size_t) (q - p - 1));
}

static char *
load_resource(const char *name, GError **error)
{
  g_autofree char *path = g_strconcat(RESOURCE_PREFIX, name, NULL);
  g_autoptr(GBytes) bytes = g_resources_lookup_data(path, G_RESOURCE_LOOKUP_FLAGS_NONE, error);
  if (!bytes)
    return NULL;
  gsize size;
  const char *data = g_bytes_get_data(bytes, &size);
  return g_strndup(data, size);
}

static bool
assemble(Assembler *a, const char *src, int source, int depth, GError **error)
{
  int lineno = 0;
  for (const char *p = src; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t) (nl - p) : strlen(p);
    if (len > 0 && p[len - 1] == '\r')
      len--;
    const char *line = p;
    const char *rest;
    lineno++;
    p = nl ? nl + 1 : p + len;

    if (is_directive(line, len, "include", &rest)) {
      g_autofree char *name = include_name(rest, line + len);
      const char *file = g_ptr_array_index(a->names, source);
      if (!name) {
        g_set_error(error, GPU_ERROR, GPU_ERROR_COMPILE, "%s:%d: malformed #include: %.*s",
                    file, lineno, (int) len, line);
        return false;
      }
      if (g_hash_table_contains(a->included, name)) {
        /* A file is included once; keep the line count. */
        emit(a, "", 0, source, lineno);
        continue;
      }
      if (depth >= MAX_INCLUDE_DEPTH) {
        g_set_error(error, GPU_ERROR, GPU_ERROR_COMPILE, "%s:%d: #include nested too deep",
                    file, lineno);
        return false;
      }
      g_autoptr(GError) local = NULL;
      g_autofree char *text = load_resource(name, &local);
      if (!text) {
        g_set_error(error, GPU_ERROR, GPU_ERROR_COMPILE, "%s:%d: cannot include \"%s\": %s",
                    file, lineno, name, local->message);
        return false;
      }
      int sub = (int) a->names->len;
      g_hash_table_add(a->included, g_strdup(name));
      g_ptr_array_add(a->names, g_steal_pointer(&name));
      emit_line_directive(a, 1, sub);
      if (!assemble(a, text, sub, depth + 1, error))
        return false;
      emit_line_directive(a, lineno + 1, source);
      continue;
    }

    emit(a, line, len, source, lineno);
    if (source == 0 && !a->defines_done && is_directive(line, len, "version", &rest)) {
      emit_defines(a);
      emit_line_directive(a, lineno + 1, 0);
    }
  }
  return true;
}

static bool
has_version(const char *src)
{
  for (const char *p = src; p && *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t) (nl - p) : strlen(p);
    const char *rest;
    if (is_directive(p, len, "version", &rest))
      return true;
    p = nl ? nl + 1 : NULL;
  }
  return false;
}

static void
append_numbered_source(GString *msg, Assembler *a)
{
  for (guint i = 1; i < a->names->len; i++)
    g_string_append_printf(msg, "source %u = %s\n", i,
                           (const char *) g_ptr_array_index(a->names, i));
  const char *p = a->text->str;
  for (guint i = 0; i < a->tags->len && *p; i++) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int) (nl - p) : (int) strlen(p);
    LineTag *t = &g_array_index(a->tags, LineTag, i);
    if (t->source >= 0)
      g_string_append_printf(msg, "%3d:%-4d| %.*s\n", t->source, t->line, len, p);
    else
      g_string_append_printf(msg, "       +| %.*s\n", len, p);
    p = nl ? nl + 1 : p + len;
  }
}

/* ------------------------------------------------------------ program */

static char *
shader_log(GLuint shader)
{
  GLint len = 0;
  glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &len);
  char *log = g_malloc0((gsize) len + 1);
  if (len > 0)
    glGetShaderInfoLog(shader, len, NULL, log);
  return log;
}

static char *
program_log(GLuint prog)
{
  GLint len = 0;
  glGetProgramiv(prog, GL_INFO_LOG_LENGTH, &len);
  char *log = g_malloc0((gsize) len + 1);
  if (len > 0)
    glGetProgramInfoLog(prog, len, NULL, log);
  return log;
}

static void
set_compile_error(GpuProgram *prog, Assembler *a, const char *what, const char *log,
                  GError **error)
{
  g_autoptr(GString) msg = g_string_new(NULL);
  g_string_append_printf(msg, "%s: program \"%s\" failed to %s:\n%s", prog->ctx->label,
                         prog->label, what, log);
  if (msg->len && msg->str[msg->len - 1] != '\n')
    g_string_append_c(msg, '\n');
  g_string_append(msg, "source:\n");
  append_numbered_source(msg, a);
  g_warning("%s", msg->str);
  g_set_error_literal(error, GPU_ERROR, GPU_ERROR_COMPILE, msg->str);
}

/* Queues the compile and the link. The driver may run them on its own threads
 * (GL_KHR_parallel_shader_compile); the results are read by build_finish. */
static void
build_start(GpuProgram *prog, Assembler *a)
{
  const char *src = a->text->str;
  prog->shader = glCreateShader(GL_COMPUTE_SHADER);
  glShaderSource(prog->shader, 1, &src, NULL);
  glCompileShader(prog->shader);
  prog->id = glCreateProgram();
  glAttachShader(prog->id, prog->shader);
  glLinkProgram(prog->id);
}

/* Reads the results of build_start (waiting for them unless they are complete). */
static bool
build_finish(GpuProgram *prog, Assembler *a, GError **error)
{
  GLint ok = GL_FALSE;
  glGetShaderiv(prog->shader, GL_COMPILE_STATUS, &ok);
  bool compiled = ok;
  if (!compiled) {
    g_autofree char *log = shader_log(prog->shader);
    set_compile_error(prog, a, "compile", log, error);
  }
  glDetachShader(prog->id, prog->shader);
  glDeleteShader(prog->shader);
  prog->shader = 0;
  if (!compiled)
    return false;
  glGetProgramiv(prog->id, GL_LINK_STATUS, &ok);
  if (!ok) {
    g_autofree char *log = program_log(prog->id);
    set_compile_error(prog, a, "link", log, error);
    return false;
  }
  glGetProgramiv(prog->id, GL_COMPUTE_WORK_GROUP_SIZE, prog->local_size);
  glObjectLabel(GL_PROGRAM, prog->id, -1, prog->label);
  g_autofree char *stage = g_strdup_printf("building program \"%s\"", prog->label);
  return gpu_context_check(prog->ctx, stage, error);
}

bool
gpu_program_poll(GpuProgram *prog, GError **error)
{
  g_return_val_if_fail(prog, false);
  if (prog->failed) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_COMPILE, "%s: program \"%s\" failed to build",
                prog->ctx->label, prog->label);
    return false;
  }
  if (!prog->pending)
    return true;
  GLint done = GL_TRUE;
  if (prog->ctx->parallel_compile)
    glGetProgramiv(prog->id, GL_COMPLETION_STATUS_KHR, &done);
  if (!done)
    return false;
  bool ok = build_finish(prog, prog->pending, error);
  g_clear_pointer(&prog->pending, assembler_free);
  prog->failed = !ok;
  return ok;
}

bool
gpu_program_wait(GpuProgram *prog, GError **error)
{
  g_return_val_if_fail(prog, false);
  if (!prog->pending)
    return gpu_program_poll(prog, error);
  bool ok = build_finish(prog, prog->pending, error);
  g_clear_pointer(&prog->pending, assembler_free);
  prog->failed = !ok;
  return ok;
}

GpuProgram *
gpu_program_new(GpuContext *ctx, const GpuProgramParams *params, GError **error)
{
  g_return_val_if_fail(ctx && params, NULL);
  g_return_val_if_fail((params->resource != NULL) != (params->source != NULL), NULL);
  if (!gpu_context_require_ok(ctx, "create a program", error))
    return NULL;

  g_autoptr(GpuProgram) prog = g_new0(GpuProgram, 1);
  prog->ctx = ctx;
  prog->label = g_strdup(params->label ? params->label
                         : params->resource ? params->resource : "program");
  prog->uniforms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

  g_autofree char *main_text = NULL;
  if (params->resource) {
    g_autoptr(GError) local = NULL;
    main_text = load_resource(params->resource, &local);
    if (!main_text) {
      g_set_error(error, GPU_ERROR, GPU_ERROR_COMPILE, "%s: program \"%s\": %s", ctx->label,
                  prog->label, local->message);
      return NULL;
    }
  }
  const char *text = params->resource ? main_text : params->source;

  Assembler *a = g_new0(Assembler, 1);
  *a = (Assembler){
    .text = g_string_new(NULL),
    .tags = g_array_new(FALSE, FALSE, sizeof(LineTag)),
    .names = g_ptr_array_new_with_free_func(g_free),
    .included = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
    .defines = params->defines,
  };
  g_ptr_array_add(a->names, g_strdup(params->resource ? params->resource : prog->label));
  if (!has_version(text)) {
    emit_generated(a, "#version 450 core");
    emit_defines(a);
    emit_line_directive(a, 1, 0);
  }
  g_autoptr(GError) local = NULL;
  if (!assemble(a, text, 0, 0, &local)) {
    g_propagate_prefixed_error(error, g_steal_pointer(&local), "%s: program \"%s\": ",
                               ctx->label, prog->label);
    assembler_free(a);
    return NULL;
  }
  a->defines = NULL;   /* the caller's string: not kept */
  build_start(prog, a);
  if (params->async && ctx->parallel_compile) {
    prog->pending = a;   /* gpu_program_poll() finishes it */
    return g_steal_pointer(&prog);
  }
  bool ok = build_finish(prog, a, error);
  assembler_free(a);
  if (!ok)
    return NULL;
  return g_steal_pointer(&prog);
}

void
gpu_program_free(GpuProgram *prog)
{
  if (!prog)
    return;
  if (prog->shader)
    glDeleteShader(prog->shader);
  if (prog->id)
    glDeleteProgram(prog->id);
  assembler_free(prog->pending);
  if (prog->uniforms)
    g_hash_table_unref(prog->uniforms);
  g_free(prog->label);
  g_free(prog);
}

unsigned
gpu_program_get_id(GpuProgram *prog)
{
  g_return_val_if_fail(prog, 0);
  return prog->id;
}

void
gpu_program_get_local_size(GpuProgram *prog, int size[3])
{
  g_return_if_fail(prog && size);
  if (prog->pending)
    gpu_program_wait(prog, NULL);
  memcpy(size, prog->local_size, sizeof(prog->local_size));
}

void
gpu_program_use(GpuProgram *prog)
{
  g_return_if_fail(prog);
  glUseProgram(prog->id);
}

/* ------------------------------------------------------------ uniforms */

static GLint
uniform_location(GpuProgram *prog, const char *name)
{
  gpointer value;
  if (g_hash_table_lookup_extended(prog->uniforms, name, NULL, &value))
    return GPOINTER_TO_INT(value);
  GLint loc = glGetUniformLocation(prog->id, name);
  if (loc < 0)
    g_debug("%s: program \"%s\" has no active uniform \"%s\", ignoring", prog->ctx->label,
            prog->label, name);
  g_hash_table_insert(prog->uniforms, g_strdup(name), GINT_TO_POINTER(loc));
  return loc;
}

void
gpu_program_set_int(GpuProgram *prog, const char *name, int v)
{
  g_return_if_fail(prog && name);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0)
    glProgramUniform1i(prog->id, loc, v);
}

void
gpu_program_set_ivec2(GpuProgram *prog, const char *name, int x, int y)
{
  g_return_if_fail(prog && name);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0)
    glProgramUniform2i(prog->id, loc, x, y);
}

void
gpu_program_set_float(GpuProgram *prog, const char *name, float v)
{
  g_return_if_fail(prog && name);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0)
    glProgramUniform1f(prog->id, loc, v);
}

void
gpu_program_set_vec2(GpuProgram *prog, const char *name, float x, float y)
{
  g_return_if_fail(prog && name);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0)
    glProgramUniform2f(prog->id, loc, x, y);
}

void
gpu_program_set_vec4(GpuProgram *prog, const char *name, const float v[4])
{
  g_return_if_fail(prog && name && v);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0)
    glProgramUniform4fv(prog->id, loc, 1, v);
}

void
gpu_program_set_float_array(GpuProgram *prog, const char *name, const float *v, int count)
{
  g_return_if_fail(prog && name && (v || count == 0) && count >= 0);
  GLint loc = uniform_location(prog, name);
  if (loc >= 0 && count > 0)
    glProgramUniform1fv(prog->id, loc, count, v);
}

/* ------------------------------------------------------------ dispatch */

void
gpu_program_dispatch(GpuProgram *prog, int nx, int ny, int nz)
{
  g_return_if_fail(prog && nx >= 0 && ny >= 0 && nz >= 0);
  if (nx == 0 || ny == 0 || nz == 0)
    return;
  const int n[3] = { nx, ny, nz };
  GLuint groups[3];
  for (int i = 0; i < 3; i++) {
    int ls = MAX(prog->local_size[i], 1);
    groups[i] = (GLuint) ((n[i] + ls - 1) / ls);
  }
  /* Counts over GL_MAX_COMPUTE_WORK_GROUP_COUNT raise GL_INVALID_VALUE, which the
   * caller's gpu_context_check() reports with its stage. */
  glUseProgram(prog->id);
  if (!prog->ctx->dry_run)
    glDispatchCompute(groups[0], groups[1], groups[2]);
  gpu_context_count_dispatch(prog->ctx);
}

void
gpu_barrier(void)
{
  /* Beyond the documented image/texture/storage/pixel-buffer bits: texture and buffer
   * updates (glGet*Image / glGetBufferSubData after shader writes), uniform reads and
   * client-mapped buffers (persistent maps read after a fence). */
  glMemoryBarrier(GL_SHADER_IMAGE_ACCESS_BARRIER_BIT | GL_TEXTURE_FETCH_BARRIER_BIT |
                  GL_SHADER_STORAGE_BARRIER_BIT | GL_PIXEL_BUFFER_BARRIER_BIT |
                  GL_TEXTURE_UPDATE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT |
                  GL_UNIFORM_BARRIER_BIT | GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
  /* gpu_barrier() takes no context (its callers predate the tracker): the full barrier
   * is recorded in the tracker of the context current on this thread. */
  GpuContext *ctx = gpu_context_current();
  if (ctx) {
    ctx->stats.barriers++;
    for (int i = 0; i < GPU_SYNC_COUNT; i++)
      ctx->barrier_serial[i] = ctx->serial;
  }
}
