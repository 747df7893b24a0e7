/* config-diff.c: what a reload changes, and which of it needs a restart (config.h says
 * why each key is where it is). */
#include "config.h"

#include <string.h>

static void
need_restart(StereodConfigDiff *diff, GString *reasons, const char *what)
{
  diff->restart = true;
  if (reasons->len)
    g_string_append(reasons, ", ");
  g_string_append(reasons, what);
}

static void
pair_restart(StereodConfigDiff *diff, GString *reasons, const char *name, const char *key)
{
  g_autofree char *what = g_strdup_printf("[pair %s] %s", name, key);
  need_restart(diff, reasons, what);
}

static void
compare_pair(const StereodPairConfig *a, const StereodPairConfig *b, int index,
             StereodConfigDiff *diff, GString *reasons)
{
  const char *n = b->name;
  if (strcmp(a->left, b->left) != 0)
    pair_restart(diff, reasons, n, "left");
  if (strcmp(a->right, b->right) != 0)
    pair_restart(diff, reasons, n, "right");
  if (a->width != b->width)
    pair_restart(diff, reasons, n, "width");
  if (a->height != b->height)
    pair_restart(diff, reasons, n, "height");
  if (a->fps != b->fps)
    pair_restart(diff, reasons, n, "fps");
  if (a->tolerance_ns != b->tolerance_ns)
    pair_restart(diff, reasons, n, "pair_tolerance_ms");
  if (a->outputs != b->outputs)
    pair_restart(diff, reasons, n, "outputs");
  if (a->flow != b->flow)
    pair_restart(diff, reasons, n, "flow");
  if (a->clock != b->clock)
    pair_restart(diff, reasons, n, "clock");
  if (a->stall_ms != b->stall_ms)
    pair_restart(diff, reasons, n, "stall_ms");
  if (a->start_timeout_ms != b->start_timeout_ms)
    pair_restart(diff, reasons, n, "start_timeout_ms");
  /* StereoCalib is all ints and doubles without padding: memcmp compares the numbers. */
  if (a->has_calibration != b->has_calibration ||
      g_strcmp0(a->calibration_path, b->calibration_path) != 0 ||
      (a->has_calibration && memcmp(&a->calib, &b->calib, sizeof(a->calib)) != 0))
    pair_restart(diff, reasons, n, "calibration");

  /* The keys that reach StereoParams; width/height are covered above. */
  if (a->params.max_disparity != b->params.max_disparity ||
      a->params.levels != b->params.levels || a->params.lr_check != b->params.lr_check ||
      a->params.refine != b->params.refine ||
      a->params.search_radius != b->params.search_radius ||
      a->params.smooth_sigma != b->params.smooth_sigma ||
      a->params.min_magnitude != b->params.min_magnitude ||
      a->params.coarse_fallback != b->params.coarse_fallback ||
      a->params.ground_margin != b->params.ground_margin)
    diff->engine_pairs |= 1u << index;
  if (a->reconnect_min_ms != b->reconnect_min_ms || a->reconnect_max_ms != b->reconnect_max_ms)
    diff->backoff_pairs |= 1u << index;
}

bool
stereod_config_diff(const StereodConfig *old_config, const StereodConfig *new_config,
                    StereodConfigDiff *diff)
{
  g_return_val_if_fail(old_config && new_config && diff, true);
  *diff = (StereodConfigDiff){ 0 };
  g_autoptr(GString) reasons = g_string_new(NULL);

  if (g_strcmp0(old_config->device, new_config->device) != 0)
    need_restart(diff, reasons, "[daemon] device");
  if (old_config->ring_slots != new_config->ring_slots)
    need_restart(diff, reasons, "[daemon] ring_slots");
  if (old_config->in_flight != new_config->in_flight)
    need_restart(diff, reasons, "[daemon] in_flight");
  if (old_config->offline != new_config->offline)
    need_restart(diff, reasons, "[daemon] mode");
  if (old_config->offline_speed != new_config->offline_speed)
    need_restart(diff, reasons, "[daemon] offline_speed");
  if (g_strcmp0(old_config->metrics, new_config->metrics) != 0)
    need_restart(diff, reasons, "[daemon] metrics");
  diff->log_level = old_config->log_level != new_config->log_level;
  diff->stats_interval = old_config->stats_interval_s != new_config->stats_interval_s;

  for (int i = 0; i < old_config->n_pairs; i++)
    if (!stereod_config_find_pair(new_config, old_config->pairs[i].name)) {
      g_autofree char *what = g_strdup_printf("[pair %s] removed", old_config->pairs[i].name);
      need_restart(diff, reasons, what);
    }
  for (int i = 0; i < new_config->n_pairs; i++) {
    const StereodPairConfig *b = &new_config->pairs[i];
    const StereodPairConfig *a = stereod_config_find_pair(old_config, b->name);
    if (!a) {
      g_autofree char *what = g_strdup_printf("[pair %s] added", b->name);
      need_restart(diff, reasons, what);
    } else
      compare_pair(a, b, i, diff, reasons);
  }

  diff->changed = diff->restart || diff->log_level || diff->stats_interval ||
                  diff->engine_pairs || diff->backoff_pairs;
  if (diff->restart)
    diff->restart_reason = g_string_free(g_steal_pointer(&reasons), false);
  return diff->restart;
}

void
stereod_config_diff_clear(StereodConfigDiff *diff)
{
  if (diff)
    g_clear_pointer(&diff->restart_reason, g_free);
}
