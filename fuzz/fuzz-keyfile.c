/* fuzz-keyfile: every key-file reader on the same bytes: the stereod configuration
 * (stereod_config_load_data), the height map's (heightmap_config_load_data), the sim's
 * (sim_config_load_data), and common/keyfile.h itself with each getter on each key.
 * Any input must give a configuration or one error naming the file; never a crash, a
 * sanitizer report or a hang. Corpus: fuzz/corpus/keyfile/ (the shipped configurations). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/keyfile.h"
#include "daemon/config.h"
#include "heightmap/heightmap.h"
#include "tools/sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_error(GError *error, const char *name)
{
  /* The contract of every reader: a one-line message that starts with the file. */
  if (!error || !g_str_has_prefix(error->message, name))
    __builtin_trap();
  g_error_free(error);
}

/* Each getter on each key: the values must parse or fail cleanly whatever they hold. */
static void
exercise_getters(const KeyFile *kf)
{
  static const char *const choices[] = { "float", "mm", "true", NULL };
  g_auto(GStrv) groups = keyfile_get_groups(kf, NULL);
  for (int g = 0; groups[g]; g++) {
    g_auto(GStrv) keys = keyfile_get_keys(kf, groups[g], NULL);
    for (int k = 0; keys[k]; k++) {
      GError *error = NULL;
      int i = 0;
      gint64 i64 = 0;
      double d = 0, list[9];
      bool b = false;
      char *s = NULL;
      if (!keyfile_get_int(kf, groups[g], keys[k], KEYFILE_REQUIRED, -1000, 1000, &i, &error))
        g_clear_error(&error);
      if (!keyfile_get_int64(kf, groups[g], keys[k], KEYFILE_REQUIRED, G_MININT64, G_MAXINT64,
                             &i64, &error))
        g_clear_error(&error);
      if (!keyfile_get_double(kf, groups[g], keys[k], KEYFILE_REQUIRED, -1e6, 1e6, &d, &error))
        g_clear_error(&error);
      if (!keyfile_get_doubles(kf, groups[g], keys[k], KEYFILE_REQUIRED, 9, -G_MAXDOUBLE,
                               G_MAXDOUBLE, list, &error))
        g_clear_error(&error);
      if (!keyfile_get_bool(kf, groups[g], keys[k], KEYFILE_REQUIRED, &b, &error))
        g_clear_error(&error);
      if (!keyfile_get_choice(kf, groups[g], keys[k], KEYFILE_REQUIRED, choices, &i, &error))
        g_clear_error(&error);
      if (keyfile_get_string(kf, groups[g], keys[k], KEYFILE_REQUIRED, &s, &error))
        g_free(s);
      else
        g_clear_error(&error);
      g_free(keyfile_get_value(kf, groups[g], keys[k]));
    }
  }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *text = (const char *)data;
  GError *error = NULL;

  StereodConfig *cfg = stereod_config_load_data(text, size, "fuzz.conf", &error);
  if (cfg)
    stereod_config_free(cfg);
  else
    check_error(error, "fuzz.conf");

  error = NULL;
  HeightmapConfig *hm = heightmap_config_load_data(text, size, "fuzz.conf", &error);
  if (hm)
    heightmap_config_free(hm);
  else
    check_error(error, "fuzz.conf");

  error = NULL;
  SimConfig *sim = sim_config_load_data(text, size, "fuzz.conf", &error);
  if (sim)
    sim_config_free(sim);
  else
    check_error(error, "fuzz.conf");

  error = NULL;
  KeyFile *kf = keyfile_load_data(NULL, text, size, "fuzz.conf", &error);
  if (kf) {
    exercise_getters(kf);
    KeyFile *merged = keyfile_new(NULL);
    keyfile_merge(merged, kf);
    keyfile_merge(merged, kf);
    exercise_getters(merged);
    keyfile_free(merged);
    keyfile_free(kf);
  } else {
    check_error(error, "fuzz.conf");
  }
  return 0;
}
