/* flow.c: the optical-flow engine: GPU objects made once, the per-frame filter chain, the
 * coarse-to-fine flow chain and the submit/collect ring of readback slots. */
#include "kernels/flow.h"
#include "kernels/flow-passes.h"

#include <string.h>

#define MAX_IN_FLIGHT 8
#define N_STAMPS (FLOW_STAGE_COUNT + 1)

static const char *const stage_names[FLOW_STAGE_COUNT] = {
  [FLOW_STAGE_UPLOAD] = "upload",
  [FLOW_STAGE_FILTER] = "filter",
  [FLOW_STAGE_FLOW] = "flow",
  [FLOW_STAGE_POST] = "post",
  [FLOW_STAGE_READBACK] = "readback",
};

const char *
flow_stage_name(FlowStage stage)
{
  g_return_val_if_fail(stage < FLOW_STAGE_COUNT, "?");
  return stage_names[stage];
}

typedef struct {
  GpuBuffer *readback;     /* packed output */
  GpuFence *fence;
  GpuTimer *timer;
  uint64_t tag, prev_tag;
} Slot;

struct FlowEngine {
  GpuContext *gpu;
  char *label;
  FlowParams p;
  FlowOutputFormat format;
  int in_flight;
  int width, height, levels, n_dirs;

  FlowPasses *passes;
  GpuBuffer *upload;       /* one frame, tight rows */
  GpuFence *upload_fence;  /* after the last upload from it */
  GpuImage *in8;
  GpuImage *img[FLOW_MAX_LEVELS];        /* levels 1.. (level 0 is in8 itself) */
  GpuImage *rows, *q, *terms, *tmp, *post;
  GpuImage *feat[2][FLOW_MAX_LEVELS];     /* [frame slot][level] */
  GpuImage *flow[2][FLOW_MAX_LEVELS];     /* [direction][level] */
  GpuImage *spare[FLOW_MAX_LEVELS];       /* the median's output, swapped with flow */
  GpuBuffer *partials, *means, *packed;
  GpuBuffer *counters;     /* the features pass's per-layer counters, zero between uses */
  int partial_base[FLOW_MAX_LEVELS];
  FlowPackLayout layout;

  int cur;                 /* frame slot of the newest frame; -1 = none */
  uint64_t cur_tag;
  Slot slots[MAX_IN_FLIGHT];
  int head, count;         /* oldest pending slot, number pending */
  FlowWorkCounts last_counts;
};

void
flow_engine_free(FlowEngine *e)
{
  if (!e)
    return;
  for (int i = 0; i < MAX_IN_FLIGHT; i++) {
    gpu_buffer_free(e->slots[i].readback);
    gpu_fence_free(e->slots[i].fence);
    gpu_timer_free(e->slots[i].timer);
  }
  for (int s = 0; s < FLOW_MAX_LEVELS; s++) {
    gpu_image_free(e->img[s]);
    gpu_image_free(e->spare[s]);
    for (int i = 0; i < 2; i++) {
      gpu_image_free(e->feat[i][s]);
      gpu_image_free(e->flow[i][s]);
    }
  }
  gpu_image_free(e->in8);
  gpu_image_free(e->rows);
  gpu_image_free(e->q);
  gpu_image_free(e->terms);
  gpu_image_free(e->tmp);
  gpu_image_free(e->post);
  gpu_buffer_free(e->upload);
  gpu_fence_free(e->upload_fence);
  gpu_buffer_free(e->partials);
  gpu_buffer_free(e->means);
  gpu_buffer_free(e->counters);
  gpu_buffer_free(e->packed);
  flow_passes_free(e->passes);
  g_free(e->label);
  g_free(e);
}

static GpuImage *
make_image(FlowEngine *e, const char *what, int s, int w, int h, GpuFormat fmt, int layers,
           GError **error)
{
  g_autofree char *label = g_strdup_printf("%s/%s%d", e->label, what, s);
  GpuImageParams ip = { .label = label, .width = w, .height = h, .layers = layers,
                        .format = fmt };
  return gpu_image_new(e->gpu, &ip, error);
}

static GpuBuffer *
make_buffer(FlowEngine *e, const char *what, int i, size_t size, GpuBufferUsage usage,
            GError **error)
{
  g_autofree char *label = g_strdup_printf("%s/%s%d", e->label, what, i);
  GpuBufferParams bp = { .label = label, .size = size, .usage = usage };
  return gpu_buffer_new(e->gpu, &bp, error);
}

static bool
engine_alloc(FlowEngine *e, GError **error)
{
  int w0 = e->width, h0 = e->height, N = e->p.orientations;
  if (!(e->in8 = make_image(e, "in", 0, w0, h0, GPU_FORMAT_R8, 1, error)) ||
      !(e->rows = make_image(e, "rows", 0, w0, h0, GPU_FORMAT_RGBA32F,
                             flow_passes_row_layers(&e->p), error)) ||
      !(e->q = make_image(e, "q", 0, w0, h0, GPU_FORMAT_RG32F, N, error)) ||
      !(e->terms = make_image(e, "terms", 0, w0, h0, GPU_FORMAT_RGBA32F, 2, error)) ||
      !(e->tmp = make_image(e, "tmp", 0, w0, h0, GPU_FORMAT_RGBA32F, 2, error)) ||
      !(e->post = make_image(e, "post", 0, w0, h0, GPU_FORMAT_RGBA32F, 1, error)))
    return false;
  int partials = 0;
  for (int s = 0; s < e->levels; s++) {
    int w, h;
    flow_params_level_size(&e->p, s, &w, &h);
    if ((s > 0 && !(e->img[s] = make_image(e, "img", s, w, h, GPU_FORMAT_R32F, 1, error))) ||
        !(e->spare[s] = make_image(e, "spare", s, w, h, GPU_FORMAT_RGBA32F, 1, error)))
      return false;
    for (int i = 0; i < 2; i++)
      if (!(e->feat[i][s] = make_image(e, i ? "feat1-" : "feat0-", s, w, h,
                                       GPU_FORMAT_RGBA32F, N, error)))
        return false;
    for (int d = 0; d < e->n_dirs; d++)
      if (!(e->flow[d][s] = make_image(e, d ? "bwd" : "fwd", s, w, h, GPU_FORMAT_RGBA32F, 1,
                                       error)))
        return false;
    e->partial_base[s] = partials;
    partials += N * flow_pass_features_groups(w, h);
  }
  flow_pack_layout(w0, h0, e->format == FLOW_OUTPUT_S16, &e->layout);
  if (!(e->partials = make_buffer(e, "partials", 0, (size_t)partials * 4, GPU_BUFFER_STORAGE,
                                  error)) ||
      !(e->means = make_buffer(e, "means", 0, 2 * (size_t)N * FLOW_MAX_LEVELS * 4,
                               GPU_BUFFER_STORAGE, error)) ||
      !(e->counters = make_buffer(e, "counters", 0, (size_t)N * FLOW_MAX_LEVELS * 4,
                                  GPU_BUFFER_STORAGE, error)) ||
      !gpu_buffer_fill_u32(e->counters, 0, error) ||
      !(e->packed = make_buffer(e, "packed", 0, e->layout.layer_bytes, GPU_BUFFER_STORAGE,
                                error)) ||
      !(e->upload = make_buffer(e, "upload", 0, (size_t)w0 * h0, GPU_BUFFER_UPLOAD, error)) ||
      !(e->upload_fence = gpu_fence_new(e->gpu, error)))
    return false;
  for (int i = 0; i < e->in_flight; i++) {
    Slot *sl = &e->slots[i];
    if (!(sl->readback = make_buffer(e, "readback", i, e->layout.layer_bytes,
                                     GPU_BUFFER_READBACK, error)) ||
        !(sl->fence = gpu_fence_new(e->gpu, error)) ||
        !(sl->timer = gpu_timer_new(e->gpu, N_STAMPS, error)))
      return false;
  }
  return gpu_context_check(e->gpu, "flow engine allocation", error);
}

FlowEngine *
flow_engine_new(GpuContext *gpu, const FlowEngineParams *params, GError **error)
{
  g_return_val_if_fail(gpu != NULL && params != NULL, NULL);
  if (!flow_params_validate(&params->params, error))
    return NULL;
  int in_flight = params->in_flight ? params->in_flight : 1;
  if (in_flight < 1 || in_flight > MAX_IN_FLIGHT) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "in_flight must be within 1..%d",
                MAX_IN_FLIGHT);
    return NULL;
  }
  g_autoptr(FlowEngine) e = g_new0(FlowEngine, 1);
  e->gpu = gpu;
  e->label = g_strdup(params->label ? params->label : "flow");
  e->p = params->params;
  e->format = params->output;
  e->in_flight = in_flight;
  e->width = e->p.width;
  e->height = e->p.height;
  e->levels = flow_params_get_levels(&e->p);
  e->n_dirs = e->p.fb_check ? 2 : 1;
  e->cur = -1;
  if (!(e->passes = flow_passes_new(gpu, &e->p, error)) || !engine_alloc(e, error))
    return NULL;
  g_debug("%s: %dx%d, %d levels, %d orientations, %s, %d in flight", e->label, e->width,
          e->height, e->levels, e->p.orientations,
          e->p.fb_check ? "forward-backward check" : "forward only", e->in_flight);
  return g_steal_pointer(&e);
}

const FlowParams *
flow_engine_get_params(FlowEngine *e)
{
  return &e->p;
}

int
flow_engine_pending(FlowEngine *e)
{
  return e->count;
}

void
flow_engine_get_last_counts(FlowEngine *e, FlowWorkCounts *counts)
{
  g_return_if_fail(e && counts);
  *counts = e->last_counts;
}

void
flow_engine_reset(FlowEngine *e)
{
  e->cur = -1;
}

/* Filters the uploaded frame into frame slot `fs`: pyramid, bank, features, means. */
static void
filter_frame(FlowEngine *e, int fs)
{
  int N = e->p.orientations;
  /* Level 0 is the 8-bit frame itself: the passes that read it do the ingest (§1). */
  for (int s = 1; s < e->levels; s++)
    flow_pass_reduce(e->passes, s > 1 ? e->img[s - 1] : e->in8, e->img[s]);
  for (int s = 0; s < e->levels; s++) {
    GpuImage *level = s > 0 ? e->img[s] : e->in8;
    int w = gpu_image_get_width(level), h = gpu_image_get_height(level);
    flow_pass_rows(e->passes, level, w, h, 1, e->rows);
    flow_pass_columns(e->passes, e->rows, w, h, 1, e->q);
    flow_pass_features_mean(e->passes, e->q, e->feat[fs][s], e->partials, e->partial_base[s],
                            e->counters, e->means, fs * N * FLOW_MAX_LEVELS, s);
  }
}

/* The median's output becomes the level's flow: the two images swap. Returns the input. */
static GpuImage *
swap_spare(FlowEngine *e, int d, int s)
{
  GpuImage *t = e->flow[d][s];
  e->flow[d][s] = e->spare[s];
  e->spare[s] = t;
  return t;
}

/* Coarse to fine from frame slot `from` to `to` into direction d (§7). The prior of a round
 * is computed by its terms pass (§12): the upsampled coarser level in the first round of
 * a level, the median of the previous round's flow in the others. The median of a
 * level's last round is a pass of its own, except with `median_later` at level 0: there
 * flow[d][0] is left without it, for the forward-backward check that computes it. */
static void
run_direction(FlowEngine *e, int d, int from, int to, bool median_later)
{
  static const float zero[4] = { 0, 0, 0, 0 };
  int N = e->p.orientations;
  for (int s = e->levels - 1; s >= 0; s--) {
    for (int it = 0; it < e->p.iterations; it++) {
      FlowPrior prior = FLOW_PRIOR_IMAGE;
      GpuImage *src = NULL;
      if (it == 0 && s == e->levels - 1) {
        gpu_image_fill(e->flow[d][s], zero, NULL);   /* the tracker orders it (gpu.h) */
      } else if (it == 0) {
        prior = FLOW_PRIOR_UPSAMPLE;
        src = e->flow[d][s + 1];
      } else if (e->p.median) {
        prior = FLOW_PRIOR_MEDIAN;
        src = swap_spare(e, d, s);
      }
      flow_pass_terms_prior(e->passes, prior, src, e->feat[from][s], e->feat[to][s],
                            e->flow[d][s], e->terms, e->means, from * N * FLOW_MAX_LEVELS, s);
      flow_pass_smooth_solve(e->passes, e->terms, e->tmp, e->flow[d][s]);
      flow_pass_fill(e->passes, e->flow[d][s], e->tmp, e->p.fill_iterations);
    }
    if (e->p.median && !(s == 0 && median_later)) {
      GpuImage *src = swap_spare(e, d, s);
      flow_pass_median(e->passes, src, e->flow[d][s]);
    }
  }
}

static void
copy_plane(uint8_t *dst, const uint8_t *src, size_t stride, int width, int height)
{
  if (stride == (size_t)width) {
    memcpy(dst, src, (size_t)width * height);
    return;
  }
  for (int y = 0; y < height; y++)
    memcpy(dst + (size_t)y * width, src + (size_t)y * stride, width);
}

bool
flow_engine_submit(FlowEngine *e, const uint8_t *frame, size_t stride, uint64_t tag,
                   bool *queued, GError **error)
{
  g_return_val_if_fail(e && frame && stride >= (size_t)e->width, false);
  if (queued)
    *queued = false;
  if (gpu_context_is_failed(e->gpu)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_FAILED, "%s: the GPU context has failed", e->label);
    return false;
  }
  bool with_flow = e->cur >= 0;
  if (with_flow && e->count >= e->in_flight) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: %d flows already in flight", e->label,
                e->count);
    return false;
  }
  Slot *sl = &e->slots[(e->head + e->count) % e->in_flight];
  /* The one upload buffer may still feed the previous frame's queued upload: wait for
   * the GPU to have taken it (at once when that frame's work has started). */
  if (!gpu_fence_wait(e->upload_fence, 10 * G_GUINT64_CONSTANT(1000000000), error))
    return false;
  copy_plane(gpu_buffer_get_map(e->upload), frame, stride, e->width, e->height);
  int fs = e->cur >= 0 ? 1 - e->cur : 0;

  GpuStats before, after;
  gpu_context_get_stats(e->gpu, &before);
  gpu_timer_stamp(sl->timer, 0);
  GError *ignored = NULL;
  gpu_image_upload_from_buffer(e->in8, 0, e->upload, 0, e->width, &ignored);
  g_clear_error(&ignored);
  if (!gpu_fence_reset(e->upload_fence, error))
    return false;
  gpu_timer_stamp(sl->timer, 1);
  filter_frame(e, fs);
  gpu_timer_stamp(sl->timer, 2);
  if (with_flow) {
    /* with the check, the forward flow's last median is computed by it */
    run_direction(e, 0, e->cur, fs, e->p.fb_check);
    if (e->n_dirs > 1)
      run_direction(e, 1, fs, e->cur, false);
  }
  gpu_timer_stamp(sl->timer, 3);
  if (with_flow) {
    if (e->p.fb_check) {
      if (e->p.median)
        flow_pass_fb_median(e->passes, e->flow[0][0], e->flow[1][0], e->post);
      else
        flow_pass_fb(e->passes, e->flow[0][0], e->flow[1][0], e->post);
      if (e->p.densify)
        flow_pass_fill(e->passes, e->post, e->tmp, FLOW_DENSIFY_ITERATIONS);
      flow_pass_pack(e->passes, e->post, e->packed, &e->layout);
    } else {
      flow_pass_pack(e->passes, e->flow[0][0], e->packed, &e->layout);
    }
  }
  gpu_timer_stamp(sl->timer, 4);
  if (with_flow)
    gpu_buffer_copy(sl->readback, 0, e->packed, 0, e->layout.layer_bytes);
  gpu_timer_stamp(sl->timer, 5);
  if (!gpu_fence_reset(sl->fence, error) || !gpu_context_check(e->gpu, e->label, error))
    return false;
  gpu_context_get_stats(e->gpu, &after);
  e->last_counts.dispatches = (int)(after.dispatches - before.dispatches);
  e->last_counts.barriers = (int)(after.barriers - before.barriers);
  if (with_flow) {
    sl->tag = tag;
    sl->prev_tag = e->cur_tag;
    e->count++;
    if (queued)
      *queued = true;
  }
  e->cur = fs;
  e->cur_tag = tag;
  return true;
}

bool
flow_engine_collect(FlowEngine *e, bool wait, FlowFrame *frame, GError **error)
{
  g_return_val_if_fail(e && frame, false);
  if (e->count == 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: nothing in flight", e->label);
    return false;
  }
  Slot *sl = &e->slots[e->head];
  if (!wait) {
    if (!gpu_fence_is_signaled(sl->fence))
      return false;
  } else if (!gpu_fence_wait(sl->fence, 10 * G_GUINT64_CONSTANT(1000000000), error)) {
    return false;
  }
  uint64_t ns[N_STAMPS];
  bool have_times = gpu_timer_read(sl->timer, true, ns);
  const uint8_t *map = gpu_buffer_get_map(sl->readback);
  *frame = (FlowFrame){
    .tag = sl->tag,
    .prev_tag = sl->prev_tag,
    .width = e->width,
    .height = e->height,
    .format = e->format,
    .u = map,
    .v = map + e->layout.v_offset,
    .slot = e->head,
  };
  for (int i = 0; i < FLOW_STAGE_COUNT; i++)
    frame->stage_ms[i] = have_times ? (double)(ns[i + 1] - ns[i]) * 1e-6 : 0.0;
  e->head = (e->head + 1) % e->in_flight;
  e->count--;
  return true;
}

void
flow_engine_release(FlowEngine *e, FlowFrame *frame)
{
  /* A slot is written again only by the in_flight-th following submit with a flow. */
  (void)e;
  frame->u = NULL;
  frame->v = NULL;
}

static void
copy_out(const FlowFrame *fr, const void *plane, float *dst)
{
  size_t n = (size_t)fr->width * fr->height;
  if (fr->format == FLOW_OUTPUT_FLOAT) {
    memcpy(dst, plane, n * sizeof(float));
    return;
  }
  const int16_t *s = plane;
  for (size_t i = 0; i < n; i++)
    dst[i] = s[i] == FLOW_S16_UNKNOWN ? FLOW_UNKNOWN : (float)s[i] / FLOW_SCALE;
}

bool
flow_engine_process(FlowEngine *e, const uint8_t *frame0, size_t stride0,
                    const uint8_t *frame1, size_t stride1, float *u, float *v, GError **error)
{
  g_return_val_if_fail(e->count == 0, false);
  flow_engine_reset(e);
  bool queued;
  if (!flow_engine_submit(e, frame0, stride0, 0, NULL, error) ||
      !flow_engine_submit(e, frame1, stride1, 1, &queued, error))
    return false;
  FlowFrame fr;
  if (!flow_engine_collect(e, true, &fr, error))
    return false;
  if (u)
    copy_out(&fr, fr.u, u);
  if (v)
    copy_out(&fr, fr.v, v);
  flow_engine_release(e, &fr);
  return true;
}
