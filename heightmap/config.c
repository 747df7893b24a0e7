/* config.c: the stereod-heightmap configuration (config/heightmap.conf documents every
 * key). One key file: [heightmap] and one [pair NAME] group per camera pair, read with
 * common/keyfile.h (a regular file of at most 1 MiB, no NUL byte, no group or key twice,
 * decimal numbers without locale effects, consumed completely); unknown groups and keys
 * are errors; every message reads "FILE: [group] key: problem". */
#include "heightmap/heightmap.h"

#include <gio/gio.h>
#include <string.h>

#include "common/file.h"
#include "common/keyfile.h"

#define PAIR_PREFIX "pair "

G_DEFINE_QUARK(heightmap-config-error-quark, heightmap_config_error)

static const char *const heightmap_keys[] = {
  "x0", "x1", "y0", "y1", "cell", "tolerance_ms", "wait_ms", "stale_ms", "min_height",
  "min_confidence", "min_points", "pool", "far_pool", "far_sigma", "carve", "see_through",
  "see_cells", "see_scale", "goal_line",
  "goal_width", "goal_height", "goal_shadow", "goal_front", "max_height", "touch_line",
  "play_margin", "post_zone", "post_area", "body_support", "lower_body", "lower_scale", "body_share", "support_scale", "min_fill", "top_fraction", "blob_min_area", "blob_max_area",
  "split_depth", "crowd_split", "crowd_area", "view_split", "view_split_px", "merge_distance",
  "top_band", "view_centre", "view_centre_px",
  "visible_offset", "disparity_noise", "gate", "acceleration", "max_missed", "confirm",
  "confirm_gap", "coast", "socket", "ring", "format", "metrics", NULL
};
static const char *const pair_keys[] = { "ring", "calibration", NULL };
static const char *const format_names[HEIGHTMAP_FORMAT_COUNT + 1] = { "float", "mm", NULL };

static KeyFileParams
reader_params(void)
{
  return (KeyFileParams){
    .domain = HEIGHTMAP_CONFIG_ERROR,
    .codes = {
      [KEYFILE_ERROR_IO] = HEIGHTMAP_CONFIG_ERROR_IO,
      [KEYFILE_ERROR_SYNTAX] = HEIGHTMAP_CONFIG_ERROR_SYNTAX,
      [KEYFILE_ERROR_DUPLICATE] = HEIGHTMAP_CONFIG_ERROR_INVALID,
      [KEYFILE_ERROR_UNKNOWN] = HEIGHTMAP_CONFIG_ERROR_UNKNOWN,
      [KEYFILE_ERROR_MISSING] = HEIGHTMAP_CONFIG_ERROR_MISSING,
      [KEYFILE_ERROR_MALFORMED] = HEIGHTMAP_CONFIG_ERROR_INVALID,
      [KEYFILE_ERROR_RANGE] = HEIGHTMAP_CONFIG_ERROR_INVALID,
    },
    .max_size = FILE_MAX_CONFIG_SIZE,
  };
}

typedef struct {
  const KeyFile *kf;
  const char *group;
} Ctx;

#define fail(c, key, error, code, ...) keyfile_fail((c)->kf, error, code, (c)->group, key, \
                                                    __VA_ARGS__)

/* The raw value, or NULL when the key is absent. */
static char *
get(const Ctx *c, const char *key)
{
  return keyfile_get_value(c->kf, c->group, key);
}

static bool
get_double(const Ctx *c, const char *key, double lo, double hi, double *out, GError **error)
{
  return keyfile_get_double(c->kf, c->group, key, KEYFILE_OPTIONAL, lo, hi, out, error);
}

static bool
get_int(const Ctx *c, const char *key, int lo, int hi, int *out, GError **error)
{
  return keyfile_get_int(c->kf, c->group, key, KEYFILE_OPTIONAL, lo, hi, out, error);
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
  return keyfile_check_keys(c->kf, c->group, known, error);
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
      !get_double(c, "wait_ms", 0, 600000, &cfg->wait_ms, error) ||
      !get_double(c, "stale_ms", 1, 600000, &cfg->stale_ms, error) ||
      !get_double(c, "min_height", 0.05, 3.0, &cfg->min_height, error) ||
      !get_int(c, "min_confidence", 0, 255, &cfg->min_confidence, error) ||
      !get_int(c, "min_points", 1, 1000, &cfg->min_points, error) ||
      !get_int(c, "pool", 0, 4, &cfg->pool, error) ||
      !get_int(c, "far_pool", 0, 4, &cfg->far_pool, error) ||
      !get_double(c, "far_sigma", 0, 10, &cfg->far_sigma, error) ||
      !keyfile_get_bool(c->kf, c->group, "carve", KEYFILE_OPTIONAL, &cfg->carve, error) ||
      !get_double(c, "see_through", 0, 3, &cfg->see_through, error) ||
      !get_int(c, "see_cells", 1, 10000, &cfg->see_cells, error) ||
      !get_double(c, "see_scale", 0, 10000, &cfg->see_scale, error) ||
      !get_double(c, "goal_line", 0, 1000, &cfg->goal_line, error) ||
      !get_double(c, "touch_line", 0, 1000, &cfg->touch_line, error) ||
      !get_double(c, "play_margin", 0, 1000, &cfg->play_margin, error) ||
      !get_double(c, "post_zone", 0, 5, &cfg->post_zone, error) ||
      !get_double(c, "post_area", 0, 10, &cfg->post_area, error) ||
      !get_double(c, "lower_body", 0, 1, &cfg->lower_body, error) ||
      !get_double(c, "lower_scale", 0, 10000, &cfg->lower_scale, error) ||
      !get_double(c, "body_share", 0, 1, &cfg->body_share, error) ||
      !get_double(c, "body_support", 0, 1, &cfg->body_support, error) ||
      !get_double(c, "support_scale", 0, 10000, &cfg->support_scale, error) ||
      !get_double(c, "min_fill", 0, 1, &cfg->min_fill, error) ||
      !get_double(c, "goal_width", 0.5, 50, &cfg->goal_width, error) ||
      !get_double(c, "goal_height", 0.5, 10, &cfg->goal_height, error) ||
      !get_double(c, "goal_shadow", 0, 20, &cfg->goal_shadow, error) ||
      !get_double(c, "goal_front", 0, 20, &cfg->goal_front, error) ||
      !get_double(c, "max_height", 0, 10, &cfg->max_height, error) ||
      !get_double(c, "top_fraction", 0, 1, &cfg->top_fraction, error) ||
      !get_double(c, "blob_min_area", 0, 1000, &cfg->blob_min_area, error) ||
      !get_double(c, "blob_max_area", 0.001, 10000, &cfg->blob_max_area, error) ||
      !get_double(c, "top_band", 0, 10, &cfg->top_band, error) ||
      !get_double(c, "view_centre", 0, 1, &cfg->view_centre, error) ||
      !get_double(c, "view_centre_px", 0, 100, &cfg->view_centre_px, error) ||
      !get_double(c, "split_depth", 0, 3, &cfg->split_depth, error) ||
      !get_double(c, "crowd_split", 0, 3, &cfg->crowd_split, error) ||
      !get_double(c, "crowd_area", 0, 1000, &cfg->crowd_area, error) ||
      !get_double(c, "view_split", 0, 10, &cfg->view_split, error) ||
      !get_double(c, "view_split_px", 0, 100, &cfg->view_split_px, error) ||
      !get_double(c, "merge_distance", 0, 5, &cfg->merge_distance, error) ||
      !get_double(c, "visible_offset", 0, 2, &cfg->visible_offset, error) ||
      !get_double(c, "disparity_noise", 0, 10, &cfg->disparity_noise, error) ||
      !get_double(c, "gate", 0.01, 100, &cfg->gate, error) ||
      !get_double(c, "acceleration", 0, 100, &cfg->acceleration, error) ||
      !get_int(c, "max_missed", 0, 10000, &cfg->max_missed, error) ||
      !get_int(c, "confirm", 1, 100, &cfg->confirm, error) ||
      !get_int(c, "confirm_gap", 0, 10, &cfg->confirm_gap, error) ||
      !get_int(c, "coast", 0, 10000, &cfg->coast, error) ||
      !get_name(c, "ring", &cfg->ring_name, error))
    return false;
  if (cfg->coast > cfg->max_missed)
    return fail(c, "coast", error, HEIGHTMAP_CONFIG_ERROR_INVALID,
                "must not be more than max_missed (%d): a track is dropped after that",
                cfg->max_missed);
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
      return fail(c, "metrics", error, HEIGHTMAP_CONFIG_ERROR_INVALID, "'%s': %s", metrics,
                  local->message);
    cfg->metrics_address = g_steal_pointer(&metrics);
  }
  int format = (int) cfg->format;
  if (!keyfile_get_choice(c->kf, c->group, "format", KEYFILE_OPTIONAL, format_names, &format,
                          error))
    return false;
  cfg->format = (HeightmapFormat) format;
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
load(const KeyFile *kf, const char *name, const char *dir, GError **error)
{
  g_autoptr(HeightmapConfig) cfg = g_new0(HeightmapConfig, 1);
  cfg->path = g_strdup(name);
  cfg->tolerance_ms = 20;
  cfg->wait_ms = 100;
  cfg->stale_ms = 1000;
  cfg->min_height = 0.5;
  cfg->min_confidence = 128;
  cfg->min_points = 2;
  cfg->far_sigma = 0.2;
  cfg->top_fraction = 0.1;
  cfg->goal_line = 52.5;
  cfg->goal_width = 7.32;
  cfg->goal_height = 2.44;
  cfg->goal_shadow = 1.0;
  cfg->touch_line = 34.0;
  cfg->play_margin = 1.0;
  cfg->post_zone = 0.6;
  cfg->post_area = 0.3;
  cfg->lower_body = 0.05;
  cfg->lower_scale = 12.0;
  cfg->body_share = 0.5;
  cfg->body_support = 0.02;
  cfg->support_scale = 20.0;
  cfg->min_fill = 0.2;
  cfg->see_through = 0.0;
  cfg->see_cells = 1;
  cfg->see_scale = 20.0;
  cfg->blob_min_area = 0.1;
  cfg->blob_max_area = 3.0;
  cfg->crowd_split = 0.2;
  cfg->crowd_area = 3.0;
  cfg->view_split = 0.9;
  cfg->view_split_px = 10.0;
  cfg->merge_distance = 0.5;
  cfg->top_band = 1.0;
  cfg->view_centre = 0.05;
  cfg->view_centre_px = 1.0;
  cfg->visible_offset = 0.05;
  cfg->disparity_noise = 0.07;
  cfg->gate = 1.0;
  cfg->acceleration = 10.0;
  cfg->max_missed = 10;
  cfg->confirm = 2;
  cfg->confirm_gap = 0;
  cfg->coast = 0;
  cfg->ring_name = g_strdup("heightmap");
  cfg->format = HEIGHTMAP_FORMAT_FLOAT;
  Ctx c = { .kf = kf, .group = "heightmap" };
  if (!load_main(&c, cfg, error))
    return NULL;

  g_auto(GStrv) groups = keyfile_get_groups(kf, NULL);
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

HeightmapConfig *
heightmap_config_load_data(const char *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail(data && name, NULL);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_data(&params, data, length, name, error);
  if (!kf)
    return NULL;
  g_autofree char *cwd = g_get_current_dir();
  return load(kf, name, cwd, error);
}

HeightmapConfig *
heightmap_config_load(const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  KeyFileParams params = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_file(&params, path, error);
  if (!kf)
    return NULL;
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *cwd = g_get_current_dir();
  g_autofree char *abs_dir = g_canonicalize_filename(dir, cwd);
  return load(kf, path, abs_dir, error);
}

HeightmapFusionParams
heightmap_config_fusion_params(const HeightmapConfig *c)
{
  return (HeightmapFusionParams) {
    .grid = c->grid, .min_confidence = c->min_confidence, .min_points = c->min_points,
    .top_fraction = c->top_fraction, .pool = c->pool, .carve = c->carve,
    .see_height = c->see_through,
    .far_pool = c->far_pool, .far_sigma = c->far_sigma,
    .disparity_noise = c->disparity_noise, .goal_line = c->goal_line,
    .goal_width = c->goal_width, .goal_height = c->goal_height,
    .goal_shadow = c->goal_shadow, .goal_front = c->goal_front,
  };
}

HeightmapBlobParams
heightmap_config_blob_params(const HeightmapConfig *c)
{
  return (HeightmapBlobParams) { .min_height = c->min_height, .min_area = c->blob_min_area,
                                 .max_area = c->blob_max_area, .top_band = c->top_band,
                                 .visible_offset = c->visible_offset,
                                 .disparity_noise = c->disparity_noise,
                                 .split_depth = c->split_depth,
                                 .crowd_split = c->crowd_split,
                                 .crowd_area = c->crowd_area,
                                 .view_split = c->view_split,
                                 .view_split_px = c->view_split_px,
                                 .merge_distance = c->merge_distance,
                                 .view_centre = c->view_centre,
                                 .view_centre_px = c->view_centre_px,
                                 .half_length = c->goal_line, .half_width = c->touch_line,
                                 .play_margin = c->play_margin,
                                 .goal_half_width = 0.5 * c->goal_width,
                                 .post_zone = c->post_zone, .post_area = c->post_area,
                                 .lower_body = c->lower_body, .lower_scale = c->lower_scale,
                                 .body_share = c->body_share,
                                 .body_support = c->body_support,
                                 .support_scale = c->support_scale,
                                 .min_fill = c->min_fill,
                                 .see_through = c->see_through,
                                 .see_cells = c->see_cells,
                                 .see_scale = c->see_scale };
}

HeightmapVelocityParams
heightmap_config_velocity_params(const HeightmapConfig *c)
{
  return (HeightmapVelocityParams) { .min_height = c->min_height,
                                     .min_confidence = c->min_confidence,
                                     .min_samples = HEIGHTMAP_VELOCITY_MIN_SAMPLES,
                                     .disparity_noise = c->disparity_noise };
}

HeightmapTrackerParams
heightmap_config_tracker_params(const HeightmapConfig *c)
{
  return (HeightmapTrackerParams) { .gate = c->gate, .max_missed = c->max_missed,
                                    .confirm = c->confirm, .confirm_gap = c->confirm_gap,
                                    .coast = c->coast, .acceleration = c->acceleration,
                                    .max_height = c->max_height };
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
