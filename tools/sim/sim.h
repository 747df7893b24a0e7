/* sim.h: the parts of stereod-sim, a synthetic football stadium seen by stereo pairs,
 * rendered by analytic ray casting so that the ground truth is the geometry itself.
 *
 *  - sim-config.c: the sim config file (GKeyFile, documented in config/demo/sim.conf);
 *  - sim-scene.c: pitch, stands, goals, players and ball; their motion; ray intersection;
 *  - sim-texture.c: procedural surface textures (functions of surface coordinates, so both
 *    views of a pair see the same surface);
 *  - sim-render.c: cameras, per-pixel ray casting over threads, noise, lens distortion;
 *  - sim-output.c: JPEG / PNG / PFM writers.
 *
 * Pitch frame: origin at the centre spot, x along the touchline, y across, z up, metres.
 * Camera frame: x right, y down, z forward (OpenCV). Internal to tools/; not thread safe
 * unless stated.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/calib.h"

G_BEGIN_DECLS

#define SIM_ERROR (sim_error_quark())
GQuark sim_error_quark(void);
typedef enum {
  SIM_ERROR_CONFIG,     /* a bad config file: exit status 78 */
  SIM_ERROR_IO,         /* an output that cannot be written */
  SIM_ERROR_COUNT
} SimError;

#define SIM_MAX_PLAYERS 64
#define SIM_MAX_PAIRS 64

/* Configuration ------------------------------------------------------------------ */

typedef enum {
  SIM_FORMAT_JPEG,
  SIM_FORMAT_PNG,
  SIM_FORMAT_COUNT
} SimFormat;

typedef struct {
  char *name;                  /* [pair NAME], used as the output folder name */
  double position[3];          /* left camera centre, pitch m */
  double look_at[3];           /* a point on the optical axis, pitch m */
  double roll;                 /* degrees about the optical axis */
  double baseline;             /* m, right camera at +baseline along the camera x axis */
  double focal;                /* px, fx = fy */
  int width, height;           /* px */
  double cx, cy;               /* principal point, px */
  double noise;                /* Gaussian noise sigma, gray levels */
  bool distorted;              /* write raw, distorted views */
  double distortion[5];        /* k1 k2 p1 p2 k3 (OpenCV) */
} SimPairConfig;

typedef struct {
  char *dir;                   /* [output] dir, NULL when absent */
  int frames;
  double fps;
  gint64 start_time_ns;        /* capture time of frame 0 */
  SimFormat format;
  int jpeg_quality;            /* 1..100 */
  guint64 seed;
  int supersample;             /* n x n rays per pixel */

  int players;                 /* [scene] */
  bool ball;
  bool stands;
  double max_speed;            /* m/s, players */

  int n_pairs;
  SimPairConfig *pairs;
} SimConfig;

/* Loads and validates (common/keyfile.h: a regular file of at most 1 MiB, no NUL byte,
 * no group or key twice, decimal numbers); errors are "FILE: [group] key: problem" in
 * SIM_ERROR_CONFIG. */
SimConfig *sim_config_load(const char *path, GError **error);
/* The same for text in memory; `name` stands for the file in messages. */
SimConfig *sim_config_load_data(const char *data, gsize length, const char *name,
                                GError **error);
void sim_config_free(SimConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimConfig, sim_config_free)

/* Scene ---------------------------------------------------------------------------- */

typedef struct SimScene SimScene;

typedef enum {
  SIM_HIT_NONE,
  SIM_HIT_GROUND,
  SIM_HIT_STAND,
  SIM_HIT_BOARD,
  SIM_HIT_GOAL,
  SIM_HIT_PLAYER,
  SIM_HIT_BALL,
  SIM_HIT_COUNT
} SimHitKind;

typedef struct {
  SimHitKind kind;
  int index;                   /* which stand, board, player */
  double t;                    /* distance along the unit direction, m */
  double point[3];             /* pitch m */
  double normal[3];            /* unit */
  double uv[2];                /* surface coordinates, m (stands, boards) */
} SimHit;

/* Player paths and sizes come from config->seed; positions at time 0. */
SimScene *sim_scene_new(const SimConfig *config);
void sim_scene_free(SimScene *scene);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimScene, sim_scene_free)

/* Moves players and ball to time t (seconds since frame 0). */
void sim_scene_set_time(SimScene *scene, double t);
int sim_scene_get_n_players(const SimScene *scene);
/* Ground contact point (pitch m) and height (m) of player i at the current time. */
void sim_scene_get_player(const SimScene *scene, int i, double *x, double *y, double *height);
/* Ball centre, pitch m; FALSE when the scene has no ball. */
bool sim_scene_get_ball(const SimScene *scene, double centre[3]);
/* Team (0 or 1) of player i. */
int sim_scene_get_team(const SimScene *scene, int i);

/* Nearest intersection of the ray origin + t dir (dir unit, t > 0). Thread safe while
 * the scene is not being moved. */
bool sim_scene_trace(const SimScene *scene, const double origin[3], const double dir[3],
                     SimHit *hit);
/* Luminance (0..255, before noise) of a hit, including Lambertian shading and shadows;
 * `fp` is the sample's footprint on the surface, m (see the textures). */
double sim_scene_shade(const SimScene *scene, const SimHit *hit, double fp);

/* Textures (sim-texture.c): albedo 0..255 from surface coordinates. `fp` is the
 * footprint of one ray sample on the surface (m): details finer than two footprints are
 * faded to their mean (band limiting, so the images do not alias), lines are drawn with
 * their area coverage. ---------------------------------------------------------- */
double sim_texture_ground(double x, double y, double fp);
double sim_texture_stand(int stand, double u, double v, double fp);
double sim_texture_board(int board, double u, double v, double fp);
double sim_texture_kit(int team, int player, double z, double height, double azimuth,
                       const double local[3], double fp);
double sim_texture_ball(const double dir[3]);
/* Deterministic hashing and value noise shared by the textures and the renderer. */
guint64 sim_hash64(guint64 x);
double sim_value_noise2(double x, double y, guint64 seed);
double sim_value_noise3(double x, double y, double z, guint64 seed);

/* Rendering ------------------------------------------------------------------------ */

typedef struct {
  const SimPairConfig *config;
  double R[9];                 /* camera -> pitch, columns right, down, forward */
  double centre[3];            /* left camera centre */
  double right_centre[3];      /* right camera centre */
} SimCamera;

void sim_camera_init(SimCamera *camera, const SimPairConfig *config);
/* The calibration of the pair as stereod sees it (rectified = the ideal pinhole pair;
 * the raw cameras carry the configured distortion). */
void sim_camera_get_calib(const SimCamera *camera, StereoCalib *calib);

/* Renders one frame of one pair: left and right 8-bit gray images (width * height,
 * tightly packed; raw distorted views when the pair has distortion) and the exact
 * disparity of the left rectified view (+inf where no surface). `noise_seed` makes the
 * noise of this pair and frame; rows are spread over `threads` threads. */
void sim_render_pair(const SimScene *scene, const SimCamera *camera, int supersample,
                     guint64 noise_seed, int threads, uint8_t *left, uint8_t *right,
                     float *gt);

/* Output --------------------------------------------------------------------------- */

bool sim_write_jpeg(const char *path, const uint8_t *gray, int width, int height,
                    int quality, GError **error);
bool sim_write_png(const char *path, const uint8_t *gray, int width, int height,
                   GError **error);
/* PFM (Middlebury): "Pf", little endian (scale -1), rows bottom-up. */
bool sim_write_pfm(const char *path, const float *data, int width, int height,
                   GError **error);

G_END_DECLS
