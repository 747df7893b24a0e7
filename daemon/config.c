/* config.c: reading and merging the configuration files (main file + conf.d drop-ins).
 *
 * Every file is read and checked on its own first (common/keyfile.h: a regular file of
 * at most 1 MiB, no NUL byte, no group twice, no key twice in a group); then unknown
 * groups and keys and bad pair names are reported against that file. The values are
 * then merged into one key file that remembers which file each (group, key) came from,
 * so that config-values.c names the right file in its messages. */
#include "config-private.h"

#include <string.h>

G_DEFINE_QUARK(stereod-config-error-quark, stereod_config_error)

static const char *const daemon_keys[] = {
  "device", "log_level", "stats_interval", "ring_slots", "in_flight", "mode", "offline_speed",
  "metrics", NULL
};
static const char *const pair_keys[] = {
  "left", "right", "width", "height", "fps", "pair_tolerance_ms", "calibration",
  "max_disparity", "scales", "lr_check", "refine", "window", "smoothing", "noise_floor",
  "coarse_fallback", "ground_margin", "ground_tilt", "outputs", "flow", "reconnect_min_ms", "reconnect_max_ms", "clock", "stall_ms",
  "start_timeout_ms", NULL
};

/* How the key-file reader's problems map onto this module's codes. */
static const KeyFileParams keyfile_params = {
  .domain = 0,   /* set in params() below: quarks are not compile-time constants */
  .codes = {
    [KEYFILE_ERROR_IO] = STEREOD_CONFIG_ERROR_IO,
    [KEYFILE_ERROR_SYNTAX] = STEREOD_CONFIG_ERROR_SYNTAX,
    [KEYFILE_ERROR_DUPLICATE] = STEREOD_CONFIG_ERROR_INVALID,
    [KEYFILE_ERROR_UNKNOWN] = STEREOD_CONFIG_ERROR_UNKNOWN,
    [KEYFILE_ERROR_MISSING] = STEREOD_CONFIG_ERROR_MISSING,
    [KEYFILE_ERROR_MALFORMED] = STEREOD_CONFIG_ERROR_INVALID,
    [KEYFILE_ERROR_RANGE] = STEREOD_CONFIG_ERROR_INVALID,
  },
  .max_size = STEREOD_CONFIG_MAX_FILE_SIZE,
};

static KeyFileParams
params(void)
{
  KeyFileParams p = keyfile_params;
  p.domain = STEREOD_CONFIG_ERROR;
  return p;
}

const char *
stereod_config_default_path(void)
{
  return STEREOD_SYSCONFDIR "/stereod/stereod.conf";
}

/* Pair names are used in shm object names and log lines: keep them plain. */
static bool
valid_pair_name(const char *name)
{
  size_t n = strlen(name);
  if (n < 1 || n > STEREOD_CONFIG_MAX_NAME)
    return false;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && *p != '-')
      return false;
  return true;
}

static bool
check_group(const KeyFile *kf, const char *group, GError **error)
{
  const char *const *known;
  if (strcmp(group, "daemon") == 0)
    known = daemon_keys;
  else if (g_str_has_prefix(group, "pair ")) {
    if (!valid_pair_name(group + 5))
      return keyfile_fail(kf, error, STEREOD_CONFIG_ERROR_INVALID, group, NULL,
                          "invalid pair name '%s': 1..%d characters of A-Z a-z 0-9 _ -",
                          group + 5, STEREOD_CONFIG_MAX_NAME);
    known = pair_keys;
  } else
    return keyfile_fail(kf, error, STEREOD_CONFIG_ERROR_UNKNOWN, group, NULL,
                        "unknown group (expected [daemon] or [pair NAME])");
  return keyfile_check_keys(kf, group, known, error);
}

/* A new group name must not differ from an earlier one in case only: the two would be
 * two pairs whose names a reader can barely tell apart. `earlier` are the groups before
 * it in the same file, `merged` the files before. */
static bool
check_case_clash(const KeyFile *merged, const KeyFile *kf, char **earlier, int n_earlier,
                 const char *group, GError **error)
{
  for (int i = 0; i < n_earlier; i++)
    if (g_ascii_strcasecmp(earlier[i], group) == 0)
      return keyfile_fail(kf, error, STEREOD_CONFIG_ERROR_INVALID, group, NULL,
                          "the name differs from [%s] (%s) only in case", earlier[i],
                          keyfile_get_file(kf, earlier[i], NULL));
  g_auto(GStrv) groups = keyfile_get_groups(merged, NULL);
  for (int i = 0; groups[i]; i++)
    if (g_ascii_strcasecmp(groups[i], group) == 0)
      return keyfile_fail(kf, error, STEREOD_CONFIG_ERROR_INVALID, group, NULL,
                          "the name differs from [%s] (%s) only in case", groups[i],
                          keyfile_get_file(merged, groups[i], NULL));
  return true;
}

/* Checks one file on its own and merges it into `merged`. */
static bool
merge_file(KeyFile *merged, const KeyFile *kf, GError **error)
{
  g_auto(GStrv) groups = keyfile_get_groups(kf, NULL);
  for (int g = 0; groups[g]; g++) {
    if (!check_group(kf, groups[g], error))
      return false;
    if (!keyfile_has_group(merged, groups[g]) &&
        !check_case_clash(merged, kf, groups, g, groups[g], error))
      return false;
  }
  keyfile_merge(merged, kf);
  return true;
}

static bool
read_file(KeyFile *merged, const char *path, GError **error)
{
  KeyFileParams p = params();
  g_autoptr(KeyFile) kf = keyfile_load_file(&p, path, error);
  return kf && merge_file(merged, kf, error);
}

static int
compare_names(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The drop-ins of `main_path`: DIR/conf.d/NAME.conf, sorted by name. A missing conf.d is
 * not an error; an unreadable one is. */
static bool
list_dropins(const char *main_path, GPtrArray *out, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(main_path);
  g_autofree char *confd = g_build_filename(dir, "conf.d", NULL);
  g_autoptr(GError) local = NULL;
  g_autoptr(GDir) d = g_dir_open(confd, 0, &local);
  if (!d) {
    if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT) ||
        g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOTDIR))
      return true;
    g_set_error(error, STEREOD_CONFIG_ERROR, STEREOD_CONFIG_ERROR_IO, "%s: cannot read: %s",
                confd, local->message);
    return false;
  }
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d))) {
    if (name[0] == '.' || !g_str_has_suffix(name, ".conf"))
      continue;
    if (names->len == STEREOD_CONFIG_MAX_DROPINS) {
      g_set_error(error, STEREOD_CONFIG_ERROR, STEREOD_CONFIG_ERROR_IO,
                  "%s: more than %d drop-in files", confd, STEREOD_CONFIG_MAX_DROPINS);
      return false;
    }
    g_ptr_array_add(names, g_strdup(name));
  }
  g_ptr_array_sort(names, compare_names);
  for (guint i = 0; i < names->len; i++)
    g_ptr_array_add(out, g_build_filename(confd, g_ptr_array_index(names, i), NULL));
  return true;
}

/* The main file and its drop-ins, merged. */
static KeyFile *
read_files(const char *path, GError **error)
{
  KeyFileParams p = params();
  g_autoptr(KeyFile) merged = keyfile_new(&p);
  if (!read_file(merged, path, error))
    return NULL;
  g_autoptr(GPtrArray) dropins = g_ptr_array_new_with_free_func(g_free);
  if (!list_dropins(path, dropins, error))
    return NULL;
  for (guint i = 0; i < dropins->len; i++)
    if (!read_file(merged, g_ptr_array_index(dropins, i), error))
      return NULL;
  return g_steal_pointer(&merged);
}

/* The values of the merged files. */
static StereodConfig *
load_merged(const KeyFile *merged, const char *path, GError **error)
{
  g_autoptr(StereodConfig) cfg = g_new0(StereodConfig, 1);
  cfg->path = g_strdup(path);
  gsize n_files = 0;
  const char *const *files = keyfile_get_files(merged, &n_files);
  cfg->files = g_new0(char *, n_files + 1);
  for (gsize i = 0; i < n_files; i++)
    cfg->files[i] = g_strdup(files[i]);
  cfg->log_level = STEREOD_LOG_MESSAGE;
  cfg->stats_interval_s = 10;
  cfg->ring_slots = 4;
  cfg->in_flight = 2;
  cfg->offline_speed = 0.0;
  cfg->pairs = g_new0(StereodPairConfig, STEREOD_CONFIG_MAX_PAIRS);

  g_auto(GStrv) groups = keyfile_get_groups(merged, NULL);
  for (int g = 0; groups[g]; g++) {
    const char *group = groups[g];
    ConfigGroup c = { merged, group };
    if (strcmp(group, "daemon") == 0) {
      if (!config_load_daemon(&c, cfg, error))
        return NULL;
      continue;
    }
    if (cfg->n_pairs == STEREOD_CONFIG_MAX_PAIRS)
      return keyfile_fail(merged, error, STEREOD_CONFIG_ERROR_INVALID, group, NULL,
                          "more than %d pairs", STEREOD_CONFIG_MAX_PAIRS), NULL;
    StereodPairConfig *pair = &cfg->pairs[cfg->n_pairs++];
    pair->name = g_strdup(group + 5);
    if (!config_load_pair(&c, pair, error))
      return NULL;
  }
  if (cfg->n_pairs == 0) {
    g_set_error(error, STEREOD_CONFIG_ERROR, STEREOD_CONFIG_ERROR_MISSING,
                "%s: no [pair NAME] group: at least one camera pair is needed", path);
    return NULL;
  }
  return g_steal_pointer(&cfg);
}

/* Public API ----------------------------------------------------------------------- */

StereodConfig *
stereod_config_load(const char *path, GError **error)
{
  if (!path)
    path = stereod_config_default_path();
  g_autoptr(KeyFile) merged = read_files(path, error);
  return merged ? load_merged(merged, path, error) : NULL;
}

StereodConfig *
stereod_config_load_data(const char *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail(data && name, NULL);
  KeyFileParams p = params();
  g_autoptr(KeyFile) kf = keyfile_load_data(&p, data, length, name, error);
  if (!kf)
    return NULL;
  g_autoptr(KeyFile) merged = keyfile_new(&p);
  if (!merge_file(merged, kf, error))
    return NULL;
  return load_merged(merged, name, error);
}

void
stereod_config_free(StereodConfig *config)
{
  if (!config)
    return;
  for (int i = 0; config->pairs && i < STEREOD_CONFIG_MAX_PAIRS; i++) {
    StereodPairConfig *p = &config->pairs[i];
    g_free(p->name);
    g_free(p->left);
    g_free(p->right);
    g_free(p->calibration_path);
    g_free(p->left_file);
    g_free(p->right_file);
  }
  g_free(config->pairs);
  g_strfreev(config->files);
  g_free(config->device);
  g_free(config->metrics);
  g_free(config->path);
  g_free(config);
}

const StereodPairConfig *
stereod_config_find_pair(const StereodConfig *config, const char *name)
{
  g_return_val_if_fail(config != NULL && name != NULL, NULL);
  for (int i = 0; i < config->n_pairs; i++)
    if (strcmp(config->pairs[i].name, name) == 0)
      return &config->pairs[i];
  return NULL;
}
