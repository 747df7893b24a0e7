/* test-heightmap-unit: the CPU parts of stereod-heightmap: configuration (defaults,
 * every kind of error, what a reload changes), blobs, tracks, the choice of frames to
 * fuse, the JSON line and the socket server (a client that does not read is dropped, the
 * sender never blocks). */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>
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
    { "[heightmap]\ncell=0.1m\n[pair a]\n", "hm.conf: [heightmap] cell: \"0.1m\" is not a number",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncell=0\n[pair a]\n", "hm.conf: [heightmap] cell: 0 is out of range [0.01, 10]",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nx0=5\nx1=4\n[pair a]\n", "hm.conf: [heightmap] x1: must be greater than x0",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nformat=png\n[pair a]\n",
      "hm.conf: [heightmap] format: \"png\" is neither float nor mm", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nmin_points=1.5\n[pair a]\n",
      "hm.conf: [heightmap] min_points: \"1.5\" is not an integer in [1, 1000]",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nsocket=rel.sock\n[pair a]\n",
      "hm.conf: [heightmap] socket: \"rel.sock\" is not an absolute path shorter than 108 bytes",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nblob_min_area=2\nblob_max_area=1\n[pair a]\n",
      "hm.conf: [heightmap] blob_max_area: must not be less than blob_min_area",
      HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\nacceleration=-1\n[pair a]\n",
      "hm.conf: [heightmap] acceleration: -1 is out of range [0, 100]", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ndisparity_noise=fast\n[pair a]\n",
      "hm.conf: [heightmap] disparity_noise: \"fast\" is not a number", HEIGHTMAP_CONFIG_ERROR_INVALID },
    { "[heightmap]\ncell=0.001\n[pair a]\n",
      "hm.conf: [heightmap] cell: 0.001 is out of range [0.01, 10]", HEIGHTMAP_CONFIG_ERROR_INVALID },
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
    { "not a key file\n", "hm.conf: ", HEIGHTMAP_CONFIG_ERROR_SYNTAX },
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
    "[heightmap]\nx0=-10\nx1=10\ny0=-5\ny1=5\ncell=0.2\npool=1\nformat=mm\n"
    "min_height=0.7\nconfirm=3\nwait_ms=40\nmin_points=4\ntop_fraction=0.25\n"
    "disparity_noise=0.1\nacceleration=0\n[pair a]\nring=a2\n[pair c]\n", &error);
  g_assert_no_error(error);
  g_assert_true(heightmap_config_update(r, n, changed, fixed));
  g_assert_cmpstr(changed->str, ==, "wait_ms 100 -> 40, min_height 0.5 -> 0.7, "
                  "min_points 2 -> 4, top_fraction 0.1 -> 0.25, disparity_noise 0.07 -> 0.1, "
                  "acceleration 10 -> 0, confirm 2 -> 3");
  g_assert_cmpfloat(r->acceleration, ==, 0);
  g_assert_cmpfloat(r->disparity_noise, ==, 0.1);
  const char *expect[] = {
    "[heightmap] cell changed: needs a restart, keeping 0.1",
    "[heightmap] pool changed: needs a restart, keeping 0",
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

/* ---------------------------------------------------------------- blobs */

static void
fill_rect(const HeightmapGrid *g, float *h, double x0, double y0, double x1, double y1, float v)
{
  for (int j = 0; j < g->height; j++)
    for (int i = 0; i < g->width; i++) {
      double x = g->x0 + (i + 0.5) * g->cell, y = g->y0 + (j + 0.5) * g->cell;
      if (x >= x0 && x < x1 && y >= y0 && y < y1)
        h[j * g->width + i] = v;
    }
}

static void
test_blobs(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = i % 3 ? 0.05f : NAN;        /* ground and holes */
  /* A: 0.5 x 0.4 m at 1.0 with a 0.2 x 0.2 m top at 1.8 in its corner */
  fill_rect(&g, h, -2.0, -1.0, -1.5, -0.6, 1.0f);
  fill_rect(&g, h, -1.7, -0.8, -1.5, -0.6, 1.8f);
  /* B: 0.3 x 0.3 m at 1.5 */
  fill_rect(&g, h, 2.0, 2.0, 2.3, 2.3, 1.5f);
  /* a single cell (too small) and a long wall (too big) */
  fill_rect(&g, h, 0.0, 0.0, 0.1, 0.1, 2.0f);
  fill_rect(&g, h, -4.5, 4.0, 4.5, 4.4, 1.0f);
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 0.3 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, NULL, &b);
  g_assert_cmpint(n, ==, 2);
  /* rows first: A (y -1.0) comes before B (y 2.0) */
  g_assert_cmpint(b[0].cells, ==, 20);
  g_assert_cmpfloat_with_epsilon(b[0].area, 0.2, 1e-9);
  g_assert_cmpfloat_with_epsilon(b[0].height, 1.8, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[0].x, -1.6, 1e-6);     /* the top's centre */
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.7, 1e-6);
  g_assert_cmpint(b[1].cells, ==, 9);
  g_assert_cmpfloat_with_epsilon(b[1].x, 2.15, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[1].y, 2.15, 1e-6);

  /* top_band 0: height-weighted centroid of all of A: (12 cells at 1.0, 4 at 1.8 ...) */
  p.top_band = 0;
  g_autoptr(HeightmapBlobFinder) f2 = heightmap_blob_finder_new(&g, &p);
  n = heightmap_blob_finder_run(f2, h, NULL, &b);
  double sw = 16 * 1.0 + 4 * 1.8;
  double ex = (1.0 * (-1.95 - 1.85 - 1.75 - 1.65 - 1.55) * 4 +
               0.8 * (-1.65 - 1.55) * 2) / sw;
  g_assert_cmpfloat_with_epsilon(b[0].x, ex, 1e-6);

  /* visible_offset: moved away from the camera that saw it */
  p.top_band = 0.3;
  p.visible_offset = 0.2;
  g_autoptr(HeightmapBlobFinder) f3 = heightmap_blob_finder_new(&g, &p);
  const HeightmapPairGeometry cam = { .centre = { -1.6, -40.7, 20 } };   /* "south" of A */
  heightmap_blob_finder_set_camera(f3, 2, &cam);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] = 1u << 2;
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpint(n, ==, 2);
  g_assert_cmpuint(b[0].pairs, ==, 4);
  g_assert_cmpfloat_with_epsilon(b[0].x, -1.6, 1e-6);
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.5, 1e-6);
  /* a second camera on the opposite side cancels the move */
  const HeightmapPairGeometry cam2 = { .centre = { -1.6, 39.3, 20 } };
  heightmap_blob_finder_set_camera(f3, 5, &cam2);
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] |= 1u << 5;
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].y, -0.7, 1e-6);

  /* new parameters (a reload): at 1.2 m only A's top (0.04 m^2, too small) and B remain */
  p.min_height = 1.2;
  heightmap_blob_finder_set_params(f3, &p);
  n = heightmap_blob_finder_run(f3, h, masks, &b);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpint(b[0].cells, ==, 9);
}


/* A pair seen from `centre` with focal length * baseline `fb` (Q as calib.c makes it). */
static HeightmapPairGeometry
pair_at(double x, double y, double z, double fb)
{
  HeightmapPairGeometry g = { .centre = { x, y, z } };
  g.q[11] = 700;
  g.q[14] = 700 / fb;
  return g;
}

/* Precision weights: a blob's two halves, one seen by a near pair, one by a far pair on
 * the other side; the near half gives the centre, the covariance is the information sum,
 * visible_offset moves the centre away from the near pair. */
static void
test_blobs_precision(void)
{
  HeightmapGrid g;
  g_assert_true(heightmap_grid_init(&g, -5, 5, -5, 5, 0.1));
  g_autofree float *h = g_new(float, g.width * g.height);
  g_autofree uint32_t *masks = g_new0(uint32_t, g.width * g.height);
  for (int i = 0; i < g.width * g.height; i++)
    h[i] = 0.05f;
  /* P (x -0.2..0, seen by pair 0) and Q (x 0..0.2, seen by pair 1), y 0..0.2, at 1.8 m */
  fill_rect(&g, h, -0.2, 0.0, 0.2, 0.2, 1.8f);
  for (int j = 0; j < g.height; j++)
    for (int i = 0; i < g.width; i++) {
      double x = g.x0 + (i + 0.5) * g.cell;
      masks[j * g.width + i] = x < 0 ? 1u : 2u;
    }
  HeightmapBlobParams p = { .min_height = 0.5, .min_area = 0.05, .max_area = 2.0,
                            .top_band = 1, .disparity_noise = 0.07 };
  g_autoptr(HeightmapBlobFinder) f = heightmap_blob_finder_new(&g, &p);
  /* cameras level with the top (D = L): pair 0 30 m south of P, pair 1 60 m north of Q */
  const HeightmapPairGeometry near = pair_at(-0.1, -29.9, 1.8, 2100);
  const HeightmapPairGeometry far = pair_at(0.1, 60.1, 1.8, 2100);
  heightmap_blob_finder_set_camera(f, 0, &near);
  heightmap_blob_finder_set_camera(f, 1, &far);
  const HeightmapBlob *b;
  int n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(b[0].pairs, ==, 3);
  /* weights 1 / sigma^2, sigma = L^2 0.07 / 2100: P's cells are (60 / 30)^4 = 16 times
   * Q's, so x = (-0.1 * 16 + 0.1) / 17 */
  g_assert_cmpfloat_with_epsilon(b[0].x, (-0.1 * 16 + 0.1) / 17, 2e-3);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1, 1e-3);
  /* covariance: along y 1 / (1 / s0^2 + 1 / s1^2), across x cell^2 / 2 */
  double s0 = 30.0 * 30.0 * 0.07 / 2100, s1 = 60.0 * 60.0 * 0.07 / 2100;
  double cyy = 1.0 / (1.0 / (s0 * s0) + 1.0 / (s1 * s1));
  g_assert_cmpfloat_with_epsilon(b[0].cov[2] / cyy, 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon(b[0].cov[0] / (0.01 / 2), 1.0, 0.02);
  g_assert_cmpfloat(fabs(b[0].cov[1]), <, 0.01 * b[0].cov[0]);

  /* visible_offset 0.2: along +y (away from the near pair) by 0.2 (16 - 1) / 17 */
  p.visible_offset = 0.2;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1 + 0.2 * 15 / 17, 2e-3);

  /* disparity_noise 0: equal weights, no covariance, the plain mean of directions */
  p.disparity_noise = 0;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].x, 0.0, 1e-3);
  g_assert_cmpfloat_with_epsilon(b[0].y, 0.1, 1e-3);   /* the two directions cancel */
  g_assert_cmpfloat(b[0].cov[0], ==, 0);
  g_assert_cmpfloat(b[0].cov[2], ==, 0);

  /* only the near pair: cov along y s0^2, across cell^2 */
  for (int i = 0; i < g.width * g.height; i++)
    masks[i] = 1u;
  p.disparity_noise = 0.07;
  p.visible_offset = 0;
  heightmap_blob_finder_set_params(f, &p);
  n = heightmap_blob_finder_run(f, h, masks, &b);
  g_assert_cmpfloat_with_epsilon(b[0].x, 0.0, 1e-4);
  g_assert_cmpfloat_with_epsilon(b[0].cov[2] / (s0 * s0), 1.0, 0.02);
  g_assert_cmpfloat_with_epsilon(b[0].cov[0] / 0.01, 1.0, 0.02);
}

/* ---------------------------------------------------------------- tracks */

static void
test_tracks(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 2 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  /* two players 1.5 m apart running towards each other at 5 m/s, 25 fps; they pass
   * 0.6 m apart in y: constant velocity keeps the ids on the right players */
  uint32_t id_a = 0, id_b = 0;
  for (int f = 0; f < 20; f++) {
    double s = 0.2 * f;
    HeightmapBlob blobs[2] = {
      { .x = -2 + s, .y = 0.0, .height = 1.8, .area = 0.2 },
      { .x = 2 - s, .y = 0.6, .height = 1.7, .area = 0.2 },
    };
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, blobs, 2, &tr);
    g_assert_cmpint(n, ==, 2);
    for (int i = 0; i < 2; i++) {
      if (f == 0) {
        if (tr[i].y == 0.0)
          id_a = tr[i].id;
        else
          id_b = tr[i].id;
        continue;
      }
      g_assert_cmpuint(tr[i].id, ==, tr[i].y == 0.0 ? id_a : id_b);
    }
    if (f > 3) {
      double vx = tr[0].id == id_a ? tr[0].vx : tr[1].vx;
      g_assert_cmpfloat_with_epsilon(vx, 5.0, 0.5);
    }
  }
  g_assert_cmpuint(id_a, !=, id_b);
  /* both vanish: tracks survive max_missed frames, then go; new blobs get new ids */
  for (int f = 20; f < 23; f++)
    g_assert_cmpint(heightmap_tracker_update(t, (uint64_t) f * 40000000u, NULL, 0, &tr), ==, 0);
  HeightmapBlob again = { .x = 2.0, .y = 0.0 };
  int n = heightmap_tracker_update(t, 23 * 40000000ull, &again, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b));
  /* a blob beyond the gate starts a new track */
  HeightmapBlob far = { .x = 3.5, .y = 0.0 };
  n = heightmap_tracker_update(t, 24 * 40000000ull, &far, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, >, MAX(id_a, id_b) + 1);
}

static void
test_tracks_coast(void)
{
  /* missed for one frame, found where the velocity says */
  HeightmapTrackerParams p = { .gate = 0.5, .max_missed = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  uint32_t id = 0;
  for (int f = 0; f < 12; f++) {
    HeightmapBlob b = { .x = 0.32 * f, .y = 1 };   /* 8 m/s */
    int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, f == 8 ? NULL : &b,
                                     f == 8 ? 0 : 1, &tr);
    if (f == 8) {
      g_assert_cmpint(n, ==, 0);
      continue;
    }
    g_assert_cmpint(n, ==, 1);
    if (f == 0)
      id = tr[0].id;
    g_assert_cmpuint(tr[0].id, ==, id);
  }
}

/* The Kalman filter (acceleration > 0): a player running at 5 m/s across the view of a
 * camera 60 m away, its blobs off by noise of 0.25 m along the view (y) and 0.05 m
 * across: the track follows without lag and has half or less of the noise along y;
 * without the filter (acceleration 0) the track is the blob. Then the player turns back
 * at once (-10 m/s in a frame): the track is within 0.3 m again 0.6 s later. */
static void
test_tracks_kalman(void)
{
  const double sy = 0.25, sx = 0.05;
  double err[2][3] = { { 0 } };     /* per mode: sum x error, sum x^2, sum y^2 */
  double after_turn[2] = { 0 };
  for (int mode = 0; mode < 2; mode++) {
    HeightmapTrackerParams p = { .gate = 1.5, .max_missed = 3, .acceleration = mode ? 10 : 0 };
    g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
    g_autoptr(GRand) rand = g_rand_new_with_seed(7);
    uint32_t id = 0;
    double x = 0;
    int counted = 0;
    for (int f = 0; f < 150; f++) {
      double v = f < 100 ? 5.0 : -5.0;   /* turns at frame 100 */
      if (f > 0)
        x += v * 0.04;
      /* Box-Muller, unit normal deviates */
      double u1 = g_rand_double_range(rand, 1e-12, 1), u2 = g_rand_double(rand);
      double r = sqrt(-2 * log(u1));
      HeightmapBlob b = { .x = x + sx * r * cos(2 * G_PI * u2), .y = 2 + sy * r * sin(2 * G_PI * u2),
                          .height = 1.8, .area = 0.3, .cov = { sx * sx, 0, sy * sy } };
      const HeightmapTrack *tr;
      int n = heightmap_tracker_update(t, (uint64_t) f * 40000000u, &b, 1, &tr);
      g_assert_cmpint(n, ==, 1);
      if (f == 0)
        id = tr[0].id;
      g_assert_cmpuint(tr[0].id, ==, id);
      if (mode == 0) {
        g_assert_cmpfloat(tr[0].x, ==, b.x);   /* no filter: the blob's position */
        g_assert_cmpfloat(tr[0].y, ==, b.y);
      }
      if (f >= 20 && f < 100) {
        err[mode][0] += tr[0].x - x;
        err[mode][1] += (tr[0].x - x) * (tr[0].x - x);
        err[mode][2] += (tr[0].y - 2) * (tr[0].y - 2);
        counted++;
      }
      if (f >= 115)
        after_turn[mode] = MAX(after_turn[mode], hypot(tr[0].x - x, tr[0].y - 2));
    }
    for (int k = 0; k < 3; k++)
      err[mode][k] /= counted;
  }
  double rms_y[2] = { sqrt(err[0][2]), sqrt(err[1][2]) };
  g_test_message("along the view: rms %.3f m raw, %.3f m filtered; x bias %.4f m; "
                 "after the turn %.3f m", rms_y[0], rms_y[1], err[1][0], after_turn[1]);
  g_assert_cmpfloat(rms_y[0], >, 0.8 * sy);         /* the noise is there ... */
  g_assert_cmpfloat(rms_y[1], <, rms_y[0] / 2);     /* ... and half of it filtered out */
  g_assert_cmpfloat(fabs(err[1][0]), <, 0.02);      /* no lag at constant velocity */
  g_assert_cmpfloat(sqrt(err[1][1]), <, 1.2 * sx);
  g_assert_cmpfloat(after_turn[1], <, 0.3);
}

/* A blob seen once is not reported and its tentative track goes at the next miss; one
 * seen in `confirm` consecutive frames is reported from then on, also through a miss. */
static void
test_tracks_confirm(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 3 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob noise = { .x = 10, .y = 5, .height = 1.2, .area = 0.3 };
  HeightmapBlob player[2] = { { .x = 0, .y = 0, .height = 1.8, .area = 0.3 }, noise };
  uint64_t ms40 = 40000000u;
  /* frame 0: a player and a noise blob; frame 1: the player only; frame 2: both again */
  g_assert_cmpint(heightmap_tracker_update(t, 0, player, 2, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, player, 1, &tr), ==, 0);
  int n = heightmap_tracker_update(t, 2 * ms40, player, 2, &tr);
  g_assert_cmpint(n, ==, 1);   /* the player, confirmed at its 3rd frame; the noise blob
                                  restarted a tentative track */
  g_assert_cmpfloat(tr[0].x, ==, 0.0);
  g_assert_true(tr[0].confirmed);
  uint32_t id = tr[0].id;
  /* a miss does not un-confirm it */
  g_assert_cmpint(heightmap_tracker_update(t, 3 * ms40, NULL, 0, &tr), ==, 0);
  n = heightmap_tracker_update(t, 4 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
  /* the noise blob, seen in frame 2 only, never becomes a player */
  n = heightmap_tracker_update(t, 5 * ms40, player, 1, &tr);
  g_assert_cmpint(n, ==, 1);
  g_assert_cmpuint(tr[0].id, ==, id);
}

/* New parameters keep the tracks: a tentative track keeps its hits against the new
 * `confirm`, and its id. */
static void
test_tracks_set_params(void)
{
  HeightmapTrackerParams p = { .gate = 1.0, .max_missed = 3, .confirm = 5 };
  g_autoptr(HeightmapTracker) t = heightmap_tracker_new(&p);
  const HeightmapTrack *tr;
  HeightmapBlob player = { .x = 0, .y = 0, .height = 1.8, .area = 0.3 };
  uint64_t ms40 = 40000000u;
  g_assert_cmpint(heightmap_tracker_update(t, 0, &player, 1, &tr), ==, 0);
  g_assert_cmpint(heightmap_tracker_update(t, ms40, &player, 1, &tr), ==, 0);
  p.confirm = 3;
  heightmap_tracker_set_params(t, &p);
  g_assert_cmpint(heightmap_tracker_update(t, 2 * ms40, &player, 1, &tr), ==, 1);
  g_assert_cmpuint(tr[0].id, ==, 1);
  g_assert_cmpint(tr[0].age, ==, 3);
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
}

/* ---------------------------------------------------------------- output */

static void
test_json(void)
{
  g_autoptr(GString) s = g_string_new("x");
  const char *pairs[] = { "west", "east" };
  HeightmapTrack t[2] = {
    { .id = 3, .x = 1.23449, .y = -5.6, .height = 1.834, .area = 0.4249 },
    { .id = 12, .x = -52.5, .y = 0.0004, .height = 2.0, .area = 1.0 },
  };
  heightmap_json_append(s, 1234567890123ull, 42, pairs, 2, t, 2);
  g_assert_cmpstr(s->str, ==, "x{\"time_ns\":1234567890123,\"frame\":42,\"pairs\":[\"west\",\"east\"],"
                  "\"players\":[{\"id\":3,\"x\":1.234,\"y\":-5.600,\"height\":1.83,\"area\":0.42},"
                  "{\"id\":12,\"x\":-52.500,\"y\":0.000,\"height\":2.00,\"area\":1.00}]}\n");
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
   * blocks meanwhile; the reader, drained as it goes, stays */
  char big[4096];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\n';
  gint64 t0 = g_get_monotonic_time();
  int sent = 0;
  while (heightmap_server_get_clients(s) == 2 && sent < 100000) {
    heightmap_server_send(s, big, sizeof big);
    sent++;
    while (recv(reader, buf, sizeof buf, MSG_DONTWAIT) > 0)
      ;
  }
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 1);
  g_assert_cmpint(g_get_monotonic_time() - t0, <, 5 * G_USEC_PER_SEC);
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

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/config/defaults", test_config_defaults);
  g_test_add_func("/heightmap/config/values", test_config_values);
  g_test_add_func("/heightmap/config/errors", test_config_errors);
  g_test_add_func("/heightmap/config/calibration", test_config_calibration);
  g_test_add_func("/heightmap/config/update", test_config_update);
  g_test_add_func("/heightmap/blobs", test_blobs);
  g_test_add_func("/heightmap/blobs/precision", test_blobs_precision);
  g_test_add_func("/heightmap/tracks/crossing", test_tracks);
  g_test_add_func("/heightmap/tracks/coast", test_tracks_coast);
  g_test_add_func("/heightmap/tracks/kalman", test_tracks_kalman);
  g_test_add_func("/heightmap/tracks/confirm", test_tracks_confirm);
  g_test_add_func("/heightmap/tracks/set-params", test_tracks_set_params);
  g_test_add_func("/heightmap/select", test_select);
  g_test_add_func("/heightmap/json", test_json);
  g_test_add_func("/heightmap/server", test_server);
  return g_test_run();
}
