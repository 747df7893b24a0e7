/* config-values.c: the keys of [daemon] and [pair NAME], read from the merged files with
 * common/keyfile.h (decimal numbers without locale effects, consumed completely; every
 * message names the file that set the value). Numbers in messages are formatted with
 * g_ascii_formatd for the same reason. The keys are documented in config/stereod.conf. */
#include "config-private.h"

#include <math.h>
#include <string.h>

#include "kernels/flow-params.h"
#include "metrics/metrics.h"

#define DEFAULT_TOLERANCE_MS 5.0
#define DEFAULT_MAX_DISPARITY 128.0

static const char *const log_level_names[STEREOD_LOG_COUNT + 1] = {
  "error", "warning", "message", "info", "debug", NULL
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

/* Value access: common/keyfile.h, which names the file that set the value. ------------ */

#define KF_REQUIRED KEYFILE_REQUIRED
#define KF_OPTIONAL KEYFILE_OPTIONAL

#define invalid(c, key, error, ...) \
  keyfile_fail((c)->kf, error, STEREOD_CONFIG_ERROR_INVALID, (c)->group, key, __VA_ARGS__)

static const char *
num(char buf[G_ASCII_DTOSTR_BUF_SIZE], double x)
{
  return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%g", x);
}

static char *
get(const ConfigGroup *c, const char *key)
{
  return keyfile_get_value(c->kf, c->group, key);
}

static bool
has(const ConfigGroup *c, const char *key)
{
  return keyfile_has_key(c->kf, c->group, key);
}

static bool
get_int(const ConfigGroup *c, const char *key, KeyFileFlags flags, int lo, int hi, int *out,
        GError **error)
{
  return keyfile_get_int(c->kf, c->group, key, flags, lo, hi, out, error);
}

static bool
get_double(const ConfigGroup *c, const char *key, KeyFileFlags flags, double lo, double hi,
           double *out, GError **error)
{
  return keyfile_get_double(c->kf, c->group, key, flags, lo, hi, out, error);
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
  g_autofree char *metrics = get(c, "metrics");
  if (metrics && *metrics) {
    g_autoptr(GError) local = NULL;
    g_autoptr(GInetSocketAddress) address = metrics_address_parse(metrics, &local);
    if (!address)
      return invalid(c, "metrics", error, "'%s': %s", metrics, local->message);
    g_free(cfg->metrics);
    cfg->metrics = g_steal_pointer(&metrics);
  }
  int level = (int)cfg->log_level;
  if (!keyfile_get_choice(c->kf, c->group, "log_level", KF_OPTIONAL, log_level_names, &level,
                          error))
    return false;
  cfg->log_level = (StereodLogLevel)level;
  static const char *const modes[] = { "live", "offline", NULL };
  int mode = cfg->offline ? 1 : 0;
  if (!keyfile_get_choice(c->kf, c->group, "mode", KF_OPTIONAL, modes, &mode, error))
    return false;
  cfg->offline = mode == 1;
  if (!get_double(c, "offline_speed", KF_OPTIONAL, 0.0, 1000.0, &cfg->offline_speed, error))
    return false;
  return get_int(c, "stats_interval", KF_OPTIONAL, 1, 3600, &cfg->stats_interval_s, error) &&
         get_int(c, "ring_slots", KF_OPTIONAL, 2, (int)STEREOD_RING_MAX_SLOTS,
                 &cfg->ring_slots, error) &&
         get_int(c, "in_flight", KF_OPTIONAL, 1, 8, &cfg->in_flight, error);
}

/* [pair NAME] ----------------------------------------------------------------------- */

static bool
get_outputs(const ConfigGroup *c, guint32 *out, GError **error)
{
  static const struct { const char *name; guint32 bit; } outputs[] = {
    { "disparity", STEREOD_OUTPUT_DISPARITY },
    { "depth", STEREOD_OUTPUT_DEPTH },
    { "confidence", STEREOD_OUTPUT_CONFIDENCE },
    { "depth_m", STEREOD_OUTPUT_DEPTH_M },
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
                     "'%s' is not disparity, depth, depth_m or confidence", item);
    if (mask & outputs[k].bit)
      return invalid(c, "outputs", error, "'%s' is listed twice", item);
    mask |= outputs[k].bit;
  }
  if (!mask)
    return invalid(c, "outputs", error, "empty (a list of disparity, depth, depth_m, confidence)");
  *out = mask;
  return true;
}

/* flow=true: the flow engine's parameters are its defaults for the pair's size, checked
 * here so that a size it cannot run on is a config error, not a start-up failure. */
static bool
get_flow(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  if (!keyfile_get_bool(c->kf, c->group, "flow", KF_OPTIONAL, &p->flow, error))
    return false;
  if (!p->flow)
    return true;
  FlowParams fp;
  flow_params_init(&fp, p->width, p->height);
  g_autoptr(GError) local = NULL;
  if (!flow_params_validate(&fp, &local))
    return invalid(c, "flow", error, "the optical flow cannot run on %dx%d (%s)", p->width,
                   p->height, local->message);
  return true;
}

/* Frames of the two sources are paired when their PTS differ by at most the tolerance;
 * at half a frame period or more one frame could pair with two. */
static bool
get_tolerance(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  double period_ms = 1000.0 / p->fps, tol_ms = DEFAULT_TOLERANCE_MS;
  if (!get_double(c, "pair_tolerance_ms", KF_OPTIONAL, 0.1, 1000.0, &tol_ms, error))
    return false;
  if (!has(c, "pair_tolerance_ms"))
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
  p->reconnect_min_ms = 500;
  p->reconnect_max_ms = 30000;
  if (!get_int(c, "reconnect_min_ms", KF_OPTIONAL, 10, 600000, &p->reconnect_min_ms, error) ||
      !get_int(c, "reconnect_max_ms", KF_OPTIONAL, 10, 3600000, &p->reconnect_max_ms, error))
    return false;
  if (p->reconnect_min_ms > p->reconnect_max_ms) {
    if (has(c, "reconnect_max_ms"))
      return invalid(c, "reconnect_max_ms", error, "%d is below reconnect_min_ms (%d)",
                     p->reconnect_max_ms, p->reconnect_min_ms);
    return invalid(c, "reconnect_min_ms", error, "%d is above reconnect_max_ms (%d)",
                   p->reconnect_min_ms, p->reconnect_max_ms);
  }
  return true;
}

/* max_disparity, scales, lr_check, refine, window, smoothing, noise_floor, coarse_fallback,
 * ground_margin (absent: off) over the filter defaults, then the filter's own check; its field names are mapped back
 * to the key that causes them. */
static bool
get_filter(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  StereoParams *sp = &p->params;
  stereo_params_init(sp, p->width, p->height);
  double max_d = MIN(DEFAULT_MAX_DISPARITY, p->width - 1);
  g_autofree char *max_text = NULL;
  if (!keyfile_get_string(c->kf, c->group, "max_disparity", KF_OPTIONAL, &max_text, error))
    return false;
  p->max_disparity_auto = max_text && strcmp(g_strstrip(max_text), "auto") == 0;
  /* auto: the calibration's (pitch_max_disparity, once it is read); the default until then */
  if (!p->max_disparity_auto &&
      !get_double(c, "max_disparity", KF_OPTIONAL, 1.0, 1000.0, &max_d, error))
    return false;
  if (has(c, "max_disparity") && !p->max_disparity_auto && max_d >= p->width) {
    char a[G_ASCII_DTOSTR_BUF_SIZE];
    return invalid(c, "max_disparity", error, "%s is not below the width (%d px)",
                   num(a, max_d), p->width);
  }
  sp->max_disparity = max_d;
  double noise_floor = 0.0;
  if (!get_int(c, "scales", KF_OPTIONAL, 0, STEREO_MAX_LEVELS, &sp->levels, error) ||
      !keyfile_get_bool(c->kf, c->group, "lr_check", KF_OPTIONAL, &sp->lr_check, error) ||
      !keyfile_get_bool(c->kf, c->group, "refine", KF_OPTIONAL, &sp->refine, error) ||
      !get_int(c, "window", KF_OPTIONAL, 1, 7, &sp->search_radius, error) ||
      !get_double(c, "smoothing", KF_OPTIONAL, 0.5, 5.0, &sp->smooth_sigma, error) ||
      !get_double(c, "noise_floor", KF_OPTIONAL, 0.0, 64.0, &noise_floor, error) ||
      !get_double(c, "coarse_fallback", KF_OPTIONAL, 0.0, 1.0, &sp->coarse_fallback, error) ||
      !get_double(c, "ground_margin", KF_OPTIONAL, 0.0, 1000.0, &sp->ground_margin, error) ||
      !get_double(c, "ground_tilt", KF_OPTIONAL, 0.0, 5.0, &p->ground_tilt, error))
    return false;
  if (has(c, "ground_tilt") && sp->ground_margin < 0.0)
    sp->ground_margin = 0.0;   /* the prior is on with either key */
  stereo_params_set_noise_floor(sp, noise_floor);

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
  if (!keyfile_get_string(c->kf, c->group, "calibration", KF_OPTIONAL, &value, error))
    return false;
  if (!value)
    return true;
  g_autofree char *dir = g_path_get_dirname(keyfile_get_file(c->kf, c->group, "calibration"));
  g_autofree char *abs_dir = g_canonicalize_filename(dir, NULL);
  p->calibration_path = g_canonicalize_filename(value, abs_dir);

  g_autoptr(GError) local = NULL;
  if (!calib_load(p->calibration_path, &p->calib, &local))
    return keyfile_fail(c->kf, error, STEREOD_CONFIG_ERROR_CALIBRATION, c->group,
                        "calibration", "%s", local->message);
  if (p->calib.width != p->width || p->calib.height != p->height)
    return keyfile_fail(c->kf, error, STEREOD_CONFIG_ERROR_CALIBRATION, c->group,
                        "calibration", "%s is %dx%d, the pair is %dx%d", p->calibration_path,
                        p->calib.width, p->calib.height, p->width, p->height);
  p->has_calibration = true;
  return true;
}

/* max_disparity=auto: the largest disparity of the pitch and 3 m around it (the pitch
 * frame's 105 x 68 m, kernels/calib.h) up to AUTO_TOP_M, in the pair's view
 * (calib_pitch_max_disparity), 2 px more for the calibration's error, within
 * 1 .. min(1000, width - 1). */
#define AUTO_TOP_M 2.5
#define AUTO_MARGIN_PX 2.0
#define AUTO_AROUND_M 3.0
#define AUTO_HALF_X (52.5 + AUTO_AROUND_M)
#define AUTO_HALF_Y (34.0 + AUTO_AROUND_M)

static bool
get_auto_max_disparity(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  if (!p->max_disparity_auto)
    return true;
  if (!p->has_calibration)
    return invalid(c, "max_disparity", error, "auto needs a calibration (the calibration "
                   "key: its pose says where the pitch is)");
  double d = calib_pitch_max_disparity(&p->calib, -AUTO_HALF_X, AUTO_HALF_X, -AUTO_HALF_Y,
                                       AUTO_HALF_Y, AUTO_TOP_M);
  double hi = MIN(1000.0, p->width - 1.0);
  if (!(d > 0.0))
    return invalid(c, "max_disparity", error, "auto: the calibration's left view does not "
                   "see the pitch (its pose looks away from it)");
  p->params.max_disparity = CLAMP(ceil(d + AUTO_MARGIN_PX), 1.0, hi);
  p->max_disparity_clamped = d + AUTO_MARGIN_PX > hi;
  g_autoptr(GError) local = NULL;
  if (!stereo_params_validate(&p->params, &local))
    return invalid(c, "max_disparity", error, "auto (%.0f px): %s", p->params.max_disparity,
                   local->message);
  return true;
}

/* The ground's disparity a pose tilted by one degree moves by: f B / h px a radian. */
static double
ground_px_per_degree(const StereoCalib *calib)
{
  return calib_focal(calib) * calib_baseline(calib) / calib->pose_centre[2] * G_PI / 180.0;
}

/* ground_margin and ground_tilt (the pitch-plane prior) take the ground's disparity from
 * the pose; the engine's margin is ground_margin's px plus the disparity ground_tilt
 * degrees of tilt move it by at this camera (f B / h px a radian). */
static bool
get_ground(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  double plane[3];
  const char *key = has(c, "ground_margin") ? "ground_margin" : "ground_tilt";
  if (p->params.ground_margin < 0.0)
    return true;
  if (!p->has_calibration)
    return invalid(c, key, error, "needs a calibration (the calibration key: its pose says "
                   "where the ground is)");
  if (!calib_ground_plane(&p->calib, plane))
    return invalid(c, key, error, "the calibration's pose does not put the camera at least "
                   "0.5 m above the pitch, with a baseline of at most half that height");
  double tilt_px = ground_px_per_degree(&p->calib) * p->ground_tilt;
  p->params.ground_margin += tilt_px;
  if (p->params.ground_margin > 1000.0)
    return invalid(c, "ground_tilt", error, "%g degrees are %.0f px at this camera, more "
                   "than 1000", p->ground_tilt, tilt_px);
  return true;
}

char *
stereod_pair_ground_note(const StereodPairConfig *p)
{
  if (p->params.ground_margin < 0.0)
    return NULL;   /* a loaded pair with the prior has a posed calibration (get_ground) */
  /* a tilt of the pose by t moves the ground's disparity by about f B / h px a radian */
  double per_degree = ground_px_per_degree(&p->calib);
  g_autofree char *tilt = p->ground_tilt > 0.0
    ? g_strdup_printf(" (ground_margin %g px, ground_tilt %g degrees)",
                      p->params.ground_margin - per_degree * p->ground_tilt, p->ground_tilt)
    : g_strdup("");
  return g_strdup_printf("ground margin %.2f px%s: the pose may be tilted by %.2f degrees "
                         "before the pitch's own pixels fall below the bound (%.1f px a "
                         "degree)", p->params.ground_margin, tilt,
                         p->params.ground_margin / per_degree, per_degree);
}

char *
stereod_pair_max_disparity_note(const StereodPairConfig *p)
{
  if (!p->max_disparity_auto)
    return NULL;
  if (p->max_disparity_clamped)
    return g_strdup_printf("max_disparity auto: %.0f px, the most there is: the pitch's "
                           "nearest points in its view need more and are not measured",
                           p->params.max_disparity);
  return g_strdup_printf("max_disparity auto: %.0f px (the pitch and %g m around it, up to "
                         "%g m, in its view)", p->params.max_disparity, AUTO_AROUND_M,
                         AUTO_TOP_M);
}

/* clock, stall_ms, start_timeout_ms: the capture's clock and timers. */
static bool
get_capture(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  static const char *const clocks[STEREOD_CLOCK_COUNT + 1] = {
    "auto", "sender", "arrival", "replay", NULL
  };
  int clock = (int)p->clock;
  if (!keyfile_get_choice(c->kf, c->group, "clock", KF_OPTIONAL, clocks, &clock, error))
    return false;
  p->clock = (StereodClock)clock;
  p->start_timeout_ms = 10000;
  p->left_file = g_strdup(keyfile_get_file(c->kf, c->group, "left"));
  p->right_file = g_strdup(keyfile_get_file(c->kf, c->group, "right"));
  return get_int(c, "stall_ms", KF_OPTIONAL, 10, 600000, &p->stall_ms, error) &&
         get_int(c, "start_timeout_ms", KF_OPTIONAL, 100, 600000, &p->start_timeout_ms,
                 error);
}

bool
config_load_pair(const ConfigGroup *c, StereodPairConfig *p, GError **error)
{
  p->outputs = STEREOD_OUTPUT_DISPARITY | STEREOD_OUTPUT_CONFIDENCE;
  if (!keyfile_get_string(c->kf, c->group, "left", KF_REQUIRED, &p->left, error) ||
      !keyfile_get_string(c->kf, c->group, "right", KF_REQUIRED, &p->right, error) ||
      !get_int(c, "width", KF_REQUIRED, 16, 8192, &p->width, error) ||
      !get_int(c, "height", KF_REQUIRED, 16, 8192, &p->height, error) ||
      !get_double(c, "fps", KF_REQUIRED, 0.1, 1000.0, &p->fps, error) ||
      !get_tolerance(c, p, error) || !get_filter(c, p, error) ||
      !get_outputs(c, &p->outputs, error) || !get_flow(c, p, error) ||
      !get_backoff(c, p, error) ||
      !get_capture(c, p, error))
    return false;
  if ((p->outputs & STEREOD_OUTPUT_DEPTH) && !has(c, "calibration"))
    return invalid(c, "outputs", error, "depth needs a calibration (the calibration key)");
  if ((p->outputs & STEREOD_OUTPUT_DEPTH_M) && !has(c, "calibration"))
    return invalid(c, "outputs", error, "depth_m needs a calibration (the calibration key)");
  return get_calibration(c, p, error) && get_auto_max_disparity(c, p, error) &&
         get_ground(c, p, error);
}
