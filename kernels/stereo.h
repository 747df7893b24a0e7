/* stereo.h: the GPU stereo engine (phase-based coarse-to-fine filter, docs/algorithm.md).
 *
 * A StereoEngine is created for one input size and one StereoParams; it owns every GL
 * object it needs (images for all pyramid levels, programs, transfer buffers, fences,
 * timers), all made at creation. Processing a pair allocates nothing and creates no GL
 * object. Use it on the thread that owns the GpuContext; not thread safe.
 *
 * Two ways to run it:
 *  - stereo_engine_process(): synchronous, one pair in, results out (tools, tests);
 *  - stereo_engine_submit() / stereo_engine_collect(): up to `in_flight` pairs queued; the
 *    upload of one overlaps the compute and readback of others (service, benchmark).
 *
 * Inputs are 8-bit luma planes of width x height pixels, rows `stride` bytes apart.
 * Outputs (level-0 px, left view is the reference):
 *  - disparity as float (NaN = invalid) or as s16 fixed point, value = round(32 d),
 *    INT16_MIN = invalid (STEREO_OUTPUT_S16);
 *  - confidence u8: 0 invalid, 1..127 filled by densification, 128..255 measured.
 */
#pragma once

#include "gpu/gpu.h"
#include "kernels/calib.h"
#include "kernels/stereo-params.h"

G_BEGIN_DECLS

#define STEREO_DISPARITY_SCALE 32          /* s16 wire format: 1/32 px */
#define STEREO_DISPARITY_INVALID INT16_MIN

typedef enum {
  STEREO_OUTPUT_FLOAT,   /* float32 disparity + u8 confidence */
  STEREO_OUTPUT_S16,     /* int16 disparity (1/32 px) + u8 confidence */
  STEREO_OUTPUT_COUNT
} StereoOutputFormat;

/* GPU stages that are timed (GL_TIMESTAMP) per pair. */
typedef enum {
  STEREO_STAGE_UPLOAD,     /* host buffer -> texture */
  STEREO_STAGE_PYRAMID,    /* ingest + reduce */
  STEREO_STAGE_FILTER,     /* quadrature filters of every level */
  STEREO_STAGE_SEARCH,     /* discrete search (0 when not used) */
  STEREO_STAGE_PHASE,      /* phase terms, smoothing, solve, fill, upsample: both directions */
  STEREO_STAGE_POST,       /* L-R check, median, densify, pack */
  STEREO_STAGE_READBACK,   /* texture -> host buffer */
  STEREO_STAGE_COUNT
} StereoStage;

const char *stereo_stage_name(StereoStage stage);

typedef struct StereoEngine StereoEngine;

typedef struct {
  const char *label;               /* for log lines ("north-1"); NULL = "stereo" */
  StereoParams params;             /* validated at creation */
  StereoOutputFormat output;
  int in_flight;                   /* pairs queued at once, 1..8 (0 = 1) */
  /* Calibration (copied). NULL: the inputs are already rectified. Otherwise the inputs
   * are the raw (distorted, unrectified) camera images of the calibration's size and the
   * first stage rectifies them; outputs are in the rectified left view. */
  const StereoCalib *calib;
  bool depth;                      /* also output depth u16 mm (needs calib) */
} StereoEngineParams;

StereoEngine *stereo_engine_new(GpuContext *gpu, const StereoEngineParams *params,
                                GError **error);
void stereo_engine_free(StereoEngine *engine);
const StereoParams *stereo_engine_get_params(StereoEngine *engine);

/* A finished pair. The planes point into the engine's persistent readback buffer and
 * stay valid until the frame is released; release every collected frame. */
typedef struct {
  uint64_t tag;                    /* the caller's tag from submit */
  int width, height;
  StereoOutputFormat format;
  const void *disparity;           /* float or int16, width * height, tightly packed */
  const uint8_t *confidence;       /* width * height */
  const uint16_t *depth;           /* width * height mm, 0 invalid; NULL without depth */
  double stage_ms[STEREO_STAGE_COUNT];  /* GPU time per stage (timestamps) */
  int slot;                        /* internal */
} StereoFrame;

/* Queues a pair: copies the planes into a free upload slot and queues the GPU work and
 * the readback. Fails with GPU_ERROR_LIMIT when `in_flight` pairs are already queued
 * (collect first). */
bool stereo_engine_submit(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                          const uint8_t *right, size_t right_stride, uint64_t tag,
                          GError **error);
/* Number of submitted pairs not yet collected. */
int stereo_engine_pending(StereoEngine *engine);
/* Takes the oldest submitted pair. wait = FALSE returns FALSE without an error when it is
 * not finished yet; wait = TRUE blocks until it is (timeout 10 s -> error). */
bool stereo_engine_collect(StereoEngine *engine, bool wait, StereoFrame *frame,
                           GError **error);
void stereo_engine_release(StereoEngine *engine, StereoFrame *frame);

/* Synchronous convenience: submit + collect + copy out. `disparity` is float
 * (width * height, NaN invalid); `confidence` may be NULL. Needs in_flight - pending >= 1. */
bool stereo_engine_process(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                           const uint8_t *right, size_t right_stride, float *disparity,
                           uint8_t *confidence, GError **error);

/* The same with the depth plane too (`depth` may be NULL; needs an engine with depth). */
bool stereo_engine_process_full(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                                const uint8_t *right, size_t right_stride, float *disparity,
                                uint8_t *confidence, uint16_t *depth, GError **error);

/* The GPU work of the last submission, counted in code (gpu_context_get_stats before and
 * after queueing it): compute dispatches and memory barriers. */
typedef struct {
  int dispatches;
  int barriers;
} StereoWorkCounts;

void stereo_engine_get_last_counts(StereoEngine *engine, StereoWorkCounts *counts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereoEngine, stereo_engine_free)

G_END_DECLS
