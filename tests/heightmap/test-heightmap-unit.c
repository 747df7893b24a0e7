/* test-heightmap-unit: the CPU parts of stereod-heightmap around the players:
 * configuration (defaults, every kind of error, what a reload changes), the choice of
 * frames to fuse, the JSON line and the socket server (a client that does not read is
 * dropped, the sender never blocks; clients over the limit are refused with a line per
 * burst whose counts add up; a live socket is never replaced, a stale one is), and the
 * instance locks. Blobs and tracks: test-heightmap-players.c. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <gio/gio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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
  HeightmapTrackerParams tp = heightmap_config_tracker_params(c);
  g_assert_cmpfloat(tp.acceleration, ==, 10);
  g_assert_cmpint(tp.confirm, ==, 2);
  HeightmapFusionParams fp = heightmap_config_fusion_params(c);
  g_assert_cmpint(fp.grid.width, ==, 1110);
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
    "disparity_noise=0.1\nacceleration=0\nsplit_depth=0.3\ngoal_line=50\n[pair a]\nring=a2\n"
    "[pair c]\n",
    &error);
  g_assert_no_error(error);
  g_assert_true(heightmap_config_update(r, n, changed, fixed));
  g_assert_cmpstr(changed->str, ==, "wait_ms 100 -> 40, min_height 0.5 -> 0.7, "
                  "min_points 2 -> 4, goal_line 52.5 -> 50, top_fraction 0.1 -> 0.25, "
                  "split_depth 0 -> 0.3, "
                  "disparity_noise 0.07 -> 0.1, "
                  "acceleration 10 -> 0, confirm 2 -> 3");
  g_assert_cmpfloat(r->acceleration, ==, 0);
  g_assert_cmpfloat(r->disparity_noise, ==, 0.1);
  g_assert_cmpfloat(r->goal_line, ==, 50);
  const char *expect[] = {
    "[heightmap] cell changed: needs a restart, keeping 0.1",
    "[heightmap] pool changed: needs a restart, keeping 0",
    "[heightmap] carve changed: needs a restart, keeping false",
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

/* ---------------------------------------------------------------- frame choice */

static void
test_select(void)
{
  const HeightmapSelectParams sp = { .tolerance_ns = 20000000, .wait_ns = 100000000,
                                     .stale_ns = 1000000000 };
  const uint64_t now = 10000000000ull;
  bool chosen[3], skipped[3];
  uint64_t deadline;
  /* all three fresh and within tolerance: fused at once */
  HeightmapPairState p[3] = {
    { true, 5000000000ull, now - 1000, false },
    { true, 5010000000ull, now - 2000, false },
    { true, 5005000000ull, now - 3000, false },
  };
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 3);
  /* pair 2 has not delivered this time yet (its frame is fused): wait, then go without */
  p[2].fused = true;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, now - 2000 + sp.wait_ns);
  g_assert_cmpint(heightmap_select_frames(p, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, NULL, NULL),
                  ==, 2);
  g_assert_true(chosen[0] && chosen[1] && !chosen[2]);
  /* pair 2 stopped publishing (stale): not waited for */
  p[2].arrived_ns = now - 2 * sp.stale_ns;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 2);
  /* pair 1 is behind by more than the tolerance: its frame is skipped, never fused late */
  p[1].capture_ns = 4900000000ull;
  g_assert_cmpint(heightmap_select_frames(p, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, NULL, NULL),
                  ==, 1);
  g_assert_true(chosen[0] && !chosen[1] && skipped[1] && !skipped[2]);
  /* nothing new */
  for (int i = 0; i < 3; i++)
    p[i].fused = true;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, 0);

  /* Late frames: sets fused up to 5.010 s; pair 1 now brings a frame of 5.005 s (it came
   * after the wait) and pair 0 one of 5.050 s. Pair 1's is late: never chosen, marked
   * late, and does not hold the set back; it does not set the time either. */
  bool late[3];
  HeightmapPairState q[3] = {
    { true, 5050000000ull, now - 1000, false },
    { true, 5005000000ull, now - 500, false },
    { true, 5000000000ull, now - 2 * sp.stale_ns, true },   /* stale */
  };
  const uint64_t last = 5010000000ull;
  g_assert_cmpint(heightmap_select_frames(q, 3, now, last, &sp, chosen, skipped, late, NULL),
                  ==, 0);   /* pair 1 is live and has nothing newer: wait for it */
  g_assert_true(late[1] && !late[0] && !late[2]);
  g_assert_false(chosen[1]);
  g_assert_cmpint(heightmap_select_frames(q, 3, now + sp.wait_ns, last, &sp, chosen, skipped,
                                          late, NULL), ==, 1);
  g_assert_true(chosen[0] && !chosen[1] && late[1] && !skipped[1]);
  /* a frame exactly at the last fused time is late as well; with last_fused_ns 0 none is */
  q[1].capture_ns = last;
  heightmap_select_frames(q, 3, now, last, &sp, chosen, skipped, late, NULL);
  g_assert_true(late[1]);
  heightmap_select_frames(q, 3, now, 0, &sp, chosen, skipped, late, NULL);
  g_assert_false(late[1]);

  /* The first set: pair 0 has its first frame; pair 1's ring is open but its first frame
   * has not come (a writer that processes the pairs in turn); pair 2's ring is not open.
   * The set waits for pair 1 (not for pair 2), and goes without it after wait_ns; a ring
   * opened longer than stale_ns ago without a frame is not waited for. */
  HeightmapPairState r[3] = {
    { true, 5000000000ull, now - 1000, false, false },
    { false, 0, now - 5000, true, true },
    { false, 0, 0, false, false },
  };
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, &deadline),
                  ==, 0);
  g_assert_cmpuint(deadline, ==, now - 1000 + sp.wait_ns);
  g_assert_false(late[1] || skipped[1] || chosen[1]);
  g_assert_cmpint(heightmap_select_frames(r, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, late,
                                          NULL), ==, 1);
  g_assert_true(chosen[0] && !chosen[1] && !skipped[1] && !chosen[2]);
  r[1] = (HeightmapPairState) { true, 5001000000ull, now - 500, false, true };
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, NULL), ==, 2);
  g_assert_true(chosen[0] && chosen[1]);
  r[1] = (HeightmapPairState) { false, 0, now - 2 * sp.stale_ns, true, true };
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, NULL), ==, 1);
  /* an opened ring without a frame never sets the time nor makes a set on its own */
  HeightmapPairState e[1] = { { false, 0, now - 1000, true, true } };
  g_assert_cmpint(heightmap_select_frames(e, 1, now + sp.wait_ns, 0, &sp, chosen, skipped, late,
                                          &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, 0);
}

/* ---------------------------------------------------------------- output */

static void
test_json(void)
{
  g_autoptr(GString) s = g_string_new("x");
  const char *pairs[] = { "west", "east" };
  HeightmapTrack t[2] = {
    { .id = 3, .x = 1.23449, .y = -5.6, .height = 1.834, .area = 0.4249, .vx = 1.484,
      .vy = -0.3, .has_measured = true, .measured_vx = 1.516, .measured_vy = -0.314 },
    { .id = 12, .x = -52.5, .y = 0.0004, .height = 2.0, .area = 1.0, .measured_vx = 7 },
  };
  heightmap_json_append(s, 1234567890123ull, 42, pairs, 2, t, 2);
  g_assert_cmpstr(s->str, ==, "x{\"time_ns\":1234567890123,\"frame\":42,\"pairs\":[\"west\",\"east\"],"
                  "\"players\":[{\"id\":3,\"x\":1.234,\"y\":-5.600,\"height\":1.83,\"area\":0.42,"
                  "\"vx\":1.52,\"vy\":-0.31,\"track_vx\":1.48,\"track_vy\":-0.30},"
                  "{\"id\":12,\"x\":-52.500,\"y\":0.000,\"height\":2.00,\"area\":1.00,"
                  "\"track_vx\":0.00,\"track_vy\":0.00}]}\n");
  g_string_truncate(s, 0);
  heightmap_json_append(s, 0, 0, NULL, 0, NULL, 0);
  g_assert_cmpstr(s->str, ==, "{\"time_ns\":0,\"frame\":0,\"pairs\":[],\"players\":[]}\n");
}

static int
connect_to(const char *path)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint(fd, >=, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  g_assert_cmpint(connect(fd, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  return fd;
}

static void
test_server(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapServer) s = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  int reader = connect_to(path), sleeper = connect_to(path);
  const char line[] = "{\"time_ns\":1,\"frame\":0,\"pairs\":[],\"players\":[]}\n";
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 2);
  char buf[256];
  ssize_t r = read(reader, buf, sizeof buf);
  g_assert_cmpint(r, ==, (ssize_t) strlen(line));
  g_assert_cmpmem(buf, r, line, strlen(line));
  /* the sleeper never reads: once its buffer is full it is dropped, and sending never
   * blocks meanwhile (a send that blocked would hang here for good, never pass); the
   * reader, drained as it goes, stays */
  char big[4096];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\n';
  int sent = 0;
  while (heightmap_server_get_clients(s) == 2 && sent < 100000) {
    heightmap_server_send(s, big, sizeof big);
    sent++;
    while (recv(reader, buf, sizeof buf, MSG_DONTWAIT) > 0)
      ;
  }
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 1);
  g_assert_cmpint(sent, <, 100000);
  g_test_message("slow client dropped after %d lines of 4 KiB", sent);
  /* the dropped client sees the end of the stream */
  ssize_t total = 0;
  while ((r = read(sleeper, big, sizeof big)) > 0)
    total += r;
  g_assert_cmpint(r, ==, 0);
  g_assert_cmpint(total, >, 0);
  /* a client that leaves is noticed */
  close(reader);
  heightmap_server_send(s, line, strlen(line));
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 0);
  close(sleeper);
  g_clear_pointer(&s, heightmap_server_free);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_rmdir(dir);
}

/* Warnings of the server, counted rather than fatal (GTest makes warnings fatal). */
static GMutex warn_lock;
static GPtrArray *warnings;

static void
on_warning(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  g_mutex_lock(&warn_lock);
  g_ptr_array_add(warnings, g_strdup(message));
  g_mutex_unlock(&warn_lock);
  g_test_message("warning: %s", message);
}

static gboolean
warnings_not_fatal(const char *domain, GLogLevelFlags level, const char *message,
                   gpointer data)
{
  return !(level & G_LOG_LEVEL_WARNING) || g_strcmp0(domain, "stereod-heightmap") != 0;
}

/* Connects to the server at `path`, letting it accept (one line sent) whenever its
 * backlog is full; returns the connected socket. */
static int
connect_queued(const char *path, HeightmapServer *s, const char *line)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  g_assert_cmpint(fd, >=, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  for (int tries = 0; connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0; tries++) {
    g_assert_cmpint(errno, ==, EAGAIN);
    g_assert_cmpint(tries, <, 1000);
    heightmap_server_send(s, line, strlen(line));
  }
  return fd;
}

/* 64 clients held, 200 more: each of those is closed at once, and the log has the
 * first refusal, then counts that add up to the other 199 (the last one when the
 * server is freed); at most one count per HEIGHTMAP_SERVER_REFUSAL_LOG_S of the run. */
static void
test_server_refusals(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  HeightmapServer *s = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  const char line[] = "{}\n";
  int held[HEIGHTMAP_SERVER_MAX_CLIENTS];
  for (int i = 0; i < HEIGHTMAP_SERVER_MAX_CLIENTS; i++)
    held[i] = connect_queued(path, s, line);
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, HEIGHTMAP_SERVER_MAX_CLIENTS);

  warnings = g_ptr_array_new_with_free_func(g_free);
  guint handler = g_log_set_handler("stereod-heightmap",
                                    G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL, on_warning, NULL);
  g_test_log_set_fatal_handler(warnings_not_fatal, NULL);
  gint64 t0 = g_get_monotonic_time();
  enum { MORE = 200 };
  for (int i = 0; i < MORE; i++) {
    int fd = connect_queued(path, s, line);
    heightmap_server_send(s, line, strlen(line));
    char c;
    struct timeval tv = { .tv_sec = 60 };
    g_assert_cmpint(fcntl(fd, F_SETFL, 0), ==, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    g_assert_cmpint(read(fd, &c, 1), ==, 0);   /* refused: closed before any line */
    close(fd);
  }
  g_assert_cmpint(heightmap_server_get_clients(s), ==, HEIGHTMAP_SERVER_MAX_CLIENTS);
  heightmap_server_free(s);
  double secs = (double) (g_get_monotonic_time() - t0) * 1e-6;
  g_log_remove_handler("stereod-heightmap", handler);
  g_test_log_set_fatal_handler(NULL, NULL);

  g_assert_cmpuint(warnings->len, >=, 2);
  g_assert_true(strstr(warnings->pdata[0], "64 clients on ") &&
                strstr(warnings->pdata[0], "already, refusing new ones"));
  guint64 counted = 1;
  for (guint i = 1; i < warnings->len; i++) {
    const char *w = strstr(warnings->pdata[i], "refused ");
    g_assert_nonnull(w);
    counted += g_ascii_strtoull(w + strlen("refused "), NULL, 10);
  }
  g_assert_cmpuint(counted, ==, MORE);
  g_assert_cmpuint(warnings->len, <=, 2 + secs / HEIGHTMAP_SERVER_REFUSAL_LOG_S);
  g_test_message("%d refusals in %.1f s: %u log lines", MORE, secs, warnings->len);
  g_clear_pointer(&warnings, g_ptr_array_unref);
  for (int i = 0; i < HEIGHTMAP_SERVER_MAX_CLIENTS; i++)
    close(held[i]);
  g_rmdir(dir);
}

/* A socket file whose server answers is left alone; one nobody listens on is replaced;
 * a file that is no socket is not removed. */
static void
test_server_existing(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapServer) a = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  struct stat before, after;
  g_assert_cmpint(lstat(path, &before), ==, 0);
  HeightmapServer *b = heightmap_server_new(path, &error);
  g_assert_null(b);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
  g_assert_nonnull(strstr(error->message, "another stereod-heightmap serves"));
  g_clear_error(&error);
  g_assert_cmpint(lstat(path, &after), ==, 0);
  g_assert_cmpuint(after.st_ino, ==, before.st_ino);
  /* a still serves */
  int c = connect_to(path);
  const char line[] = "{\"frame\":1}\n";
  heightmap_server_send(a, line, strlen(line));
  char buf[64];
  g_assert_cmpint(read(c, buf, sizeof buf), ==, (ssize_t) strlen(line));
  close(c);
  g_clear_pointer(&a, heightmap_server_free);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));

  /* a socket file left by a server that died (bound, never unlinked) */
  int dead = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  g_assert_cmpint(bind(dead, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  close(dead);
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
  a = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  c = connect_to(path);
  heightmap_server_send(a, line, strlen(line));
  g_assert_cmpint(read(c, buf, sizeof buf), ==, (ssize_t) strlen(line));
  close(c);
  g_clear_pointer(&a, heightmap_server_free);

  /* not a socket */
  g_assert_true(g_file_set_contents(path, "data", -1, NULL));
  g_assert_null(heightmap_server_new(path, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  g_autofree char *data = NULL;
  g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
  g_assert_cmpstr(data, ==, "data");
  g_unlink(path);
  g_rmdir(dir);
}

/* One holder per socket and per ring; the lock files go with a clean release. */
static void
test_instance(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-lock-XXXXXX", NULL);
  g_autofree char *sock = g_build_filename(dir, "players.sock", NULL);
  g_autofree char *sock2 = g_build_filename(dir, "other.sock", NULL);
  g_autofree char *ring = g_strdup_printf("hm-unit-%d", (int) getpid());
  g_autofree char *ring2 = g_strdup_printf("hm-unit-%d-2", (int) getpid());
  g_autofree char *sock_lock = g_strconcat(sock, ".lock", NULL);
  g_autofree char *ring_lock = g_strdup_printf("/dev/shm/stereod.%s~lock", ring);
  g_autoptr(GError) error = NULL;
  HeightmapInstance *a = heightmap_instance_new(sock, ring, &error);
  g_assert_no_error(error);
  g_assert_true(g_file_test(sock_lock, G_FILE_TEST_EXISTS));
  g_assert_true(g_file_test(ring_lock, G_FILE_TEST_EXISTS));
  /* the same socket, another ring */
  g_assert_null(heightmap_instance_new(sock, ring2, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_nonnull(strstr(error->message, "another stereod-heightmap serves"));
  g_assert_nonnull(strstr(error->message, sock));
  g_clear_error(&error);
  /* the same ring, another socket (whose lock is let go again) */
  g_autofree char *sock2_lock = g_strconcat(sock2, ".lock", NULL);
  g_assert_null(heightmap_instance_new(sock2, ring, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_nonnull(strstr(error->message, "publishes the ring /dev/shm/stereod."));
  g_clear_error(&error);
  g_assert_false(g_file_test(sock2_lock, G_FILE_TEST_EXISTS));
  /* no socket at all, the same ring */
  g_assert_null(heightmap_instance_new(NULL, ring, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_clear_error(&error);
  heightmap_instance_free(a);
  g_assert_false(g_file_test(sock_lock, G_FILE_TEST_EXISTS));
  g_assert_false(g_file_test(ring_lock, G_FILE_TEST_EXISTS));
  a = heightmap_instance_new(sock, ring, &error);
  g_assert_no_error(error);
  heightmap_instance_free(a);
  g_rmdir(dir);
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
  g_test_add_func("/heightmap/select", test_select);
  g_test_add_func("/heightmap/json", test_json);
  g_test_add_func("/heightmap/server", test_server);
  g_test_add_func("/heightmap/server/refusals", test_server_refusals);
  g_test_add_func("/heightmap/server/existing", test_server_existing);
  g_test_add_func("/heightmap/instance", test_instance);
  return g_test_run();
}
