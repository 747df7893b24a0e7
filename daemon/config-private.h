/* config-private.h: shared between config.c (files, merging) and config-values.c (the
 * keys of [daemon] and [pair NAME]). Not installed, not for other modules. */
#pragma once

#include "config.h"

/* All files of one load, merged. */
typedef struct {
  GKeyFile *merged;         /* the last value of every (group, key), raw (unescaped) */
  GHashTable *origin;       /* "group\x1fkey" -> file the value came from (borrowed) */
  GHashTable *group_file;   /* group -> first file that has it (borrowed) */
  GPtrArray *groups;        /* group names in order of first appearance (owned) */
  GPtrArray *files;         /* file names in reading order (owned) */
} ConfigSet;

ConfigSet *config_set_read(const char *path, GError **error);
void config_set_free(ConfigSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ConfigSet, config_set_free)

/* The file that set `key` in `group`, or NULL when no file did. */
const char *config_origin(const ConfigSet *set, const char *group, const char *key);
/* The first file with `group`. */
const char *config_group_file(const ConfigSet *set, const char *group);

/* Sets "FILE: [group] key: what" (group and/or key may be NULL) and returns false. */
bool config_fail(GError **error, StereodConfigError code, const char *file,
                 const char *group, const char *key, const char *format, ...)
  G_GNUC_PRINTF(6, 7);

/* One group being read. */
typedef struct {
  const ConfigSet *set;
  const char *group;
} ConfigGroup;

bool config_load_daemon(const ConfigGroup *c, StereodConfig *cfg, GError **error);
bool config_load_pair(const ConfigGroup *c, StereodPairConfig *pair, GError **error);
