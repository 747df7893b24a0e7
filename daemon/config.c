/* config.c: reading and merging the configuration files (main file + conf.d drop-ins).
 *
 * Every file is parsed on its own first: unknown groups and keys, bad pair names and a
 * group that appears twice in one file are reported against that file. The values are
 * then merged into one GKeyFile, remembering which file each (group, key) came from, so
 * that config-values.c can name the right file in its messages. */
#include "config-private.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

G_DEFINE_QUARK(stereod-config-error-quark, stereod_config_error)

#define ORIGIN_SEP "\x1f"   /* between group and key in the origin table */

static const char *const daemon_keys[] = {
  "device", "log_level", "stats_interval", "ring_slots", "in_flight", "mode", NULL
};
static const char *const pair_keys[] = {
  "left", "right", "width", "height", "fps", "pair_tolerance_ms", "calibration",
  "max_disparity", "scales", "lr_check", "refine", "window", "smoothing", "noise_floor",
  "outputs", "reconnect_min_ms", "reconnect_max_ms", "clock", "stall_ms", "start_timeout_ms",
  NULL
};

const char *
stereod_config_default_path(void)
{
  return STEREOD_SYSCONFDIR "/stereod/stereod.conf";
}

bool
config_fail(GError **error, StereodConfigError code, const char *file, const char *group,
            const char *key, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *what = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (group && key)
    g_set_error(error, STEREOD_CONFIG_ERROR, code, "%s: [%s] %s: %s", file, group, key, what);
  else if (group)
    g_set_error(error, STEREOD_CONFIG_ERROR, code, "%s: [%s]: %s", file, group, what);
  else
    g_set_error(error, STEREOD_CONFIG_ERROR, code, "%s: %s", file, what);
  return false;
}

const char *
config_origin(const ConfigSet *set, const char *group, const char *key)
{
  g_autofree char *id = g_strconcat(group, ORIGIN_SEP, key, NULL);
  return g_hash_table_lookup(set->origin, id);
}

const char *
config_group_file(const ConfigSet *set, const char *group)
{
  return g_hash_table_lookup(set->group_file, group);
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

/* GKeyFile merges a group that appears twice in one file without a word. In our files
 * that is a copy-and-paste mistake ([pair west] pasted for [pair east]), so it is an
 * error. The header rule is GKeyFile's: after leading blanks, '[' up to the last ']'. */
static bool
check_duplicate_headers(const char *file, const char *text, GError **error)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    const char *p = lines[i];
    while (g_ascii_isspace(*p))
      p++;
    const char *end = strrchr(p, ']');
    if (*p != '[' || !end)
      continue;
    char *name = g_strndup(p + 1, (gsize)(end - p - 1));
    if (!g_hash_table_add(seen, name))
      return config_fail(error, STEREOD_CONFIG_ERROR_INVALID, file, name, NULL,
                         "appears twice in this file");
  }
  return true;
}

static bool
check_group(const char *file, GKeyFile *kf, const char *group, GError **error)
{
  const char *const *known;
  if (strcmp(group, "daemon") == 0)
    known = daemon_keys;
  else if (g_str_has_prefix(group, "pair ")) {
    if (!valid_pair_name(group + 5))
      return config_fail(error, STEREOD_CONFIG_ERROR_INVALID, file, group, NULL,
                         "invalid pair name '%s': 1..%d characters of A-Z a-z 0-9 _ -",
                         group + 5, STEREOD_CONFIG_MAX_NAME);
    known = pair_keys;
  } else
    return config_fail(error, STEREOD_CONFIG_ERROR_UNKNOWN, file, group, NULL,
                       "unknown group (expected [daemon] or [pair NAME])");
  g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);
  for (int k = 0; keys && keys[k]; k++)
    if (!g_strv_contains(known, keys[k]))
      return config_fail(error, STEREOD_CONFIG_ERROR_UNKNOWN, file, group, keys[k],
                         "unknown key");
  return true;
}

/* A new group name must not differ from an earlier one in case only: the two would be
 * two pairs whose names a reader can barely tell apart. */
static bool
check_case_clash(const ConfigSet *set, const char *file, const char *group, GError **error)
{
  for (guint i = 0; i < set->groups->len; i++) {
    const char *other = g_ptr_array_index(set->groups, i);
    if (g_ascii_strcasecmp(other, group) == 0)
      return config_fail(error, STEREOD_CONFIG_ERROR_INVALID, file, group, NULL,
                         "the name differs from [%s] (%s) only in case", other,
                         config_group_file(set, other));
  }
  return true;
}

static bool
read_file(ConfigSet *set, const char *path, GError **error)
{
  GStatBuf st;
  if (g_stat(path, &st) != 0)
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, path, NULL, NULL, "cannot read: %s",
                       g_strerror(errno));
  if (!S_ISREG(st.st_mode))
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, path, NULL, NULL,
                       "not a regular file");
  if (st.st_size > STEREOD_CONFIG_MAX_FILE_SIZE)
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, path, NULL, NULL,
                       "larger than %d bytes", STEREOD_CONFIG_MAX_FILE_SIZE);

  g_autoptr(GError) local = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;
  if (!g_file_get_contents(path, &text, &length, &local))
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, path, NULL, NULL, "cannot read: %s",
                       local->message);
  /* KEEP_TRANSLATIONS: otherwise GKeyFile drops "key[de]=" lines silently, and a key we
   * do not know must be an error. */
  g_autoptr(GKeyFile) kf = g_key_file_new();
  if (!g_key_file_load_from_data(kf, text, length, G_KEY_FILE_KEEP_TRANSLATIONS, &local))
    return config_fail(error, STEREOD_CONFIG_ERROR_SYNTAX, path, NULL, NULL,
                       "not a key file: %s", local->message);
  if (!check_duplicate_headers(path, text, error))
    return false;

  /* The set keeps the file names; the tables below borrow them. */
  char *file = g_strdup(path);
  g_ptr_array_add(set->files, file);

  g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
  for (int g = 0; groups[g]; g++) {
    const char *group = groups[g];
    if (!check_group(file, kf, group, error))
      return false;
    if (!g_hash_table_contains(set->group_file, group)) {
      if (!check_case_clash(set, file, group, error))
        return false;
      char *name = g_strdup(group);
      g_ptr_array_add(set->groups, name);
      g_hash_table_insert(set->group_file, name, file);
    }
    g_auto(GStrv) keys = g_key_file_get_keys(kf, group, NULL, NULL);
    for (int k = 0; keys && keys[k]; k++) {
      g_autofree char *value = g_key_file_get_value(kf, group, keys[k], NULL);
      g_key_file_set_value(set->merged, group, keys[k], value);
      g_hash_table_insert(set->origin, g_strconcat(group, ORIGIN_SEP, keys[k], NULL), file);
    }
  }
  return true;
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
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, confd, NULL, NULL, "cannot read: %s",
                       local->message);
  }
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d))) {
    if (name[0] == '.' || !g_str_has_suffix(name, ".conf"))
      continue;
    if (names->len == STEREOD_CONFIG_MAX_DROPINS)
      return config_fail(error, STEREOD_CONFIG_ERROR_IO, confd, NULL, NULL,
                         "more than %d drop-in files", STEREOD_CONFIG_MAX_DROPINS);
    g_ptr_array_add(names, g_strdup(name));
  }
  g_ptr_array_sort(names, compare_names);
  for (guint i = 0; i < names->len; i++)
    g_ptr_array_add(out, g_build_filename(confd, g_ptr_array_index(names, i), NULL));
  return true;
}

void
config_set_free(ConfigSet *set)
{
  if (!set)
    return;
  g_clear_pointer(&set->merged, g_key_file_unref);
  g_clear_pointer(&set->origin, g_hash_table_unref);
  g_clear_pointer(&set->group_file, g_hash_table_unref);
  g_clear_pointer(&set->groups, g_ptr_array_unref);
  g_clear_pointer(&set->files, g_ptr_array_unref);
  g_free(set);
}

ConfigSet *
config_set_read(const char *path, GError **error)
{
  g_autoptr(ConfigSet) set = g_new0(ConfigSet, 1);
  set->merged = g_key_file_new();
  set->origin = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  set->group_file = g_hash_table_new(g_str_hash, g_str_equal);
  set->groups = g_ptr_array_new_with_free_func(g_free);
  set->files = g_ptr_array_new_with_free_func(g_free);

  if (!read_file(set, path, error))
    return NULL;
  g_autoptr(GPtrArray) dropins = g_ptr_array_new_with_free_func(g_free);
  if (!list_dropins(path, dropins, error))
    return NULL;
  for (guint i = 0; i < dropins->len; i++)
    if (!read_file(set, g_ptr_array_index(dropins, i), error))
      return NULL;
  return g_steal_pointer(&set);
}

/* Public API ----------------------------------------------------------------------- */

StereodConfig *
stereod_config_load(const char *path, GError **error)
{
  if (!path)
    path = stereod_config_default_path();
  if (!*path)   /* --config "" */
    return config_fail(error, STEREOD_CONFIG_ERROR_IO, "''", NULL, NULL, "empty file name"),
           NULL;

  g_autoptr(ConfigSet) set = config_set_read(path, error);
  if (!set)
    return NULL;

  g_autoptr(StereodConfig) cfg = g_new0(StereodConfig, 1);
  cfg->path = g_strdup(path);
  cfg->files = g_new0(char *, set->files->len + 1);
  for (guint i = 0; i < set->files->len; i++)
    cfg->files[i] = g_strdup(g_ptr_array_index(set->files, i));
  cfg->log_level = STEREOD_LOG_MESSAGE;
  cfg->stats_interval_s = 10;
  cfg->ring_slots = 4;
  cfg->in_flight = 2;
  cfg->pairs = g_new0(StereodPairConfig, STEREOD_CONFIG_MAX_PAIRS);

  for (guint g = 0; g < set->groups->len; g++) {
    const char *group = g_ptr_array_index(set->groups, g);
    ConfigGroup c = { set, group };
    if (strcmp(group, "daemon") == 0) {
      if (!config_load_daemon(&c, cfg, error))
        return NULL;
      continue;
    }
    if (cfg->n_pairs == STEREOD_CONFIG_MAX_PAIRS)
      return config_fail(error, STEREOD_CONFIG_ERROR_INVALID, config_group_file(set, group),
                         group, NULL, "more than %d pairs", STEREOD_CONFIG_MAX_PAIRS), NULL;
    StereodPairConfig *pair = &cfg->pairs[cfg->n_pairs++];
    pair->name = g_strdup(group + 5);
    if (!config_load_pair(&c, pair, error))
      return NULL;
  }
  if (cfg->n_pairs == 0)
    return config_fail(error, STEREOD_CONFIG_ERROR_MISSING, path, NULL, NULL,
                       "no [pair NAME] group: at least one camera pair is needed"), NULL;
  return g_steal_pointer(&cfg);
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
