/* test-config: loading valid configurations (values, defaults, conf.d order, locale
 * independence, the shipped example) and what a reload may change. The error cases are
 * in test-config-errors.c. */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config-test-util.h"

static const char two_pairs[] =
  "# two pairs\n"
  "[daemon]\n"
  "device=software\n"
  "log_level=debug\n"
  "stats_interval=30\n"
  "ring_slots=8\n"
  "in_flight=3\n"
  "\n"
  "[pair north-1]\n"
  "left=multifilesrc location=/x/left/%06d.jpg loop=true caps=image/jpeg,framerate=25/1\n"
  "right = multifilesrc location=/x/right/%06d.jpg loop=true caps=image/jpeg,framerate=25/1\n"
  "width=640\n"
  "height=360\n"
  "fps=25\n"
  "pair_tolerance_ms=2.5\n"
  "calibration=calib/north.conf\n"
  "max_disparity=96.5\n"
  "scales=3\n"
  "lr_check=false\n"
  "refine=true\n"
  "window=2\n"
  "smoothing=1.25\n"
  "noise_floor=2.55\n"
  "outputs=depth;disparity;depth_m;\n"
  "flow=true\n"
  "reconnect_min_ms=250\n"
  "reconnect_max_ms=8000\n"
  "\n"
  "[pair south_2]\n"
  "left=videotestsrc\n"
  "right=videotestsrc pattern=snow\n"
  "width=320\n"
  "height=240\n"
  "fps=100\n";

static void
test_two_pairs(void)
{
  char *dir = test_dir_new();
  g_autofree char *path = test_write(dir, "stereod.conf", two_pairs);
  g_autofree char *calib = test_write_calib(dir, "calib/north.conf", 640, 360);
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(cfg);

  g_assert_cmpstr(cfg->path, ==, path);
  g_assert_cmpuint(g_strv_length(cfg->files), ==, 1);
  g_assert_cmpstr(cfg->files[0], ==, path);
  g_assert_cmpstr(cfg->device, ==, "software");
  g_assert_cmpint(cfg->log_level, ==, STEREOD_LOG_DEBUG);
  g_assert_cmpint(cfg->stats_interval_s, ==, 30);
  g_assert_cmpint(cfg->ring_slots, ==, 8);
  g_assert_cmpint(cfg->in_flight, ==, 3);
  g_assert_cmpint(cfg->n_pairs, ==, 2);

  const StereodPairConfig *a = &cfg->pairs[0];
  g_assert_cmpstr(a->name, ==, "north-1");
  g_assert_cmpstr(a->left, ==,
                  "multifilesrc location=/x/left/%06d.jpg loop=true caps=image/jpeg,framerate=25/1");
  g_assert_cmpstr(a->right, ==,
                  "multifilesrc location=/x/right/%06d.jpg loop=true caps=image/jpeg,framerate=25/1");
  g_assert_cmpint(a->width, ==, 640);
  g_assert_cmpint(a->height, ==, 360);
  g_assert_cmpfloat(a->fps, ==, 25.0);
  g_assert_cmpint(a->tolerance_ns, ==, 2500000);
  g_assert_true(a->has_calibration);
  g_assert_cmpstr(a->calibration_path, ==, calib);   /* relative to the file's folder */
  g_assert_cmpint(a->calib.width, ==, 640);
  g_assert_cmpfloat_with_epsilon(calib_baseline(&a->calib), 1.6, 1e-12);
  g_assert_cmpint(a->params.width, ==, 640);
  g_assert_cmpint(a->params.height, ==, 360);
  g_assert_cmpfloat(a->params.max_disparity, ==, 96.5);
  g_assert_cmpint(a->params.levels, ==, 3);
  g_assert_false(a->params.lr_check);
  g_assert_true(a->params.refine);
  g_assert_cmpint(a->params.search_radius, ==, 2);
  g_assert_cmpfloat(a->params.smooth_sigma, ==, 1.25);
  g_assert_cmpfloat_with_epsilon(a->params.min_magnitude, 0.01, 1e-12);
  g_assert_cmpuint(a->outputs, ==, STEREOD_OUTPUT_DEPTH | STEREOD_OUTPUT_DISPARITY |
                                   STEREOD_OUTPUT_DEPTH_M);
  g_assert_true(a->flow);
  g_assert_cmpint(a->reconnect_min_ms, ==, 250);
  g_assert_cmpint(a->reconnect_max_ms, ==, 8000);

  /* The second pair takes the defaults; its tolerance is a quarter of its 10 ms period. */
  const StereodPairConfig *b = &cfg->pairs[1];
  g_assert_cmpstr(b->name, ==, "south_2");
  g_assert_cmpstr(b->right, ==, "videotestsrc pattern=snow");
  g_assert_cmpfloat(b->fps, ==, 100.0);
  g_assert_cmpint(b->tolerance_ns, ==, 2500000);
  g_assert_false(b->has_calibration);
  g_assert_null(b->calibration_path);
  StereoParams def;
  stereo_params_init(&def, 320, 240);
  g_assert_cmpfloat(b->params.max_disparity, ==, def.max_disparity);
  g_assert_cmpint(b->params.levels, ==, 0);
  g_assert_true(b->params.lr_check);
  g_assert_false(b->params.refine);
  g_assert_cmpfloat(b->params.min_magnitude, ==, 0.0);
  g_assert_cmpfloat(b->params.omega0, ==, def.omega0);
  g_assert_cmpint(b->params.search_radius, ==, def.search_radius);
  g_assert_cmpfloat(b->params.smooth_sigma, ==, def.smooth_sigma);
  g_assert_cmpuint(b->outputs, ==, STEREOD_OUTPUT_DISPARITY | STEREOD_OUTPUT_CONFIDENCE);
  g_assert_false(b->flow);
  g_assert_cmpint(b->reconnect_min_ms, ==, 500);
  g_assert_cmpint(b->reconnect_max_ms, ==, 30000);

  g_assert_true(stereod_config_find_pair(cfg, "south_2") == b);
  g_assert_null(stereod_config_find_pair(cfg, "south"));
  test_dir_remove(dir);
}

static void
test_defaults(void)
{
  char *dir = test_dir_new();
  g_autofree char *pair = test_pair_text("small", 100, 80, "30");
  g_autofree char *path = test_write(dir, "minimal.conf", pair);
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_null(cfg->device);
  g_assert_cmpint(cfg->log_level, ==, STEREOD_LOG_MESSAGE);
  g_assert_cmpint(cfg->stats_interval_s, ==, 10);
  g_assert_cmpint(cfg->ring_slots, ==, 4);
  g_assert_cmpint(cfg->in_flight, ==, 2);
  g_assert_cmpfloat(cfg->offline_speed, ==, 0.0);
  g_assert_cmpint(cfg->n_pairs, ==, 1);
  g_assert_cmpint(cfg->pairs[0].tolerance_ns, ==, 5000000);
  /* 128 does not fit a 100 px wide image: the default is clamped to width - 1. */
  g_assert_cmpfloat(cfg->pairs[0].params.max_disparity, ==, 99.0);
  test_dir_remove(dir);
}

/* Drop-ins come after the main file in byte order of their names; the last value wins
 * and is validated only then; hidden files and other suffixes are ignored. */
/* max_disparity=auto: the calibration of test_write_calib (700 px, 1.6 m, 20 m up,
 * looking level) sees the layer up to 2.5 m at its bottom corners' rays, y' = 179.5 / 700
 * down: 700 x 1.6 x y' / 17.5 = 16.4 px, with the 2 px margin 19. */
static void
test_auto_max_disparity(void)
{
  char *dir = test_dir_new();
  g_autofree char *calib = test_write_calib(dir, "west.calib", 640, 360);
  g_autofree char *west = test_pair_text("west", 640, 360, "25");
  g_autofree char *text = g_strdup_printf("%scalibration=west.calib\nmax_disparity= auto\n",
                                          west);
  g_autofree char *path = test_write(dir, "auto.conf", text);
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  const StereodPairConfig *p = &cfg->pairs[0];
  g_assert_true(p->max_disparity_auto);
  g_assert_false(p->max_disparity_clamped);
  g_assert_cmpfloat(p->params.max_disparity, ==, ceil(700.0 * 1.6 * (179.5 / 700.0) / 17.5 + 2.0));
  g_assert_cmpfloat(p->params.max_disparity, ==, 19.0);
  test_dir_remove(dir);
}

/* The pitch-plane prior's margin: ground_margin's px plus ground_tilt's degrees at the
 * camera of test_write_calib (700 px, 1.6 m, 20 m up: 56 px a radian, 0.977 px a degree);
 * ground_tilt alone turns the prior on; neither: off. */
static void
test_ground_margin(void)
{
  static const struct {
    const char *keys;
    double margin;
  } cases[] = {
    { "ground_margin=1\n", 1.0 },
    { "ground_margin=1\nground_tilt=0.5\n", 1.0 + 0.5 * 700 * 1.6 / 20 * G_PI / 180 },
    { "ground_tilt=2\n", 2.0 * 700 * 1.6 / 20 * G_PI / 180 },
    { "", -1.0 },
  };
  char *dir = test_dir_new();
  g_autofree char *calib = test_write_calib(dir, "west.calib", 640, 360);
  g_autofree char *west = test_pair_text("west", 640, 360, "25");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strdup_printf("%scalibration=west.calib\n%s", west,
                                            cases[i].keys);
    g_autofree char *path = test_write(dir, "ground.conf", text);
    g_autoptr(GError) error = NULL;
    g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(cfg->pairs[0].params.ground_margin, cases[i].margin, 1e-9);
    g_autofree char *note = stereod_pair_ground_note(&cfg->pairs[0]);
    g_assert_true((note != NULL) == (cases[i].margin >= 0.0));
    if (note)
      g_assert_nonnull(strstr(note, "(1.0 px a degree)"));
  }
  test_dir_remove(dir);
}

static void
test_dropins(void)
{
  char *dir = test_dir_new();
  g_autofree char *west = test_pair_text("west", 640, 360, "25");
  g_autofree char *main_text = g_strdup_printf("[daemon]\nstats_interval=5\nring_slots=100\n"
                                               "\n%s", west);
  g_autofree char *path = test_write(dir, "stereod.conf", main_text);
  g_autofree char *b = test_write(dir, "conf.d/20-b.conf",
                                  "[daemon]\nstats_interval=30\n"
                                  "[pair west]\nwidth=1280\nheight=720\n"
                                  "calibration=west.calib\n");
  g_autofree char *east = test_pair_text("east", 320, 240, "50");
  g_autofree char *a_text = g_strdup_printf("[daemon]\nstats_interval=20\nring_slots=6\n%s",
                                            east);
  g_autofree char *a = test_write(dir, "conf.d/10-a.conf", a_text);
  g_autofree char *c = test_write(dir, "conf.d/B-upper.conf", "[daemon]\nlog_level=info\n");
  g_autofree char *calib = test_write_calib(dir, "conf.d/west.calib", 1280, 720);
  g_free(test_write(dir, "conf.d/.hidden.conf", "[bogus]\n"));
  g_free(test_write(dir, "conf.d/notes.txt", "[bogus]\n"));
  g_free(test_write(dir, "conf.d/old.conf.bak", "[bogus]\n"));

  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  /* Byte order, not the locale's collation: '1' (0x31) < '2' < 'B' (0x42). */
  g_assert_cmpuint(g_strv_length(cfg->files), ==, 4);
  g_assert_cmpstr(cfg->files[0], ==, path);
  g_assert_cmpstr(cfg->files[1], ==, a);
  g_assert_cmpstr(cfg->files[2], ==, b);
  g_assert_cmpstr(cfg->files[3], ==, c);
  g_assert_cmpint(cfg->stats_interval_s, ==, 30);
  g_assert_cmpint(cfg->ring_slots, ==, 6);          /* the bad 100 was overridden */
  g_assert_cmpint(cfg->log_level, ==, STEREOD_LOG_INFO);
  g_assert_cmpint(cfg->n_pairs, ==, 2);
  g_assert_cmpstr(cfg->pairs[0].name, ==, "west");
  g_assert_cmpstr(cfg->pairs[1].name, ==, "east");
  g_assert_cmpint(cfg->pairs[0].width, ==, 1280);
  g_assert_cmpint(cfg->pairs[0].params.height, ==, 720);
  g_assert_cmpstr(cfg->pairs[0].calibration_path, ==, calib);  /* relative to conf.d/ */
  g_assert_cmpfloat(cfg->pairs[1].fps, ==, 50.0);
  test_dir_remove(dir);
}

/* A machine without a comma-decimal locale installed can still build one from glibc's
 * sources when they are there (about 0.6 s); LOCPATH points setlocale() at it. */
static bool
build_locale(const char *dir)
{
  g_autofree char *localedef = g_find_program_in_path("localedef");
  if (!localedef || !g_file_test("/usr/share/i18n/locales/de_DE", G_FILE_TEST_EXISTS))
    return false;
  g_autofree char *out = g_build_filename(dir, "de_DE.UTF-8", NULL);
  char *argv[] = { localedef, "-i", "de_DE", "-f", "UTF-8", out, NULL };
  /* localedef exits non-zero for mere warnings: judge by setlocale() alone. */
  if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                    NULL, NULL, NULL, NULL, NULL, NULL))
    return false;
  g_setenv("LOCPATH", dir, TRUE);
  return setlocale(LC_NUMERIC, "de_DE.UTF-8") && strcmp(localeconv()->decimal_point, ",") == 0;
}

/* A comma-decimal LC_NUMERIC must not change how numbers are read or printed. */
static void
test_locale(void)
{
  static const char *const locales[] = {
    "de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8", NULL
  };
  char *dir = test_dir_new();
  g_autofree char *pair = test_pair_text("west", 640, 360, "12.5");
  g_autofree char *text = g_strdup_printf("%spair_tolerance_ms=1.25\nmax_disparity=64.75\n",
                                          pair);
  g_autofree char *path = test_write(dir, "stereod.conf", text);
  g_autofree char *bad_text = g_strdup_printf("%spair_tolerance_ms=0.05\n", pair);
  g_autofree char *bad = test_write(dir, "bad.conf", bad_text);

  g_autofree char *saved = g_strdup(setlocale(LC_NUMERIC, NULL));
  const char *chosen = NULL;
  for (int i = 0; locales[i] && !chosen; i++)
    if (setlocale(LC_NUMERIC, locales[i]) && strcmp(localeconv()->decimal_point, ",") == 0)
      chosen = locales[i];
  if (!chosen && build_locale(dir))
    chosen = "de_DE.UTF-8 (built with localedef)";
  if (chosen) {
    /* The locale really is in effect: the C library now stops at the '.'. */
    g_assert_cmpfloat(strtod("1.25", NULL), ==, 1.0);
  }

  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(cfg->pairs[0].fps, ==, 12.5);
  g_assert_cmpint(cfg->pairs[0].tolerance_ns, ==, 1250000);
  g_assert_cmpfloat(cfg->pairs[0].params.max_disparity, ==, 64.75);
  g_autofree char *message = test_load_error(bad, STEREOD_CONFIG_ERROR_INVALID);
  g_autofree char *expected = g_strdup_printf(
    "%s: [pair west] pair_tolerance_ms: 0.05 is outside 0.1..1000", bad);
  g_assert_cmpstr(message, ==, expected);

  setlocale(LC_NUMERIC, saved);
  g_unsetenv("LOCPATH");
  test_dir_remove(dir);
  if (!chosen) {
    /* CI installs locales-all (.ci/packages.txt) and sets STEREOD_REQUIRE_DATA=1: there
     * the comma-locale half must run, never pass as skipped. */
    if (g_strcmp0(g_getenv("STEREOD_REQUIRE_DATA"), "1") == 0)
      g_error("no comma-decimal locale (de_DE.UTF-8, fr_FR.UTF-8, ...) installed or "
              "buildable although STEREOD_REQUIRE_DATA=1: install locales-all");
    g_test_skip("no comma-decimal locale (de_DE.UTF-8, fr_FR.UTF-8, ...) installed or "
                "buildable: parsed in the C locale only");
  } else
    g_test_message("LC_NUMERIC was %s", chosen);
}

/* A UTF-8 byte order mark (some Windows editors write one) is skipped: the file loads as
 * without it. */
static void
test_bom(void)
{
  char *dir = test_dir_new();
  g_autofree char *pair = test_pair_text("west", 640, 360, "25");
  g_autofree char *text = g_strdup_printf("\xef\xbb\xbf%s", pair);
  g_autofree char *path = test_write(dir, "stereod.conf", text);
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(cfg->n_pairs, ==, 1);
  g_assert_cmpstr(cfg->pairs[0].name, ==, "west");
  g_assert_cmpfloat(cfg->pairs[0].fps, ==, 25.0);
  /* The same text from memory (stereod_config_load_data). */
  g_autoptr(StereodConfig) mem = stereod_config_load_data(text, strlen(text), "mem.conf",
                                                          &error);
  g_assert_no_error(error);
  g_assert_cmpstr(mem->path, ==, "mem.conf");
  g_assert_cmpint(mem->pairs[0].width, ==, 640);
  test_dir_remove(dir);
}

/* The shipped config/stereod.conf loads as it stands (as installed, the calibrations it
 * names are installed beside it): sizes agree with the demo calibrations. */
static void
test_example(void)
{
  g_autofree char *example = g_build_filename(STEREOD_SOURCE_DIR, "config", "stereod.conf",
                                              NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(example, &error);
  g_assert_no_error(error);
  g_assert_cmpint(cfg->n_pairs, ==, 2);
  for (int i = 0; i < 2; i++) {
    const StereodPairConfig *p = &cfg->pairs[i];
    g_assert_cmpstr(p->name, ==, i == 0 ? "west" : "east");
    g_autofree char *left = g_strdup_printf(
      "imagesequencesrc location=/var/tmp/stereod-demo/%s/left/%%06d.jpg framerate=25/1 ! "
      "identity sync=true", p->name);
    g_assert_cmpstr(p->left, ==, left);
    g_assert_true(p->has_calibration);
    g_autofree char *calib_name = g_strdup_printf("demo-%s.conf", p->name);
    g_autofree char *calib = g_build_filename(STEREOD_SOURCE_DIR, "config", "calib",
                                              calib_name, NULL);
    g_autofree char *canonical = g_canonicalize_filename(calib, NULL);
    g_assert_cmpstr(p->calibration_path, ==, canonical);
    g_assert_cmpint(p->calib.width, ==, 960);
    g_assert_cmpint(p->width, ==, 960);
    g_assert_cmpint(p->height, ==, 540);
    g_assert_cmpuint(p->outputs, ==, STEREOD_OUTPUT_DISPARITY | STEREOD_OUTPUT_DEPTH |
                                     STEREOD_OUTPUT_CONFIDENCE);
  }
}

static StereodConfig *
load_text(const char *dir, const char *text)
{
  g_autofree char *path = test_write(dir, "stereod.conf", text);
  g_autoptr(GError) error = NULL;
  StereodConfig *cfg = stereod_config_load(path, &error);
  g_assert_no_error(error);
  return cfg;
}

/* What a reload may apply live and what needs a restart (config.h). */
static void
test_reload_diff(void)
{
  char *dir = test_dir_new();
  g_free(test_write_calib(dir, "calib/north.conf", 640, 360));
  g_autoptr(StereodConfig) base = load_text(dir, two_pairs);
  g_auto(StereodConfigDiff) diff = { 0 };

  g_autoptr(StereodConfig) same = load_text(dir, two_pairs);
  g_assert_false(stereod_config_diff(base, same, &diff));
  g_assert_false(diff.changed);
  g_assert_null(diff.restart_reason);

  /* Live: log level, stats interval, filter params of pair 0, backoff of pair 1. */
  g_autoptr(GString) live = g_string_new(two_pairs);
  g_string_replace(live, "log_level=debug", "log_level=warning", 1);
  g_string_replace(live, "stats_interval=30", "stats_interval=60", 1);
  g_string_replace(live, "max_disparity=96.5", "max_disparity=64", 1);
  g_string_replace(live, "refine=true", "refine=false", 1);
  g_string_replace(live, "window=2", "window=3", 1);
  g_string_append(live, "reconnect_max_ms=60000\n");
  g_autoptr(StereodConfig) live_cfg = load_text(dir, live->str);
  g_assert_false(stereod_config_diff(base, live_cfg, &diff));
  g_assert_true(diff.changed);
  g_assert_true(diff.log_level);
  g_assert_true(diff.stats_interval);
  g_assert_cmphex(diff.engine_pairs, ==, 1u << 0);
  g_assert_cmphex(diff.backoff_pairs, ==, 1u << 1);
  g_assert_null(diff.restart_reason);
  stereod_config_diff_clear(&diff);

  /* Pairs are matched by name, not position. */
  g_autoptr(GString) swapped = g_string_new(strstr(two_pairs, "[pair south_2]"));
  g_string_append_len(swapped, two_pairs, strstr(two_pairs, "[pair south_2]") - two_pairs);
  g_autoptr(StereodConfig) swapped_cfg = load_text(dir, swapped->str);
  g_assert_cmpstr(swapped_cfg->pairs[0].name, ==, "south_2");
  g_assert_false(stereod_config_diff(base, swapped_cfg, &diff));
  g_assert_false(diff.changed);

  /* Restart: ring slots, a size, a pair removed. */
  g_autoptr(GString) big = g_string_new(two_pairs);
  g_string_replace(big, "ring_slots=8", "ring_slots=16", 1);
  g_string_replace(big, "width=320", "width=400", 1);
  g_string_replace(big, "log_level=debug", "log_level=info", 1);
  g_autoptr(StereodConfig) big_cfg = load_text(dir, big->str);
  g_assert_true(stereod_config_diff(base, big_cfg, &diff));
  g_assert_true(diff.changed && diff.restart && diff.log_level);
  g_assert_cmpstr(diff.restart_reason, ==, "[daemon] ring_slots, [pair south_2] width");
  stereod_config_diff_clear(&diff);
  g_assert_null(diff.restart_reason);

  /* Restart: the flow planes change the ring's layout. */
  g_autoptr(GString) flow = g_string_new(two_pairs);
  g_string_replace(flow, "[pair south_2]\n", "[pair south_2]\nflow=true\n", 1);
  g_autoptr(StereodConfig) flow_cfg = load_text(dir, flow->str);
  g_assert_true(flow_cfg->pairs[1].flow);
  g_assert_true(stereod_config_diff(base, flow_cfg, &diff));
  g_assert_cmpstr(diff.restart_reason, ==, "[pair south_2] flow");
  stereod_config_diff_clear(&diff);

  g_autoptr(GString) south = g_string_new_len(two_pairs,
                                              strstr(two_pairs, "[pair north-1]") - two_pairs);
  g_string_append(south, strstr(two_pairs, "[pair south_2]"));
  g_autoptr(StereodConfig) one = load_text(dir, south->str);
  g_assert_true(stereod_config_diff(base, one, &diff));
  g_assert_cmpstr(diff.restart_reason, ==, "[pair north-1] removed");
  stereod_config_diff_clear(&diff);
  g_assert_true(stereod_config_diff(one, base, &diff));
  g_assert_cmpstr(diff.restart_reason, ==, "[pair north-1] added");
  stereod_config_diff_clear(&diff);

  /* The same calibration path with other contents needs a restart too. */
  g_autoptr(StereodConfig) before = load_text(dir, two_pairs);
  char *calib = test_write_calib(dir, "calib/north.conf", 640, 360);
  StereoCalib c;
  g_assert_true(calib_load(calib, &c, NULL));
  c.pose_centre[2] += 1.0;
  g_assert_true(calib_save(calib, &c, NULL));
  g_free(calib);
  g_autoptr(StereodConfig) after = load_text(dir, two_pairs);
  g_assert_true(stereod_config_diff(before, after, &diff));
  g_assert_cmpstr(diff.restart_reason, ==, "[pair north-1] calibration");
  test_dir_remove(dir);
}

static void
test_default_path(void)
{
  const char *path = stereod_config_default_path();
  g_assert_true(g_path_is_absolute(path));
  g_assert_true(g_str_has_suffix(path, "/stereod/stereod.conf"));
}

static void
test_log_level(void)
{
  g_assert_cmpstr(stereod_log_level_name(STEREOD_LOG_WARNING), ==, "warning");
  GLogLevelFlags message = stereod_log_level_mask(STEREOD_LOG_MESSAGE);
  g_assert_true(message & G_LOG_LEVEL_WARNING);
  g_assert_true(message & G_LOG_LEVEL_MESSAGE);
  g_assert_false(message & G_LOG_LEVEL_INFO);
  g_assert_true(stereod_log_level_mask(STEREOD_LOG_DEBUG) & G_LOG_LEVEL_DEBUG);
  g_assert_false(stereod_log_level_mask(STEREOD_LOG_ERROR) & G_LOG_LEVEL_WARNING);
  g_assert_true(stereod_log_level_mask(STEREOD_LOG_ERROR) & G_LOG_LEVEL_CRITICAL);
}

/* [daemon] metrics=: off by default, kept as written, and a change needs a restart (the
 * HTTP server is made at start). */
static void
test_metrics_key(void)
{
  char *dir = test_dir_new();
  g_free(test_write_calib(dir, "calib/north.conf", 640, 360));
  g_autoptr(StereodConfig) base = load_text(dir, two_pairs);
  g_assert_null(base->metrics);
  g_autoptr(GString) on = g_string_new(two_pairs);
  g_string_replace(on, "in_flight=3\n", "in_flight=3\nmetrics=9101\n", 1);
  g_autoptr(StereodConfig) on_cfg = load_text(dir, on->str);
  g_assert_cmpstr(on_cfg->metrics, ==, "9101");
  g_auto(StereodConfigDiff) diff = { 0 };
  g_assert_true(stereod_config_diff(base, on_cfg, &diff));
  g_assert_cmpstr(diff.restart_reason, ==, "[daemon] metrics");
  stereod_config_diff_clear(&diff);
  g_autoptr(GString) empty = g_string_new(two_pairs);
  g_string_replace(empty, "in_flight=3\n", "in_flight=3\nmetrics=\n", 1);
  g_autoptr(StereodConfig) empty_cfg = load_text(dir, empty->str);
  g_assert_null(empty_cfg->metrics);   /* empty: none */
  g_assert_false(stereod_config_diff(base, empty_cfg, &diff));
  test_dir_remove(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/config/two-pairs", test_two_pairs);
  g_test_add_func("/config/defaults", test_defaults);
  g_test_add_func("/config/dropins", test_dropins);
  g_test_add_func("/config/auto-max-disparity", test_auto_max_disparity);
  g_test_add_func("/config/ground-margin", test_ground_margin);
  g_test_add_func("/config/locale", test_locale);
  g_test_add_func("/config/bom", test_bom);
  g_test_add_func("/config/example", test_example);
  g_test_add_func("/config/reload-diff", test_reload_diff);
  g_test_add_func("/config/log-level", test_log_level);
  g_test_add_func("/config/default-path", test_default_path);
  g_test_add_func("/config/metrics-key", test_metrics_key);
  return g_test_run();
}
