/* config.c: the stereod-heightmap configuration (config/heightmap.conf documents every
 * key). One GKeyFile: [heightmap] and one [pair NAME] group per camera pair. Numbers are
 * parsed with g_ascii_strtod (no locale) and must be consumed completely; unknown groups
 * and keys are errors; every message reads "FILE: [group] key: problem". */
#include "heightmap/heightmap.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <string.h>

#define PAIR_PREFIX "pair "
#define MAX_FILE_SIZE (1 << 20)

G_DEFINE_QUARK(heightmap-config-error-quark, heightmap_config_error)

static const char *const heightmap_keys[] = {
  "x0", "x1", "y0", "y1", "cell", "tolerance_ms", "wait_ms", "stale_ms", "min_height",
  "min_confidence", "min_points", "pool", "top_fraction", "blob_min_area", "blob_max_area",
  "top_band", "visible_offset", "disparity_noise", "gate", "acceleration", "max_missed", "confirm",
  "socket", "ring", "format", "metrics", NULL
};
static const char *const pair_keys[] = { "ring", "calibration", NULL };
static const char *const format_names[HEIGHTMAP_FORMAT_COUNT] = { "float", "mm" };

typedef struct {
  GKeyFile *kf;
  const char *file;
  const char *group;
} Ctx;

static bool G_GNUC_PRINTF(5, 6)
fail(const Ctx *c, const char *key, GError **error, HeightmapConfigError code,
     const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *what = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (key)
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, code, "%s: [%s] %s: %s", c->file, c->group, key,
                what);
  else
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, code, "%s: [%s]: %s", c->file, c->group, what);
  return false;
}

/* The raw value, or NULL when the key is absent. */
static char *
get(const Ctx *c, const char *key)
{
  char *v = g_key_file_get_value(c->kf, c->group, key, NULL);
  if (v)
    g_strstrip(v);
  return v;
}

static bool
get_double(const Ctx *c, const char *key, double lo, double hi, double *out, GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return true;
  char *end;
  errno = 0;
  double x = g_ascii_strtod(v, &end);
  if (!*v || *end || errno || !isfinite(x))
    return fail(c, key, error, HEIGHTMAP_CONFIG_ERROR_INVALID, "\"%s\" is not a number", v);
  if (x < lo || x > hi) {
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    return fail(c, key, error, HEIGHTMAP_CONFIG_ERROR_INVALID, "%s is out of range [%s, %s]", v,
                g_ascii_formatd(a, sizeof a, "%g", lo), g_ascii_formatd(b, sizeof b, "%g", hi));
  }
  *out = x;
  return true;
}

static bool
get_int(const Ctx *c, const char *key, int lo, int hi, int *out, GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return true;
  gint64 x;
  g_autoptr(GError) local = NULL;
  if (!g_ascii_string_to_signed(v, 10, lo, hi, &x, &local))
    return fail(c, key, error, HEIGHTMAP_CONFIG_ERROR_INVALID, "\"%s\" is not an integer in "
                "[%d, %d]", v, lo, hi);
  *out = (int) x;
  return true;
}

static bool
valid_name(const char *s)
{
  size_t n = strlen(s);
  if (n < 1 || n > 63 || s[0] == '.')
    return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
      return false;
  return true;
}

static bool
get_name(const Ctx *c, const char *key, char **out, GError **error)
{
  g_autofree char *v = get(c, key);
  if (!v)
    return true;
  if (!valid_name(v))
    return fail(c, key, error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                "\"%s\" is not a ring name (1-63 of A-Z a-z 0-9 . _ -, not starting with '.')",
                v);
  g_free(*out);
  *out = g_steal_pointer(&v);
  return true;
}

static bool
check_keys(const Ctx *c, const char *const *known, GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys(c->kf, c->group, NULL, NULL);
  for (char **k = keys; k && *k; k++)
    if (!g_strv_contains(known, *k))
      return fail(c, *k, error, HEIGHTMAP_CONFIG_ERROR_UNKNOWN, "unknown key");
  return true;
}

static bool
load_main(const Ctx *c, HeightmapConfig *cfg, GError **error)
{
  if (!check_keys(c, heightmap_keys, error))
    return false;
  double x0 = -55.5, x1 = 55.5, y0 = -37.0, y1 = 37.0, cell = 0.1;
  const double big = 1e4;
  if (!get_double(c, "x0", -big, big, &x0, error) || !get_double(c, "x1", -big, big, &x1, error) ||
      !get_double(c, "y0", -big, big, &y0, error) || !get_double(c, "y1", -big, big, &y1, error) ||
      !get_double(c, "cell", 0.01, 10, &cell, error))
    return false;
  if (!(x1 > x0))
    return fail(c, "x1", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "must be greater than x0");
  if (!(y1 > y0))
    return fail(c, "y1", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "must be greater than y0");
  if (!heightmap_grid_init(&cfg->grid, x0, x1, y0, y1, cell))
    return fail(c, "cell", error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                "the extent makes more than %d cells", HEIGHTMAP_MAX_CELLS);
  if (!get_double(c, "tolerance_ms", 0, 10000, &cfg->tolerance_ms, error) ||
      !get_double(c, "wait_ms", 0, 10000, &cfg->wait_ms, error) ||
      !get_double(c, "stale_ms", 1, 600000, &cfg->stale_ms, error) ||
      !get_double(c, "min_height", 0.05, 3.0, &cfg->min_height, error) ||
      !get_int(c, "min_confidence", 0, 255, &cfg->min_confidence, error) ||
      !get_int(c, "min_points", 1, 1000, &cfg->min_points, error) ||
      !get_int(c, "pool", 0, 4, &cfg->pool, error) ||
      !get_double(c, "top_fraction", 0, 1, &cfg->top_fraction, error) ||
      !get_double(c, "blob_min_area", 0, 1000, &cfg->blob_min_area, error) ||
      !get_double(c, "blob_max_area", 0.001, 10000, &cfg->blob_max_area, error) ||
      !get_double(c, "top_band", 0, 10, &cfg->top_band, error) ||
      !get_double(c, "visible_offset", 0, 2, &cfg->visible_offset, error) ||
      !get_double(c, "disparity_noise", 0, 10, &cfg->disparity_noise, error) ||
      !get_double(c, "gate", 0.01, 100, &cfg->gate, error) ||
      !get_double(c, "acceleration", 0, 100, &cfg->acceleration, error) ||
      !get_int(c, "max_missed", 0, 10000, &cfg->max_missed, error) ||
      !get_int(c, "confirm", 1, 100, &cfg->confirm, error) ||
      !get_name(c, "ring", &cfg->ring_name, error))
    return false;
  if (cfg->blob_max_area < cfg->blob_min_area)
    return fail(c, "blob_max_area", error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                "must not be less than blob_min_area");
  g_autofree char *sock = get(c, "socket");
  if (sock && *sock) {
    if (!g_path_is_absolute(sock) || strlen(sock) >= 108)
      return fail(c, "socket", error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                  "\"%s\" is not an absolute path shorter than 108 bytes", sock);
    cfg->socket_path = g_steal_pointer(&sock);
  }
  g_autofree char *metrics = get(c, "metrics");
  if (metrics && *metrics) {
    g_autoptr(GError) local = NULL;
    g_autoptr(GInetSocketAddress) address = metrics_address_parse(metrics, &local);
    if (!address)
      return fail(c, "metrics", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "\"%s\": %s", metrics,
                  local->message);
    cfg->metrics_address = g_steal_pointer(&metrics);
  }
  g_autofree char *fmt = get(c, "format");
  if (fmt) {
    int i = 0;
    while (i < HEIGHTMAP_FORMAT_COUNT && strcmp(fmt, format_names[i]) != 0)
      i++;
    if (i == HEIGHTMAP_FORMAT_COUNT)
      return fail(c, "format", error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                  "\"%s\" is neither float nor mm", fmt);
    cfg->format = (HeightmapFormat) i;
  }
  return true;
}

static bool
load_pair(const Ctx *c, const char *name, const char *dir, HeightmapPairConfig *p,
          GError **error)
{
  if (!valid_name(name))
    return fail(c, NULL, error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                "\"%s\" is not a pair name (1-63 of A-Z a-z 0-9 . _ -, not starting with '.')",
                name);
  if (!check_keys(c, pair_keys, error))
    return false;
  p->name = g_strdup(name);
  p->ring = g_strdup(name);
  if (!get_name(c, "ring", &p->ring, error))
    return false;
  g_autofree char *cal = get(c, "calibration");
  if (cal) {
    if (!*cal)
      return fail(c, "calibration", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "empty path");
    p->calibration_path = g_canonicalize_filename(cal, dir);
    g_autoptr(GError) local = NULL;
    if (!calib_load(p->calibration_path, &p->calib, &local))
      return fail(c, "calibration", error, HEIGHTMAP_CONFIG_ERROR_CALIBRATION, "%s",
                  local->message);
    p->has_calibration = true;
  }
  return true;
}

static HeightmapConfig *
load(GKeyFile *kf, const char *name, const char *dir, GError **error)
{
  g_autoptr(HeightmapConfig) cfg = g_new0(HeightmapConfig, 1);
  cfg->path = g_strdup(name);
  cfg->tolerance_ms = 20;
  cfg->wait_ms = 100;
  cfg->stale_ms = 1000;
  cfg->min_height = 0.5;
  cfg->min_confidence = 128;
  cfg->min_points = 2;
  cfg->top_fraction = 0.1;
  cfg->blob_min_area = 0.1;
  cfg->blob_max_area = 3.0;
  cfg->top_band = 1.0;
  cfg->visible_offset = 0.05;
  cfg->disparity_noise = 0.07;
  cfg->gate = 1.0;
  cfg->acceleration = 10.0;
  cfg->max_missed = 10;
  cfg->confirm = 2;
  cfg->ring_name = g_strdup("heightmap");
  cfg->format = HEIGHTMAP_FORMAT_FLOAT;
  Ctx c = { .kf = kf, .file = name, .group = "heightmap" };
  if (!load_main(&c, cfg, error))
    return NULL;

  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  int n = 0;
  for (char **g = groups; *g; g++) {
    c.group = *g;
    if (g_str_has_prefix(*g, PAIR_PREFIX))
      n++;
    else if (!g_str_equal(*g, "heightmap")) {
      fail(&c, NULL, error, HEIGHTMAP_CONFIG_ERROR_UNKNOWN, "unknown group");
      return NULL;
    }
  }
  if (n == 0) {
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_MISSING,
                "%s: no [pair NAME] group", name);
    return NULL;
  }
  cfg->pairs = g_new0(HeightmapPairConfig, MIN(n, HEIGHTMAP_MAX_PAIRS));
  for (char **g = groups; *g; g++) {
    c.group = *g;
    if (!g_str_has_prefix(*g, PAIR_PREFIX))
      continue;
    if (cfg->n_pairs == HEIGHTMAP_MAX_PAIRS) {
      fail(&c, NULL, error, HEIGHTMAP_CONFIG_ERROR_INVALID, "more than %d pairs",
           HEIGHTMAP_MAX_PAIRS);
      return NULL;
    }
    HeightmapPairConfig *p = &cfg->pairs[cfg->n_pairs++];
    if (!load_pair(&c, *g + strlen(PAIR_PREFIX), dir, p, error))
      return NULL;
    for (int i = 0; i + 1 < cfg->n_pairs; i++)
      if (g_str_equal(cfg->pairs[i].ring, p->ring)) {
        fail(&c, "ring", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "ring \"%s\" is also [pair %s]'s",
             p->ring, cfg->pairs[i].name);
        return NULL;
      }
  }
  return g_steal_pointer(&cfg);
}

static HeightmapConfig *
load_text(const char *data, gsize length, const char *name, const char *dir, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_autoptr(GError) local = NULL;
  if (!g_key_file_load_from_data(kf, data, length, G_KEY_FILE_NONE, &local)) {
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_SYNTAX, "%s: %s", name,
                local->message);
    return NULL;
  }
  return load(kf, name, dir, error);
}

HeightmapConfig *
heightmap_config_load_data(const char *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail(data && name, NULL);
  g_autofree char *cwd = g_get_current_dir();
  return load_text(data, length, name, cwd, error);
}

HeightmapConfig *
heightmap_config_load(const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  g_autofree char *data = NULL;
  gsize length = 0;
  g_autoptr(GError) local = NULL;
  if (!*path || !g_file_get_contents(path, &data, &length, &local)) {
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_IO, "%s: %s", path,
                local ? local->message : "empty file name");
    return NULL;
  }
  if (length > MAX_FILE_SIZE) {
    g_set_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_IO,
                "%s: larger than %d bytes", path, MAX_FILE_SIZE);
    return NULL;
  }
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *cwd = g_get_current_dir();
  g_autofree char *abs_dir = g_canonicalize_filename(dir, cwd);
  return load_text(data, length, path, abs_dir, error);
}

HeightmapFusionParams
heightmap_config_fusion_params(const HeightmapConfig *c)
{
  return (HeightmapFusionParams) {
    .grid = c->grid, .min_confidence = c->min_confidence, .min_points = c->min_points,
    .top_fraction = c->top_fraction, .pool = c->pool,
  };
}

HeightmapBlobParams
heightmap_config_blob_params(const HeightmapConfig *c)
{
  return (HeightmapBlobParams) { .min_height = c->min_height, .min_area = c->blob_min_area,
                                 .max_area = c->blob_max_area, .top_band = c->top_band,
                                 .visible_offset = c->visible_offset,
                                 .disparity_noise = c->disparity_noise };
}

HeightmapTrackerParams
heightmap_config_tracker_params(const HeightmapConfig *c)
{
  return (HeightmapTrackerParams) { .gate = c->gate, .max_missed = c->max_missed,
                                    .confirm = c->confirm, .acceleration = c->acceleration };
}

void
heightmap_config_free(HeightmapConfig *cfg)
{
  if (!cfg)
    return;
  for (int i = 0; i < cfg->n_pairs; i++) {
    g_free(cfg->pairs[i].name);
    g_free(cfg->pairs[i].ring);
    g_free(cfg->pairs[i].calibration_path);
  }
  g_free(cfg->pairs);
  g_free(cfg->socket_path);
  g_free(cfg->metrics_address);
  g_free(cfg->ring_name);
  g_free(cfg->path);
  g_free(cfg);
}
