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
 * An engine serves `batch` streams ("pairs" 0..batch-1, a camera each), each with its
 * own previous frame. A submission (a batch) is 1..batch frames of different pairs: every
 * pass is dispatched once for all of them, as in the stereo engine. When a submission
 * holds every pair in order (frame i of pair i) the previous frames' responses are
 * where the passes read them; otherwise they are gathered from the pairs' store before
 * the flow and the new ones stored after it (GPU copies of the features, 2 per level per
 * pair).
 *
 * Ways to run it:
 *  - flow_engine_process(): synchronous, two frames in, the flow out (tools, tests);
 *  - flow_engine_submit() / flow_engine_collect(): one stream (pair 0), up to `in_flight`
 *    submissions with flows queued (the benchmark);
 *  - flow_engine_submit_batch() / flow_engine_collect_at(): several pairs per submission
 *    (the service).
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
#define FLOW_MAX_BATCH 32              /* pairs per engine and submission */
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
  int in_flight;               /* submissions with flows queued at once, 1..8 (0 = 1) */
  int batch;                   /* pairs served, 1..FLOW_MAX_BATCH (0 = 1) */
} FlowEngineParams;

FlowEngine *flow_engine_new(GpuContext *gpu, const FlowEngineParams *params, GError **error);
void flow_engine_free(FlowEngine *engine);
const FlowParams *flow_engine_get_params(FlowEngine *engine);

/* A finished flow. The planes point into the engine's persistent readback buffer and stay
 * valid until the frame is released; release every collected frame. */
typedef struct {
  uint64_t tag;            /* the tag of the frame the flow ends at */
  uint64_t prev_tag;       /* the tag of the frame it starts from */
  int pair;                /* whose */
  int width, height;
  FlowOutputFormat format;
  const void *u, *v;       /* float or int16, width * height each, tightly packed */
  /* GPU time per stage of the whole submission that queued it (the second frame's), and
   * how many flows it queued (a flow's share is stage_ms / batch_flows). */
  double stage_ms[FLOW_STAGE_COUNT];
  int batch_flows;
  uint64_t submission;     /* its id */
  int slot;                /* internal */
} FlowFrame;

/* One frame of a submission. */
typedef struct {
  int pair;                    /* 0..batch-1, each at most once per submission */
  const uint8_t *frame;        /* width x height luma, rows `stride` bytes apart (copied
                                  by the submit) */
  size_t stride;
  uint64_t tag;                /* the caller's, returned with the flow */
  bool reset;                  /* forget the pair's previous frame first: no flow */
} FlowInput;

/* Uploads and filters n frames (1..batch) of different pairs; for each pair that has a
 * previous frame (and no reset), also queues the flow from it to this one and its
 * readback, and sets queued[i] (may be NULL). *id (may be NULL) receives the
 * submission's number, counting from 1, when a flow was queued (0 otherwise). Fails with
 * GPU_ERROR_LIMIT, nothing changed, when a flow would be queued and no submission slot is
 * free (in_flight submissions hold flows not all collected and released). */
bool flow_engine_submit_batch(FlowEngine *engine, const FlowInput *inputs, int n,
                              bool *queued, uint64_t *id, GError **error);
/* Whether a submission with flows would find a free slot now. */
bool flow_engine_can_submit(FlowEngine *engine);
/* The single-stream path: a submission of one frame of pair 0. */
bool flow_engine_submit(FlowEngine *engine, const uint8_t *frame, size_t stride, uint64_t tag,
                        bool *queued, GError **error);
/* Forgets every pair's previous frame: their next frames queue no flow. */
void flow_engine_reset(FlowEngine *engine);
/* Number of queued flows not yet collected. */
int flow_engine_pending(FlowEngine *engine);
/* Takes the oldest queued flow not collected yet (submission order, then the order of
 * the submission's inputs). wait = FALSE returns FALSE without an error when it is not
 * finished yet; wait = TRUE blocks until it is (timeout 10 s -> error). FALSE with
 * GPU_ERROR_LIMIT when nothing is pending. */
bool flow_engine_collect(FlowEngine *engine, bool wait, FlowFrame *frame, GError **error);
/* Takes the flow of input `index` of submission `id`, queued and not collected yet
 * (GPU_ERROR_LIMIT otherwise); wait as flow_engine_collect. */
bool flow_engine_collect_at(FlowEngine *engine, uint64_t id, int index, bool wait,
                            FlowFrame *frame, GError **error);
/* Ends the use of a collected frame's planes: its submission's slot is free again once
 * every flow of it was collected and released. Thread safe (an atomic count): any thread
 * may call it, e.g. a publisher thread that copied the planes. */
void flow_engine_release(FlowEngine *engine, FlowFrame *frame);

/* Synchronous: resets, submits frame0 and frame1 as pair 0, collects and copies the float
 * planes out (u and v width * height each, FLOW_UNKNOWN where unknown; either may be
 * NULL). Needs an engine with nothing pending; works with either output format. */
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
