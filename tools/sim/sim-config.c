/* sim-config.c: the stereod-sim config file. Every key is range-checked, unknown groups
 * and keys are refused, numbers are parsed without locale; errors read
 * "FILE: [group] key: problem". The keys are documented in config/demo/sim.conf. */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <string.h>

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

typedef struct {
  GKeyFile *kf;
  const char *file;
  const char *group;
} Ctx;

static bool G_GNUC_PRINTF(4, 5)
fail(const Ctx *c, const char *key, GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *what = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (key)
    g_set_error(error, SIM_ERROR, SIM_ERROR_CONFIG, "%s: [%s] %s: %s", c->file, c->group,
                key, what);
  else
    g_set_error(error, SIM_ERROR, SIM_ERROR_CONFIG, "%s: [%s]: %s", c->file, c->group, what);
  return false;
}

/* Returns the stripped value, or NULL when the key is absent. */
static char *
get(const Ctx *c, const char *key)
{
  char *v = g_key_file_get_value(c->kf, c->group, key, NULL);
  return v ? g_strstrip(v) : NULL;
}

static bool
get_int64(const Ctx *c, const char *key, bool required, gint64 lo, gint64 hi, gint64 *out,
          GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return required ? fail(c, key, error, "missing") : true;
  gint64 x;
  if (!g_ascii_string_to_signed(v, 10, G_MININT64, G_MAXINT64, &x, NULL))
    return fail(c, key, error, "'%s' is not an integer", v);
  if (x < lo || x > hi)
    return fail(c, key, error, "%" G_GINT64_FORMAT " is outside %" G_GINT64_FORMAT
                "..%" G_GINT64_FORMAT, x, lo, hi);
  *out = x;
  return true;
}

static bool
get_int(const Ctx *c, const char *key, bool required, int lo, int hi, int *out,
        GError **error)
{
  gint64 x = *out;
  if (!get_int64(c, key, required, lo, hi, &x, error))
    return false;
  *out = (int)x;
  return true;
}

/* n finite numbers separated by commas and/or spaces, each within lo..hi. */
static bool
get_doubles(const Ctx *c, const char *key, bool required, int n, double lo, double hi,
            double *out, bool *present, GError **error)
{
  g_autofree char *v = get(c, key);
  if (present)
    *present = v != NULL;
  if (!v)
    return required ? fail(c, key, error, "missing") : true;
  g_auto(GStrv) tokens = g_strsplit_set(v, " \t,", -1);
  int count = 0;
  for (int i = 0; tokens[i]; i++) {
    if (!*tokens[i])
      continue;
    char *end = NULL;
    errno = 0;
    double x = g_ascii_strtod(tokens[i], &end);
    if (end == tokens[i] || *end)
      return fail(c, key, error, "'%s' is not a number", tokens[i]);
    if (!isfinite(x) || errno == ERANGE)
      return fail(c, key, error, "'%s' is not a finite number", tokens[i]);
    if (x < lo || x > hi)
      return fail(c, key, error, "%g is outside %g..%g", x, lo, hi);
    if (count < n)
      out[count] = x;
    count++;
  }
  if (count != n)
    return fail(c, key, error, "expected %d number%s, found %d", n, n == 1 ? "" : "s", count);
  return true;
}

static bool
get_bool(const Ctx *c, const char *key, bool *out, GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return true;
  if (strcmp(v, "true") == 0)
    *out = true;
  else if (strcmp(v, "false") == 0)
    *out = false;
  else
    return fail(c, key, error, "'%s' is not true or false", v);
  return true;
}

static bool
check_keys(const Ctx *c, const char *const *known, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys(c->kf, c->group, NULL, NULL);
  for (int k = 0; keys && keys[k]; k++)
    if (!g_strv_contains(known, keys[k]))
      return fail(c, keys[k], error, "unknown key");
  return true;
}

static bool
load_output(const Ctx *c, SimConfig *cfg, GError **error)
{
  g_autofree char *format = get(c, "format");
  gint64 seed = (gint64)cfg->seed;
  if (!check_keys(c, output_keys, error) ||
      !get_int(c, "frames", false, 1, 1000000, &cfg->frames, error) ||
      !get_doubles(c, "fps", false, 1, 0.1, 1000.0, &cfg->fps, NULL, error) ||
      !get_int64(c, "start_time_ns", false, 0, G_MAXINT64 / 2, &cfg->start_time_ns, error) ||
      !get_int(c, "jpeg_quality", false, 1, 100, &cfg->jpeg_quality, error) ||
      !get_int64(c, "seed", false, 0, G_MAXINT64, &seed, error) ||
      !get_int(c, "supersample", false, 1, 4, &cfg->supersample, error))
    return false;
  cfg->seed = (guint64)seed;
  if (format) {
    if (strcmp(format, "jpg") == 0)
      cfg->format = SIM_FORMAT_JPEG;
    else if (strcmp(format, "png") == 0)
      cfg->format = SIM_FORMAT_PNG;
    else
      return fail(c, "format", error, "'%s' is not jpg or png", format);
  }
  g_autofree char *dir = get(c, "dir");
  if (dir && !*dir)
    return fail(c, "dir", error, "empty");
  cfg->dir = g_steal_pointer(&dir);
  return true;
}

static bool
load_scene(const Ctx *c, SimConfig *cfg, GError **error)
{
  return check_keys(c, scene_keys, error) &&
         get_int(c, "players", false, 0, SIM_MAX_PLAYERS, &cfg->players, error) &&
         get_bool(c, "ball", &cfg->ball, error) && get_bool(c, "stands", &cfg->stands, error) &&
         get_doubles(c, "max_speed", false, 1, 0.5, 12.0, &cfg->max_speed, NULL, error);
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
  bool has_cx = false, has_cy = false;
  if (!check_keys(c, pair_keys, error) ||
      !get_doubles(c, "position", true, 3, -1000.0, 1000.0, p->position, NULL, error) ||
      !get_doubles(c, "look_at", true, 3, -1000.0, 1000.0, p->look_at, NULL, error) ||
      !get_doubles(c, "roll", false, 1, -180.0, 180.0, &p->roll, NULL, error) ||
      !get_doubles(c, "baseline", true, 1, 0.01, 20.0, &p->baseline, NULL, error) ||
      !get_doubles(c, "focal", true, 1, 1.0, 100000.0, &p->focal, NULL, error) ||
      !get_int(c, "width", true, 16, 8192, &p->width, error) ||
      !get_int(c, "height", true, 16, 8192, &p->height, error) ||
      !get_doubles(c, "cx", false, 1, -8192.0, 16384.0, &p->cx, &has_cx, error) ||
      !get_doubles(c, "cy", false, 1, -8192.0, 16384.0, &p->cy, &has_cy, error) ||
      !get_doubles(c, "noise", false, 1, 0.0, 50.0, &p->noise, NULL, error) ||
      !get_doubles(c, "distortion", false, 5, -10.0, 10.0, p->distortion, &p->distorted,
                   error))
    return false;
  if (!has_cx)
    p->cx = (p->width - 1) / 2.0;
  if (!has_cy)
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

SimConfig *
sim_config_load(const char *path, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) local = NULL;
  if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &local)) {
    g_set_error(error, SIM_ERROR, SIM_ERROR_CONFIG, "%s: %s", path, local->message);
    return NULL;
  }
  g_autoptr(SimConfig) cfg = g_new0(SimConfig, 1);
  *cfg = (SimConfig){
    .frames = 250, .fps = 25.0, .format = SIM_FORMAT_JPEG, .jpeg_quality = 90, .seed = 1,
    .supersample = 2, .players = 22, .ball = true, .stands = true, .max_speed = 9.0,
  };
  gsize n_groups = 0;
  g_auto(GStrv) groups = g_key_file_get_groups(kf, &n_groups);
  cfg->pairs = g_new0(SimPairConfig, MAX(n_groups, 1));
  for (gsize g = 0; g < n_groups; g++) {
    Ctx c = { kf, path, groups[g] };
    bool ok;
    if (strcmp(groups[g], "output") == 0)
      ok = load_output(&c, cfg, error);
    else if (strcmp(groups[g], "scene") == 0)
      ok = load_scene(&c, cfg, error);
    else if (g_str_has_prefix(groups[g], "pair ")) {
      if (cfg->n_pairs == SIM_MAX_PAIRS)
        return fail(&c, NULL, error, "more than %d pairs", SIM_MAX_PAIRS), NULL;
      ok = load_pair(&c, groups[g] + 5, &cfg->pairs[cfg->n_pairs++], error);
    } else
      ok = fail(&c, NULL, error, "unknown group (expected output, scene or 'pair NAME')");
    if (!ok)
      return NULL;
  }
  if (cfg->n_pairs == 0) {
    g_set_error(error, SIM_ERROR, SIM_ERROR_CONFIG, "%s: no [pair NAME] group", path);
    return NULL;
  }
  return g_steal_pointer(&cfg);
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
