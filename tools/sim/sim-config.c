/* sim-config.c: the stereod-sim config file, read with common/keyfile.h (a regular file
 * of at most 1 MiB, no NUL byte, no group or key twice, decimal numbers without locale).
 * Every key is range-checked, unknown groups and keys are refused; errors read
 * "FILE: [group] key: problem". The keys are documented in config/demo/sim.conf. */
#include "sim.h"

#include <math.h>
#include <string.h>

#include "common/file.h"
#include "common/keyfile.h"

G_DEFINE_QUARK(stereod-sim-error-quark, sim_error)

static const char *const output_keys[] = {
  "dir", "frames", "fps", "start_time_ns", "format", "jpeg_quality", "seed",
  "supersample", NULL
};
static const char *const scene_keys[] = { "players", "ball", "stands", "max_speed", NULL };
static const char *const pair_keys[] = {
  "position", "look_at", "roll", "baseline", "focal", "width", "height", "cx", "cy",
  "noise", "distortion", NULL
};
static const char *const look_keys[] = {
  "sun", "shadow", "grass", "kit_a", "kit_b", "pattern_a", "pattern_b", "stands", "motion",
  "corner", "radius", "height", NULL
};
static const char *const pattern_names[SIM_KIT_COUNT + 1] = { "plain", "stripes", "hoops",
                                                              NULL };
static const char *const motion_names[SIM_MOTION_COUNT + 1] = { "waves", "play", NULL };
static const char *const format_names[SIM_FORMAT_COUNT + 1] = { "jpg", "png", NULL };
G_STATIC_ASSERT(SIM_FORMAT_JPEG == 0 && SIM_FORMAT_PNG == 1);

typedef struct {
  const KeyFile *kf;
  const char *group;
} Ctx;

#define fail(c, key, error, ...) \
  keyfile_fail((c)->kf, error, SIM_ERROR_CONFIG, (c)->group, key, __VA_ARGS__)
#define REQUIRED KEYFILE_REQUIRED
#define OPTIONAL KEYFILE_OPTIONAL

static bool
get_int64(const Ctx *c, const char *key, KeyFileFlags flags, gint64 lo, gint64 hi,
          gint64 *out, GError **error)
{
  return keyfile_get_int64(c->kf, c->group, key, flags, lo, hi, out, error);
}

static bool
get_int(const Ctx *c, const char *key, KeyFileFlags flags, int lo, int hi, int *out,
        GError **error)
{
  return keyfile_get_int(c->kf, c->group, key, flags, lo, hi, out, error);
}

static bool
get_double(const Ctx *c, const char *key, KeyFileFlags flags, double lo, double hi,
           double *out, GError **error)
{
  return keyfile_get_double(c->kf, c->group, key, flags, lo, hi, out, error);
}

/* n finite numbers separated by commas and/or spaces, each within lo..hi. */
static bool
get_doubles(const Ctx *c, const char *key, KeyFileFlags flags, int n, double lo, double hi,
            double *out, GError **error)
{
  return keyfile_get_doubles(c->kf, c->group, key, flags, n, lo, hi, out, error);
}

static bool
get_bool(const Ctx *c, const char *key, bool *out, GError **error)
{
  return keyfile_get_bool(c->kf, c->group, key, OPTIONAL, out, error);
}

static bool
check_keys(const Ctx *c, const char *const *known, GError **error)
{
  return keyfile_check_keys(c->kf, c->group, known, error);
}

static bool
load_output(const Ctx *c, SimConfig *cfg, GError **error)
{
  gint64 seed = (gint64)cfg->seed;
  int format = (int)cfg->format;
  if (!check_keys(c, output_keys, error) ||
      !get_int(c, "frames", OPTIONAL, 1, 1000000, &cfg->frames, error) ||
      !get_double(c, "fps", OPTIONAL, 0.1, 1000.0, &cfg->fps, error) ||
      !get_int64(c, "start_time_ns", OPTIONAL, 0, G_MAXINT64 / 2, &cfg->start_time_ns,
                 error) ||
      !get_int(c, "jpeg_quality", OPTIONAL, 1, 100, &cfg->jpeg_quality, error) ||
      !get_int64(c, "seed", OPTIONAL, 0, G_MAXINT64, &seed, error) ||
      !get_int(c, "supersample", OPTIONAL, 1, 4, &cfg->supersample, error) ||
      !keyfile_get_choice(c->kf, c->group, "format", OPTIONAL, format_names, &format, error))
    return false;
  cfg->seed = (guint64)seed;
  cfg->format = (SimFormat)format;
  /* The raw value, as before: a folder name is not unescaped. */
  g_autofree char *dir = keyfile_get_value(c->kf, c->group, "dir");
  if (dir && !*dir)
    return fail(c, "dir", error, "empty");
  cfg->dir = g_steal_pointer(&dir);
  return true;
}

static bool
load_scene(const Ctx *c, SimConfig *cfg, GError **error)
{
  return check_keys(c, scene_keys, error) &&
         get_int(c, "players", OPTIONAL, 0, SIM_MAX_PLAYERS, &cfg->players, error) &&
         get_bool(c, "ball", &cfg->ball, error) && get_bool(c, "stands", &cfg->stands, error) &&
         get_double(c, "max_speed", OPTIONAL, 0.5, 12.0, &cfg->max_speed, error);
}

/* [look]: a drawn stadium's sun, kits, stands and motion (SimLook). */
static bool
load_look(const Ctx *c, SimLook *look, GError **error)
{
  double sun[2] = { 0.0, 55.0 }, kit[2][4], range[2];
  int pattern[2] = { SIM_KIT_PLAIN, SIM_KIT_PLAIN }, motion = SIM_MOTION_PLAY;
  look->custom = true;
  if (!check_keys(c, look_keys, error) ||
      !get_doubles(c, "sun", OPTIONAL, 2, -360.0, 360.0, sun, error) ||
      !get_double(c, "shadow", OPTIONAL, 0.1, 1.0, &look->shadow, error) ||
      !get_double(c, "grass", OPTIONAL, 0.3, 2.5, &look->grass, error) ||
      !get_doubles(c, "stands", OPTIONAL, 4, 0.0, 40.0, look->stand_height, error) ||
      !keyfile_get_choice(c->kf, c->group, "motion", OPTIONAL, motion_names, &motion, error) ||
      !get_int(c, "corner", OPTIONAL, -1, 3, &look->corner, error))
    return false;
  if (sun[1] < 5.0 || sun[1] > 90.0)
    return fail(c, "sun", error, "elevation %g must be within 5..90 degrees", sun[1]);
  double az = sun[0] * G_PI / 180.0, el = sun[1] * G_PI / 180.0;
  look->sun[0] = cos(el) * cos(az);
  look->sun[1] = cos(el) * sin(az);
  look->sun[2] = sin(el);
  static const char *const kit_keys[2] = { "kit_a", "kit_b" };
  static const char *const pattern_keys[2] = { "pattern_a", "pattern_b" };
  for (int t = 0; t < 2; t++) {
    for (int k = 0; k < 4; k++)
      kit[t][k] = t ? 50.0 : 200.0;
    if (!get_doubles(c, kit_keys[t], OPTIONAL, 4, 0.0, 255.0, kit[t], error) ||
        !keyfile_get_choice(c->kf, c->group, pattern_keys[t], OPTIONAL, pattern_names,
                            &pattern[t], error))
      return false;
    look->kits[t] = (SimKit){ .shirt = kit[t][0], .shirt2 = kit[t][1], .shorts = kit[t][2],
                              .socks = kit[t][3], .pattern = (SimKitPattern)pattern[t] };
  }
  look->motion = (SimMotion)motion;
  static const char *const range_keys[2] = { "radius", "height" };
  static const double limits[2][2] = { { 0.15, 0.35 }, { 1.4, 2.1 } };
  for (int r = 0; r < 2; r++) {
    double *out = r ? look->height : look->radius;
    if (!keyfile_has_key(c->kf, c->group, range_keys[r]))
      continue;
    if (!get_doubles(c, range_keys[r], OPTIONAL, 2, limits[r][0], limits[r][1], range, error))
      return false;
    if (range[0] > range[1])
      return fail(c, range_keys[r], error, "%g is more than %g", range[0], range[1]);
    out[0] = range[0];
    out[1] = range[1];
  }
  return true;
}

static bool
valid_name(const char *name)
{
  if (!*name || *name == '.' || strlen(name) > 64)
    return false;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
      return false;
  return true;
}

static bool
load_pair(const Ctx *c, const char *name, SimPairConfig *p, GError **error)
{
  if (!valid_name(name))
    return fail(c, NULL, error, "pair name '%s' must be 1-64 characters of A-Z a-z 0-9 . _ - "
                "and not start with '.'", name);
  p->name = g_strdup(name);
  p->noise = 1.0;
  if (!check_keys(c, pair_keys, error) ||
      !get_doubles(c, "position", REQUIRED, 3, -1000.0, 1000.0, p->position, error) ||
      !get_doubles(c, "look_at", REQUIRED, 3, -1000.0, 1000.0, p->look_at, error) ||
      !get_double(c, "roll", OPTIONAL, -180.0, 180.0, &p->roll, error) ||
      !get_double(c, "baseline", REQUIRED, 0.01, 20.0, &p->baseline, error) ||
      !get_double(c, "focal", REQUIRED, 1.0, 100000.0, &p->focal, error) ||
      !get_int(c, "width", REQUIRED, 16, 8192, &p->width, error) ||
      !get_int(c, "height", REQUIRED, 16, 8192, &p->height, error) ||
      !get_double(c, "cx", OPTIONAL, -8192.0, 16384.0, &p->cx, error) ||
      !get_double(c, "cy", OPTIONAL, -8192.0, 16384.0, &p->cy, error) ||
      !get_double(c, "noise", OPTIONAL, 0.0, 50.0, &p->noise, error) ||
      !get_doubles(c, "distortion", OPTIONAL, 5, -10.0, 10.0, p->distortion, error))
    return false;
  p->distorted = keyfile_has_key(c->kf, c->group, "distortion");
  if (!keyfile_has_key(c->kf, c->group, "cx"))
    p->cx = (p->width - 1) / 2.0;
  if (!keyfile_has_key(c->kf, c->group, "cy"))
    p->cy = (p->height - 1) / 2.0;
  double f[3], n = 0.0;
  for (int i = 0; i < 3; i++) {
    f[i] = p->look_at[i] - p->position[i];
    n += f[i] * f[i];
  }
  if (n < 1e-6)
    return fail(c, "look_at", error, "must differ from position");
  if (fabs(f[2]) > 0.999 * sqrt(n))
    return fail(c, "look_at", error, "the view direction must not be vertical");
  return true;
}

static KeyFileParams
reader_params(void)
{
  KeyFileParams p = { .domain = SIM_ERROR, .max_size = FILE_MAX_CONFIG_SIZE };
  for (int i = 0; i < KEYFILE_ERROR_COUNT; i++)
    p.codes[i] = SIM_ERROR_CONFIG;
  return p;
}

static SimConfig *
load(const KeyFile *kf, const char *name, GError **error)
{
  g_autoptr(SimConfig) cfg = g_new0(SimConfig, 1);
  *cfg = (SimConfig){
    .frames = 250, .fps = 25.0, .format = SIM_FORMAT_JPEG, .jpeg_quality = 90, .seed = 1,
    .supersample = 2, .players = 22, .ball = true, .stands = true, .max_speed = 9.0,
    .look = { .shadow = 0.6, .grass = 1.0, .stand_height = { 12.0, 12.0, 12.0, 12.0 },
              .motion = SIM_MOTION_WAVES, .corner = -1, .radius = { 0.24, 0.24 },
              .height = { 1.70, 1.92 } },
  };
  gsize n_groups = 0;
  g_auto(GStrv) groups = keyfile_get_groups(kf, &n_groups);
  cfg->pairs = g_new0(SimPairConfig, MIN(MAX(n_groups, 1), SIM_MAX_PAIRS));
  for (gsize g = 0; g < n_groups; g++) {
    Ctx c = { kf, groups[g] };
    bool ok;
    if (strcmp(groups[g], "output") == 0)
      ok = load_output(&c, cfg, error);
    else if (strcmp(groups[g], "scene") == 0)
      ok = load_scene(&c, cfg, error);
    else if (strcmp(groups[g], "look") == 0)
      ok = load_look(&c, &cfg->look, error);
    else if (g_str_has_prefix(groups[g], "pair ")) {
      if (cfg->n_pairs == SIM_MAX_PAIRS)
        return fail(&c, NULL, error, "more than %d pairs", SIM_MAX_PAIRS), NULL;
      ok = load_pair(&c, groups[g] + 5, &cfg->pairs[cfg->n_pairs++], error);
    } else
      ok = fail(&c, NULL, error, "unknown group (expected output, scene, look or 'pair NAME')");
    if (!ok)
      return NULL;
  }
  if (cfg->n_pairs == 0) {
    g_set_error(error, SIM_ERROR, SIM_ERROR_CONFIG, "%s: no [pair NAME] group", name);
    return NULL;
  }
  return g_steal_pointer(&cfg);
}

SimConfig *
sim_config_load(const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_file(&params, path, error);
  return kf ? load(kf, path, error) : NULL;
}

SimConfig *
sim_config_load_data(const char *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail(data && name, NULL);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_data(&params, data, length, name, error);
  return kf ? load(kf, name, error) : NULL;
}

void
sim_config_free(SimConfig *cfg)
{
  if (!cfg)
    return;
  for (int i = 0; i < cfg->n_pairs; i++)
    g_free(cfg->pairs[i].name);
  g_free(cfg->pairs);
  g_free(cfg->dir);
  g_free(cfg);
}
