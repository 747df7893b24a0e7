/* stereo.c: the stereo engine: GPU objects made once, the pairs it serves, and the
 * submit/collect queue of batch slots (upload, readback, fences). The passes of a batch
 * are in stereo-chain.c. */
#include "kernels/stereo-private.h"

#include <math.h>
#include <string.h>

#define N_STAMPS (STEREO_STAGE_COUNT + 1)

static const char *const stage_names[STEREO_STAGE_COUNT] = {
  [STEREO_STAGE_UPLOAD] = "upload",
  [STEREO_STAGE_PYRAMID] = "pyramid",
  [STEREO_STAGE_FILTER] = "filter",
  [STEREO_STAGE_SEARCH] = "search",
  [STEREO_STAGE_PHASE] = "phase",
  [STEREO_STAGE_POST] = "post",
  [STEREO_STAGE_READBACK] = "readback",
};

const char *
stereo_stage_name(StereoStage stage)
{
  g_return_val_if_fail(stage < STEREO_STAGE_COUNT, "?");
  return stage_names[stage];
}

void
stereo_engine_free(StereoEngine *e)
{
  if (!e)
    return;
  for (int i = 0; i < STEREO_MAX_IN_FLIGHT; i++) {
    StereoSlot *sl = &e->slots[i];
    if (sl->state != SLOT_FREE && g_atomic_int_get(&sl->held) > 0)
      g_warning("%s: freed with %d frames still held", e->label, g_atomic_int_get(&sl->held));
    gpu_buffer_free(sl->upload);
    gpu_buffer_free(sl->readback);
    gpu_buffer_free(sl->layers);
    gpu_fence_free(sl->fence);
    gpu_fence_free(sl->upload_fence);
    gpu_timer_free(sl->timer);
  }
  for (int s = 0; s < STEREO_MAX_LEVELS; s++) {
    gpu_image_free(e->img[s]);
    gpu_image_free(e->quad[s]);
    gpu_image_free(e->state[s][0]);
    gpu_image_free(e->state[s][1]);
  }
  gpu_image_free(e->in8);
  gpu_image_free(e->map);
  gpu_image_free(e->post);
  gpu_image_free(e->med);
  gpu_image_free(e->terms);
  gpu_buffer_free(e->partials);
  gpu_buffer_free(e->means);
  gpu_buffer_free(e->counters);
  gpu_buffer_free(e->packed);
  stereo_passes_free(e->passes);
  g_free(e->label);
  g_free(e);
}

static GpuImage *
make_image(StereoEngine *e, const char *what, int s, int w, int h, GpuFormat fmt,
           int layers, GError **error)
{
  g_autofree char *label = g_strdup_printf("%s/%s%d", e->label, what, s);
  GpuImageParams ip = { .label = label, .width = w, .height = h, .layers = layers,
                        .format = fmt };
  return gpu_image_new(e->gpu, &ip, error);
}

static GpuBuffer *
make_buffer(StereoEngine *e, const char *what, int i, size_t size, GpuBufferUsage usage,
            GError **error)
{
  g_autofree char *label = g_strdup_printf("%s/%s%d", e->label, what, i);
  GpuBufferParams bp = { .label = label, .size = size, .usage = usage };
  return gpu_buffer_new(e->gpu, &bp, error);
}

void
stereo_rectify_map_compute(const StereoCalib *calib, float *uv)
{
  int w = calib->width, h = calib->height;
  for (int side = 0; side < 2; side++) {
    float *out = uv + (size_t)side * 2 * w * h;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double u, v;
        calib_rectified_to_raw(calib, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
        out[2 * ((size_t)y * w + x)] = (float)u;
        out[2 * ((size_t)y * w + x) + 1] = (float)v;
      }
  }
}

/* Uploads pair `pair`'s rectification map (computed here unless given). */
static bool
upload_map(StereoEngine *e, int pair, const StereoCalib *calib, const float *given,
           GError **error)
{
  int w = e->width, h = e->height;
  g_autofree float *uv = NULL;
  if (!given) {
    uv = g_new(float, 4 * (size_t)w * h);
    stereo_rectify_map_compute(calib, uv);
    given = uv;
  }
  for (int side = 0; side < 2; side++)
    if (!gpu_image_upload(e->map, 2 * pair + side, given + (size_t)side * 2 * w * h,
                          (size_t)w * 2 * sizeof(float), error))
      return false;
  return true;
}

static bool
engine_alloc(StereoEngine *e, const float *map, bool defer_maps, GError **error)
{
  int w0 = e->width, h0 = e->height, B = e->batch;
  if (!(e->in8 = make_image(e, "in", 0, w0, h0, GPU_FORMAT_R8, 2 * B, error)))
    return false;
  int partials = 0;
  for (int s = 0; s <= e->start; s++) {
    int w, h;
    stereo_params_level_size(&e->p, s, &w, &h);
    if (!(e->img[s] = make_image(e, "img", s, w, h, GPU_FORMAT_RG32F, B, error)) ||
        !(e->quad[s] = make_image(e, "quad", s, w, h, STEREO_QUAD_FORMAT, B, error)))
      return false;
    for (int k = 0; k < 2; k++)
      if (!(e->state[s][k] = make_image(e, k ? "stateB" : "stateA", s, w, h,
                                        GPU_FORMAT_RGBA32F, e->n_dirs * B, error)))
        return false;
    e->partial_base[s] = partials;
    partials += B * stereo_pass_quadrature_groups(e->passes, w, h);
  }
  if (!(e->post = make_image(e, "post", 0, w0, h0, GPU_FORMAT_RGBA32F, B, error)))
    return false;
  if (e->p.densify && !(e->med = make_image(e, "median", 0, w0, h0, GPU_FORMAT_R32F, B, error)))
    return false;
  if (stereo_passes_phase_split(e->passes, w0, h0) &&
      !(e->terms = make_image(e, "terms", 0, w0, h0, GPU_FORMAT_RGBA32F, e->n_dirs * B, error)))
    return false;
  size_t levels = (size_t)B * STEREO_MAX_LEVELS;
  if (!(e->partials = make_buffer(e, "partials", 0, (size_t)partials * 8, GPU_BUFFER_STORAGE,
                                  error)) ||
      !(e->means = make_buffer(e, "means", 0, levels * 8, GPU_BUFFER_STORAGE, error)) ||
      !(e->counters = make_buffer(e, "counters", 0, levels * 4, GPU_BUFFER_STORAGE, error)) ||
      !gpu_buffer_fill_u32(e->counters, 0, error))
    return false;
  if (e->rectify) {
    if (!(e->map = make_image(e, "rectify-map", 0, w0, h0, GPU_FORMAT_RG32F, 2 * B, error)))
      return false;
    /* every pair starts with the engine's calibration: one map, uploaded B times */
    if (!defer_maps) {
      g_autofree float *uv = NULL;
      if (!map) {
        uv = g_new(float, 4 * (size_t)w0 * h0);
        stereo_rectify_map_compute(&e->pairs[0].calib, uv);
        map = uv;
      }
      for (int k = 0; k < B; k++)
        if (!upload_map(e, k, &e->pairs[0].calib, map, error))
          return false;
    }
  }
  stereo_pack_layout(w0, h0, e->format == STEREO_OUTPUT_S16, e->depth, &e->layout);
  if (e->metres) {   /* one float per pixel after the u16 plane (pack.comp writes it) */
    e->metres_offset = e->layout.layer_bytes;
    e->layout.layer_bytes += 4 * (size_t)w0 * h0;
  }
  /* The pack pass writes a buffer on the GPU that a copy moves into the slot's readback
   * buffer: writing the readback buffer (host memory) directly from the pack pass took
   * 29.8 ms a batch of 16 1080p pairs against 17.5 on an H100
   * (bench/results/2026-12-06-h100-variants) */
  if (!(e->packed = make_buffer(e, "packed", 0, B * e->layout.layer_bytes, GPU_BUFFER_STORAGE,
                                error)))
    return false;
  for (int i = 0; i < e->in_flight; i++) {
    StereoSlot *sl = &e->slots[i];
    if (!(sl->upload = make_buffer(e, "upload", i, 2 * (size_t)B * w0 * h0, GPU_BUFFER_UPLOAD,
                                   error)) ||
        !(sl->readback = make_buffer(e, "readback", i, B * e->layout.layer_bytes,
                                     GPU_BUFFER_READBACK, error)) ||
        !(sl->layers = make_buffer(e, "layers", i, B * sizeof(StereoLayerParams),
                                   GPU_BUFFER_STORAGE, error)) ||
        !(sl->fence = gpu_fence_new(e->gpu, error)) ||
        !(sl->upload_fence = gpu_fence_new(e->gpu, error)) ||
        !(sl->timer = gpu_timer_new(e->gpu, N_STAMPS, error)))
      return false;
  }
  return gpu_context_check(e->gpu, "stereo engine allocation", error);
}

StereoEngine *
stereo_engine_new(GpuContext *gpu, const StereoEngineParams *params, GError **error)
{
  g_return_val_if_fail(gpu != NULL && params != NULL, NULL);
  if (!stereo_params_validate(&params->params, error))
    return NULL;
  int in_flight = params->in_flight ? params->in_flight : 1;
  int batch = params->batch ? params->batch : 1;
  if (in_flight < 1 || in_flight > STEREO_MAX_IN_FLIGHT || batch < 1 ||
      batch > STEREO_MAX_BATCH) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "in_flight must be within 1..%d and batch within 1..%d", STEREO_MAX_IN_FLIGHT,
                STEREO_MAX_BATCH);
    return NULL;
  }
  g_autoptr(StereoEngine) e = g_new0(StereoEngine, 1);
  e->gpu = gpu;
  e->label = g_strdup(params->label ? params->label : "stereo");
  e->p = params->params;
  e->format = params->output;
  e->in_flight = in_flight;
  e->batch = batch;
  e->width = e->p.width;
  e->height = e->p.height;
  e->search = stereo_params_use_search(&e->p);
  e->refine = stereo_params_use_refine(&e->p);
  e->start = stereo_params_start_level(&e->p);
  stereo_params_search_range(&e->p, &e->t_min, &e->t_max);
  e->n_dirs = e->p.lr_check ? 2 : 1;
  e->next_id = 1;
  if (params->calib) {
    e->rectify = true;
    if (params->calib->width != e->width || params->calib->height != e->height) {
      g_set_error(error, STEREO_PARAMS_ERROR, 0,
                  "%s: the calibration is for %dx%d images, the engine for %dx%d", e->label,
                  params->calib->width, params->calib->height, e->width, e->height);
      return NULL;
    }
  }
  if (params->depth && !params->calib) {
    g_set_error(error, STEREO_PARAMS_ERROR, 0, "%s: depth output needs a calibration",
                e->label);
    return NULL;
  }
  if (params->metres && !params->depth) {
    g_set_error(error, STEREO_PARAMS_ERROR, 0, "%s: the metres plane needs the depth output",
                e->label);
    return NULL;
  }
  e->depth = params->depth;
  e->metres = params->metres;
  for (int k = 0; k < batch; k++) {
    e->pairs[k].has_calib = e->rectify;
    if (e->rectify)
      e->pairs[k].calib = *params->calib;
    e->pairs[k].min_magnitude = e->p.min_magnitude;
  }

  e->passes = stereo_passes_new_async(gpu, &e->p, params->async_programs, error);
  if (!e->passes || !engine_alloc(e, params->map, params->defer_maps, error))
    return NULL;
  g_debug("%s: %dx%d, %d levels, phase from level %d, search %s (t %d..%d), batches of %d, "
          "%d in flight", e->label, e->width, e->height, stereo_params_get_levels(&e->p),
          e->start, e->search ? (e->refine ? "on, level-0 refinement" : "on") : "off",
          e->t_min, e->t_max, e->batch, e->in_flight);
  return g_steal_pointer(&e);
}

const StereoParams *
stereo_engine_get_params(StereoEngine *e)
{
  return &e->p;
}

bool
stereo_engine_poll_ready(StereoEngine *e, GError **error)
{
  g_return_val_if_fail(e, false);
  return stereo_passes_poll(e->passes, error);
}

int
stereo_engine_get_batch(StereoEngine *e)
{
  return e->batch;
}

bool
stereo_engine_set_pair(StereoEngine *e, int pair, const StereoPairParams *pp, GError **error)
{
  g_return_val_if_fail(e && pp && pair >= 0 && pair < e->batch, false);
  if (!(pp->min_magnitude >= 0.0 && pp->min_magnitude <= 0.5)) {
    g_set_error(error, STEREO_PARAMS_ERROR, 0, "%s: min_magnitude: must be within 0..0.5",
                e->label);
    return false;
  }
  if (pp->calib) {
    if (!e->rectify) {
      g_set_error(error, STEREO_PARAMS_ERROR, 0,
                  "%s: a calibration for pair %d of an engine made without one", e->label, pair);
      return false;
    }
    if (pp->calib->width != e->width || pp->calib->height != e->height) {
      g_set_error(error, STEREO_PARAMS_ERROR, 0,
                  "%s: the calibration of pair %d is for %dx%d images, the engine for %dx%d",
                  e->label, pair, pp->calib->width, pp->calib->height, e->width, e->height);
      return false;
    }
    if (!upload_map(e, pair, pp->calib, pp->map, error))
      return false;
    e->pairs[pair].calib = *pp->calib;
  }
  e->pairs[pair].min_magnitude = pp->min_magnitude;
  return true;
}

bool
stereo_engine_copy_pair(StereoEngine *e, int pair, StereoEngine *src, int src_pair,
                        double min_magnitude, GError **error)
{
  g_return_val_if_fail(e && src && pair >= 0 && pair < e->batch && src_pair >= 0 &&
                       src_pair < src->batch, false);
  if (e->rectify != src->rectify || e->width != src->width || e->height != src->height) {
    g_set_error(error, STEREO_PARAMS_ERROR, 0,
                "%s: pair %d cannot take over pair %d of %s (another size or calibration)",
                e->label, pair, src_pair, src->label);
    return false;
  }
  if (e->rectify)
    for (int side = 0; side < 2; side++)
      if (!gpu_image_copy_layer(e->map, 2 * pair + side, src->map, 2 * src_pair + side, error))
        return false;
  e->pairs[pair] = src->pairs[src_pair];
  if (min_magnitude >= 0.0)
    e->pairs[pair].min_magnitude = min_magnitude;
  return true;
}

void
stereo_engine_get_last_counts(StereoEngine *e, StereoWorkCounts *counts)
{
  *counts = e->last_counts;
}

int
stereo_engine_pending(StereoEngine *e)
{
  int n = 0;
  for (int q = 0; q < e->queued; q++) {
    StereoSlot *sl = &e->slots[e->queue[q]];
    n += sl->n - sl->collected;
  }
  return n;
}

/* A slot whose last batch was collected and whose frames were all released. */
static StereoSlot *
free_slot(StereoEngine *e)
{
  for (int i = 0; i < e->in_flight; i++) {
    StereoSlot *sl = &e->slots[i];
    if (sl->state == SLOT_DRAINED && g_atomic_int_get(&sl->held) == 0)
      sl->state = SLOT_FREE;
    if (sl->state == SLOT_FREE)
      return sl;
  }
  return NULL;
}

bool
stereo_engine_can_submit(StereoEngine *e)
{
  return free_slot(e) != NULL;
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

/* Queues the uploads of the batch's planes into in8 (layers 2k, 2k+1). */
static bool
upload_inputs(StereoEngine *e, StereoSlot *sl, const StereoInput *in, int n, GError **error)
{
  size_t plane = (size_t)e->width * e->height;
  uint8_t *map = gpu_buffer_get_map(sl->upload);
  for (int k = 0; k < n; k++) {
    for (int side = 0; side < 2; side++) {
      size_t stride = side ? in[k].right_stride : in[k].left_stride;
      GpuBuffer *buf = in[k].buffer;
      size_t off = side ? in[k].right_offset : in[k].left_offset;
      if (!buf) {
        off = (2 * (size_t)k + side) * plane;
        copy_plane(map + off, side ? in[k].right : in[k].left, stride, e->width, e->height);
        buf = sl->upload;
        stride = e->width;
      }
      if (!gpu_image_upload_from_buffer(e->in8, 2 * k + side, buf, off, stride, error))
        return false;
    }
  }
  return true;
}

bool
stereo_engine_submit_batch(StereoEngine *e, const StereoInput *in, int n, uint64_t *id,
                           GError **error)
{
  g_return_val_if_fail(e && in && n >= 1 && n <= e->batch, false);
  for (int k = 0; k < n; k++) {
    g_return_val_if_fail(in[k].pair >= 0 && in[k].pair < e->batch, false);
    g_return_val_if_fail(in[k].left_stride >= (size_t)e->width &&
                         in[k].right_stride >= (size_t)e->width, false);
    g_return_val_if_fail(in[k].buffer || (in[k].left && in[k].right), false);
  }
  if (gpu_context_is_failed(e->gpu)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_FAILED, "%s: the GPU context has failed", e->label);
    return false;
  }
  StereoSlot *sl = free_slot(e);
  if (!sl) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: every batch slot is in flight or holds frames not yet released", e->label);
    return false;
  }
  StereoLayerParams lp[STEREO_MAX_BATCH];
  for (int k = 0; k < n; k++) {
    const StereoPair *p = &e->pairs[in[k].pair];
    double plane[3] = { e->p.ground[0], e->p.ground[1], e->p.ground[2] };
    if (p->has_calib)
      calib_ground_plane(&p->calib, plane);   /* keeps `ground` without a pose */
    lp[k] = (StereoLayerParams){
      .pair = in[k].pair,
      .min_magnitude = (float)p->min_magnitude,
      .fb_mm = p->has_calib ? (float)(1000.0 * calib_focal(&p->calib) * calib_baseline(&p->calib))
                            : 0.0f,
      .doffs = p->has_calib ? (float)calib_doffs(&p->calib) : 0.0f,
      .metres_offset = e->metres ? (int32_t)(e->metres_offset / 4) : -1,
      .ground_a = (float)plane[0],
      .ground_b = (float)plane[1],
      .ground_c = (float)plane[2],
    };
    sl->tags[k] = in[k].tag;
    sl->pairs[k] = in[k].pair;
  }
  GpuStats before, after;
  gpu_context_get_stats(e->gpu, &before);
  gpu_timer_stamp(sl->timer, 0);
  if (!gpu_buffer_write(sl->layers, 0, lp, (size_t)n * sizeof lp[0], error) ||
      !upload_inputs(e, sl, in, n, error) || !gpu_fence_reset(sl->upload_fence, error))
    return false;
  sl->n = n;
  stereo_chain_run(e, sl);
  if (!gpu_fence_reset(sl->fence, error) || !gpu_context_check(e->gpu, e->label, error))
    return false;
  gpu_context_get_stats(e->gpu, &after);
  e->last_counts.dispatches = (int)(after.dispatches - before.dispatches);
  e->last_counts.barriers = (int)(after.barriers - before.barriers);
  sl->state = SLOT_QUEUED;
  sl->collected = 0;
  sl->inputs_done = false;
  sl->id = e->next_id++;
  e->queue[e->queued++] = (int)(sl - e->slots);
  if (id)
    *id = sl->id;
  return true;
}

bool
stereo_engine_inputs_done(StereoEngine *e, uint64_t id)
{
  for (int i = 0; i < e->in_flight; i++) {
    StereoSlot *sl = &e->slots[i];
    if (sl->id != id || sl->state == SLOT_FREE)
      continue;
    if (!sl->inputs_done)
      sl->inputs_done = gpu_fence_is_signaled(sl->upload_fence);
    return sl->inputs_done;
  }
  return true;   /* long done: its slot was reused or freed */
}

bool
stereo_engine_submit(StereoEngine *e, const uint8_t *left, size_t left_stride,
                     const uint8_t *right, size_t right_stride, uint64_t tag, GError **error)
{
  g_return_val_if_fail(e && left && right, false);
  StereoInput in = { .pair = 0, .tag = tag, .left = left, .right = right,
                     .left_stride = left_stride, .right_stride = right_stride };
  return stereo_engine_submit_batch(e, &in, 1, NULL, error);
}

bool
stereo_engine_collect(StereoEngine *e, bool wait, StereoFrame *frame, GError **error)
{
  g_return_val_if_fail(e && frame, false);
  if (e->queued == 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: nothing in flight", e->label);
    return false;
  }
  int si = e->queue[0];
  StereoSlot *sl = &e->slots[si];
  if (sl->collected == 0) {
    if (!wait) {
      if (!gpu_fence_is_signaled(sl->fence))
        return false;
    } else if (!gpu_fence_wait(sl->fence, 10 * G_GUINT64_CONSTANT(1000000000), error)) {
      return false;
    }
    sl->inputs_done = true;
    uint64_t ns[N_STAMPS];
    bool have = gpu_timer_read(sl->timer, true, ns);
    for (int i = 0; i < STEREO_STAGE_COUNT; i++)
      sl->stage_ms[i] = have ? (double)(ns[i + 1] - ns[i]) * 1e-6 : 0.0;
  }
  int k = sl->collected++;
  g_atomic_int_inc(&sl->held);
  *frame = (StereoFrame){
    .tag = sl->tags[k],
    .pair = sl->pairs[k],
    .width = e->width,
    .height = e->height,
    .format = e->format,
    .batch_pairs = sl->n,
    .submission = sl->id,
    .slot = si,
  };
  memcpy(frame->stage_ms, sl->stage_ms, sizeof frame->stage_ms);
  const uint8_t *map = (const uint8_t *)gpu_buffer_get_map(sl->readback) +
                       (size_t)k * e->layout.layer_bytes;
  frame->disparity = map;
  frame->confidence = map + e->layout.conf_offset;
  frame->depth = e->layout.depth ? (const uint16_t *)(map + e->layout.depth_offset) : NULL;
  frame->metres = e->metres ? (const float *)(map + e->metres_offset) : NULL;
  if (sl->collected == sl->n) {
    sl->state = SLOT_DRAINED;
    memmove(e->queue, e->queue + 1, (size_t)(--e->queued) * sizeof e->queue[0]);
  }
  return true;
}

void
stereo_engine_release(StereoEngine *e, StereoFrame *frame)
{
  g_return_if_fail(e && frame && frame->slot >= 0 && frame->slot < e->in_flight);
  if (!frame->disparity)
    return;   /* released already */
  g_atomic_int_add(&e->slots[frame->slot].held, -1);
  frame->disparity = NULL;
  frame->confidence = NULL;
  frame->depth = NULL;
  frame->metres = NULL;
}

bool
stereo_engine_process(StereoEngine *e, const uint8_t *left, size_t left_stride,
                      const uint8_t *right, size_t right_stride, float *disparity,
                      uint8_t *confidence, GError **error)
{
  return stereo_engine_process_depth(e, left, left_stride, right, right_stride, disparity,
                                     confidence, NULL, NULL, error);
}

bool
stereo_engine_process_full(StereoEngine *e, const uint8_t *left, size_t left_stride,
                           const uint8_t *right, size_t right_stride, float *disparity,
                           uint8_t *confidence, uint16_t *depth, GError **error)
{
  return stereo_engine_process_depth(e, left, left_stride, right, right_stride, disparity,
                                     confidence, depth, NULL, error);
}

bool
stereo_engine_process_depth(StereoEngine *e, const uint8_t *left, size_t left_stride,
                            const uint8_t *right, size_t right_stride, float *disparity,
                            uint8_t *confidence, uint16_t *depth, float *metres,
                            GError **error)
{
  g_return_val_if_fail(depth == NULL || e->layout.depth, false);
  g_return_val_if_fail(metres == NULL || e->metres, false);
  g_return_val_if_fail(disparity != NULL, false);
  if (e->queued > 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: process() needs an idle engine (%d pairs in flight)", e->label,
                stereo_engine_pending(e));
    return false;
  }
  if (!stereo_engine_submit(e, left, left_stride, right, right_stride, 0, error))
    return false;
  StereoFrame f;
  if (!stereo_engine_collect(e, true, &f, error))
    return false;
  size_t n = (size_t)e->width * e->height;
  if (f.format == STEREO_OUTPUT_FLOAT) {
    memcpy(disparity, f.disparity, n * sizeof(float));
  } else {
    const int16_t *s = f.disparity;
    for (size_t i = 0; i < n; i++)
      disparity[i] = s[i] == STEREO_DISPARITY_INVALID ? NAN
                                                      : (float)s[i] / STEREO_DISPARITY_SCALE;
  }
  if (confidence)
    memcpy(confidence, f.confidence, n);
  if (depth)
    memcpy(depth, f.depth, n * sizeof(uint16_t));
  if (metres)
    memcpy(metres, f.metres, n * sizeof(float));
  stereo_engine_release(e, &f);
  return true;
}
