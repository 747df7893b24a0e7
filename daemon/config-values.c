/* config-values.c: the keys of [daemon] and [pair NAME], read from the merged files.
 * Numbers are parsed with g_ascii_* (no locale) and must be consumed completely; numbers
 * in messages are formatted with g_ascii_formatd for the same reason. The keys are
 * documented in config/stereod.conf. */
#include "config-private.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define DEFAULT_TOLERANCE_MS 5.0
#define DEFAULT_MAX_DISPARITY 128.0

static const char *const log_level_names[STEREOD_LOG_COUNT] = {
  "error", "warning", "message", "info", "debug"
};

const char *
stereod_log_level_name(StereodLogLevel level)
{
  g_return_val_if_fail(level >= 0 && level < STEREOD_LOG_COUNT, NULL);
  return log_level_names[level];
}

GLogLevelFlags
stereod_log_level_mask(StereodLogLevel level)
{
  static const GLogLevelFlags masks[STEREOD_LOG_COUNT] = {
    G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL,
    G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING,
    G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE,
    G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE |
      G_LOG_LEVEL_INFO,
    G_LOG_LEVEL_MASK,
  };
  g_return_val_if_fail(level >= 0 && level < STEREOD_LOG_COUNT, G_LOG_LEVEL_MASK);
  return masks[level];
}

/* Value access ---------------------------------------------------------------------- */

/* The file to blame for `key`: the one that set it, else the group's first file. */
static const char *
blame(const ConfigGroup *c, const char *key)
{
  const char *file = config_origin(c->set, c->group, key);
  return file ? file : config_group_file(c->set, c->group);
}

static bool G_GNUC_PRINTF(5, 6)
fail(const ConfigGroup *c, const char *key, GError **error, StereodConfigError code,
     const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *what = g_strdup_vprintf(format, ap);
  va_end(ap);
  return config_fail(error, code, blame(c, key), c->group, key, "%s", what);
}

#define invalid(c, key, error, ...) fail(c, key, error, STEREOD_CONFIG_ERROR_INVALID, __VA_ARGS__)

static const char *
num(char buf[G_ASCII_DTOSTR_BUF_SIZE], double x)
{
  return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%g", x);
}

/* The raw value with blanks stripped, or NULL when no file sets the key. */
static char *
get(const ConfigGroup *c, const char *key)
{
  char *v = g_key_file_get_value(c->set->merged, c->group, key, NULL);
  return v ? g_strstrip(v) : NULL;
}

static bool
missing(const ConfigGroup *c, const char *key, GError **error)
{
  return fail(c, key, error, STEREOD_CONFIG_ERROR_MISSING, "missing (required)");
}

static bool
get_int(const ConfigGroup *c, const char *key, bool required, int lo, int hi, int *out,
        bool *present, GError **error)
{
  g_autofree char *v = get(c, key);
  if (present)
    *present = v != NULL;
  if (!v)
    return required ? missing(c, key, error) : true;
  gint64 x;
  if (!g_ascii_string_to_signed(v, 10, G_MININT64, G_MAXINT64, &x, NULL))
    return invalid(c, key, error, "'%s' is not an integer", v);
  if (x < lo || x > hi)
    return invalid(c, key, error, "%s is outside %d..%d", v, lo, hi);
  *out = (int)x;
  return true;
}

static bool
get_double(const ConfigGroup *c, const char *key, bool required, double lo, double hi,
           double *out, bool *present, GError **error)
{
  g_autofree char *v = get(c, key);
  if (present)
    *present = v != NULL;
  if (!v)
    return required ? missing(c, key, error) : true;
  char *end = NULL;
  errno = 0;
  double x = g_ascii_strtod(v, &end);
  if (end == v || *end)
    return invalid(c, key, error, "'%s' is not a number", v);
  if (!isfinite(x) || errno == ERANGE)
    return invalid(c, key, error, "'%s' is not a finite number", v);
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  if (x < lo || x > hi)
    return invalid(c, key, error, "%s is outside %s..%s", v, num(a, lo), num(b, hi));
  *out = x;
  return true;
}

static bool
get_bool(const ConfigGroup *c, const char *key, bool *out, GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return true;
  if (strcmp(v, "true") == 0)
    *out = true;
  else if (strcmp(v, "false") == 0)
    *out = false;
  else
    return invalid(c, key, error, "'%s' is not true or false", v);
  return true;
}

/* A non-empty string with GKeyFile's escapes (\s \n \t \\) resolved; *out stays NULL
 * when the key is absent and not required. */
static bool
get_string(const ConfigGroup *c, const char *key, bool required, char **out, GError **error)
{
  g_autoptr(GError) local = NULL;
  if (!g_key_file_has_key(c->set->merged, c->group, key, NULL))
    return required ? missing(c, key, error) : true;
  /* On a bad escape GKeyFile returns the value AND sets an error. */
  g_autofree char *v = g_key_file_get_string(c->set->merged, c->group, key, &local);
  if (!v || local)
    return invalid(c, key, error, "not a valid string (the escapes are \\s \\n \\t \\r "
                   "\\\\; write a backslash as \\\\)");
  g_strstrip(v);
  if (!*v)
    return invalid(c, key, error, "empty");
  *out = g_steal_pointer(&v);
  return true;
}

/* [daemon] -------------------------------------------------------------------------- */

bool
config_load_daemon(const ConfigGroup *c, StereodConfig *cfg, GError **error)
{
  g_autofree char *device = get(c, "device");
  if (device) {
    static const char *const words[] = { "auto", "hardware", "software", "surfaceless", NULL };
    if (!g_strv_contains(words, device) &&
        !g_ascii_string_to_unsigned(device, 10, 0, 255, NULL, NULL))
      return invalid(c, "device", error, "'%s' is not auto, hardware, software, surfaceless "
                     "or an EGL device index 0..255", device);
    g_free(cfg->device);
    cfg->device = g_steal_pointer(&device);
  }
  g_autofree char *level = get(c, "log_level");
  if (level) {
    int i = 0;
    while (i < STEREOD_LOG_COUNT && strcmp(level, log_level_names[i]) != 0)
      i++;
    if (i == STEREOD_LOG_COUNT)
      return invalid(c, "log_level", error,
                     "'%s' is not error, warning, message, info or debug", level);
    cfg->log_level = (StereodLogLevel)i;
  }
  g_autofree char *mode = get(c, "mode");
  if (mode) {
    if (strcmp(mode, "live") != 0 && strcmp(mode, "offline") != 0)
      return invalid(c, "mode", error, "'%s' is not live or offline", mode);
    cfg->offline = strcmp(mode, "offline") == 0;
  }
  return get_int(c, "stats_interval", false, 1, 3600, &cfg->stats_interval_s, NULL, error) &&
         get_int(c, "ring_slots", false, 2, (int)STEREOD_RING_MAX_SLOTS, &cfg->ring_slots,
                 NULL, error) &&
         get_int(c, "in_flight", false, 1, 8, &cfg->in_flight, NULL, error);
}

/* [pair NAME] ----------------------------------------------------------------------- */

static bool
get_outputs(const ConfigGroup *c, guint32 *out, GError **error)
{
  static const struct { const char *name; guint32 bit; } outputs[] = {
    { "disparity", STEREOD_OUTPUT_DISPARITY },
    { "depth", STEREOD_OUTPUT_DEPTH },
    { "confidence", STEREOD_OUTPUT_CONFIDENCE },
  };
  g_autofree char *v = get(c, "outputs");
  if (!v)
    return true;
  guint32 mask = 0;
  g_auto(GStrv) items = g_strsplit(v, ";", -1);
  for (int i = 0; items[i]; i++) {
    const char *item = g_strstrip(items[i]);
    if (!*item)
      continue;   /* "a;b;" is GKeyFile's own list style */
    gsize k = 0;
    while (k < G_N_ELEMENTS(outputs) && strcmp(item, outputs[k].name) != 0)
      k++;
    if (k == G_N_ELEMENTS(outputs))
      return invalid(c, "outputs", error,
                     "'%s' is not disparity, depth or confidence", item);
    if (mask & outputs[k].bit)
      return invalid(c, "outputs", error, "'%s' is listed twice", item);
    mask |= outputs[k].bit;
  }
  if (!mask)
    return invalid(c, "outputs", error, "empty (a list of disparity, depth, confidence)");
  *out = mask;
  return true;
}

/* Frames of the two sources are paired when their PTS differ by at most the tolerance;
 * at half a frame period or more one frame could pair with two. */
static bool
get_tolerance(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  double period_ms = 1000.0 / p->fps, tol_ms = DEFAULT_TOLERANCE_MS;
  bool present = false;
  if (!get_double(c, "pair_tolerance_ms", false, 0.1, 1000.0, &tol_ms, &present, error))
    return false;
  if (!present)
    tol_ms = MIN(DEFAULT_TOLERANCE_MS, period_ms / 4.0);
  else if (tol_ms >= period_ms / 2.0) {
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], f[G_ASCII_DTOSTR_BUF_SIZE];
    return invalid(c, "pair_tolerance_ms", error,
                   "%s is not below half the frame period (%s ms at %s fps)", num(a, tol_ms),
                   num(b, period_ms / 2.0), num(f, p->fps));
  }
  p->tolerance_ns = llround(tol_ms * 1e6);
  return true;
}

static bool
get_backoff(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  bool has_max = false;
  p->reconnect_min_ms = 500;
  p->reconnect_max_ms = 30000;
  if (!get_int(c, "reconnect_min_ms", false, 10, 600000, &p->reconnect_min_ms, NULL, error) ||
      !get_int(c, "reconnect_max_ms", false, 10, 3600000, &p->reconnect_max_ms, &has_max,
               error))
    return false;
  if (p->reconnect_min_ms > p->reconnect_max_ms) {
    if (has_max)
      return invalid(c, "reconnect_max_ms", error, "%d is below reconnect_min_ms (%d)",
                     p->reconnect_max_ms, p->reconnect_min_ms);
    return invalid(c, "reconnect_min_ms", error, "%d is above reconnect_max_ms (%d)",
                   p->reconnect_min_ms, p->reconnect_max_ms);
  }
  return true;
}

/* max_disparity, scales, lr_check, refine, window, smoothing, noise_floor over the filter
 * defaults, then the filter's own check; its field names are mapped back to the key that
 * causes them. */
static bool
get_filter(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  StereoParams *sp = &p->params;
  stereo_params_init(sp, p->width, p->height);
  double max_d = MIN(DEFAULT_MAX_DISPARITY, p->width - 1);
  bool has_max = false;
  if (!get_double(c, "max_disparity", false, 1.0, 1000.0, &max_d, &has_max, error))
    return false;
  if (has_max && max_d >= p->width) {
    char a[G_ASCII_DTOSTR_BUF_SIZE];
    return invalid(c, "max_disparity", error, "%s is not below the width (%d px)",
                   num(a, max_d), p->width);
  }
  sp->max_disparity = max_d;
  double noise_floor = 0.0;
  if (!get_int(c, "scales", false, 0, STEREO_MAX_LEVELS, &sp->levels, NULL, error) ||
      !get_bool(c, "lr_check", &sp->lr_check, error) ||
      !get_bool(c, "refine", &sp->refine, error) ||
      !get_int(c, "window", false, 1, 7, &sp->search_radius, NULL, error) ||
      !get_double(c, "smoothing", false, 0.5, 5.0, &sp->smooth_sigma, NULL, error) ||
      !get_double(c, "noise_floor", false, 0.0, 64.0, &noise_floor, NULL, error))
    return false;
  sp->min_magnitude = noise_floor / 255.0;   /* grey levels -> intensity units */

  g_autoptr(GError) local = NULL;
  if (!stereo_params_validate(sp, &local)) {
    if (g_str_has_prefix(local->message, "levels:"))
      return invalid(c, "scales", error, "%s", local->message + strlen("levels: "));
    if (g_str_has_prefix(local->message, "max_disparity:"))
      return invalid(c, "max_disparity", error, "%s",
                     local->message + strlen("max_disparity: "));
    return invalid(c, "width", error, "the filter cannot run on %dx%d (%s)", p->width,
                   p->height, local->message);
  }
  return true;
}

/* A relative path is taken from the directory of the file that names it. */
static bool
get_calibration(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  g_autofree char *value = NULL;
  if (!get_string(c, "calibration", false, &value, error))
    return false;
  if (!value)
    return true;
  g_autofree char *dir = g_path_get_dirname(blame(c, "calibration"));
  g_autofree char *abs_dir = g_canonicalize_filename(dir, NULL);
  p->calibration_path = g_canonicalize_filename(value, abs_dir);

  g_autoptr(GError) local = NULL;
  if (!calib_load(p->calibration_path, &p->calib, &local))
    return fail(c, "calibration", error, STEREOD_CONFIG_ERROR_CALIBRATION, "%s",
                local->message);
  if (p->calib.width != p->width || p->calib.height != p->height)
    return fail(c, "calibration", error, STEREOD_CONFIG_ERROR_CALIBRATION,
                "%s is %dx%d, the pair is %dx%d", p->calibration_path, p->calib.width,
                p->calib.height, p->width, p->height);
  p->has_calibration = true;
  return true;
}

/* clock, stall_ms, start_timeout_ms: the capture's clock and timers. */
static bool
get_capture(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  static const char *const clocks[STEREOD_CLOCK_COUNT] = {
    "auto", "sender", "arrival", "replay"
  };
  g_autofree char *clock = get(c, "clock");
  if (clock) {
    int i = 0;
    while (i < STEREOD_CLOCK_COUNT && strcmp(clock, clocks[i]) != 0)
      i++;
    if (i == STEREOD_CLOCK_COUNT)
      return invalid(c, "clock", error, "'%s' is not auto, sender, arrival or replay", clock);
    p->clock = (StereodClock)i;
  }
  p->start_timeout_ms = 10000;
  p->left_file = g_strdup(blame(c, "left"));
  p->right_file = g_strdup(blame(c, "right"));
  return get_int(c, "stall_ms", false, 10, 600000, &p->stall_ms, NULL, error) &&
         get_int(c, "start_timeout_ms", false, 100, 600000, &p->start_timeout_ms, NULL, error);
}

bool
config_load_pair(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  p->outputs = STEREOD_OUTPUT_DISPARITY | STEREOD_OUTPUT_CONFIDENCE;
  if (!get_string(c, "left", true, &p->left, error) ||
      !get_string(c, "right", true, &p->right, error) ||
      !get_int(c, "width", true, 16, 8192, &p->width, NULL, error) ||
      !get_int(c, "height", true, 16, 8192, &p->height, NULL, error) ||
      !get_double(c, "fps", true, 0.1, 1000.0, &p->fps, NULL, error) ||
      !get_tolerance(c, p, error) || !get_filter(c, p, error) ||
      !get_outputs(c, &p->outputs, error) || !get_backoff(c, p, error) ||
      !get_capture(c, p, error))
    return false;
  if ((p->outputs & STEREOD_OUTPUT_DEPTH) &&
      !g_key_file_has_key(c->set->merged, c->group, "calibration", NULL))
    return invalid(c, "outputs", error, "depth needs a calibration (the calibration key)");
  return get_calibration(c, p, error);
}
