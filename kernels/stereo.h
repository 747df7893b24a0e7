/* stereo.h: the GPU stereo engine (phase-based coarse-to-fine filter, docs/algorithm.md).
 *
 * A StereoEngine is created for one input size, one StereoParams and a batch size B; it
 * serves B camera pairs ("pairs" 0..B-1, each with its own calibration and noise floor)
 * and owns every GL object it needs (images with one layer per batch position, transfer
 * buffers, fences, timers), all made at creation; its programs come from the context's
 * shared programs (engines of equal parameters share them). Processing allocates nothing
 * and creates no GL object. Use it on the thread that owns the GpuContext; not thread
 * safe, except stereo_engine_release().
 *
 * A submission (a "batch") is 1..B pairs of images of the engine's size: every pass of
 * the filter is dispatched once for all of them (docs/algorithm.md §11: 15 dispatches
 * per batch at the defaults, whatever B is). Up to `in_flight` batches are queued; the
 * upload of one overlaps the compute and readback of others.
 *
 *  - stereo_engine_process(): synchronous, one pair in, results out (tools, tests);
 *  - stereo_engine_submit() / stereo_engine_collect(): one pair per batch (pair 0);
 *  - stereo_engine_submit_batch() / stereo_engine_collect(): several pairs per batch.
 *
 * Inputs are 8-bit luma planes of width x height pixels, rows `stride` bytes apart, in
 * host memory (copied into the engine's upload buffer by the submit) or in a
 * persistently mapped upload buffer of the caller (uploaded straight from there).
 * Outputs (level-0 px, left view is the reference):
 *  - disparity as float (NaN = invalid) or as s16 fixed point, value = round(32 d),
 *    INT16_MIN = invalid (STEREO_OUTPUT_S16);
 *  - confidence u8: 0 invalid, 1..127 filled by densification, 128..255 measured;
 *  - with a calibration, depth along the optical axis z = 1000 f B / (d - doffs) mm, as
 *    u16 mm = round(z) (0 = invalid: no disparity, d <= doffs, or round(z) > 65535, so a
 *    far pixel is never a saturated value that looks valid) and as f32 metres z / 1000
 *    (NaN = invalid; no upper bound), both from the same float z of the pack pass.
 */
#pragma once

#include "gpu/gpu.h"
#include "kernels/calib.h"
#include "kernels/stereo-params.h"

G_BEGIN_DECLS

#define STEREO_DISPARITY_SCALE 32          /* s16 wire format: 1/32 px */
#define STEREO_DISPARITY_INVALID INT16_MIN
#define STEREO_MAX_BATCH 32                /* pairs per batch */
#define STEREO_MAX_IN_FLIGHT 8             /* batches queued at once */

typedef enum {
  STEREO_OUTPUT_FLOAT,   /* float32 disparity + u8 confidence */
  STEREO_OUTPUT_S16,     /* int16 disparity (1/32 px) + u8 confidence */
  STEREO_OUTPUT_COUNT
} StereoOutputFormat;

/* GPU stages that are timed (GL_TIMESTAMP) per batch. */
typedef enum {
  STEREO_STAGE_UPLOAD,     /* host buffer -> texture */
  STEREO_STAGE_PYRAMID,    /* ingest (or rectification) + reduce */
  STEREO_STAGE_FILTER,     /* quadrature filters of every level, mean magnitudes */
  STEREO_STAGE_SEARCH,     /* discrete search and its hole fill (0 when not used) */
  STEREO_STAGE_PHASE,      /* phase rounds, hole fills, refinement: both directions */
  STEREO_STAGE_POST,       /* L-R check, medians, densify, pack */
  STEREO_STAGE_READBACK,   /* texture -> host buffer */
  STEREO_STAGE_COUNT
} StereoStage;

const char *stereo_stage_name(StereoStage stage);

typedef struct StereoEngine StereoEngine;

typedef struct {
  const char *label;               /* for log lines ("north-1"); NULL = "stereo" */
  /* Validated at creation. params.min_magnitude is the noise floor of every pair until
   * stereo_engine_set_pair() gives one its own. */
  StereoParams params;
  StereoOutputFormat output;
  int batch;                       /* pairs served and per batch, 1..STEREO_MAX_BATCH (0 = 1) */
  int in_flight;                   /* batches queued at once, 1..STEREO_MAX_IN_FLIGHT (0 = 1) */
  /* Calibration (copied) of every pair until set per pair. NULL: the inputs are already
   * rectified. Otherwise the inputs are the raw (distorted, unrectified) camera images
   * of the calibration's size and the first stage rectifies them; outputs are in the
   * rectified left view. */
  const StereoCalib *calib;
  bool depth;                      /* also output depth u16 mm (needs calib) */
  bool metres;                     /* also output depth f32 metres (needs depth) */
  /* Build the programs in the background (the driver's compiler threads): the engine is
   * made at once and stereo_engine_poll_ready() tells when it can run without waiting
   * for a compile (a submit before that waits). Programs an earlier engine with the same
   * parameters built are shared and ready. */
  bool async_programs;
  /* With calib: the rectification map of calib as stereo_rectify_map_compute() makes it
   * (NULL: computed here), or with defer_maps none at all: every pair's map is then set
   * (stereo_engine_set_pair with a map, stereo_engine_copy_pair) before it is submitted. */
  const float *map;
  bool defer_maps;
} StereoEngineParams;

StereoEngine *stereo_engine_new(GpuContext *gpu, const StereoEngineParams *params,
                                GError **error);
void stereo_engine_free(StereoEngine *engine);
const StereoParams *stereo_engine_get_params(StereoEngine *engine);
/* TRUE once every program of the engine is built; FALSE without an error while some are
 * building, FALSE with an error when one failed (the engine is then unusable). Never
 * blocks. */
bool stereo_engine_poll_ready(StereoEngine *engine, GError **error);
int stereo_engine_get_batch(StereoEngine *engine);

/* What differs between the pairs of one engine. */
typedef struct {
  /* The pair's calibration (copied), of the engine's size; NULL keeps the current one.
   * Only for engines made with a calibration. */
  const StereoCalib *calib;
  /* Its rectification map as stereo_rectify_map_compute() makes it for `calib`, or NULL
   * to have it computed here (2 x width x height calib_rectified_to_raw() calls: compute
   * it on another thread when the GPU thread must not wait that long). */
  const float *map;
  double min_magnitude;            /* the noise floor (StereoParams.min_magnitude) */
} StereoPairParams;

/* Sets pair `pair` (0..batch-1) for the batches submitted after it. Uploads the map
 * synchronously. FALSE with an error for a calibration of another size or on an engine
 * without calibration, or an out-of-range noise floor. */
bool stereo_engine_set_pair(StereoEngine *engine, int pair, const StereoPairParams *params,
                            GError **error);
/* Pair `pair` takes over what pair `src_pair` of `src` (an engine of the same size, also
 * with calibration or also without) has: calibration, rectification map (copied on the
 * GPU) and noise floor; `min_magnitude` >= 0 replaces the noise floor. For a reload that
 * moves pairs between engines without computing their maps again. */
bool stereo_engine_copy_pair(StereoEngine *engine, int pair, StereoEngine *src, int src_pair,
                             double min_magnitude, GError **error);
/* The rectification map of a calibration: for every rectified pixel its raw (u, v),
 * left side then right side, 2 x 2 x width x height floats into `map`. Pure CPU, thread
 * safe. */
void stereo_rectify_map_compute(const StereoCalib *calib, float *map);

/* One pair of a batch. */
typedef struct {
  int pair;                        /* 0..batch-1: whose calibration and noise floor apply */
  uint64_t tag;                    /* the caller's, returned with the result */
  /* The planes: in host memory (buffer NULL; copied by the submit) or in `buffer`, a
   * GPU_BUFFER_UPLOAD buffer of the same context, at byte offsets left_offset and
   * right_offset (uploaded from there: keep those bytes unchanged until
   * stereo_engine_inputs_done() returns TRUE for the submission). */
  const uint8_t *left, *right;
  GpuBuffer *buffer;
  size_t left_offset, right_offset;
  size_t left_stride, right_stride;   /* bytes between rows, >= width */
} StereoInput;

/* Queues a batch of n pairs (1..batch): uploads, the whole filter, the readback. *id
 * (may be NULL) receives the submission's number, counting from 1. Fails with
 * GPU_ERROR_LIMIT when no batch slot is free (in_flight batches queued, or frames of
 * finished ones still held: collect and release first). */
bool stereo_engine_submit_batch(StereoEngine *engine, const StereoInput *inputs, int n,
                                uint64_t *id, GError **error);
/* Whether a submit would find a free batch slot now. */
bool stereo_engine_can_submit(StereoEngine *engine);
/* TRUE once the GPU has taken the inputs of submission `id` (uploaded from the caller's
 * buffer or from host memory): from then on their memory may be reused. Never blocks. */
bool stereo_engine_inputs_done(StereoEngine *engine, uint64_t id);

/* The single-pair path: a batch of one, pair 0. Fails with GPU_ERROR_LIMIT when no batch
 * slot is free. */
bool stereo_engine_submit(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                          const uint8_t *right, size_t right_stride, uint64_t tag,
                          GError **error);
/* Number of submitted pairs not yet collected. */
int stereo_engine_pending(StereoEngine *engine);

/* A finished pair. The planes point into the batch's persistent readback buffer and
 * stay valid, unchanged, until the frame is released: the batch slot is not reused
 * before every frame of it was collected and released. */
typedef struct {
  uint64_t tag;                    /* the caller's tag from submit */
  int pair;                        /* the pair it was submitted as */
  int width, height;
  StereoOutputFormat format;
  const void *disparity;           /* float or int16, width * height, tightly packed */
  const uint8_t *confidence;       /* width * height */
  const uint16_t *depth;           /* width * height mm, 0 invalid; NULL without depth */
  const float *metres;             /* width * height m, NaN invalid; NULL without metres */
  /* GPU time per stage of the whole batch this pair was in (timestamps), and how many
   * pairs shared it (a pair's share is stage_ms / batch_pairs). */
  double stage_ms[STEREO_STAGE_COUNT];
  int batch_pairs;
  uint64_t submission;             /* the batch's id */
  int slot;                        /* internal */
} StereoFrame;

/* Takes the next pair of the oldest submitted batch (the pairs of a batch in their
 * order). wait = FALSE returns FALSE without an error when that batch is not finished
 * yet; wait = TRUE blocks until it is (timeout 10 s -> error). FALSE with
 * GPU_ERROR_LIMIT when nothing is pending. */
bool stereo_engine_collect(StereoEngine *engine, bool wait, StereoFrame *frame,
                           GError **error);
/* Gives a collected frame back. Thread safe: may be called from any thread (an atomic
 * count), e.g. by the thread that copied the planes out. */
void stereo_engine_release(StereoEngine *engine, StereoFrame *frame);

/* Synchronous convenience: submit + collect + copy out. `disparity` is float
 * (width * height, NaN invalid); `confidence` may be NULL. Needs an idle engine. */
bool stereo_engine_process(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                           const uint8_t *right, size_t right_stride, float *disparity,
                           uint8_t *confidence, GError **error);

/* The same with the depth plane too (`depth` may be NULL; needs an engine with depth). */
bool stereo_engine_process_full(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                                const uint8_t *right, size_t right_stride, float *disparity,
                                uint8_t *confidence, uint16_t *depth, GError **error);

/* The same with both depth planes (`depth`, `metres` may be NULL; each needs an engine
 * with that plane). */
bool stereo_engine_process_depth(StereoEngine *engine, const uint8_t *left, size_t left_stride,
                                 const uint8_t *right, size_t right_stride, float *disparity,
                                 uint8_t *confidence, uint16_t *depth, float *metres,
                                 GError **error);

/* The GPU work of the last submission, counted in code (gpu_context_get_stats before and
 * after queueing it): compute dispatches and memory barriers. */
typedef struct {
  int dispatches;
  int barriers;
} StereoWorkCounts;

void stereo_engine_get_last_counts(StereoEngine *engine, StereoWorkCounts *counts);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereoEngine, stereo_engine_free)

G_END_DECLS
