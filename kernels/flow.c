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
  GpuBuffer *readback;     /* packed output, batch layers */
  GpuFence *fence;
  GpuTimer *timer;
  uint64_t id;             /* the submission in it; 0 = never used */
  int n;                   /* its inputs */
  int pair[FLOW_MAX_BATCH];
  uint64_t tag[FLOW_MAX_BATCH], prev_tag[FLOW_MAX_BATCH];
  bool queued[FLOW_MAX_BATCH], collected[FLOW_MAX_BATCH];
  int n_queued, n_collected;
  gint unreleased;         /* collected flows not released yet (atomic) */
} Slot;

/* Feature images: one holds every pair's latest frame at the pair's layers (the store);
 * a submission reads the previous frames from one image and writes the new ones into
 * another, by input position. Three, so that a submission not in pair order can gather
 * into one and write into another without touching the store. */
#define N_FEAT 3

struct FlowEngine {
  GpuContext *gpu;
  char *label;
  FlowParams p;
  FlowOutputFormat format;
  int in_flight, batch;
  int width, height, levels, n_dirs;

  FlowPasses *passes;
  GpuBuffer *upload;       /* batch frames, tight rows */
  GpuFence *upload_fence;  /* after the last upload from it */
  GpuImage *in8;           /* batch layers */
  GpuImage *img[FLOW_MAX_LEVELS];        /* levels 1.. (level 0 is in8 itself) */
  GpuImage *rows, *q, *terms, *tmp, *post;
  GpuImage *feat[N_FEAT][FLOW_MAX_LEVELS];
  GpuImage *flow[2][FLOW_MAX_LEVELS];     /* [direction][level] */
  GpuImage *spare[FLOW_MAX_LEVELS];       /* the median's output, swapped with flow */
  GpuBuffer *partials, *means, *packed;
  GpuBuffer *counters;     /* the features pass's per-layer counters, zero between uses */
  int partial_base[FLOW_MAX_LEVELS];
  FlowPackLayout layout;

  int store;               /* the feature image that holds the pairs' latest frames */
  bool has_prev[FLOW_MAX_BATCH];
  uint64_t prev_tag[FLOW_MAX_BATCH];
  Slot slots[MAX_IN_FLIGHT];
  uint64_t next_id;
  int pending;             /* queued flows not collected */
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
    for (int i = 0; i < N_FEAT; i++)
      gpu_image_free(e->feat[i][s]);
    for (int i = 0; i < 2; i++)
      gpu_image_free(e->flow[i][s]);
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

/* Floats of the means of one feature image: every frame position's N orientations at
 * every level (flow_pass_mean's index (b N + k) FLOW_MAX_LEVELS + level). */
static int
means_per_image(const FlowEngine *e)
{
  return e->batch * e->p.orientations * FLOW_MAX_LEVELS;
}

static bool
engine_alloc(FlowEngine *e, GError **error)
{
  int w0 = e->width, h0 = e->height, N = e->p.orientations, B = e->batch;
  if (!(e->in8 = make_image(e, "in", 0, w0, h0, GPU_FORMAT_R8, B, error)) ||
      !(e->rows = make_image(e, "rows", 0, w0, h0, GPU_FORMAT_RGBA32F,
                             flow_passes_row_layers(&e->p) * B, error)) ||
      !(e->q = make_image(e, "q", 0, w0, h0, GPU_FORMAT_RG32F, N * B, error)) ||
      !(e->terms = make_image(e, "terms", 0, w0, h0, GPU_FORMAT_RGBA32F, 2 * B, error)) ||
      !(e->tmp = make_image(e, "tmp", 0, w0, h0, GPU_FORMAT_RGBA32F, 2 * B, error)) ||
      !(e->post = make_image(e, "post", 0, w0, h0, GPU_FORMAT_RGBA32F, B, error)))
    return false;
  int partials = 0;
  for (int s = 0; s < e->levels; s++) {
    int w, h;
    flow_params_level_size(&e->p, s, &w, &h);
    if ((s > 0 && !(e->img[s] = make_image(e, "img", s, w, h, GPU_FORMAT_R32F, B, error))) ||
        !(e->spare[s] = make_image(e, "spare", s, w, h, GPU_FORMAT_RGBA32F, B, error)))
      return false;
    /* a batch of one ping-pongs between two images: the third is made for batches */
    for (int i = 0; i < (B > 1 ? N_FEAT : 2); i++) {
      g_autofree char *what = g_strdup_printf("feat%d-", i);
      if (!(e->feat[i][s] = make_image(e, what, s, w, h, GPU_FORMAT_RGBA32F, N * B, error)))
        return false;
    }
    for (int d = 0; d < e->n_dirs; d++)
      if (!(e->flow[d][s] = make_image(e, d ? "bwd" : "fwd", s, w, h, GPU_FORMAT_RGBA32F, B,
                                       error)))
        return false;
    e->partial_base[s] = partials;
    partials += N * B * flow_pass_features_groups(w, h);
  }
  flow_pack_layout(w0, h0, e->format == FLOW_OUTPUT_S16, &e->layout);
  size_t packed = (size_t)B * e->layout.layer_bytes;
  if (!(e->partials = make_buffer(e, "partials", 0, (size_t)partials * 4, GPU_BUFFER_STORAGE,
                                  error)) ||
      !(e->means = make_buffer(e, "means", 0, (size_t)N_FEAT * means_per_image(e) * 4,
                               GPU_BUFFER_STORAGE, error)) ||
      !(e->counters = make_buffer(e, "counters", 0, (size_t)N * B * FLOW_MAX_LEVELS * 4,
                                  GPU_BUFFER_STORAGE, error)) ||
      !gpu_buffer_fill_u32(e->counters, 0, error) ||
      !(e->packed = make_buffer(e, "packed", 0, packed, GPU_BUFFER_STORAGE, error)) ||
      !(e->upload = make_buffer(e, "upload", 0, (size_t)B * w0 * h0, GPU_BUFFER_UPLOAD,
                                error)) ||
      !(e->upload_fence = gpu_fence_new(e->gpu, error)))
    return false;
  for (int i = 0; i < e->in_flight; i++) {
    Slot *sl = &e->slots[i];
    if (!(sl->readback = make_buffer(e, "readback", i, packed, GPU_BUFFER_READBACK, error)) ||
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
  int batch = params->batch ? params->batch : 1;
  if (batch < 1 || batch > FLOW_MAX_BATCH) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "batch must be within 1..%d",
                FLOW_MAX_BATCH);
    return NULL;
  }
  g_autoptr(FlowEngine) e = g_new0(FlowEngine, 1);
  e->gpu = gpu;
  e->label = g_strdup(params->label ? params->label : "flow");
  e->p = params->params;
  e->format = params->output;
  e->in_flight = in_flight;
  e->batch = batch;
  e->width = e->p.width;
  e->height = e->p.height;
  e->levels = flow_params_get_levels(&e->p);
  e->n_dirs = e->p.fb_check ? 2 : 1;
  e->next_id = 1;
  if (!(e->passes = flow_passes_new(gpu, &e->p, error)) || !engine_alloc(e, error))
    return NULL;
  g_debug("%s: %dx%d, %d levels, %d orientations, %s, %d pairs, %d in flight", e->label,
          e->width, e->height, e->levels, e->p.orientations,
          e->p.fb_check ? "forward-backward check" : "forward only", e->batch, e->in_flight);
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
  return e->pending;
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
  for (int i = 0; i < e->batch; i++)
    e->has_prev[i] = false;
}

/* Filters the uploaded frames (the first n positions) into feature image `fi`: pyramid,
 * bank, features, means. */
static void
filter_frames(FlowEngine *e, int fi, int n)
{
  /* Level 0 is the 8-bit frame itself: the passes that read it do the ingest (§1). */
  for (int s = 1; s < e->levels; s++)
    flow_pass_reduce(e->passes, s > 1 ? e->img[s - 1] : e->in8, e->img[s]);
  for (int s = 0; s < e->levels; s++) {
    GpuImage *level = s > 0 ? e->img[s] : e->in8;
    int w = gpu_image_get_width(level), h = gpu_image_get_height(level);
    flow_pass_rows(e->passes, level, w, h, n, e->rows);
    flow_pass_columns(e->passes, e->rows, w, h, n, e->q);
    flow_pass_features_mean(e->passes, e->q, e->feat[fi][s], e->partials, e->partial_base[s],
                            e->counters, e->means, fi * means_per_image(e), s);
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

/* Coarse to fine from feature image `from` to `to` into direction d (§7). The prior of a
 * round is computed by its terms pass (§12): the upsampled coarser level in the first
 * round of a level, the median of the previous round's flow in the others. The median of
 * a level's last round is a pass of its own, except with `median_later` at level 0: there
 * flow[d][0] is left without it, for the forward-backward check that computes it. */
static void
run_direction(FlowEngine *e, int d, int from, int to, bool median_later)
{
  static const float zero[4] = { 0, 0, 0, 0 };
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
                            e->flow[d][s], e->terms, e->means, from * means_per_image(e), s);
      flow_pass_smooth_solve(e->passes, e->terms, e->tmp, e->flow[d][s]);
      flow_pass_fill(e->passes, e->flow[d][s], e->tmp, e->p.fill_iterations);
    }
    if (e->p.median && !(s == 0 && median_later)) {
      GpuImage *src = swap_spare(e, d, s);
      flow_pass_median(e->passes, src, e->flow[d][s]);
    }
  }
}

/* Copies the features and means of frame position `from_pos` of feature image `from`
 * to position `to_pos` of image `to` (every level). */
static bool
copy_features(FlowEngine *e, int to, int to_pos, int from, int from_pos, GError **error)
{
  int N = e->p.orientations;
  for (int s = 0; s < e->levels; s++)
    if (!gpu_image_copy_layers(e->feat[to][s], to_pos * N, e->feat[from][s], from_pos * N, N,
                               error))
      return false;
  size_t per = (size_t)N * FLOW_MAX_LEVELS * 4;
  gpu_buffer_copy(e->means, (size_t)to * means_per_image(e) * 4 + to_pos * per, e->means,
                  (size_t)from * means_per_image(e) * 4 + from_pos * per, per);
  return true;
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

static bool
slot_free(Slot *sl)
{
  return !sl->id || (sl->n_collected == sl->n_queued && g_atomic_int_get(&sl->unreleased) == 0);
}

static Slot *
free_slot(FlowEngine *e)
{
  for (int i = 0; i < e->in_flight; i++)
    if (slot_free(&e->slots[i]))
      return &e->slots[i];
  return NULL;
}

bool
flow_engine_can_submit(FlowEngine *e)
{
  g_return_val_if_fail(e, false);
  return free_slot(e) != NULL;
}

bool
flow_engine_submit_batch(FlowEngine *e, const FlowInput *in, int n, bool *queued,
                         uint64_t *id, GError **error)
{
  g_return_val_if_fail(e && in && n >= 1 && n <= e->batch, false);
  bool seen[FLOW_MAX_BATCH] = { false }, with_flow[FLOW_MAX_BATCH];
  bool any_flow = false, in_order = n == e->batch;
  for (int i = 0; i < n; i++) {
    g_return_val_if_fail(in[i].pair >= 0 && in[i].pair < e->batch && !seen[in[i].pair] &&
                         in[i].frame && in[i].stride >= (size_t)e->width, false);
    seen[in[i].pair] = true;
    with_flow[i] = e->has_prev[in[i].pair] && !in[i].reset;
    any_flow |= with_flow[i];
    in_order &= in[i].pair == i;
    if (queued)
      queued[i] = false;
  }
  if (id)
    *id = 0;
  if (gpu_context_is_failed(e->gpu)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_FAILED, "%s: the GPU context has failed", e->label);
    return false;
  }
  Slot *sl = any_flow ? free_slot(e) : NULL;
  if (any_flow && !sl) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: %d submissions with flows already in "
                "flight", e->label, e->in_flight);
    return false;
  }
  /* The one upload buffer may still feed the previous submission's queued uploads: wait
   * for the GPU to have taken them (at once when that work has started). */
  if (!gpu_fence_wait(e->upload_fence, 10 * G_GUINT64_CONSTANT(1000000000), error))
    return false;
  size_t plane = (size_t)e->width * e->height;
  uint8_t *up = gpu_buffer_get_map(e->upload);
  for (int i = 0; i < n; i++)
    copy_plane(up + i * plane, in[i].frame, in[i].stride, e->width, e->height);
  /* In pair order the store is where the passes read the previous frames, and the new
   * ones become the store; otherwise the previous frames are gathered by position into
   * `prev` and the new ones go back to the store after the flow. */
  int store = e->store, prev, cur;
  if (in_order) {
    prev = store;
    cur = (store + 1) % (e->batch > 1 ? N_FEAT : 2);   /* a batch of one has two images */
  } else {
    prev = (store + 1) % N_FEAT;
    cur = (store + 2) % N_FEAT;
  }

  GpuStats before, after;
  gpu_context_get_stats(e->gpu, &before);
  GpuTimer *timer = sl ? sl->timer : NULL;
  if (timer)
    gpu_timer_stamp(timer, 0);
  GError *ignored = NULL;
  for (int i = 0; i < n; i++)
    gpu_image_upload_from_buffer(e->in8, i, e->upload, i * plane, e->width, &ignored);
  g_clear_error(&ignored);
  if (!gpu_fence_reset(e->upload_fence, error))
    return false;
  if (timer)
    gpu_timer_stamp(timer, 1);
  flow_passes_set_frames(e->passes, e->batch, n);
  filter_frames(e, cur, n);
  if (timer)
    gpu_timer_stamp(timer, 2);
  if (any_flow) {
    for (int i = 0; !in_order && i < n; i++)
      if (with_flow[i] && !copy_features(e, prev, i, store, in[i].pair, error))
        return false;
    /* with the check, the forward flow's last median is computed by it (the positions
     * without a previous frame are computed too, and not read back) */
    run_direction(e, 0, prev, cur, e->p.fb_check);
    if (e->n_dirs > 1)
      run_direction(e, 1, cur, prev, false);
  }
  if (timer)
    gpu_timer_stamp(timer, 3);
  if (any_flow) {
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
  if (timer)
    gpu_timer_stamp(timer, 4);
  if (any_flow)
    gpu_buffer_copy(sl->readback, 0, e->packed, 0, (size_t)n * e->layout.layer_bytes);
  if (timer)
    gpu_timer_stamp(timer, 5);
  /* the new frames are the pairs' previous ones from now on */
  if (in_order) {
    e->store = cur;
  } else {
    for (int i = 0; i < n; i++)
      if (!copy_features(e, store, in[i].pair, cur, i, error))
        return false;
  }
  flow_passes_set_frames(e->passes, 1, 1);
  if ((sl && !gpu_fence_reset(sl->fence, error)) || !gpu_context_check(e->gpu, e->label, error))
    return false;
  gpu_context_get_stats(e->gpu, &after);
  e->last_counts.dispatches = (int)(after.dispatches - before.dispatches);
  e->last_counts.barriers = (int)(after.barriers - before.barriers);
  if (sl) {
    sl->id = e->next_id++;
    sl->n = n;
    sl->n_queued = sl->n_collected = 0;
    g_atomic_int_set(&sl->unreleased, 0);
    for (int i = 0; i < n; i++) {
      sl->pair[i] = in[i].pair;
      sl->tag[i] = in[i].tag;
      sl->prev_tag[i] = e->prev_tag[in[i].pair];
      sl->queued[i] = with_flow[i];
      sl->collected[i] = false;
      sl->n_queued += with_flow[i];
      if (queued)
        queued[i] = with_flow[i];
    }
    e->pending += sl->n_queued;
    if (id)
      *id = sl->id;
  }
  for (int i = 0; i < n; i++) {
    e->has_prev[in[i].pair] = true;
    e->prev_tag[in[i].pair] = in[i].tag;
  }
  return true;
}

bool
flow_engine_submit(FlowEngine *e, const uint8_t *frame, size_t stride, uint64_t tag,
                   bool *queued, GError **error)
{
  g_return_val_if_fail(e && frame && stride >= (size_t)e->width, false);
  FlowInput in = { .pair = 0, .frame = frame, .stride = stride, .tag = tag };
  return flow_engine_submit_batch(e, &in, 1, queued, NULL, error);
}

/* Waits for slot sl (wait), then fills `frame` with its input i and marks it collected. */
static bool
take(FlowEngine *e, Slot *sl, int i, bool wait, FlowFrame *frame, GError **error)
{
  if (!wait) {
    if (!gpu_fence_is_signaled(sl->fence))
      return false;
  } else if (!gpu_fence_wait(sl->fence, 10 * G_GUINT64_CONSTANT(1000000000), error)) {
    return false;
  }
  uint64_t ns[N_STAMPS];
  bool have_times = gpu_timer_read(sl->timer, true, ns);
  const uint8_t *map = (const uint8_t *)gpu_buffer_get_map(sl->readback) +
                       (size_t)i * e->layout.layer_bytes;
  *frame = (FlowFrame){
    .tag = sl->tag[i],
    .prev_tag = sl->prev_tag[i],
    .pair = sl->pair[i],
    .width = e->width,
    .height = e->height,
    .format = e->format,
    .u = map,
    .v = map + e->layout.v_offset,
    .batch_flows = sl->n_queued,
    .submission = sl->id,
    .slot = (int)(sl - e->slots),
  };
  for (int k = 0; k < FLOW_STAGE_COUNT; k++)
    frame->stage_ms[k] = have_times ? (double)(ns[k + 1] - ns[k]) * 1e-6 : 0.0;
  sl->collected[i] = true;
  sl->n_collected++;
  g_atomic_int_inc(&sl->unreleased);
  e->pending--;
  return true;
}

bool
flow_engine_collect(FlowEngine *e, bool wait, FlowFrame *frame, GError **error)
{
  g_return_val_if_fail(e && frame, false);
  Slot *oldest = NULL;
  for (int k = 0; k < e->in_flight; k++) {
    Slot *sl = &e->slots[k];
    if (sl->id && sl->n_collected < sl->n_queued && (!oldest || sl->id < oldest->id))
      oldest = sl;
  }
  if (!oldest) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: nothing in flight", e->label);
    return false;
  }
  for (int i = 0; i < oldest->n; i++)
    if (oldest->queued[i] && !oldest->collected[i])
      return take(e, oldest, i, wait, frame, error);
  g_assert_not_reached();
}

bool
flow_engine_collect_at(FlowEngine *e, uint64_t id, int index, bool wait, FlowFrame *frame,
                       GError **error)
{
  g_return_val_if_fail(e && frame, false);
  for (int k = 0; id && k < e->in_flight; k++) {
    Slot *sl = &e->slots[k];
    if (sl->id != id)
      continue;
    if (index < 0 || index >= sl->n || !sl->queued[index] || sl->collected[index])
      break;
    return take(e, sl, index, wait, frame, error);
  }
  g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: no flow %d of submission %" G_GUINT64_FORMAT
              " to collect", e->label, index, id);
  return false;
}

void
flow_engine_release(FlowEngine *e, FlowFrame *frame)
{
  g_return_if_fail(e && frame && frame->slot >= 0 && frame->slot < e->in_flight);
  if (!frame->u)
    return;   /* released already */
  g_atomic_int_add(&e->slots[frame->slot].unreleased, -1);
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
  g_return_val_if_fail(e->pending == 0, false);
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
