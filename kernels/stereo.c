/* stereo.c: the stereo engine: GPU objects made once, the per-pair pass chain, and the
 * submit/collect ring of upload and readback slots. */
#include "kernels/stereo.h"
#include "kernels/stereo-passes.h"

#include <math.h>
#include <string.h>

#define MAX_IN_FLIGHT 8
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

typedef struct {
  GpuBuffer *upload;      /* left plane then right plane, tight rows */
  GpuBuffer *readback;    /* packed output */
  GpuFence *fence;
  GpuTimer *timer;
  uint64_t tag;
} Slot;

struct StereoEngine {
  GpuContext *gpu;
  char *label;
  StereoParams p;
  StereoOutputFormat format;
  int in_flight;
  int width, height;
  int start;              /* coarsest level the phase stage runs on */
  bool search;
  bool refine;            /* §5b at level 0 */
  int t_min, t_max;
  int n_dirs;

  StereoPasses *passes;
  GpuImage *in8;
  GpuImage *img[STEREO_MAX_LEVELS];
  GpuImage *quad[STEREO_MAX_LEVELS];
  GpuImage *state[STEREO_MAX_LEVELS][2];   /* ping-pong disparity state, n_dirs layers */
  GpuImage *post;          /* post-processing result: (d, state, k, 0) */
  GpuBuffer *partials, *counters, *means, *packed;
  int partial_base[STEREO_MAX_LEVELS];
  StereoPackLayout layout;
  bool has_calib;
  StereoCalib calib;
  GpuImage *map;          /* rectification map, RG32F, layers left/right */

  StereoWorkCounts last_counts;
  Slot slots[MAX_IN_FLIGHT];
  int head, count;        /* oldest pending slot, number pending */
};

void
stereo_engine_free(StereoEngine *e)
{
  if (!e)
    return;
  for (int i = 0; i < MAX_IN_FLIGHT; i++) {
    gpu_buffer_free(e->slots[i].upload);
    gpu_buffer_free(e->slots[i].readback);
    gpu_fence_free(e->slots[i].fence);
    gpu_timer_free(e->slots[i].timer);
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

/* The rectification map: for every rectified pixel its raw (u, v), left in layer 0 and
 * right in layer 1, computed once in double from the calibration. */
static bool
upload_rectify_map(StereoEngine *e, GError **error)
{
  int w = e->width, h = e->height;
  if (!(e->map = make_image(e, "rectify-map", 0, w, h, GPU_FORMAT_RG32F, 2, error)))
    return false;
  g_autofree float *uv = g_new(float, 2 * (size_t)w * h);
  for (int side = 0; side < 2; side++) {
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        double u, v;
        calib_rectified_to_raw(&e->calib, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
        uv[2 * ((size_t)y * w + x)] = (float)u;
        uv[2 * ((size_t)y * w + x) + 1] = (float)v;
      }
    if (!gpu_image_upload(e->map, side, uv, (size_t)w * 2 * sizeof(float), error))
      return false;
  }
  return true;
}

static bool
engine_alloc(StereoEngine *e, GError **error)
{
  int w0 = e->width, h0 = e->height;
  e->in8 = make_image(e, "in", 0, w0, h0, GPU_FORMAT_R8, 2, error);
  if (!e->in8)
    return false;
  int partials = 0;
  for (int s = 0; s <= e->start; s++) {
    int w, h;
    stereo_params_level_size(&e->p, s, &w, &h);
    if (!(e->img[s] = make_image(e, "img", s, w, h, GPU_FORMAT_RG32F, 1, error)) ||
        !(e->quad[s] = make_image(e, "quad", s, w, h, GPU_FORMAT_RGBA32F, 1, error)))
      return false;
    for (int k = 0; k < 2; k++)
      if (!(e->state[s][k] = make_image(e, k ? "stateB" : "stateA", s, w, h,
                                        GPU_FORMAT_RGBA32F, e->n_dirs, error)))
        return false;
    e->partial_base[s] = partials;
    partials += stereo_pass_quadrature_groups(w, h);
  }
  if (!(e->post = make_image(e, "post", 0, w0, h0, GPU_FORMAT_RGBA32F, 1, error)))
    return false;
  if (!(e->partials = make_buffer(e, "partials", 0, (size_t)partials * 8, GPU_BUFFER_STORAGE,
                                  error)) ||
      !(e->means = make_buffer(e, "means", 0, STEREO_MAX_LEVELS * 8, GPU_BUFFER_STORAGE,
                               error)) ||
      !(e->counters = make_buffer(e, "counters", 0, STEREO_MAX_LEVELS * 4, GPU_BUFFER_STORAGE,
                                  error)) ||
      !gpu_buffer_fill_u32(e->counters, 0, error))
    return false;
  if (e->has_calib && !upload_rectify_map(e, error))
    return false;
  stereo_pack_layout(w0, h0, e->format == STEREO_OUTPUT_S16, e->layout.depth, &e->layout);
  if (!(e->packed = make_buffer(e, "packed", 0, e->layout.layer_bytes, GPU_BUFFER_STORAGE,
                                error)))
    return false;
  for (int i = 0; i < e->in_flight; i++) {
    Slot *sl = &e->slots[i];
    if (!(sl->upload = make_buffer(e, "upload", i, 2 * (size_t)w0 * h0, GPU_BUFFER_UPLOAD,
                                   error)) ||
        !(sl->readback = make_buffer(e, "readback", i, e->layout.layer_bytes, GPU_BUFFER_READBACK,
                                     error)) ||
        !(sl->fence = gpu_fence_new(e->gpu, error)) ||
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
  if (in_flight < 1 || in_flight > MAX_IN_FLIGHT) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "in_flight must be within 1..%d",
                MAX_IN_FLIGHT);
    return NULL;
  }
  g_autoptr(StereoEngine) e = g_new0(StereoEngine, 1);
  e->gpu = gpu;
  e->label = g_strdup(params->label ? params->label : "stereo");
  e->p = params->params;
  e->format = params->output;
  e->in_flight = in_flight;
  e->width = e->p.width;
  e->height = e->p.height;
  e->search = stereo_params_use_search(&e->p);
  e->refine = stereo_params_use_refine(&e->p);
  e->start = stereo_params_start_level(&e->p);
  stereo_params_search_range(&e->p, &e->t_min, &e->t_max);
  e->n_dirs = e->p.lr_check ? 2 : 1;
  if (params->calib) {
    e->has_calib = true;
    e->calib = *params->calib;
    if (e->calib.width != e->width || e->calib.height != e->height) {
      g_set_error(error, STEREO_PARAMS_ERROR, 0,
                  "%s: the calibration is for %dx%d images, the engine for %dx%d", e->label,
                  e->calib.width, e->calib.height, e->width, e->height);
      return NULL;
    }
  }
  if (params->depth && !params->calib) {
    g_set_error(error, STEREO_PARAMS_ERROR, 0, "%s: depth output needs a calibration",
                e->label);
    return NULL;
  }
  e->layout.depth = params->depth;

  e->passes = stereo_passes_new(gpu, &e->p, error);
  if (!e->passes || !engine_alloc(e, error))
    return NULL;
  g_debug("%s: %dx%d, %d levels, phase from level %d, search %s (t %d..%d), %d in flight",
          e->label, e->width, e->height, stereo_params_get_levels(&e->p), e->start,
          e->search ? (e->refine ? "on, level-0 refinement" : "on") : "off", e->t_min, e->t_max,
          e->in_flight);
  return g_steal_pointer(&e);
}

const StereoParams *
stereo_engine_get_params(StereoEngine *e)
{
  return &e->p;
}

void
stereo_engine_get_last_counts(StereoEngine *e, StereoWorkCounts *counts)
{
  *counts = e->last_counts;
}

int
stereo_engine_pending(StereoEngine *e)
{
  return e->count;
}

/* Queues the whole filter for the pair in the upload slot `sl`. */
static void
engine_run(StereoEngine *e, Slot *sl)
{
  size_t plane = (size_t)e->width * e->height;
  GError *ignored = NULL;

  gpu_timer_stamp(sl->timer, 0);
  gpu_image_upload_from_buffer(e->in8, 0, sl->upload, 0, e->width, &ignored);
  gpu_image_upload_from_buffer(e->in8, 1, sl->upload, plane, e->width, &ignored);
  g_clear_error(&ignored);
  gpu_timer_stamp(sl->timer, 1);

  stereo_pass_ingest(e->passes, e->in8, e->has_calib ? e->map : NULL, e->img[0],
                     e->start >= 1 ? e->img[1] : NULL);
  for (int s = 2; s <= e->start; s++)
    stereo_pass_reduce(e->passes, e->img[s - 1], e->img[s]);
  gpu_timer_stamp(sl->timer, 2);

  StereoQuadLevel ql[STEREO_MAX_LEVELS];
  for (int s = 0; s <= e->start; s++)
    ql[s] = (StereoQuadLevel){ e->img[s], e->quad[s], s, e->partial_base[s] };
  stereo_pass_quadrature(e->passes, ql, e->start + 1, e->partials, e->counters, e->means);
  gpu_timer_stamp(sl->timer, 3);

  int cur = 0;   /* which state image of the level holds the current state */
  if (e->search) {
    stereo_pass_search(e->passes, e->img[e->start], e->state[e->start][0], e->t_min, e->t_max);
    cur = stereo_pass_fill(e->passes, e->state[e->start], 0);
  } else {
    static const float zero[4] = { 0, 0, 0, 0 };
    gpu_image_fill(e->state[e->start][0], zero, NULL);
  }
  gpu_timer_stamp(sl->timer, 4);

  for (int s = e->start; s >= 0; s--) {
    float guard = 0.0f;
    GpuImage *prior = e->state[s][cur];
    bool upsample = false;
    if (s == 0 && e->refine) {   /* §5b: refinement search around the upsampled prior */
      stereo_pass_refine(e->passes, e->img[0], e->state[1][cur], e->state[0][0]);
      cur = stereo_pass_fill(e->passes, e->state[0], 0);
      prior = e->state[0][cur];
      guard = (float)STEREO_REFINE_GUARD;
    } else if (s < e->start) {
      prior = e->state[s + 1][cur];   /* upsampled where the first round reads it */
      upsample = true;
      cur = 1;
    }
    for (int it = 0; it < e->p.iterations; it++) {
      stereo_pass_phase(e->passes, e->quad[s], prior, upsample, e->state[s][1 - cur], e->means,
                        s, guard);
      cur = 1 - cur;
      prior = e->state[s][cur];
      upsample = false;
    }
    if (s > 0)
      cur = stereo_pass_fill(e->passes, e->state[s], cur);
  }
  gpu_timer_stamp(sl->timer, 5);

  stereo_pass_post(e->passes, e->state[0][cur], e->img[0], e->post);
  stereo_pass_pack(e->passes, e->post, e->packed, &e->layout,
                   e->has_calib ? 1000.0 * calib_focal(&e->calib) * calib_baseline(&e->calib) : 0.0,
                   e->has_calib ? calib_doffs(&e->calib) : 0.0);
  gpu_timer_stamp(sl->timer, 6);
  gpu_buffer_copy(sl->readback, 0, e->packed, 0, e->layout.layer_bytes);
  gpu_timer_stamp(sl->timer, 7);
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
stereo_engine_submit(StereoEngine *e, const uint8_t *left, size_t left_stride,
                     const uint8_t *right, size_t right_stride, uint64_t tag, GError **error)
{
  g_return_val_if_fail(e && left && right, false);
  g_return_val_if_fail(left_stride >= (size_t)e->width && right_stride >= (size_t)e->width,
                       false);
  if (gpu_context_is_failed(e->gpu)) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_FAILED, "%s: the GPU context has failed", e->label);
    return false;
  }
  if (e->count >= e->in_flight) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT, "%s: %d pairs already in flight", e->label,
                e->count);
    return false;
  }
  Slot *sl = &e->slots[(e->head + e->count) % e->in_flight];
  uint8_t *map = gpu_buffer_get_map(sl->upload);
  copy_plane(map, left, left_stride, e->width, e->height);
  copy_plane(map + (size_t)e->width * e->height, right, right_stride, e->width, e->height);
  sl->tag = tag;
  GpuStats before, after;
  gpu_context_get_stats(e->gpu, &before);
  engine_run(e, sl);
  gpu_context_get_stats(e->gpu, &after);
  e->last_counts.dispatches = (int)(after.dispatches - before.dispatches);
  e->last_counts.barriers = (int)(after.barriers - before.barriers);
  if (!gpu_fence_reset(sl->fence, error) || !gpu_context_check(e->gpu, e->label, error))
    return false;
  e->count++;
  return true;
}

bool
stereo_engine_collect(StereoEngine *e, bool wait, StereoFrame *frame, GError **error)
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
  *frame = (StereoFrame){
    .tag = sl->tag,
    .width = e->width,
    .height = e->height,
    .format = e->format,
    .slot = e->head,
  };
  const uint8_t *map = gpu_buffer_get_map(sl->readback);
  frame->disparity = map;
  frame->confidence = map + e->layout.conf_offset;
  frame->depth = e->layout.depth ? (const uint16_t *)(map + e->layout.depth_offset) : NULL;
  for (int i = 0; i < STEREO_STAGE_COUNT; i++)
    frame->stage_ms[i] = have_times ? (double)(ns[i + 1] - ns[i]) * 1e-6 : 0.0;
  e->head = (e->head + 1) % e->in_flight;
  e->count--;
  return true;
}

void
stereo_engine_release(StereoEngine *e, StereoFrame *frame)
{
  /* The slot is reused only after it was collected and a new pair submitted into it;
   * submit fills slots in order, so a released frame's memory is next written by the
   * in_flight-th following submit. Nothing to do beyond invalidating the view. */
  (void)e;
  frame->disparity = NULL;
  frame->confidence = NULL;
}

bool
stereo_engine_process(StereoEngine *e, const uint8_t *left, size_t left_stride,
                      const uint8_t *right, size_t right_stride, float *disparity,
                      uint8_t *confidence, GError **error)
{
  return stereo_engine_process_full(e, left, left_stride, right, right_stride, disparity,
                                    confidence, NULL, error);
}

bool
stereo_engine_process_full(StereoEngine *e, const uint8_t *left, size_t left_stride,
                           const uint8_t *right, size_t right_stride, float *disparity,
                           uint8_t *confidence, uint16_t *depth, GError **error)
{
  g_return_val_if_fail(depth == NULL || e->layout.depth, false);
  g_return_val_if_fail(disparity != NULL, false);
  if (e->count > 0) {
    g_set_error(error, GPU_ERROR, GPU_ERROR_LIMIT,
                "%s: process() needs an idle engine (%d pairs in flight)", e->label, e->count);
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
  stereo_engine_release(e, &f);
  return true;
}
