/* pass.c: compute passes (shared programs, uniforms by index, one-call bindings) and the
 * context's barrier tracker (see gpu.h, "passes"). */
#include "gpu/gpu-private.h"

#include <string.h>

/* ------------------------------------------------------------ barrier tracking */

static const GLbitfield sync_bits[GPU_SYNC_COUNT] = {
  [GPU_SYNC_IMAGE] = GL_SHADER_IMAGE_ACCESS_BARRIER_BIT,
  [GPU_SYNC_STORAGE] = GL_SHADER_STORAGE_BARRIER_BIT,
  [GPU_SYNC_TEXTURE_FETCH] = GL_TEXTURE_FETCH_BARRIER_BIT,
  [GPU_SYNC_UNIFORM] = GL_UNIFORM_BARRIER_BIT,
  [GPU_SYNC_TEXTURE_UPDATE] = GL_TEXTURE_UPDATE_BARRIER_BIT,
  [GPU_SYNC_BUFFER_UPDATE] = GL_BUFFER_UPDATE_BARRIER_BIT,
  [GPU_SYNC_PIXEL_BUFFER] = GL_PIXEL_BUFFER_BARRIER_BIT,
  [GPU_SYNC_MAPPED] = GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT,
};

void
gpu_track_need(GpuContext *ctx, const GpuTrack *t, GpuSyncType type, bool reads, bool writes,
               GLbitfield *bits)
{
  uint64_t since = ctx->barrier_serial[type];
  /* a read or a write after an unbarriered shader write; a write after a shader read */
  if (((reads || writes) && t->write > since) || (writes && t->read > since))
    *bits |= sync_bits[type];
}

void
gpu_track_barrier(GpuContext *ctx, GLbitfield bits)
{
  if (!bits)
    return;
  glMemoryBarrier(bits);
  ctx->stats.barriers++;
  for (int i = 0; i < GPU_SYNC_COUNT; i++)
    if (bits & sync_bits[i])
      ctx->barrier_serial[i] = ctx->serial;
}

void
gpu_track_shader_access(GpuContext *ctx, GpuTrack *t, bool reads, bool writes)
{
  uint64_t s = ++ctx->serial;
  if (reads)
    t->read = s;
  if (writes)
    t->write = s;
}

void
gpu_track_command(GpuContext *ctx, GpuTrack *t, GpuSyncType type, bool writes)
{
  GLbitfield bits = 0;
  gpu_track_need(ctx, t, type, true, writes, &bits);
  gpu_track_barrier(ctx, bits);
}

void
gpu_context_count_dispatch(GpuContext *ctx)
{
  ctx->stats.dispatches++;
}

void
gpu_context_set_dry_run(GpuContext *ctx, bool dry)
{
  g_return_if_fail(ctx);
  ctx->dry_run = dry;
}

void
gpu_context_get_stats(GpuContext *ctx, GpuStats *stats)
{
  g_return_if_fail(ctx && stats);
  *stats = ctx->stats;
}

bool
gpu_context_profile_start(GpuContext *ctx, int max_dispatches, GError **error)
{
  g_return_val_if_fail(ctx && max_dispatches > 0 && !ctx->profiling, false);
  if (!gpu_context_require_ok(ctx, "profile passes", error))
    return false;
  if (max_dispatches > ctx->profile_max) {
    if (ctx->profile_queries)
      glDeleteQueries(2 * ctx->profile_max, ctx->profile_queries);
    g_free(ctx->profile_queries);
    g_free(ctx->profile_entries);
    ctx->profile_queries = g_new0(GLuint, 2 * (size_t)max_dispatches);
    ctx->profile_entries = g_new0(GpuProfileEntry, max_dispatches);
    glCreateQueries(GL_TIMESTAMP, 2 * max_dispatches, ctx->profile_queries);
    ctx->profile_max = max_dispatches;
    if (!gpu_context_check(ctx, "creating profile queries", error))
      return false;
  }
  ctx->profile_count = 0;
  ctx->profiling = true;
  return true;
}

int
gpu_context_profile_stop(GpuContext *ctx, GpuProfileEntry *out, int max)
{
  g_return_val_if_fail(ctx && ctx->profiling, 0);
  ctx->profiling = false;
  int n = MIN(ctx->profile_count, MIN(max, ctx->profile_max));
  for (int i = 0; i < n; i++) {
    GLuint64 a = 0, b = 0;
    glGetQueryObjectui64v(ctx->profile_queries[2 * i], GL_QUERY_RESULT, &a);
    glGetQueryObjectui64v(ctx->profile_queries[2 * i + 1], GL_QUERY_RESULT, &b);
    out[i] = ctx->profile_entries[i];
    out[i].ms = b > a ? (double)(b - a) * 1e-6 : 0.0;
  }
  return n;
}

void
gpu_context_profile_free(GpuContext *ctx)
{
  if (ctx->profile_queries)
    glDeleteQueries(2 * ctx->profile_max, ctx->profile_queries);
  g_clear_pointer(&ctx->profile_queries, g_free);
  g_clear_pointer(&ctx->profile_entries, g_free);
  ctx->profile_max = 0;
}

/* ------------------------------------------------------------ shared programs */

typedef struct {
  GpuProgram *prog;    /* NULL once orphaned */
  int refs;
  GpuPass *owner;      /* the pass whose uniform values the program holds */
  bool orphaned;       /* its context was freed first: the passes only free the entry */
} ProgramEntry;

static void
entry_free(gpointer p)
{
  ProgramEntry *e = p;
  gpu_program_free(e->prog);
  g_free(e);
}

void
gpu_pass_cache_clear(GpuContext *ctx)
{
  if (!ctx->programs)
    return;
  /* Passes that outlive their context (freed after it, as other GL objects may be): their
   * programs go with the context now, their entries with their last pass. */
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, ctx->programs);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    ProgramEntry *e = value;
    g_debug("%s: a shared program is still used by %d passes when the context is freed",
            ctx->label, e->refs);
    g_clear_pointer(&e->prog, gpu_program_free);
    e->orphaned = true;
    g_hash_table_iter_steal(&it);
    g_free(key);
  }
  g_hash_table_unref(ctx->programs);
  ctx->programs = NULL;
}

/* ------------------------------------------------------------ passes */

typedef enum { U_NONE, U_INT, U_IVEC2, U_IVEC4, U_FLOAT, U_VEC2, U_VEC4 } UniformType;

typedef struct {
  GLint location;            /* -1: dropped by the compiler */
  UniformType type;
  union {
    GLint i[4];
    GLfloat f[4];
  } v;
} Uniform;

struct GpuPass {
  GpuContext *ctx;
  char *label;
  char *key;
  ProgramEntry *entry;
  Uniform uniforms[GPU_PASS_MAX_UNIFORMS];
  char *names[GPU_PASS_MAX_UNIFORMS];   /* kept until the locations are resolved */
  int n_uniforms;
  bool resolved;             /* the program is built and the locations are known */
  guint32 dirty;             /* uniforms changed since this pass last applied them */
};

/* Once the program is built: the uniform locations. */
static void
resolve_uniforms(GpuPass *pass)
{
  GLuint id = gpu_program_get_id(pass->entry->prog);
  for (int i = 0; i < pass->n_uniforms; i++) {
    pass->uniforms[i].location = glGetUniformLocation(id, pass->names[i]);
    if (pass->uniforms[i].location < 0)
      g_debug("%s: pass \"%s\" has no active uniform \"%s\", ignoring", pass->ctx->label,
              pass->label, pass->names[i]);
    g_clear_pointer(&pass->names[i], g_free);
  }
  pass->resolved = true;
}

bool
gpu_pass_poll(GpuPass *pass, GError **error)
{
  g_return_val_if_fail(pass, false);
  if (pass->resolved)
    return true;
  if (!gpu_program_poll(pass->entry->prog, error))
    return false;
  resolve_uniforms(pass);
  return true;
}

static char *
program_key(const GpuPassParams *params)
{
  /* The text that identifies the program: what the assembler starts from. */
  return g_strdup_printf("%s\x1f%s\x1f%s", params->resource ? "r" : "s",
                         params->resource ? params->resource : params->source,
                         params->defines ? params->defines : "");
}

GpuPass *
gpu_pass_new(GpuContext *ctx, const GpuPassParams *params, GError **error)
{
  g_return_val_if_fail(ctx && params, NULL);
  g_return_val_if_fail((params->resource != NULL) != (params->source != NULL), NULL);
  if (!gpu_context_require_ok(ctx, "create a pass", error))
    return NULL;
  if (!ctx->programs)
    ctx->programs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, entry_free);

  g_autoptr(GpuPass) pass = g_new0(GpuPass, 1);
  pass->ctx = ctx;
  pass->label = g_strdup(params->label ? params->label
                         : params->resource ? params->resource : "pass");
  pass->key = program_key(params);
  ProgramEntry *e = g_hash_table_lookup(ctx->programs, pass->key);
  if (e) {
    ctx->stats.programs_shared++;
  } else {
    GpuProgramParams pp = { .label = pass->label, .resource = params->resource,
                            .source = params->source, .defines = params->defines,
                            .async = params->async };
    GpuProgram *prog = gpu_program_new(ctx, &pp, error);
    if (!prog)
      return NULL;
    ctx->stats.programs_built++;
    e = g_new0(ProgramEntry, 1);
    e->prog = prog;
    g_hash_table_insert(ctx->programs, g_strdup(pass->key), e);
  }
  e->refs++;
  pass->entry = e;

  for (int i = 0; i < GPU_PASS_MAX_UNIFORMS && params->uniforms[i]; i++) {
    pass->names[i] = g_strdup(params->uniforms[i]);
    pass->uniforms[i].location = -1;
    pass->n_uniforms = i + 1;
  }
  if (!params->async && !gpu_pass_poll(pass, error))
    return NULL;   /* a program shared with an asynchronous pass that failed */
  return g_steal_pointer(&pass);
}

void
gpu_pass_free(GpuPass *pass)
{
  if (!pass)
    return;
  ProgramEntry *e = pass->entry;
  if (e && e->orphaned) {
    if (--e->refs == 0)
      g_free(e);
  } else if (e) {
    if (e->owner == pass)
      e->owner = NULL;
    if (--e->refs == 0)
      g_hash_table_remove(pass->ctx->programs, pass->key);
  }
  for (int i = 0; i < GPU_PASS_MAX_UNIFORMS; i++)
    g_free(pass->names[i]);
  g_free(pass->key);
  g_free(pass->label);
  g_free(pass);
}

const char *
gpu_pass_get_label(GpuPass *pass)
{
  g_return_val_if_fail(pass, NULL);
  return pass->label;
}

void
gpu_pass_get_local_size(GpuPass *pass, int size[3])
{
  g_return_if_fail(pass && size);
  gpu_program_get_local_size(pass->entry->prog, size);
}

static Uniform *
uniform_slot(GpuPass *pass, int u, UniformType type)
{
  g_return_val_if_fail(pass && u >= 0 && u < pass->n_uniforms, NULL);
  Uniform *un = &pass->uniforms[u];
  g_return_val_if_fail(un->type == U_NONE || un->type == type, NULL);
  un->type = type;
  pass->dirty |= 1u << u;
  return un;
}

void
gpu_pass_set_int(GpuPass *pass, int u, int v)
{
  Uniform *un = uniform_slot(pass, u, U_INT);
  if (un)
    un->v.i[0] = v;
}

void
gpu_pass_set_ivec2(GpuPass *pass, int u, int x, int y)
{
  Uniform *un = uniform_slot(pass, u, U_IVEC2);
  if (un) {
    un->v.i[0] = x;
    un->v.i[1] = y;
  }
}

void
gpu_pass_set_float(GpuPass *pass, int u, float v)
{
  Uniform *un = uniform_slot(pass, u, U_FLOAT);
  if (un)
    un->v.f[0] = v;
}

void
gpu_pass_set_vec2(GpuPass *pass, int u, float x, float y)
{
  Uniform *un = uniform_slot(pass, u, U_VEC2);
  if (un) {
    un->v.f[0] = x;
    un->v.f[1] = y;
  }
}

void
gpu_pass_set_vec4(GpuPass *pass, int u, const float v[4])
{
  Uniform *un = uniform_slot(pass, u, U_VEC4);
  if (un)
    memcpy(un->v.f, v, sizeof un->v.f);
}

void
gpu_pass_set_ivec4(GpuPass *pass, int u, const int v[4])
{
  Uniform *un = uniform_slot(pass, u, U_IVEC4);
  if (un)
    memcpy(un->v.i, v, sizeof un->v.i);
}

static void
apply_uniforms(GpuPass *pass, GLuint id)
{
  guint32 stale = pass->entry->owner == pass ? pass->dirty : 0xffffffffu;
  for (int i = 0; i < pass->n_uniforms; i++) {
    const Uniform *un = &pass->uniforms[i];
    if (!(stale & (1u << i)) || un->location < 0)
      continue;
    switch (un->type) {
    case U_NONE:
      break;
    case U_INT:
      glProgramUniform1i(id, un->location, un->v.i[0]);
      break;
    case U_IVEC2:
      glProgramUniform2i(id, un->location, un->v.i[0], un->v.i[1]);
      break;
    case U_IVEC4:
      glProgramUniform4iv(id, un->location, 1, un->v.i);
      break;
    case U_FLOAT:
      glProgramUniform1f(id, un->location, un->v.f[0]);
      break;
    case U_VEC2:
      glProgramUniform2f(id, un->location, un->v.f[0], un->v.f[1]);
      break;
    case U_VEC4:
      glProgramUniform4fv(id, un->location, 1, un->v.f);
      break;
    }
  }
  pass->entry->owner = pass;
  pass->dirty = 0;
}

void
gpu_pass_dispatch(GpuPass *pass, const GpuPassRun *run)
{
  g_return_if_fail(pass && run);
  GpuContext *ctx = pass->ctx;
  if (!pass->resolved) {
    /* dispatched before its background build was seen to end: wait for it */
    g_autoptr(GError) error = NULL;
    if (!gpu_program_wait(pass->entry->prog, &error)) {
      g_warning("%s: pass \"%s\" cannot run: %s", ctx->label, pass->label, error->message);
      gpu_context_mark_failed(ctx);
      return;
    }
    resolve_uniforms(pass);
  }
  GLuint groups[3];
  int ls[3];
  gpu_program_get_local_size(pass->entry->prog, ls);
  for (int i = 0; i < 3; i++) {
    int n = run->groups[0] > 0 ? run->groups[i] : run->size[i];
    g_return_if_fail(n >= 0);
    groups[i] = run->groups[0] > 0 ? (GLuint) n : (GLuint) ((n + MAX(ls[i], 1) - 1) / MAX(ls[i], 1));
  }
  if (!groups[0] || !groups[1] || !groups[2])
    return;

  /* The barrier this dispatch needs, from what it reads and writes. */
  GLbitfield bits = 0;
  GLuint tex[GPU_PASS_MAX_IMAGES] = { 0 }, bufs[GPU_PASS_MAX_BUFFERS] = { 0 };
  int n_tex = 0, n_buf = 0;
  for (int i = 0; i < GPU_PASS_MAX_IMAGES; i++) {
    const GpuPassImage *b = &run->images[i];
    if (!b->image)
      continue;
    bool r = b->access != GPU_ACCESS_WRITE, w = b->access != GPU_ACCESS_READ;
    gpu_track_need(ctx, gpu_image_get_track(b->image), GPU_SYNC_IMAGE, r, w, &bits);
    tex[i] = gpu_image_get_id(b->image);
    n_tex = i + 1;
  }
  for (int i = 0; i < GPU_PASS_MAX_BUFFERS; i++) {
    const GpuPassBuffer *b = &run->buffers[i];
    if (!b->buffer)
      continue;
    bool r = b->access != GPU_ACCESS_WRITE, w = b->access != GPU_ACCESS_READ;
    gpu_track_need(ctx, gpu_buffer_get_track(b->buffer), GPU_SYNC_STORAGE, r, w, &bits);
    bufs[i] = gpu_buffer_get_id(b->buffer);
    n_buf = i + 1;
  }
  gpu_track_barrier(ctx, bits);

  GLuint id = gpu_program_get_id(pass->entry->prog);
  apply_uniforms(pass, id);
  if (n_tex)
    glBindImageTextures(0, n_tex, tex);
  if (n_buf)
    glBindBuffersBase(GL_SHADER_STORAGE_BUFFER, 0, n_buf, bufs);
  glUseProgram(id);
  int prof = ctx->profiling && ctx->profile_count < ctx->profile_max ? ctx->profile_count++ : -1;
  if (prof >= 0) {
    ctx->profile_entries[prof] = (GpuProfileEntry){ pass->label,
                                                    { groups[0], groups[1], groups[2] }, 0.0 };
    glQueryCounter(ctx->profile_queries[2 * prof], GL_TIMESTAMP);
  }
  if (!ctx->dry_run)
    glDispatchCompute(groups[0], groups[1], groups[2]);
  if (prof >= 0)
    glQueryCounter(ctx->profile_queries[2 * prof + 1], GL_TIMESTAMP);
  ctx->stats.dispatches++;

  for (int i = 0; i < n_tex; i++)
    if (run->images[i].image)
      gpu_track_shader_access(ctx, gpu_image_get_track(run->images[i].image),
                              run->images[i].access != GPU_ACCESS_WRITE,
                              run->images[i].access != GPU_ACCESS_READ);
  for (int i = 0; i < n_buf; i++)
    if (run->buffers[i].buffer)
      gpu_track_shader_access(ctx, gpu_buffer_get_track(run->buffers[i].buffer),
                              run->buffers[i].access != GPU_ACCESS_WRITE,
                              run->buffers[i].access != GPU_ACCESS_READ);
}
