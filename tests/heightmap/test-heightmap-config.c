/* test-heightmap-config: stereod-heightmap's configuration: the defaults, the values
 * read, every kind of error (naming the file, group and key), the files (size, kind,
 * calibrations relative to the file) and what a reload changes. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "heightmap/heightmap.h"
/* ---------------------------------------------------------------- configuration */

static HeightmapConfig *
load(const char *text, GError **error)
{
  return heightmap_config_load_data(text, strlen(text), "hm.conf", error);
}

static void
test_config_defaults(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapConfig) c = load("[pair west]\n[pair east]\nring=east-2\n", &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(c->grid.x0, ==, -55.5);
  g_assert_cmpfloat(c->grid.x1, ==, 55.5);
  g_assert_cmpfloat(c->grid.y0, ==, -37);
  g_assert_cmpfloat(c->grid.y1, ==, 37);
  g_assert_cmpfloat(c->grid.cell, ==, 0.1);
  g_assert_cmpint(c->grid.width, ==, 1110);
  g_assert_cmpint(c->grid.height, ==, 740);
  g_assert_cmpint(c->min_confidence, ==, 128);
  g_assert_cmpfloat(c->visible_offset, ==, 0.05);
  g_assert_cmpfloat(c->blob_min_area, ==, 0.1);
  g_assert_cmpfloat(c->disparity_noise, ==, 0.07);
  g_assert_cmpfloat(c->acceleration, ==, 10);
  /* the stages' parameters are the configuration's */
  HeightmapBlobParams bp = heightmap_config_blob_params(c);
  g_assert_cmpfloat(bp.disparity_noise, ==, 0.07);
  g_assert_cmpfloat(bp.top_band, ==, 1);
  g_assert_cmpfloat(bp.half_length, ==, 52.5);   /* the play area: goal_line, touch_line */
  g_assert_cmpfloat(bp.half_width, ==, 34);
  g_assert_cmpfloat(bp.play_margin, ==, 1);
  g_assert_cmpfloat(bp.body_support, ==, 0.02);
  g_assert_cmpfloat(bp.support_scale, ==, 20);
  g_assert_cmpfloat(bp.min_fill, ==, 0.2);
  g_assert_cmpfloat(bp.crowd_split, ==, 0.2);
  g_assert_cmpfloat(bp.crowd_area, ==, 3);
  g_assert_cmpfloat(bp.view_split, ==, 0.9);
  g_assert_cmpfloat(bp.view_split_px, ==, 10);
  g_assert_cmpfloat(bp.merge_distance, ==, 0.5);
  g_assert_cmpfloat(bp.view_centre, ==, 0.05);
  g_assert_cmpfloat(bp.view_centre_px, ==, 1);
  g_assert_cmpfloat(bp.see_through, ==, 0);   /* off; see_scale for when it is on */
  g_assert_cmpint(bp.see_cells, ==, 1);
  g_assert_cmpfloat(bp.see_scale, ==, 20);
  g_assert_cmpfloat(heightmap_config_fusion_params(c).see_height, ==, 0);
  g_assert_cmpfloat(bp.post_zone, ==, 0.6);
  g_assert_cmpfloat(bp.post_area, ==, 0.3);
  g_assert_cmpfloat(bp.lower_body, ==, 0.05);
  g_assert_cmpfloat(bp.lower_scale, ==, 12.0);
  g_assert_cmpfloat(bp.body_share, ==, 0.5);
  g_assert_cmpfloat(bp.goal_half_width, ==, 3.66);
  HeightmapTrackerParams tp = heightmap_config_tracker_params(c);
  g_assert_cmpfloat(tp.acceleration, ==, 10);
  g_assert_cmpint(tp.confirm, ==, 2);
  g_assert_cmpfloat(tp.max_height, ==, 0);
  g_assert_cmpint(tp.confirm_gap, ==, 0);
  g_assert_cmpint(tp.coast, ==, 0);
  HeightmapFusionParams fp = heightmap_config_fusion_params(c);
  g_assert_cmpint(fp.grid.width, ==, 1110);
  g_assert_cmpfloat(fp.goal_shadow, ==, 1);
  g_assert_cmpfloat(fp.goal_front, ==, 0);
  g_assert_cmpint(fp.far_pool, ==, 0);
  g_assert_cmpfloat(fp.far_sigma, ==, 0.2);
  g_assert_cmpstr(c->ring_name, ==, "heightmap");
  g_assert_cmpint(c->format, ==, HEIGHTMAP_FORMAT_FLOAT);
  g_assert_null(c->socket_path);
  g_assert_cmpint(c->n_pairs, ==, 2);
  g_assert_cmpstr(c->pairs[0].name, ==, "west");
  g_assert_cmpstr(c->pairs[0].ring, ==, "west");
  g_assert_cmpstr(c->pairs[1].ring, ==, "east-2");
  g_assert_false(c->pairs[0].has_calibration);
}

static void
test_config_values(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapConfig) c = load(
    "[heightmap]\nx0=-10\nx1=10.05\ny0=0\ny1=5\ncell=0.25\nformat=mm\nsocket=/tmp/p.sock\n"
    "ring=hm\nmin_height=0.8\ngate=2\n[pair a]\n", &error);
  g_assert_no_error(error);
  g_assert_cmpint(c->grid.width, ==, 81);    /* ceil(20.05 / 0.25) */
  g_assert_cmpint(c->grid.height, ==, 20);
  g_assert_cmpint(c->format, ==, HEIGHTMAP_FORMAT_MM);
  g_assert_cmpstr(c->socket_path, ==, "/tmp/p.sock");
  g_assert_cmpstr(c->ring_name, ==, "hm");
  g_assert_cmpfloat(c->min_height, ==, 0.8);
  g_assert_cmpfloat(c->gate, ==, 2);
}

static void
test_config_errors(void)
{
  static const struct {
    const char *text, *message;
    int code;
  } cases[] = {
    { "[heightmap]\ncel=0.1\n[pair a]\n", "hm.conf: [heightmap] cel: unknown key",
      HEIGHTMAP_CONFIG_ERROR_UNKNOWN },
    { "[heightmap]\ncell=0.1m\n[pair a]\n", "hm.conf: [heightmap] cell: '0.1m' is not a number",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncell=0\n[pair a]\n", "hm.conf: [heightmap] cell: 0 is outside 0.01..10",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nx0=5\nx1=4\n[pair a]\n", "hm.conf: [heightmap] x1: must be greater than x0",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nformat=png\n[pair a]\n",
      "hm.conf: [heightmap] format: 'png' is not float or mm", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmin_points=1.5\n[pair a]\n",
      "hm.conf: [heightmap] min_points: '1.5' is not an integer",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nsocket=rel.sock\n[pair a]\n",
      "hm.conf: [heightmap] socket: \"rel.sock\" is not an absolute path shorter than 108 bytes",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nblob_min_area=2\nblob_max_area=1\n[pair a]\n",
      "hm.conf: [heightmap] blob_max_area: must not be less than blob_min_area",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nacceleration=-1\n[pair a]\n",
      "hm.conf: [heightmap] acceleration: -1 is outside 0..100", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngoal_width=0.1\n[pair a]\n",
      "hm.conf: [heightmap] goal_width: 0.1 is outside 0.5..50", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nbody_support=1.5\n[pair a]\n",
      "hm.conf: [heightmap] body_support: 1.5 is outside 0..1", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nsupport_scale=-5\n[pair a]\n",
      "hm.conf: [heightmap] support_scale: -5 is outside 0..10000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nwait_ms=600001\n[pair a]\n",
      "hm.conf: [heightmap] wait_ms: 600001 is outside 0..600000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngoal_shadow=25\n[pair a]\n",
      "hm.conf: [heightmap] goal_shadow: 25 is outside 0..20", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\npost_zone=6\n[pair a]\n",
      "hm.conf: [heightmap] post_zone: 6 is outside 0..5", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nlower_scale=-1\n[pair a]\n",
      "hm.conf: [heightmap] lower_scale: -1 is outside 0..10000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nlower_body=1.5\n[pair a]\n",
      "hm.conf: [heightmap] lower_body: 1.5 is outside 0..1", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nbody_share=-0.1\n[pair a]\n",
      "hm.conf: [heightmap] body_share: -0.1 is outside 0..1", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\npost_area=-1\n[pair a]\n",
      "hm.conf: [heightmap] post_area: -1 is outside 0..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmerge_distance=6\n[pair a]\n",
      "hm.conf: [heightmap] merge_distance: 6 is outside 0..5", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nfar_pool=5\n[pair a]\n",
      "hm.conf: [heightmap] far_pool: 5 is outside 0..4", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nfar_sigma=-0.1\n[pair a]\n",
      "hm.conf: [heightmap] far_sigma: -0.1 is outside 0..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngoal_front=-1\n[pair a]\n",
      "hm.conf: [heightmap] goal_front: -1 is outside 0..20", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncrowd_split=4\n[pair a]\n",
      "hm.conf: [heightmap] crowd_split: 4 is outside 0..3", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncrowd_area=-1\n[pair a]\n",
      "hm.conf: [heightmap] crowd_area: -1 is outside 0..1000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nview_split=11\n[pair a]\n",
      "hm.conf: [heightmap] view_split: 11 is outside 0..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nview_centre=1.5\n[pair a]\n",
      "hm.conf: [heightmap] view_centre: 1.5 is outside 0..1", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nview_centre_px=x\n[pair a]\n",
      "hm.conf: [heightmap] view_centre_px: ", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nview_split_px=-2\n[pair a]\n",
      "hm.conf: [heightmap] view_split_px: -2 is outside 0..100", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nsee_through=3.5\n[pair a]\n",
      "hm.conf: [heightmap] see_through: 3.5 is outside 0..3", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nsee_cells=0\n[pair a]\n",
      "hm.conf: [heightmap] see_cells: 0 is outside 1..10000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmin_fill=1.5\n[pair a]\n",
      "hm.conf: [heightmap] min_fill: 1.5 is outside 0..1", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nconfirm_gap=11\n[pair a]\n",
      "hm.conf: [heightmap] confirm_gap: 11 is outside 0..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncoast=4\nmax_missed=3\n[pair a]\n",
      "hm.conf: [heightmap] coast: must not be more than max_missed (3): a track is dropped "
      "after that", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmax_height=-2\n[pair a]\n",
      "hm.conf: [heightmap] max_height: -2 is outside 0..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nplay_margin=-1\n[pair a]\n",
      "hm.conf: [heightmap] play_margin: -1 is outside 0..1000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngoal_line=-52.5\n[pair a]\n",
      "hm.conf: [heightmap] goal_line: -52.5 is outside 0..1000", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ndisparity_noise=fast\n[pair a]\n",
      "hm.conf: [heightmap] disparity_noise: 'fast' is not a number", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncell=0.001\n[pair a]\n",
      "hm.conf: [heightmap] cell: 0.001 is outside 0.01..10", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nx0=-10000\nx1=10000\ny0=-10000\ny1=10000\ncell=0.01\n[pair a]\n",
      "hm.conf: [heightmap] cell: the extent makes more than 67108864 cells",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\n", "hm.conf: no [pair NAME] group", HEIGHTMAP_CONFIG_ERROR_MISSING },
    { "[pairs a]\n", "hm.conf: [pairs a]: unknown group", HEIGHTMAP_CONFIG_ERROR_UNKNOWN },
    { "[pair a/b]\n", "hm.conf: [pair a/b]: \"a/b\" is not a pair name (1-63 of A-Z a-z 0-9 . _ -, "
      "not starting with '.')", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[pair a]\nrig=x\n", "hm.conf: [pair a] rig: unknown key", HEIGHTMAP_CONFIG_ERROR_UNKNOWN },
    { "[pair a]\nring=x\n[pair b]\nring=x\n", "hm.conf: [pair b] ring: ring \"x\" is also [pair a]'s",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[pair a]\ncalibration=/nonexistent/calib.conf\n", "hm.conf: [pair a] calibration: ",
      HEIGHTMAP_CONFIG_ERROR_CALIBRATION },
    { "not a key file\n", "hm.conf: not a key file: ", HEIGHTMAP_CONFIG_ERROR_SYNTAX },
    /* Issue 12: a group twice was merged, a key twice took the last value. */
    { "[pair a]\nring=x\n[pair b]\n[pair a]\n",
      "hm.conf: [pair a]: appears twice in this file (lines 1 and 4)", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncell=0.1\ncell=0.2\n[pair a]\n",
      "hm.conf: [heightmap] cell: set twice in this group (lines 2 and 3)",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmin_points=0x10\n[pair a]\n",
      "hm.conf: [heightmap] min_points: '0x10' is not an integer", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngate=0x1\n[pair a]\n",
      "hm.conf: [heightmap] gate: '0x1' is not a number", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngate=nan\n[pair a]\n",
      "hm.conf: [heightmap] gate: 'nan' is not a finite number", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ngate=\n[pair a]\n",
      "hm.conf: [heightmap] gate: empty (expected a number)", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[pair a]\ncalibration=/dev/zero\n",
      "hm.conf: [pair a] calibration: /dev/zero: not a regular file (a character device)",
      HEIGHTMAP_CONFIG_ERROR_CALIBRATION },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(HeightmapConfig) c = load(cases[i].text, &error);
    g_assert_null(c);
    g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, cases[i].code);
    g_test_message("%s", error->message);
    g_assert_true(g_str_has_prefix(error->message, cases[i].message));
  }
  g_autoptr(GError) error = NULL;
  g_assert_null(heightmap_config_load("/nonexistent/heightmap.conf", &error));
  g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_IO);

  /* A NUL byte would cut the value in GKeyFile. */
  static const char nul[] = "[pair a]\nring=x\0y\n";
  g_clear_error(&error);
  g_assert_null(heightmap_config_load_data(nul, sizeof nul - 1, "hm.conf", &error));
  g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_SYNTAX);
  g_assert_cmpstr(error->message, ==,
                  "hm.conf: [pair a] ring: line 2 contains a NUL byte (not a text file?)");

  /* A UTF-8 byte order mark is skipped. */
  g_clear_error(&error);
  g_autoptr(HeightmapConfig) bom = load("\xef\xbb\xbf[heightmap]\ngate=2\n[pair a]\n", &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(bom->gate, ==, 2);
}

/* A FIFO, /dev/zero or an over-size file as the configuration or as a calibration fails
 * at once (SIGALRM ends the test if an open or a read blocks). */
static void
test_config_files(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-files-XXXXXX", NULL);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  alarm(30);
  g_autoptr(GError) error = NULL;
  g_assert_null(heightmap_config_load(fifo, &error));
  g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_IO);
  g_autofree char *want = g_strdup_printf("%s: not a regular file (a FIFO)", fifo);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_error(&error);
  g_assert_null(heightmap_config_load("/dev/zero", &error));
  g_assert_cmpstr(error->message, ==, "/dev/zero: not a regular file (a character device)");
  g_clear_error(&error);

  g_autofree char *path = g_build_filename(dir, "hm.conf", NULL);
  g_assert_true(g_file_set_contents(path, "[pair a]\ncalibration=fifo\n", -1, NULL));
  g_assert_null(heightmap_config_load(path, &error));
  g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_CALIBRATION);
  g_autofree char *want_cal = g_strdup_printf("%s: [pair a] calibration: %s: not a regular "
                                              "file (a FIFO)", path, fifo);
  g_assert_cmpstr(error->message, ==, want_cal);
  g_clear_error(&error);

  g_autofree char *big = g_strnfill((1 << 20) + 1, '#');
  g_assert_true(g_file_set_contents(path, big, -1, NULL));
  g_assert_null(heightmap_config_load(path, &error));
  g_assert_error(error, HEIGHTMAP_CONFIG_ERROR, HEIGHTMAP_CONFIG_ERROR_IO);
  g_autofree char *want_big = g_strdup_printf("%s: larger than 1048576 bytes", path);
  g_assert_cmpstr(error->message, ==, want_big);
  alarm(0);
  g_unlink(path);
  g_unlink(fifo);
  g_rmdir(dir);
}

static void
test_config_calibration(void)
{
  /* A calibration file relative to the config file's folder. */
  g_autofree char *dir = g_dir_make_tmp("hm-conf-XXXXXX", NULL);
  StereoCalib cal;
  const double rot[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 }, centre[3] = { 0, -50, 10 };
  calib_init_ideal(&cal, 64, 48, 50, 31.5, 23.5, 1.0, NULL, rot, centre);
  g_autofree char *cpath = g_build_filename(dir, "c.conf", NULL);
  g_assert_true(calib_save(cpath, &cal, NULL));
  g_autofree char *path = g_build_filename(dir, "hm.conf", NULL);
  g_assert_true(g_file_set_contents(path, "[pair a]\ncalibration=c.conf\n", -1, NULL));
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapConfig) c = heightmap_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_true(c->pairs[0].has_calibration);
  g_assert_cmpstr(c->pairs[0].calibration_path, ==, cpath);
  g_assert_cmpfloat(c->pairs[0].calib.pose_centre[1], ==, -50);

  /* A reload: the calibration is fixed at start, whether the file or its contents change. */
  const double centre2[3] = { 0, -40, 10 };
  calib_init_ideal(&cal, 64, 48, 50, 31.5, 23.5, 1.0, NULL, rot, centre2);
  g_assert_true(calib_save(cpath, &cal, NULL));
  g_autoptr(HeightmapConfig) moved = heightmap_config_load(path, &error);
  g_assert_no_error(error);
  g_assert_true(g_file_set_contents(path, "[pair a]\n", -1, NULL));
  g_autoptr(HeightmapConfig) none = heightmap_config_load(path, &error);
  g_assert_no_error(error);
  g_autoptr(GString) changed = g_string_new(NULL);
  g_autoptr(GPtrArray) fixed = g_ptr_array_new_with_free_func(g_free);
  g_assert_false(heightmap_config_update(c, moved, changed, fixed));
  g_assert_false(heightmap_config_update(c, none, changed, fixed));
  g_assert_cmpuint(fixed->len, ==, 2);
  g_autofree char *e0 = g_strdup_printf("[pair a] calibration %s changed: needs a restart, "
                                        "keeping the one loaded at start", cpath);
  g_autofree char *e1 = g_strdup_printf("[pair a] calibration changed: needs a restart, "
                                        "keeping %s", cpath);
  g_assert_cmpstr(fixed->pdata[0], ==, e0);
  g_assert_cmpstr(fixed->pdata[1], ==, e1);
  g_assert_cmpfloat(c->pairs[0].calib.pose_centre[1], ==, -50);
  g_unlink(cpath);
  g_unlink(path);
  g_rmdir(dir);
}

/* A reload takes over the changeable keys and names each fixed one that differs, keeping
 * its running value. */
static void
test_config_update(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapConfig) r = load(
    "[heightmap]\nx0=-10\nx1=10\ny0=-5\ny1=5\nsocket=/tmp/p.sock\n[pair a]\n[pair b]\n",
    &error);
  g_assert_no_error(error);
  g_autoptr(GString) changed = g_string_new(NULL);
  g_autoptr(GPtrArray) fixed = g_ptr_array_new_with_free_func(g_free);

  /* the same text: nothing */
  g_autoptr(HeightmapConfig) same = load(
    "[heightmap]\nx0=-10\nx1=10\ny0=-5\ny1=5\nsocket=/tmp/p.sock\n[pair b]\n[pair a]\n",
    &error);
  g_assert_no_error(error);
  g_assert_false(heightmap_config_update(r, same, changed, fixed));
  g_assert_cmpstr(changed->str, ==, "");
  g_assert_cmpuint(fixed->len, ==, 0);

  g_autoptr(HeightmapConfig) n = load(
    "[heightmap]\nx0=-10\nx1=10\ny0=-5\ny1=5\ncell=0.2\npool=1\ncarve=true\nformat=mm\n"
    "min_height=0.7\nconfirm=3\nwait_ms=40\nmin_points=4\ntop_fraction=0.25\n"
    "disparity_noise=0.1\nacceleration=0\nsplit_depth=0.3\ngoal_line=50\nplay_margin=2\n"
    "body_support=0.05\nsupport_scale=30\ngoal_shadow=1.5\ngoal_front=0.5\nmax_height=2.8\n"
    "confirm_gap=1\ncoast=2\nmin_fill=0.3\ncrowd_split=0.4\ncrowd_area=1.2\n"
    "view_split=1.5\nview_split_px=4\nfar_pool=2\nfar_sigma=0.3\nmerge_distance=0.4\n"
    "view_centre=0.08\nview_centre_px=1.5\nsee_through=0.7\nsee_cells=4\nsee_scale=30\n[pair a]\nring=a2\n"
    "[pair c]\n",
    &error);
  g_assert_no_error(error);
  g_assert_true(heightmap_config_update(r, n, changed, fixed));
  g_assert_cmpstr(changed->str, ==, "wait_ms 100 -> 40, min_height 0.5 -> 0.7, "
                  "min_points 2 -> 4, see_cells 1 -> 4, see_scale 20 -> 30, goal_line 52.5 -> 50, play_margin 1 -> 2, "
                  "body_support 0.02 -> 0.05, support_scale 20 -> 30, min_fill 0.2 -> 0.3, "
                  "goal_shadow 1 -> 1.5, "
                  "goal_front 0 -> 0.5, far_pool 0 -> 2, far_sigma 0.2 -> 0.3, "
                  "max_height 0 -> 2.8, top_fraction 0.1 -> 0.25, "
                  "view_centre 0.05 -> 0.08, view_centre_px 1 -> 1.5, "
                  "split_depth 0 -> 0.3, crowd_split 0.2 -> 0.4, crowd_area 3 -> 1.2, "
                  "view_split 0.9 -> 1.5, view_split_px 10 -> 4, merge_distance 0.5 -> 0.4, "
                  "disparity_noise 0.07 -> 0.1, "
                  "acceleration 10 -> 0, confirm 2 -> 3, confirm_gap 0 -> 1, coast 0 -> 2");
  g_assert_cmpint(heightmap_config_tracker_params(r).confirm_gap, ==, 1);
  g_assert_cmpint(heightmap_config_tracker_params(r).coast, ==, 2);
  g_assert_cmpfloat(heightmap_config_blob_params(r).min_fill, ==, 0.3);
  g_assert_cmpfloat(heightmap_config_blob_params(r).crowd_split, ==, 0.4);
  g_assert_cmpfloat(heightmap_config_blob_params(r).crowd_area, ==, 1.2);
  g_assert_cmpfloat(heightmap_config_blob_params(r).view_split, ==, 1.5);
  g_assert_cmpfloat(heightmap_config_blob_params(r).view_split_px, ==, 4);
  g_assert_cmpfloat(heightmap_config_blob_params(r).merge_distance, ==, 0.4);
  g_assert_cmpfloat(heightmap_config_blob_params(r).view_centre, ==, 0.08);
  g_assert_cmpfloat(heightmap_config_blob_params(r).view_centre_px, ==, 1.5);
  g_assert_cmpint(heightmap_config_blob_params(r).see_cells, ==, 4);
  g_assert_cmpfloat(heightmap_config_blob_params(r).see_scale, ==, 30);
  g_assert_cmpfloat(heightmap_config_blob_params(r).see_through, ==, 0.0);
  g_assert_cmpfloat(heightmap_config_fusion_params(r).see_height, ==, 0.0);
  g_assert_cmpfloat(r->acceleration, ==, 0);
  g_assert_cmpfloat(r->disparity_noise, ==, 0.1);
  g_assert_cmpfloat(r->goal_line, ==, 50);
  g_assert_cmpfloat(r->play_margin, ==, 2);
  g_assert_cmpfloat(r->body_support, ==, 0.05);
  g_assert_cmpfloat(r->goal_shadow, ==, 1.5);
  g_assert_cmpfloat(heightmap_config_fusion_params(r).goal_shadow, ==, 1.5);
  g_assert_cmpfloat(heightmap_config_fusion_params(r).goal_front, ==, 0.5);
  g_assert_cmpint(heightmap_config_fusion_params(r).far_pool, ==, 2);
  g_assert_cmpfloat(heightmap_config_fusion_params(r).far_sigma, ==, 0.3);
  g_assert_cmpfloat(heightmap_config_tracker_params(r).max_height, ==, 2.8);
  const char *expect[] = {
    "[heightmap] cell changed: needs a restart, keeping 0.1",
    "[heightmap] pool changed: needs a restart, keeping 0",
    "[heightmap] carve changed: needs a restart, keeping false",
    "[heightmap] see_through changed: needs a restart, keeping 0",
    "[heightmap] socket changed: needs a restart, keeping /tmp/p.sock",
    "[heightmap] format changed: needs a restart, keeping float",
    "[pair a] ring changed: needs a restart, keeping a",
    "[pair b] removed: needs a restart, still reading it",
    "[pair c] added: needs a restart, not read until then",
  };
  g_assert_cmpuint(fixed->len, ==, G_N_ELEMENTS(expect));
  for (guint i = 0; i < G_N_ELEMENTS(expect); i++)
    g_assert_cmpstr(fixed->pdata[i], ==, expect[i]);
  /* the changeable values are the new ones, the fixed ones the running ones */
  g_assert_cmpfloat(r->min_height, ==, 0.7);
  g_assert_cmpint(r->confirm, ==, 3);
  g_assert_cmpfloat(r->wait_ms, ==, 40);
  g_assert_cmpfloat(r->grid.cell, ==, 0.1);
  g_assert_cmpint(r->grid.width, ==, 200);
  g_assert_cmpint(r->pool, ==, 0);
  g_assert_cmpint(r->format, ==, HEIGHTMAP_FORMAT_FLOAT);
  g_assert_cmpstr(r->socket_path, ==, "/tmp/p.sock");
  g_assert_cmpint(r->n_pairs, ==, 2);
  g_assert_cmpstr(r->pairs[0].ring, ==, "a");
  g_assert_cmpstr(r->pairs[1].name, ==, "b");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/config/defaults", test_config_defaults);
  g_test_add_func("/heightmap/config/values", test_config_values);
  g_test_add_func("/heightmap/config/errors", test_config_errors);
  g_test_add_func("/heightmap/config/files", test_config_files);
  g_test_add_func("/heightmap/config/calibration", test_config_calibration);
  g_test_add_func("/heightmap/config/update", test_config_update);
  return g_test_run();
}
