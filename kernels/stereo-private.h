/* stereo-private.h: what stereo.c (the engine object, its pairs and transfers) and
 * stereo-chain.c (the passes of one batch) share. Internal to kernels/. */
#pragma once

#include "kernels/stereo.h"
#include "kernels/stereo-passes.h"

/* What the shaders read per batch position (std430, 32 bytes; common.glsl
 * "LayerParams"). */
typedef struct {
  int32_t pair;                    /* the pair's rectification map: layers 2 pair, 2 pair + 1 */
  float min_magnitude;
  float fb_mm;                     /* 1000 f B of the pair's calibration (depth), 0 without */
  float doffs;
  /* The pack pass's f32 metres plane: its word offset within a packed layer, -1 without.
   * The same at every position; it travels here because the pack pass's uniforms are the
   * layout of stereo-passes.c, which knows the disparity, confidence and u16 planes. */
  int32_t metres_offset;
  /* The pitch-plane prior (StereoParams.ground_margin): the ground's disparity a x + b y +
   * c on the left rectified grid, level-0 px (calib_ground_plane, else StereoParams.ground) */
  float ground_a, ground_b, ground_c;
} StereoLayerParams;

typedef struct {
  bool has_calib;
  StereoCalib calib;
  double min_magnitude;
} StereoPair;

typedef enum {
  SLOT_FREE,
  SLOT_QUEUED,       /* submitted, in the queue, frames not all collected */
  SLOT_DRAINED,      /* every frame collected; free once they are all released */
} SlotState;

/* One batch's transfer buffers and bookkeeping. */
typedef struct {
  GpuBuffer *upload;        /* 2 planes per pair, tight rows (inputs from host memory) */
  GpuBuffer *readback;      /* packed outputs, a layer per pair */
  GpuBuffer *layers;        /* StereoLayerParams per batch position */
  GpuFence *fence;          /* after the readback copy */
  GpuFence *upload_fence;   /* after the uploads */
  GpuTimer *timer;
  SlotState state;
  int n;                    /* pairs in the batch */
  int collected;            /* frames handed out */
  gint held;                /* frames handed out and not yet released (atomic) */
  uint64_t id;
  bool inputs_done;
  uint64_t tags[STEREO_MAX_BATCH];
  int pairs[STEREO_MAX_BATCH];
  double stage_ms[STEREO_STAGE_COUNT];
} StereoSlot;

struct StereoEngine {
  GpuContext *gpu;
  char *label;
  StereoParams p;
  StereoOutputFormat format;
  int batch, in_flight;
  int width, height;
  int start;              /* coarsest level the phase stage runs on */
  bool search;
  bool refine;            /* §5b at level 0 */
  int t_min, t_max;
  int n_dirs;
  bool rectify;
  bool depth;
  bool metres;            /* the f32 depth plane, after the layout's planes */
  size_t metres_offset;   /* its byte offset within a packed layer */

  StereoPasses *passes;
  GpuImage *in8;          /* 2 layers per batch position */
  GpuImage *img[STEREO_MAX_LEVELS];
  GpuImage *quad[STEREO_MAX_LEVELS];
  GpuImage *state[STEREO_MAX_LEVELS][2];   /* ping-pong disparity state, n_dirs layers per pair */
  GpuImage *post;         /* post-processing result: (d, state, k, 0) */
  GpuImage *med;          /* densify: the 9x3 median's d (R32F), NULL without densify */
  GpuImage *terms;        /* the split phase round's terms (software renderers), or NULL */
  GpuImage *map;          /* rectification maps, RG32F, layers 2 pair (left), 2 pair + 1 */
  GpuBuffer *partials, *counters, *means, *packed;
  int partial_base[STEREO_MAX_LEVELS];
  StereoPackLayout layout;   /* layer_bytes includes the metres plane */
  StereoPair pairs[STEREO_MAX_BATCH];

  StereoSlot slots[STEREO_MAX_IN_FLIGHT];
  int queue[STEREO_MAX_IN_FLIGHT];   /* submitted slots, oldest first */
  int queued;
  uint64_t next_id;
  StereoWorkCounts last_counts;
};

/* Queues the whole filter for the n pairs whose planes are in layers 0..2n-1 of in8
 * (stereo-chain.c): timer stamps, passes, the copy into the slot's readback buffer. */
void stereo_chain_run(StereoEngine *e, StereoSlot *slot);
