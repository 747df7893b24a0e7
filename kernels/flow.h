/* flow.h: the GPU optical-flow engine (phase-based, coarse to fine, docs/optical-flow.md).
 *
 * A FlowEngine is created for one frame size and one FlowParams; it owns every GL object
 * it needs (images for all pyramid levels of two frames, programs, transfer buffers,
 * fences, timers), all made at creation. Processing allocates nothing and creates no GL
 * object. Use it on the thread that owns the GpuContext; not thread safe.
 *
 * Frames go in one after the other (a camera's stream): each frame is filtered once, when
 * it is submitted, and its filter responses serve both the flow that ends at it and the
 * one that starts from it. Every submit after the first queues the flow from the previous
 * frame to this one; flow_engine_reset() forgets the previous frame (after a gap).
 *
 * Two ways to run it:
 *  - flow_engine_process(): synchronous, two frames in, the flow out (tools, tests);
 *  - flow_engine_submit() / flow_engine_collect(): up to `in_flight` flows queued (the
 *    service, the benchmark).
 *
 * Inputs are 8-bit luma planes of width x height pixels, rows `stride` bytes apart.
 * Outputs: the flow of the previous frame's pixels, (u, v) in px (pixel (x, y) moves to
 * (x + u, y + v)), as two planes: float (FLOW_UNKNOWN = 1e10 where there is no estimate)
 * or int16 at 1/FLOW_SCALE px (FLOW_S16_UNKNOWN where there is none; |u| <= 1023.97 px).
 */
#pragma once

#include <stdint.h>

#include "gpu/gpu.h"
#include "kernels/flow-params.h"

G_BEGIN_DECLS

#define FLOW_SCALE 32                  /* int16 planes: 1/32 px */
#define FLOW_S16_UNKNOWN INT16_MIN

typedef enum {
  FLOW_OUTPUT_FLOAT,   /* float32 u and v planes */
  FLOW_OUTPUT_S16,     /* int16 u and v planes at 1/32 px */
  FLOW_OUTPUT_COUNT
} FlowOutputFormat;

/* GPU stages timed (GL_TIMESTAMP) per submitted frame. */
typedef enum {
  FLOW_STAGE_UPLOAD,     /* host buffer -> texture */
  FLOW_STAGE_FILTER,     /* pyramid (level 0 read as 8 bits), oriented bank, features
                            with the means */
  FLOW_STAGE_FLOW,       /* terms, smoothing, solve, fill, median, upsampling: every
                            direction (0 for the first frame) */
  FLOW_STAGE_POST,       /* forward-backward check (with the forward flow's last median),
                            densification, packing */
  FLOW_STAGE_READBACK,   /* packed output -> host buffer */
  FLOW_STAGE_COUNT
} FlowStage;

const char *flow_stage_name(FlowStage stage);

typedef struct FlowEngine FlowEngine;

typedef struct {
  const char *label;           /* for log lines ("north-1/flow"); NULL = "flow" */
  FlowParams params;           /* validated at creation */
  FlowOutputFormat output;
  int in_flight;               /* flows queued at once, 1..8 (0 = 1) */
} FlowEngineParams;

FlowEngine *flow_engine_new(GpuContext *gpu, const FlowEngineParams *params, GError **error);
void flow_engine_free(FlowEngine *engine);
const FlowParams *flow_engine_get_params(FlowEngine *engine);

/* A finished flow. The planes point into the engine's persistent readback buffer and stay
 * valid until the frame is released; release every collected frame. */
typedef struct {
  uint64_t tag;            /* the tag of the frame the flow ends at */
  uint64_t prev_tag;       /* the tag of the frame it starts from */
  int width, height;
  FlowOutputFormat format;
  const void *u, *v;       /* float or int16, width * height each, tightly packed */
  double stage_ms[FLOW_STAGE_COUNT];  /* GPU time per stage of the second frame's submit */
  int slot;                /* internal */
} FlowFrame;

/* Uploads and filters a frame; when there is a previous frame, also queues the flow from
 * it to this one and its readback, and sets *queued (may be NULL). Fails with
 * GPU_ERROR_LIMIT when `in_flight` flows are pending (collect first). */
bool flow_engine_submit(FlowEngine *engine, const uint8_t *frame, size_t stride, uint64_t tag,
                        bool *queued, GError **error);
/* Forgets the previous frame: the next submit queues no flow. */
void flow_engine_reset(FlowEngine *engine);
/* Number of queued flows not yet collected. */
int flow_engine_pending(FlowEngine *engine);
/* Takes the oldest queued flow. wait = FALSE returns FALSE without an error when it is not
 * finished yet; wait = TRUE blocks until it is (timeout 10 s -> error). */
bool flow_engine_collect(FlowEngine *engine, bool wait, FlowFrame *frame, GError **error);
/* Ends the use of a collected frame's planes. It touches only `frame`, so any thread may
 * call it (a publisher thread that copied the planes). The planes' readback slot is
 * written again by the in_flight-th submit with a flow after the one that queued it: a
 * caller that keeps planes beyond that (another thread still copying them) must hold
 * further submits back until it is done. */
void flow_engine_release(FlowEngine *engine, FlowFrame *frame);

/* Synchronous: resets, submits frame0 and frame1, collects and copies the float planes out
 * (u and v width * height each, FLOW_UNKNOWN where unknown; either may be NULL). Needs an
 * engine with nothing pending; works with either output format. */
bool flow_engine_process(FlowEngine *engine, const uint8_t *frame0, size_t stride0,
                         const uint8_t *frame1, size_t stride1, float *u, float *v,
                         GError **error);

/* The GPU work of the last submit, counted in code (gpu_context_get_stats before and after
 * queueing it, upload to readback copy included): compute dispatches and memory barriers.
 * A submit without a flow (the first frame, after a reset) counts the filtering alone. */
typedef struct {
  int dispatches;
  int barriers;
} FlowWorkCounts;

void flow_engine_get_last_counts(FlowEngine *engine, FlowWorkCounts *counts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(FlowEngine, flow_engine_free)

G_END_DECLS
