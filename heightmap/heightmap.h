/* heightmap.h: stereod-heightmap, the builder that fuses the depth of every camera pair
 * into one height map of the pitch and finds the players on it.
 *
 * Parts (one object each, one file each):
 *  - HeightmapConfig (config.c): the GKeyFile configuration, validated at load; a reload
 *    (config-diff.c) takes over what can change while running;
 *  - HeightmapFusion (fusion.c, shaders/heightmap_*.comp): on the GPU, every valid pixel
 *    of every pair is triangulated (Q, then the pair's pose) into pitch coordinates and
 *    scattered into a histogram of heights per grid cell with image atomics; a resolve
 *    pass turns each histogram into a robust top height (see heightmap_fusion_finish);
 *  - HeightmapBlobFinder (blobs.h; blobs.c): cells above a height threshold grouped into blobs,
 *    each with its area, top height and a ground point;
 *  - HeightmapVelocity (velocity.c): each blob's velocity on the pitch from the optical
 *    flow of the pixels fused into it (pairs that publish flow planes);
 *  - HeightmapTracker (tracks.c): blobs associated over time into tracks with stable ids;
 *  - HeightmapServer and the JSON line (output.c): players as JSON lines to the clients
 *    of a Unix socket, never blocking the builder;
 *  - HeightmapSources (sources.h; sources.c, reader.c): the rings of the pairs, read and
 *    checked by one waiter thread per ring, and the choice of the frames fused together;
 *  - HeightmapInstance (instance.c): the locks that keep a second builder off the
 *    running one's socket and ring.
 *
 * Units: pitch metres (origin at the centre spot, x along the touchline, y across, z
 * up, as kernels/calib.h), heights in metres above the pitch plane z = 0, times in ns
 * (CLOCK_REALTIME capture times of the pairs).
 *
 * The grid: cell (i, j), i = 0..width-1, j = 0..height-1, covers x in
 * [x0 + i cell, x0 + (i + 1) cell), y in [y0 + j cell, y0 + (j + 1) cell); host arrays
 * are row-major, row j = 0 first (the y0 side). Heights are NaN where a cell has no
 * robust height (too few points).
 *
 * Errors: GError (domain HEIGHTMAP_CONFIG_ERROR for the configuration, GPU_ERROR from the
 * GPU, G_IO_ERROR for sockets, locks and inputs). Every function here that returns FALSE
 * or NULL with a GError ** sets it, once, on every failure a caller's data can cause;
 * g_return_val_if_fail is kept for caller bugs (NULL objects, pair indices out of
 * range). Destructors accept NULL. None of the objects is thread
 * safe; HeightmapFusion must be used on the thread that owns the GPU context.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/gpu.h"
#include "kernels/calib.h"
#include "metrics/metrics.h"

G_BEGIN_DECLS

#define HEIGHTMAP_EXIT_CONFIG 78          /* EX_CONFIG: a bad configuration */
#define HEIGHTMAP_MAX_PAIRS 32            /* one bit each in the per-cell pair mask */
#define HEIGHTMAP_MAX_CELLS (8192 * 8192) /* grid cells */
#define HEIGHTMAP_BINS 16                 /* height histogram bins per cell */
#define HEIGHTMAP_BIN_HEIGHT 0.2          /* m; bins cover [0, 3.2 m), higher goes to the top bin */

/* ---------------------------------------------------------------- configuration */

#define HEIGHTMAP_CONFIG_ERROR (heightmap_config_error_quark())
GQuark heightmap_config_error_quark(void);

typedef enum {
  HEIGHTMAP_CONFIG_ERROR_IO,          /* the file cannot be read */
  HEIGHTMAP_CONFIG_ERROR_SYNTAX,      /* not a key file */
  HEIGHTMAP_CONFIG_ERROR_UNKNOWN,     /* a group or key this version does not know */
  HEIGHTMAP_CONFIG_ERROR_MISSING,     /* no pair */
  HEIGHTMAP_CONFIG_ERROR_INVALID,     /* malformed, out of range or inconsistent */
  HEIGHTMAP_CONFIG_ERROR_CALIBRATION, /* a calibration file does not load */
  HEIGHTMAP_CONFIG_ERROR_COUNT
} HeightmapConfigError;

typedef enum {
  HEIGHTMAP_FORMAT_FLOAT,   /* ring plane FLOAT32: metres, NaN = no data */
  HEIGHTMAP_FORMAT_MM,      /* ring plane DEPTH: u16 mm, 0 = no data (heights >= 1 mm) */
  HEIGHTMAP_FORMAT_COUNT
} HeightmapFormat;

typedef struct {
  double x0, x1, y0, y1;    /* extent, pitch m, x0 < x1, y0 < y1 */
  double cell;              /* cell side, m */
  int width, height;        /* cells: ceil((x1 - x0) / cell), ceil((y1 - y0) / cell) */
} HeightmapGrid;

/* Fills width and height from the extent and cell; FALSE when the grid is empty or has
 * more than HEIGHTMAP_MAX_CELLS cells. */
bool heightmap_grid_init(HeightmapGrid *grid, double x0, double x1, double y0, double y1,
                         double cell);

typedef struct {
  char *name;               /* the group's NAME, [A-Za-z0-9._-]{1,63} */
  char *ring;               /* ring name (/dev/shm/stereod.<ring>), default NAME */
  char *calibration_path;   /* absolute; NULL = Q and pose from the ring header */
  bool has_calibration;
  StereoCalib calib;        /* loaded from calibration_path when has_calibration */
} HeightmapPairConfig;

typedef struct {
  char *path;               /* the file loaded */
  HeightmapGrid grid;       /* [heightmap] x0 x1 y0 y1 cell */
  double tolerance_ms;      /* frames within this of the newest are fused */
  double wait_ms;           /* how long to wait for the other pairs of a fused time */
  double stale_ms;          /* a pair silent this long is left out */
  double min_height;        /* m, cells at or above are player cells */
  int min_confidence;       /* 0..255, pixels below are not used (128 = measured only) */
  int min_points;           /* >= 1, points a cell's robust top needs */
  int pool;                 /* cells: histograms summed over (2 pool + 1)^2 cells */
  int far_pool;             /* cells: the same for far cells (heightmap_resolve.comp) */
  double far_sigma;         /* m: the range error from which a cell is far */
  bool carve;               /* free-space carving of the height map by the pairs' rays */
  double see_through;       /* m, 0 = off: blobs other pairs' rays cross this low are
                               dropped (the fusion's see_height, blobs.h) */
  int see_cells;            /* the solid cells a blob needs against see_through */
  double see_scale;         /* px/m: the pairs that see through a blob image it this sharp */
  double goal_line;         /* m, the goal lines at x = -goal_line and +goal_line; 0 = no
                               goal frames (heightmap_scatter.comp) */
  double goal_width;        /* m, between the posts' axes */
  double goal_height;       /* m, the bar's axis above the ground */
  double goal_shadow;       /* m: a point up to this far beyond a goal frame along a ray
                               that grazes the frame is the frame's too
                               (heightmap_scatter.comp) */
  double goal_front;        /* m: the same in front of the frame (nearer the camera) */
  double touch_line;        /* m, the touch lines at y = -touch_line and +touch_line */
  double play_margin;       /* m: blobs centred farther than this beyond the touch or goal
                               lines are not players (blobs.c); goal_line or touch_line 0:
                               no such limit */
  double post_zone;         /* m, 0 = off: blobs smaller than post_area centred this near a
                               goal post's foot are the post's smear (blobs.c) */
  double post_area;         /* m^2 */
  double body_support;      /* 0..1: blobs with fewer of their points 0.2-0.6 m high stand
                               on nothing (blobs.c); 0 = off */
  double lower_body;        /* 0..1: blobs with fewer of their points 0.6 m or more below
                               their top float (blobs.c); 0 = off */
  double lower_scale;       /* px/m: lower_body judges the blobs seen this sharply or more
                               (blobs.c); 0 = all */
  double body_share;        /* 0..1: blobs with fewer of their points 0.2-1.8 m high lie
                               above a body (blobs.c); 0 = off */
  double support_scale;     /* px/m: body_support judges the blobs seen this sharply or more
                               (blobs.c); 0 = all */
  double min_fill;          /* 0..1: blobs with fewer points than this share of a body's
                               pixels in their sharpest pair are fragments (blobs.c); 0 = off */
  double top_fraction;      /* 0..1, share of a cell's points at or above its top */
  double blob_min_area;     /* m^2 */
  double blob_max_area;     /* m^2 */
  double top_band;          /* m, cells within this of a blob's top give its centre */
  double view_centre;       /* m, 0 = off: a blob's centre from each pair's own centre,
                               this the sigma across its view (blobs.c) */
  double view_centre_px;    /* px: and this many of the pair's pixels there, in quadrature */
  double split_depth;       /* m, 0 = off: blobs with two tops this high are split */
  double crowd_split;       /* m, 0 = off: blobs above crowd_area with two tops this high are
                               split (blobs.c) */
  double crowd_area;        /* m^2 */
  double view_split;        /* m, 0 = off: blobs wider than this across a pair's view are
                               cut in two (blobs.c) */
  double view_split_px;     /* px added to view_split's width (blobs.c) */
  double merge_distance;    /* m, 0 = off: blobs centred closer are merged (blobs.c) */
  double visible_offset;    /* m, centres moved away from the cameras (blobs.c) */
  double disparity_noise;   /* px, sigma of a blob's disparity (blobs.c, covariances) */
  double gate;              /* m, tracking gate */
  double acceleration;      /* m/s^2, the tracks' Kalman filter (tracks.c); 0 = none */
  int max_missed;           /* fused frames a track survives unseen */
  int confirm;              /* consecutive fused frames with a blob before a track is
                               reported, 1..100 */
  int confirm_gap;          /* fused frames a tentative track may miss in a row, 0..10 */
  int coast;                /* fused frames a confirmed track is still reported unseen,
                               at its prediction, 0..max_missed */
  double max_height;        /* m: a blob higher starts no track (tracks.c); 0 = any */
  char *socket_path;        /* NULL = no socket */
  char *ring_name;          /* the height-map ring, default "heightmap" */
  char *metrics_address;    /* "ADDRESS:PORT" of /metrics (metrics_address_parse), NULL =
                               none */
  HeightmapFormat format;
  int n_pairs;              /* 1..HEIGHTMAP_MAX_PAIRS */
  HeightmapPairConfig *pairs;
} HeightmapConfig;

/* Loads and validates FILE: unknown groups and keys, malformed or out-of-range values,
 * calibration files that do not load are errors "FILE: [group] key: problem". */
HeightmapConfig *heightmap_config_load(const char *path, GError **error);
/* The same from text; `name` stands for the file in messages and relative calibration
 * paths are taken from the current directory. */
HeightmapConfig *heightmap_config_load_data(const char *data, gsize length, const char *name,
                                            GError **error);
void heightmap_config_free(HeightmapConfig *config);

/* A reload (SIGHUP): `next` is the same file loaded again. Copies into `running` the keys
 * that can change while the builder runs: tolerance_ms, wait_ms, stale_ms, min_height,
 * min_confidence, min_points, far_pool, far_sigma, goal_line, goal_width, goal_height,
 * goal_shadow, goal_front, touch_line, play_margin, post_zone, post_area, lower_body,
 * lower_scale, body_share, max_height, body_support, support_scale, min_fill,
 * top_fraction, blob_min_area, blob_max_area, top_band, view_centre, view_centre_px,
 * split_depth, crowd_split, see_cells, see_scale,
 * crowd_area, view_split, view_split_px, merge_distance, visible_offset, disparity_noise,
 * gate,
 * acceleration, max_missed, confirm, confirm_gap, coast; appends "key old -> new" for each
 * one that differs to `changed` (", " between them). The keys fixed at start (x0 x1 y0 y1
 * cell: the GPU images and the output ring; pool, carve, see_through: shader constants and
 * the images' layers; socket, ring, format;
 * the pairs, their rings and calibrations: the waiter threads and the pair masks) keep
 * their running values; each one that differs adds one line "[group] key changed: needs a
 * restart, keeping VALUE" (a new string) to `fixed`, whose free function must be g_free.
 * Returns whether a changeable key changed. Not thread safe: nothing may read the
 * changeable keys of `running` meanwhile (the waiter threads of HeightmapSources read only
 * the pairs). */
bool heightmap_config_update(HeightmapConfig *running, const HeightmapConfig *next,
                             GString *changed, GPtrArray *fixed);

/* ---------------------------------------------------------------- fusion */

/* The geometry of one pair: reprojection and pose of its left rectified camera. */
typedef struct {
  double q[16];             /* [X Y Z W]^T = Q [x y d 1]^T, row-major */
  double rotation[9];       /* camera -> pitch, row-major (kernels/calib.h) */
  double centre[3];         /* camera centre, pitch m */
} HeightmapPairGeometry;

void heightmap_geometry_from_calib(HeightmapPairGeometry *geom, const StereoCalib *calib);

/* The exact CPU formula the GPU follows: pixel (x, y) with disparity d (px) -> pitch
 * point. FALSE when d is not finite or W <= 0. */
bool heightmap_geometry_pixel_to_pitch(const HeightmapPairGeometry *geom, double x, double y,
                                       double d, double pitch[3]);
/* f B (px m) from Q: its third row is (0 0 0 f), its fourth (0 0 1/B ...), Z = f B / d;
 * 0 when Q does not give a positive finite one. */
double heightmap_geometry_focal_baseline(const HeightmapPairGeometry *geom);

/* One pair's depth as the rings publish it. The sizes are what may be read at each
 * pointer: heightmap_fusion_add refuses a plane whose rows (stride * (height - 1) +
 * width * element size) do not fit in them. */
typedef struct {
  int width, height;                 /* px */
  const int16_t *disparity;          /* value * disparity_scale px, INT16_MIN invalid */
  size_t disparity_stride;           /* bytes */
  size_t disparity_size;             /* bytes readable at `disparity` */
  double disparity_scale;            /* px per unit */
  const uint8_t *confidence;         /* NULL = every valid pixel counts as measured */
  size_t confidence_stride;          /* bytes */
  size_t confidence_size;            /* bytes readable at `confidence` */
  /* The left camera's optical flow from the pair's previous frame (ring planes FLOW_U,
   * FLOW_V: 1/32 px, INT16_MIN unknown, indexed by the previous frame's pixels); NULL
   * when the ring has none. Only HeightmapVelocity reads them. */
  const int16_t *flow_u, *flow_v;
  size_t flow_stride;                /* bytes, the same for both */
  size_t flow_u_size, flow_v_size;   /* bytes readable at each */
} HeightmapInput;

typedef struct HeightmapFusion HeightmapFusion;

typedef struct {
  const char *label;                 /* for logs; NULL = "heightmap" */
  HeightmapGrid grid;
  int min_confidence;                /* 0..255 */
  int min_points;                    /* >= 1 */
  double top_fraction;               /* 0..1 */
  int pool;                          /* 0..4: a cell's histogram is summed over the
                                        (2 pool + 1)^2 cells around it */
  bool carve;                        /* free-space carving (heightmap_scatter.comp): a
                                        cell's points higher than a ray that passed
                                        through it on its way to a farther point are
                                        dropped */
  double see_height;                 /* m, 0 = off: the pairs whose rays to the ground
                                        crossed a cell this low or lower (on their way to
                                        a farther point) are recorded per cell
                                        (heightmap_fusion_get_see_through) */
  double disparity_noise;            /* px, the carving's gap before a ray's point and the
                                        goal frames' range gate */
  double goal_line;                  /* m, x of the goal lines (+-); 0 = none: pixels whose
                                        ray meets a goal frame at their range are dropped */
  double goal_width, goal_height;    /* m, the frame's posts' spacing and bar height */
  double goal_shadow;                /* m: how far beyond a frame, along a ray that grazes
                                        it, a point is still the frame's */
  double goal_front;                 /* m: the same in front of it (nearer the camera) */
  int far_pool;                      /* 0..4 cells, <= pool: off: a far cell's histogram is
                                        summed over the (2 far_pool + 1)^2 cells around it
                                        (heightmap_resolve.comp) */
  double far_sigma;                  /* m: a cell is far when the sharpest pair that put a
                                        point within far_pool cells of it measures its
                                        range with this error or more (disparity_noise) */
} HeightmapFusionParams;

/* The radius of a goal's posts and bar (the Laws of the Game: at most 12 cm wide). */
#define HEIGHTMAP_GOAL_RADIUS 0.06

HeightmapFusion *heightmap_fusion_new(GpuContext *gpu, const HeightmapFusionParams *params,
                                      GError **error);
void heightmap_fusion_free(HeightmapFusion *fusion);

/* Takes min_confidence, min_points, top_fraction and the goal frames from `params` for the next
 * heightmap_fusion_add / _finish (uniforms: no GL object is made). The grid and pool are
 * fixed at creation (image sizes, a shader constant): `params` must carry the fusion's. */
void heightmap_fusion_set_params(HeightmapFusion *fusion, const HeightmapFusionParams *params);

/* Starts a fused frame: clears the histograms. */
bool heightmap_fusion_begin(HeightmapFusion *fusion, GError **error);

/* Makes pair `pair`'s input images and staging buffer for width x height inputs and has
 * the driver give them their memory, so that its first frame makes no GL object; nothing
 * when they are that size already. The builder calls it when a pair's ring opens. FALSE
 * with an error for a size below 1 (G_IO_ERROR_INVALID_DATA) or over the GPU's limits
 * (GPU_ERROR_LIMIT). */
bool heightmap_fusion_prepare(HeightmapFusion *fusion, int pair, int width, int height,
                              GError **error);

/* Uploads one pair's planes and scatters its points. `pair` (0..HEIGHTMAP_MAX_PAIRS-1)
 * picks the bit of the per-cell pair mask and the input images kept for that pair
 * (heightmap_fusion_prepare's, or made at its first frame; remade only when its size
 * changes): the planes are copied into the pair's mapped staging buffer and uploaded from
 * it without a wait. FALSE with an error
 * and nothing added for an input the pair's images cannot take: a size over the GPU's
 * limits (GPU_ERROR_LIMIT), a size, stride or plane size that does not hold together
 * (G_IO_ERROR_INVALID_DATA); the fusion goes on with the other pairs. A GL error makes
 * the context failed (gpu_context_is_failed): nothing more can be fused. */
bool heightmap_fusion_add(HeightmapFusion *fusion, int pair, const HeightmapPairGeometry *geom,
                          const HeightmapInput *input, GError **error);

/* Resolves and downloads. `heights` (grid width * height floats, row-major) receives the
 * robust top height of every cell: with n points in the cell, need = max(min_points,
 * ceil(top_fraction * n)); the top is the height that `need` points reach, found in the
 * highest bin where the count from the top reaches `need`, interpolated inside that bin
 * as if its points were spread evenly. NaN when n < min_points. A single stray point
 * (min_points >= 2) can therefore never set a cell's height. `masks` (may be NULL, same
 * size) receives the bit set of the pairs whose points fell into the cell. */
bool heightmap_fusion_finish(HeightmapFusion *fusion, float *heights, uint32_t *masks,
                             GError **error);
/* The body support of every cell of the last heightmap_fusion_finish (NULL before one):
 * grid width * height words, the cell's points 0.2-0.6 m high (a standing player's shins
 * and knees) in the low 16 bits and all its points from 0.2 m up in the high 16
 * (saturated at 65535; carved bins not counted). Valid until the next finish. */
const uint32_t *heightmap_fusion_get_support(const HeightmapFusion *fusion);
/* The body masks of every cell of the last heightmap_fusion_finish (NULL before one): the
 * bit set of the pairs with a point 0.6 m high or more in the cell (a body's trunk; the
 * pair masks count the ground's points too). Valid until the next finish. */
const uint32_t *heightmap_fusion_get_body_masks(const HeightmapFusion *fusion);
/* The body bands of every cell of the last heightmap_fusion_finish (NULL before one): the
 * cell's points 0.2-0.6, 0.6-1.0, 1.0-1.4 and 1.4-1.8 m high in bytes 0..3 of its word
 * (each saturated at 255; carved bins not counted): where a blob's points lie below its
 * top (lower_body). Valid until the next finish. */
const uint32_t *heightmap_fusion_get_lower(const HeightmapFusion *fusion);
/* The see-through masks of every cell of the last heightmap_fusion_finish: the pairs
 * (bit per pair) whose rays to a ground point crossed the cell see_height m high or lower
 * on their way; NULL before one and without see_height. Valid until the next finish. */
const uint32_t *heightmap_fusion_get_see_through(const HeightmapFusion *fusion);

/* ---------------------------------------------------------------- blobs (blobs.h) */

#define HEIGHTMAP_H_INSIDE
#include "heightmap/blobs.h"
#undef HEIGHTMAP_H_INSIDE

/* ---------------------------------------------------------------- velocities */

/* A blob's velocity from the optical flow of its pixels, pair by pair. For a pixel q of
 * the pair's previous frame whose flow f is known, its point then, P0 = pitch(q, d0(q)),
 * and now, P1 = pitch(q + f, d1(q + f)) (d0, d1: the previous and this frame's disparity,
 * d1 at the nearest pixel), give the scene flow (P1 - P0) / dt; projected on the pitch
 * plane it is one sample of the velocity of the blob whose cell P1 falls in, when both
 * points are body points (z >= min_height), the pixel's confidence is at least
 * min_confidence and the step is below HEIGHTMAP_VELOCITY_MAX_SPEED.
 *
 * Per pair that has at least min_samples samples of a blob, the velocity is the median of
 * each component in the pair's view frame: along the horizontal view direction u (from
 * its camera to the blob) and across it. The two are not measured alike: across, the
 * flow gives the motion to a fraction of a pixel (the error is the median's sampling
 * error, 1.2533 * 1.4826 MAD / sqrt(n), at least HEIGHTMAP_VELOCITY_MIN_SIGMA); along, the
 * motion is the change of the depth, whose error is the blob's disparity error in both
 * frames, not averaged out by the median (it moves all of a blob's pixels together):
 * sigma sqrt(2) D L disparity_noise / (f B) / dt, with D and L the 3-D and horizontal
 * distances from the camera to the blob's top (as the blobs' position covariance,
 * blobs.c). The pairs' velocities are joined by their information (inverse covariance)
 * into the blob's velocity and its covariance. The median keeps the arms, legs and edge
 * pixels (background disparity) out.
 *
 * The previous frame is the pair's frame number - 1, kept here (its disparity copied at
 * each add): a pair whose previous frame was not added, whose frame has no flow planes,
 * or whose size changed gives no samples for that frame. The flow planes are in the left
 * camera's captured pixel grid and the disparity in the rectified one (<stereod/ring.h>):
 * they are taken as the same grid, exact for pairs without lens distortion and
 * rectifying rotation (as stereod-sim's), otherwise an approximation of the size of the
 * rectification's displacement. Memory: the previous disparity per pair (grown on a size
 * change, not per frame) and HEIGHTMAP_VELOCITY_MAX_SAMPLES samples per fused frame (more
 * are left out). */
#define HEIGHTMAP_VELOCITY_MAX_SPEED 12.0     /* m/s */
#define HEIGHTMAP_VELOCITY_MIN_SIGMA 0.1      /* m/s */
#define HEIGHTMAP_VELOCITY_MAX_SAMPLES (1 << 20)
#define HEIGHTMAP_VELOCITY_MIN_SAMPLES 20     /* the builder's min_samples */

typedef struct {
  double min_height;        /* m: both ends of a sample are at least this high */
  int min_confidence;       /* 0..255, as the fusion's */
  int min_samples;          /* >= 1: fewer samples from a pair, no velocity from it */
  double disparity_noise;   /* px: sigma of a blob's disparity (as HeightmapBlobParams) */
} HeightmapVelocityParams;

typedef struct HeightmapVelocity HeightmapVelocity;

HeightmapVelocity *heightmap_velocity_new(const HeightmapGrid *grid,
                                          const HeightmapVelocityParams *params);
void heightmap_velocity_free(HeightmapVelocity *velocity);
void heightmap_velocity_set_params(HeightmapVelocity *velocity,
                                   const HeightmapVelocityParams *params);
/* Starts a fused frame whose blobs are n_blobs with the cell labels of
 * heightmap_blob_finder_get_labels (read until heightmap_velocity_finish). */
void heightmap_velocity_begin(HeightmapVelocity *velocity, const int32_t *labels, int n_blobs);
/* Samples pair `pair`'s frame (when its previous frame is known) and keeps its disparity
 * for the next one. FALSE (nothing sampled, the pair's history forgotten) for an input
 * whose planes do not fit their sizes. */
bool heightmap_velocity_add(HeightmapVelocity *velocity, int pair,
                            const HeightmapPairGeometry *geometry, const HeightmapInput *input,
                            uint64_t frame_number, uint64_t capture_ns);
/* The blobs of the frame with their velocities (has_velocity, vx, vy, velocity_cov), in
 * memory of `velocity` (valid until the next finish); n_blobs as given to begin. */
const HeightmapBlob *heightmap_velocity_finish(HeightmapVelocity *velocity,
                                               const HeightmapBlob *blobs, int n_blobs);

/* ---------------------------------------------------------------- tracks */

typedef struct {
  uint32_t id;              /* stable, 1, 2, ... in order of creation */
  double x, y;              /* pitch m: the filtered position (the blob's, acceleration 0) */
  double vx, vy;            /* m/s: the filter's (the blob's measured velocity is one of
                               its measurements) */
  bool has_measured;        /* the last matched blob had a measured velocity: */
  double measured_vx, measured_vy;   /* m/s, that velocity (HeightmapBlob.vx, vy) */
  double height, area;      /* of the last matched blob */
  int age;                  /* fused frames since creation */
  int missed;               /* consecutive fused frames without a blob (a reported
                               track with missed > 0 is coasting: its position is the
                               prediction to the frame's time) */
  int hits;                 /* fused frames with a blob since the last miss (a tentative
                               track's count goes on through its gaps) */
  bool confirmed;           /* hits reached the tracker's `confirm` once */
} HeightmapTrack;

typedef struct {
  double gate;              /* m, the largest distance from a prediction to a blob */
  int max_missed;           /* a track unseen for more fused frames is dropped */
  int confirm;              /* frames with a blob before a track is reported (a player,
                               not image noise); 0 or 1 = at once */
  int confirm_gap;          /* a tentative track survives this many frames in a row
                               without a blob (its hits count on); 0 = dropped at its
                               first miss, so `confirm` consecutive hits */
  int coast;                /* a confirmed track unseen for 1..coast frames is still
                               reported, at its predicted position (far players whose
                               blob comes and goes); 0 = seen tracks only */
  double acceleration;      /* m/s^2: sigma of the players' acceleration in the tracks'
                               constant-velocity Kalman filter; 0 = no filter, a track
                               reports its blob's position */
  double max_height;        /* m: a blob higher than this starts no track, but keeps the
                               track it matches (a player in a jump); 0 = any height */
} HeightmapTrackerParams;

/* The parameters of each stage as a configuration gives them. */
HeightmapFusionParams heightmap_config_fusion_params(const HeightmapConfig *config);
HeightmapBlobParams heightmap_config_blob_params(const HeightmapConfig *config);
HeightmapTrackerParams heightmap_config_tracker_params(const HeightmapConfig *config);
/* min_height, min_confidence and disparity_noise of the configuration,
 * HEIGHTMAP_VELOCITY_MIN_SAMPLES. */
HeightmapVelocityParams heightmap_config_velocity_params(const HeightmapConfig *config);

typedef struct HeightmapTracker HeightmapTracker;

HeightmapTracker *heightmap_tracker_new(const HeightmapTrackerParams *params);
void heightmap_tracker_free(HeightmapTracker *tracker);
/* New parameters from the next heightmap_tracker_update; the tracks and their ids stay.
 * A confirmed track stays confirmed; a tentative one needs the new `confirm` hits (those
 * it already has count). */
void heightmap_tracker_set_params(HeightmapTracker *tracker,
                                  const HeightmapTrackerParams *params);
/* Predicts every track to time_ns (constant velocity), matches blobs to predictions
 * nearest first within the gate (each at most once), updates the matched tracks (the
 * velocity is smoothed), starts a track for every unmatched blob and drops tracks missed
 * more than max_missed times. Returns the number of confirmed tracks seen in this frame,
 * and those unseen for at most `coast` frames (a track is confirmed once it was matched
 * in `confirm` frames, with gaps of at most `confirm_gap`); *tracks
 * points to them (sorted by id, valid until the next call). */
int heightmap_tracker_update(HeightmapTracker *tracker, uint64_t time_ns,
                             const HeightmapBlob *blobs, int n_blobs,
                             const HeightmapTrack **tracks);

/* ---------------------------------------------------------------- output */

/* Appends one JSON line (with '\n') to `out`:
 * {"time_ns":T,"frame":F,"pairs":["a","b"],"players":[{"id":1,"x":1.234,"y":-5.678,
 *  "height":1.83,"area":0.42,"vx":1.52,"vy":-0.31,"track_vx":1.48,"track_vy":-0.30},...]}
 * (x, y, height in m, 3 decimals; area m^2; velocities m/s, 2 decimals). "vx", "vy": the
 * velocity measured from the optical flow of the player's pixels in this frame
 * (HeightmapVelocity), present only when measured; "track_vx", "track_vy": the track's
 * filtered velocity. */
void heightmap_json_append(GString *out, uint64_t time_ns, uint64_t frame,
                           const char *const *pairs, int n_pairs,
                           const HeightmapTrack *tracks, int n_tracks);

/* A listening Unix stream socket that sends every line to every client. Never blocks:
 * a client whose socket cannot take a whole line at once is dropped. At most
 * HEIGHTMAP_SERVER_MAX_CLIENTS clients; more are refused (closed at once). Refusals are
 * logged once per burst: the first one, then at most one line per
 * HEIGHTMAP_SERVER_REFUSAL_LOG_S with the number refused since ("refused N more
 * clients on PATH in the last T s"), and that count once more when the server is
 * freed. */
#define HEIGHTMAP_SERVER_MAX_CLIENTS 64
#define HEIGHTMAP_SERVER_REFUSAL_LOG_S 10
typedef struct HeightmapServer HeightmapServer;
/* Binds `path`, mode 0660. Something already there is probed first: a socket that
 * accepts a connection belongs to a running server, and is left alone
 * (G_IO_ERROR_ADDRESS_IN_USE, "another stereod-heightmap serves PATH"); only a stale
 * socket (the connection is refused: nobody listens) is removed and replaced. */
HeightmapServer *heightmap_server_new(const char *path, GError **error);
/* Closes all, unlinks the path when it is still the socket bound here. */
void heightmap_server_free(HeightmapServer *server);
/* Accepts pending clients, then sends `line` (len bytes) to each. */
void heightmap_server_send(HeightmapServer *server, const char *line, size_t len);
int heightmap_server_get_clients(HeightmapServer *server);

/* The resources one running builder owns alone, its socket and its output ring, held
 * by flock(2) on a lock file next to each (instance.c): PATH.lock beside the socket
 * and /dev/shm/stereod.RING~lock beside the ring ('~' is never in a ring name). Taken
 * before the socket or the ring is touched, so that a second builder with the same
 * socket or ring refuses to start (G_IO_ERROR_BUSY: "another stereod-heightmap serves
 * PATH" / "publishes the ring RING") instead of replacing the running one's. The kernel
 * drops the locks with the process, so a builder that died leaves nothing that blocks
 * the next start; a stale socket or ring is then replaced as before. */
typedef struct HeightmapInstance HeightmapInstance;
/* `socket_path` may be NULL (no socket). */
HeightmapInstance *heightmap_instance_new(const char *socket_path, const char *ring_name,
                                          GError **error);
/* Unlinks the lock files (still holding them) and releases them. Accepts NULL. */
void heightmap_instance_free(HeightmapInstance *instance);

/* Writes the height map as an RGB PNG (view.c: colour = height, black = no data, grey
 * pitch lines, a white cross per track). */
bool heightmap_view_write_png(const char *path, const HeightmapGrid *grid, const float *heights,
                              const HeightmapTrack *tracks, int n_tracks, GError **error);

/* ---------------------------------------------------------------- metrics */

/* The builder's Prometheus metrics (metrics/metrics.h) on `metrics=` (metrics.c):
 *   stereod_heightmap_fused_frames_total           counter
 *   stereod_heightmap_pairs_per_fused_frame        histogram (pairs in each fused frame)
 *   stereod_heightmap_players                      gauge (tracks reported in the last one)
 *   stereod_heightmap_builder_seconds              histogram (fusion, blobs, tracks and
 *                                                  outputs of one fused frame)
 *   stereod_heightmap_pair_frames_fused_total{pair}    counter
 *   stereod_heightmap_pair_frames_refused_total{pair}  counter (frames the fusion refused)
 *   stereod_heightmap_pair_ring_open{pair}         gauge, 1 while the pair's ring is open
 *   stereod_heightmap_socket_clients               gauge
 *   stereod_heightmap_build_info{version}          gauge, 1
 * The updates are atomics (any thread, never blocked by a scrape); the HTTP server runs
 * on a thread of its own and touches neither the GPU nor the builder's data. */
typedef struct HeightmapMetrics HeightmapMetrics;

/* Registers the families for the pairs of `config` and serves them on
 * config->metrics_address (which must be set). NULL and a G_IO_ERROR when it cannot
 * listen there. */
HeightmapMetrics *heightmap_metrics_new(const HeightmapConfig *config, GError **error);
void heightmap_metrics_free(HeightmapMetrics *metrics);
/* "http://ADDRESS:PORT/metrics" (the port chosen for port 0), newly allocated. */
char *heightmap_metrics_get_url(HeightmapMetrics *metrics);
/* One fused frame of the pairs in `pairs` (indices into the configuration's pairs), with
 * `players` tracks reported, built in `seconds`. */
void heightmap_metrics_fused(HeightmapMetrics *metrics, const int *pairs, int n_pairs,
                             int players, double seconds);
/* A frame of pair `pair` the fusion refused. */
void heightmap_metrics_refused(HeightmapMetrics *metrics, int pair);
void heightmap_metrics_set_open(HeightmapMetrics *metrics, int pair, bool open);
void heightmap_metrics_set_clients(HeightmapMetrics *metrics, int clients);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapConfig, heightmap_config_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapFusion, heightmap_fusion_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapVelocity, heightmap_velocity_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapTracker, heightmap_tracker_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapServer, heightmap_server_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapInstance, heightmap_instance_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HeightmapMetrics, heightmap_metrics_free)

G_END_DECLS
