/* sim.h: the parts of stereod-sim, a synthetic football stadium seen by stereo pairs,
 * rendered by analytic ray casting so that the ground truth is the geometry itself.
 *
 *  - sim-config.c: the sim config file (GKeyFile, documented in config/demo/sim.conf);
 *  - sim-scene.c: pitch, stands, goals, players and ball; their motion; ray intersection;
 *  - sim-texture.c: procedural surface textures (functions of surface coordinates, so both
 *    views of a pair see the same surface);
 *  - sim-motion.c: the players' paths of the match-like motion (sprints, stops, turns);
 *  - sim-stadium.c: a random stadium drawn from a seed, written as a sim config;
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

typedef enum {
  SIM_MOTION_WAVES,            /* sums of sinusoids (the demo's players) */
  SIM_MOTION_PLAY,             /* runs between waypoints: sprints, stops, turns, clusters */
  SIM_MOTION_COUNT
} SimMotion;

typedef enum {
  SIM_KIT_PLAIN,
  SIM_KIT_STRIPES,             /* vertical stripes on the shirt */
  SIM_KIT_HOOPS,               /* horizontal hoops on the shirt */
  SIM_KIT_COUNT
} SimKitPattern;

typedef struct {
  double shirt, shirt2;        /* albedo 0..255; shirt2 is the pattern's second tone */
  double shorts, socks;
  SimKitPattern pattern;
} SimKit;

/* [look]: what a drawn stadium varies. Without the group (custom false) the scene is the
 * demo's: its sun, kits, 12 m stands, wave motion and 0.24 m bodies. */
typedef struct {
  bool custom;
  double sun[3];               /* unit vector towards the sun */
  double shadow;               /* luminance factor of shadowed ground, 0.1..1 */
  double grass;                /* gain on the grass albedo */
  SimKit kits[2];
  double stand_height[4];      /* m, per side: y < 0, y > 0, x < 0, x > 0; 0 = no stand */
  SimMotion motion;
  int corner;                  /* -1 open play; 0..3 a corner kick at (-x -y, +x -y, -x +y, +x +y) */
  double radius[2];            /* body radius range, m */
  double height[2];            /* player height range, m */
} SimLook;

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

  SimLook look;                /* [look] */

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
/* The drawn players' legs kept though they bring two bodies into contact (the path's
 * draws ran out: sim_path_build); 0 for the other motions. */
int sim_scene_get_touching(const SimScene *scene);
/* Ground contact point (pitch m) and height (m) of player i at the current time. */
void sim_scene_get_player(const SimScene *scene, int i, double *x, double *y, double *height);
/* Ball centre, pitch m; FALSE when the scene has no ball. */
bool sim_scene_get_ball(const SimScene *scene, double centre[3]);
/* Team (0 or 1) of player i. */
int sim_scene_get_team(const SimScene *scene, int i);
/* Body radius of player i, m (its footprint is pi r^2). */
double sim_scene_get_radius(const SimScene *scene, int i);
/* Does the camera at `centre` see player i: is the first surface on the ray from the
 * centre to one of a few points of the body (its axis at 0.25, 0.5 and 0.8 of its
 * height, moved towards the camera by half the radius) that player? Thread safe like trace. */
bool sim_scene_player_visible(const SimScene *scene, int i, const double centre[3]);

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
/* A drawn stadium's kit (SimLook): the same layout as the demo's kits in other tones. */
double sim_texture_kit_custom(const SimKit *kit, int player, double z, double height,
                              double azimuth, const double local[3], double fp);
double sim_texture_ball(const double dir[3]);
/* Deterministic hashing and value noise shared by the textures and the renderer. */
guint64 sim_hash64(guint64 x);
double sim_value_noise2(double x, double y, guint64 seed);
double sim_value_noise3(double x, double y, double z, guint64 seed);

/* Match-like paths (sim-motion.c) ------------------------------------------------- */

typedef struct {
  double t0;                   /* start, s */
  double x0, y0, ux, uy;       /* start point and unit direction, pitch m */
  double len, a, t_acc, v, t_run, t_end;   /* m, m/s^2, s, m/s, s, s (relative to t0) */
} SimLeg;

typedef struct {
  SimLeg *legs;
  int n_legs;
  int cursor;                  /* the leg of the last query (queries go forward) */
} SimPath;

/* The roles of the drawn players: where their runs go. */
typedef struct {
  double cx, cy;               /* centre of the zone, pitch m */
  double radius;               /* waypoints within this distance of the centre, m */
  double sprint;               /* share of the runs at sprint speed, 0..1 */
  double max_speed;            /* m/s */
  double pause;                /* the longest stop at a waypoint, s */
} SimRole;

/* The bodies a new path keeps clear of: the paths built before it, with their radii. */
typedef struct {
  SimPath *paths[SIM_MAX_PLAYERS];
  double radius[SIM_MAX_PLAYERS];
  int n;
} SimBodies;

/* Builds the runs of one player (of `radius` m) from time 0 to `duration` s: accelerate
 * at 2.5-5 m/s^2, run, brake to a stop at the waypoint, turn, sometimes stand. Speeds
 * never exceed role->max_speed; positions stay on the pitch. With `avoid`, no leg brings
 * the body into one of theirs from time 0 on (a leg that would is drawn again, up to
 * SIM_PATH_TRIES times, then the leg before it, up to SIM_PATH_BACKTRACKS times in all;
 * past that the last draw is kept and counted): two players cannot stand in one place.
 * Returns the legs kept that touch another body. */
#define SIM_PATH_TRIES 24
#define SIM_PATH_BACKTRACKS 200
int sim_path_build(SimPath *path, const SimRole *role, double duration, GRand *rand,
                   double radius, SimBodies *avoid);
/* Position at time t (s); t beyond the last leg stays at its end. */
void sim_path_at(SimPath *path, double t, double *x, double *y);
void sim_path_clear(SimPath *path);

/* Roles of the 22 players (more are given the open-play roles again) for a look: the
 * corner kick's cluster in the box, or open-play zones around a drawn centre of play. */
void sim_roles_draw(const SimLook *look, int n_players, double max_speed, GRand *rand,
                    SimRole *roles);

/* Random stadiums (sim-stadium.c) -------------------------------------------------- */

typedef struct {
  guint64 seed;                /* the stadium */
  int pairs;                   /* 0: drawn, 2..8 */
  double scale;                /* image size factor (focal lengths follow), 0.05..1 */
  int frames;                  /* frames of the clip, >= 1 */
  double fps;
} SimStadiumParams;

#define SIM_STADIUM_MIN_PAIRS 2
#define SIM_STADIUM_MAX_PAIRS 8

/* The stadium of params->seed as the text of a sim config ([output], [scene], [look]
 * and one [pair pN] per camera pair, with comments giving the full-size sensor). The
 * same params give the same text (GRand's Mersenne Twister; values are written rounded
 * and the config read back is the stadium). Caller frees. */
char *sim_stadium_describe(const SimStadiumParams *params);

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
