/* config-private.h: shared between config.c (files, merging) and config-values.c (the
 * keys of [daemon] and [pair NAME]). Not installed, not for other modules. */
#pragma once

#include "common/keyfile.h"
#include "config.h"

/* One group of the merged files being read. The key file names, in its messages, the
 * file that set each value (common/keyfile.h). */
typedef struct {
  const KeyFile *kf;
  const char *group;
} ConfigGroup;

bool config_load_daemon(const ConfigGroup *c, StereodConfig *cfg, GError **error);
bool config_load_pair(const ConfigGroup *c, StereodPairConfig *pair, GError **error);
