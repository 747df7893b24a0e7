/* config.h: the stereod configuration (GKeyFile), its validation and what a reload changes.
 *
 * Load order: built-in defaults, then the main file (stereod_config_default_path(), or
 * the --config FILE given), then the drop-ins DIR/conf.d/NAME.conf where DIR is the main
 * file's directory (when conf.d exists), in the byte order of their names (strcmp, no
 * locale). A later file may set any key again; the last value wins. Drop-in names must
 * end in ".conf" and not start with '.'; other entries of conf.d are ignored.
 *
 * Every file is read with common/keyfile.h: only a regular file of at most
 * STEREOD_CONFIG_MAX_FILE_SIZE bytes (a FIFO or a device is refused at once), no NUL
 * byte, no group twice in one file, no key twice in one group, a UTF-8 byte order mark
 * skipped. Every key is documented in config/stereod.conf. Every value is range-checked,
 * numbers are decimal, parsed without locale effects and completely ("12abc" and "0x10"
 * are errors), unknown groups and keys are errors. Error messages (domain
 * STEREOD_CONFIG_ERROR) name the file the bad value came from:
 *     "FILE: [group] key: problem"     a value (or a required key that no file sets: FILE
 *                                      is then the first file with that group)
 *     "FILE: [group]: problem"         a whole group (unknown group, bad pair name, ...)
 *     "FILE: problem"                  the file itself (unreadable, not a key file, no pair)
 *
 * A StereodConfig is plain data, immutable after loading: it may be read from any thread.
 * A reload loads a new one and swaps it in (stereod_config_diff() says what changed).
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

#include <stereod/ring.h>

#include "kernels/calib.h"
#include "kernels/stereo-params.h"

G_BEGIN_DECLS

/* Exit status for a bad configuration (sysexits.h EX_CONFIG); the unit file has
 * RestartPreventExitStatus=78 so that systemd does not restart-loop on it. */
#define STEREOD_EXIT_CONFIG 78

#define STEREOD_CONFIG_MAX_PAIRS 32
#define STEREOD_CONFIG_MAX_NAME 32        /* pair name length, bytes */
#define STEREOD_CONFIG_MAX_DROPINS 256    /* files in conf.d */
#define STEREOD_CONFIG_MAX_FILE_SIZE (1 << 20)  /* bytes per file */

#define STEREOD_CONFIG_ERROR (stereod_config_error_quark())
GQuark stereod_config_error_quark(void);

typedef enum {
  STEREOD_CONFIG_ERROR_IO,          /* a file or conf.d cannot be read */
  STEREOD_CONFIG_ERROR_SYNTAX,      /* not a key file */
  STEREOD_CONFIG_ERROR_UNKNOWN,     /* a group or key this version does not know */
  STEREOD_CONFIG_ERROR_MISSING,     /* a required key, or no pair at all */
  STEREOD_CONFIG_ERROR_INVALID,     /* a value that is malformed, out of range or inconsistent */
  STEREOD_CONFIG_ERROR_CALIBRATION, /* a calibration file does not load or does not fit */
  STEREOD_CONFIG_ERROR_COUNT
} StereodConfigError;

/* [daemon] log_level: the least severe level that is printed. */
typedef enum {
  STEREOD_LOG_ERROR,                /* G_LOG_LEVEL_ERROR and CRITICAL */
  STEREOD_LOG_WARNING,
  STEREOD_LOG_MESSAGE,
  STEREOD_LOG_INFO,
  STEREOD_LOG_DEBUG,
  STEREOD_LOG_COUNT
} StereodLogLevel;

/* "error", "warning", "message", "info", "debug". */
const char *stereod_log_level_name(StereodLogLevel level);
/* The GLib levels to print at `level` (for a log handler or a writer func). */
GLogLevelFlags stereod_log_level_mask(StereodLogLevel level);

/* [pair] clock: where the capture times of a pair's frames come from (daemon/capture.h,
 * "Capture time"). */
typedef enum {
  STEREOD_CLOCK_AUTO,               /* sender for RTP sources, arrival for other live ones,
                                       replay for files and recordings */
  STEREOD_CLOCK_SENDER,             /* the cameras' own clocks (RTCP sender reports) */
  STEREOD_CLOCK_ARRIVAL,            /* this machine's pipeline clock */
  STEREOD_CLOCK_REPLAY,             /* one common start + the recordings' timestamps */
  STEREOD_CLOCK_COUNT
} StereodClock;

/* [pair] outputs: the published planes, the same bits as the ring's formats so that the
 * mask can be handed to ring_writer_new() unchanged. */
typedef enum {
  STEREOD_OUTPUT_DISPARITY = STEREOD_RING_FORMAT_DISPARITY,   /* s16, 1/32 px */
  STEREOD_OUTPUT_DEPTH = STEREOD_RING_FORMAT_DEPTH,           /* u16 mm, needs a calibration */
  STEREOD_OUTPUT_CONFIDENCE = STEREOD_RING_FORMAT_CONFIDENCE, /* u8 */
  STEREOD_OUTPUT_DEPTH_M = STEREOD_RING_FORMAT_FLOAT32,       /* f32 m, needs a calibration */
} StereodOutput;

typedef struct {
  char *name;                 /* [A-Za-z0-9_-]{1,32}, unique; the ring is /stereod.<name> */
  char *left, *right;         /* GStreamer source descriptions (gst-launch syntax), non-empty;
                                 not parsed here */
  int width, height;          /* rectified input size, px, 16..8192 */
  double fps;                 /* expected frame rate, 0.1..1000 */
  gint64 tolerance_ns;        /* PTS pairing tolerance, ns */
  char *calibration_path;     /* absolute path, NULL when none */
  bool has_calibration;
  bool max_disparity_auto;    /* max_disparity=auto: params.max_disparity from the calibration */
  bool max_disparity_clamped; /* ... and the pitch's nearest points need more than 1000 or
                                 width - 1 px (the pair's log says so at start) */
  StereoCalib calib;          /* loaded and checked to be width x height when has_calibration */
  StereoParams params;        /* stereo_params_init(width, height) + the keys below,
                                 validated with stereo_params_validate(); its
                                 ground_margin is the key's plus ground_tilt's px */
  double ground_tilt;         /* ground_tilt, degrees of the pose's tilt, 0 when absent */
  guint32 outputs;            /* StereodOutput bits, at least one */
  bool flow;                  /* [pair] flow: publish the left camera's optical flow (ring
                                 planes FLOW_U and FLOW_V); default false */
  int reconnect_min_ms;       /* capture reconnect backoff: first wait, ms */
  int reconnect_max_ms;       /* the wait doubles up to this, ms (>= reconnect_min_ms) */
  StereodClock clock;         /* default STEREOD_CLOCK_AUTO */
  int stall_ms;               /* no frame for this long: stalled, reconnect; 0 = 3 frame
                                 periods */
  int start_timeout_ms;       /* no first frame (or sender report) this long after a
                                 start: reconnect; default 10000 */
  char *left_file, *right_file;  /* the file that set left / right, for messages about
                                    the pipelines ("FILE: [pair NAME] left: ...") */
} StereodPairConfig;

typedef struct {
  char *path;                 /* the main file, as given */
  char **files;               /* every file read, in order (main file first), NULL-terminated */

  /* [daemon] */
  char *device;               /* "auto", "hardware", "software", "surfaceless" or a decimal
                                 EGL device index; NULL when no file sets it (GpuContextParams
                                 then consults STEREOD_EGL_DEVICE, else auto) */
  StereodLogLevel log_level;  /* default STEREOD_LOG_MESSAGE */
  int stats_interval_s;       /* seconds between stats log lines / STATUS=, 1..3600, 10 */
  int ring_slots;             /* slots per shm ring, 2..64, 4 */
  int in_flight;              /* batches on the GPU at once, the whole daemon, 1..8, 2 */
  bool offline;               /* mode=offline: recordings, every frame, exit at the end */
  double offline_speed;       /* offline: at most this many times the recordings' own rate
                                 (their timestamps), 0..1000; 0 = as fast as the GPU goes */
  char *metrics;              /* "ADDRESS:PORT" of /metrics (metrics_address_parse), NULL =
                                 none (the default) */

  int n_pairs;                /* 1..STEREOD_CONFIG_MAX_PAIRS */
  StereodPairConfig *pairs;   /* in the order the groups first appear */
} StereodConfig;

/* The main file used when stereod_config_load() gets NULL:
 * SYSCONFDIR/stereod/stereod.conf, where SYSCONFDIR is meson's prefix/sysconfdir
 * (/etc for prefix /usr, /usr/local/etc for /usr/local unless -Dsysconfdir=/etc). */
const char *stereod_config_default_path(void);

/* Loads, merges and validates the configuration (see the top of this file), including
 * every calibration file. Returns a new config, or NULL and an error in the
 * STEREOD_CONFIG_ERROR domain. Reads files only; thread safe. */
StereodConfig *stereod_config_load(const char *path, GError **error);

/* The same for one file's text in memory (no drop-ins); `name` stands for the file in
 * messages and a relative calibration path is taken from name's directory. For tests
 * and fuzzing. */
StereodConfig *stereod_config_load_data(const char *data, gsize length, const char *name,
                                        GError **error);

/* Accepts NULL. */
void stereod_config_free(StereodConfig *config);

/* max_disparity=auto's value for the log and --check-config ("max_disparity auto: N px
 * (...)", with a note when clamped); NULL when the pair's range is not auto. g_free it. */
char *stereod_pair_max_disparity_note(const StereodPairConfig *pair);
/* With ground_margin (the pitch-plane prior): the margin as the pose's tilt it allows at
 * this camera (f B / h px a radian), for the operator to check against the survey's
 * error; NULL without the prior. */
char *stereod_pair_ground_note(const StereodPairConfig *pair);

/* The pair called `name`, or NULL. */
const StereodPairConfig *stereod_config_find_pair(const StereodConfig *config,
                                                  const char *name);

/* What a reload (SIGHUP) changes, from stereod_config_diff(old, new).
 *
 * Applied live:
 *  - [daemon] log_level, stats_interval;
 *  - per pair: reconnect_min_ms, reconnect_max_ms (read at the next reconnect);
 *  - per pair: max_disparity, scales, lr_check, refine, window, smoothing, noise_floor,
 *    coarse_fallback, ground_margin.
 *    These change the engine's internal images (and programs) but neither the input nor
 *    the output sizes: the GPU thread recreates that pair's StereoEngine from the new
 *    params between two frames; the ring stays.
 * Everything else needs a restart: [daemon] device, ring_slots, in_flight (the GPU
 * context and the buffers of every pair), mode, metrics (the HTTP server); the set of pair names; per pair left,
 * right, fps, pair_tolerance_ms, clock, stall_ms, start_timeout_ms (the capture pipeline,
 * its matcher and its timers), width, height, outputs, flow
 * (ring layout) and the calibration (file name or contents: rectification maps and the
 * ring header). The recommended reaction to `restart` is to keep running the old
 * configuration unchanged and log `restart_reason`. */
typedef struct {
  bool changed;               /* anything at all differs */
  bool restart;               /* something only a restart applies differs */
  char *restart_reason;       /* e.g. "[daemon] ring_slots, [pair west] width"; NULL if none */
  bool log_level;             /* [daemon] log_level differs */
  bool stats_interval;        /* [daemon] stats_interval differs */
  guint32 engine_pairs;       /* bit i: new->pairs[i] has other filter params (recreate its
                                 engine); only meaningful when !restart */
  guint32 backoff_pairs;      /* bit i: new->pairs[i] has another reconnect backoff */
} StereodConfigDiff;

/* Compares two loaded configs; pairs are matched by name. Fills *diff (clear it with
 * stereod_config_diff_clear()). Returns diff->restart. */
bool stereod_config_diff(const StereodConfig *old_config, const StereodConfig *new_config,
                         StereodConfigDiff *diff);
void stereod_config_diff_clear(StereodConfigDiff *diff);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(StereodConfig, stereod_config_free)
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(StereodConfigDiff, stereod_config_diff_clear)

G_END_DECLS
