/* test-sim: runs stereod-sim on tiny configs and checks what it writes: file names,
 * players.csv, calib.conf, the self-consistency of the ground truth (the right image
 * warped by the gt disparity reproduces the left), the gt against the scene through the
 * calibration, lens distortion against the calibration's rectification map, and config
 * errors. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <turbojpeg.h>

#include "kernels/calib.h"
#include "tools/sim/sim.h"

#define W 160
#define H 90
#define FRAMES 3
#define START_NS G_GINT64_CONSTANT(1000000000)

static char *tmp_dir;
static char *clip_dir;     /* the shared run of the tiny config */

static const char tiny_conf[] =
  "[output]\nframes=3\nfps=25\nstart_time_ns=1000000000\nformat=png\nseed=7\n"
  "[scene]\nplayers=22\n"
  "[pair a]\nposition=-20,-79,25\nlook_at=-27,-4,0\nbaseline=1.6\nfocal=175\n"
  "width=160\nheight=90\nnoise=1\n"
  "[pair b]\nposition=5,-50,12\nlook_at=5,-10,0\nbaseline=1.0\nfocal=150\n"
  "width=160\nheight=90\nnoise=1\n";

/* Runs stereod-sim; returns its exit status, stderr in *err when not NULL. */
static int
run_sim(const char *conf_text, const char *name, const char *out, char **err)
{
  g_autofree char *conf = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(conf, conf_text, -1, NULL));
  const char *argv[] = { STEREOD_SIM, "--config", conf, "--quiet", out ? "--out" : NULL, out,
                         NULL };
  g_autofree char *std_err = NULL;
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                             &std_err, &status, &error));
  g_assert_no_error(error);
  g_assert_true(WIFEXITED(status));
  if (err)
    *err = g_steal_pointer(&std_err);
  else if (WEXITSTATUS(status) != 0)
    g_test_message("stereod-sim: %s", std_err);
  return WEXITSTATUS(status);
}

static char *
frame_path(const char *dir, const char *pair, const char *kind, int frame, const char *ext)
{
  g_autofree char *name = g_strdup_printf("%06d.%s", frame, ext);
  return g_build_filename(dir, pair, kind, name, NULL);
}

static guint8 *
read_png(const char *path, int *w, int *h)
{
  png_image img = { .version = PNG_IMAGE_VERSION };
  g_assert_true(png_image_begin_read_from_file(&img, path));
  img.format = PNG_FORMAT_GRAY;
  guint8 *buf = g_malloc(PNG_IMAGE_SIZE(img));
  g_assert_true(png_image_finish_read(&img, NULL, buf, 0, NULL));
  *w = (int)img.width;
  *h = (int)img.height;
  return buf;
}

static float *
read_pfm(const char *path, int *w, int *h)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  double scale = 0;
  int consumed = 0;
  g_assert_cmpint(sscanf(data, "Pf\n%d %d\n%lf\n%n", w, h, &scale, &consumed), ==, 3);
  g_assert_cmpfloat(scale, <, 0.0);                     /* little endian */
  g_assert_cmpuint(len, ==, (gsize)consumed + (gsize)*w * *h * 4);
  float *out = g_new(float, (gsize)*w * *h);
  for (int y = 0; y < *h; y++)                          /* rows bottom-up */
    memcpy(out + (gsize)(*h - 1 - y) * *w, data + consumed + (gsize)y * *w * 4,
           (gsize)*w * 4);
  return out;
}

static void
test_files(void)
{
  static const char *const pairs[] = { "a", "b" };
  for (int p = 0; p < 2; p++) {
    for (int f = 0; f < FRAMES + 1; f++) {
      g_autofree char *l = frame_path(clip_dir, pairs[p], "left", f, "png");
      g_autofree char *r = frame_path(clip_dir, pairs[p], "right", f, "png");
      g_autofree char *g = frame_path(clip_dir, pairs[p], "gt", f, "pfm");
      bool expect = f < FRAMES;
      g_assert_cmpint(g_file_test(l, G_FILE_TEST_IS_REGULAR), ==, expect);
      g_assert_cmpint(g_file_test(r, G_FILE_TEST_IS_REGULAR), ==, expect);
      g_assert_cmpint(g_file_test(g, G_FILE_TEST_IS_REGULAR), ==, expect);
    }
    g_autofree char *c = g_build_filename(clip_dir, pairs[p], "calib.conf", NULL);
    g_assert_true(g_file_test(c, G_FILE_TEST_IS_REGULAR));
  }
  int w, h;
  g_autofree char *l = frame_path(clip_dir, "b", "left", 2, "png");
  g_autofree guint8 *img = read_png(l, &w, &h);
  g_assert_cmpint(w, ==, W);
  g_assert_cmpint(h, ==, H);
}

typedef struct {
  int frame, id;
  gint64 time_ns;
  double x, y;
} Row;

static GArray *
read_players(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "players.csv", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpstr(lines[0], ==, "frame,time_ns,id,x,y");
  GArray *rows = g_array_new(false, false, sizeof(Row));
  for (int i = 1; lines[i] && *lines[i]; i++) {
    Row r;
    g_assert_cmpint(sscanf(lines[i], "%d,%" G_GINT64_FORMAT ",%d,%lf,%lf", &r.frame,
                           &r.time_ns, &r.id, &r.x, &r.y), ==, 5);
    g_array_append_val(rows, r);
  }
  return rows;
}

/* Ball centres per frame from ball.csv. */
static void
read_ball(const char *dir, double ball[FRAMES][3])
{
  g_autofree char *path = g_build_filename(dir, "ball.csv", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpstr(lines[0], ==, "frame,time_ns,x,y,z");
  for (int f = 0; f < FRAMES; f++) {
    int frame;
    gint64 t;
    g_assert_nonnull(lines[f + 1]);
    g_assert_cmpint(sscanf(lines[f + 1], "%d,%" G_GINT64_FORMAT ",%lf,%lf,%lf", &frame, &t,
                           &ball[f][0], &ball[f][1], &ball[f][2]), ==, 5);
    g_assert_cmpint(frame, ==, f);
    g_assert_cmpint(t, ==, START_NS + (gint64)f * 40000000);
  }
}

static void
test_players(void)
{
  g_autoptr(GArray) rows = read_players(clip_dir);
  g_assert_cmpuint(rows->len, ==, FRAMES * 22);
  for (guint i = 0; i < rows->len; i++) {
    Row *r = &g_array_index(rows, Row, i);
    g_assert_cmpint(r->frame, ==, (int)i / 22);
    g_assert_cmpint(r->id, ==, (int)i % 22);
    /* 25 fps from 1 s: exactly 40 ms apart. */
    g_assert_cmpint(r->time_ns, ==, START_NS + (gint64)r->frame * 40000000);
    g_assert_cmpfloat(fabs(r->x), <=, 55.0);
    g_assert_cmpfloat(fabs(r->y), <=, 36.0);
    if (r->frame > 0) {
      Row *prev = &g_array_index(rows, Row, i - 22);
      double speed = hypot(r->x - prev->x, r->y - prev->y) / 0.04;
      g_assert_cmpfloat(speed, <=, 9.0 + 1e-3);
    }
  }
}

static void
test_calib(void)
{
  struct { const char *pair; double fb; } cases[] = { { "a", 175 * 1.6 }, { "b", 150 * 1.0 } };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = g_build_filename(clip_dir, cases[i].pair, "calib.conf", NULL);
    StereoCalib c;
    g_autoptr(GError) error = NULL;
    g_assert_true(calib_load(path, &c, &error));
    g_assert_no_error(error);
    g_assert_cmpint(c.width, ==, W);
    g_assert_cmpint(c.height, ==, H);
    g_assert_cmpfloat_with_epsilon(calib_focal(&c) * calib_baseline(&c), cases[i].fb, 1e-9);
  }
}

/* Mean |left - right warped by (gt + shift)| over visible, non-occluded pixels whose gt
 * is locally smooth; *count receives the number of pixels used. Interpolating the right
 * image blurs its pixel-scale texture, which costs a few gray levels by itself; with
 * `exact` only the pixels whose match x - d lies within 0.15 px of a pixel centre are
 * used, read without interpolation, so what remains is the noise. */
static double
warp_error(const guint8 *left, const guint8 *right, const float *gt, double shift,
           bool exact, int *count)
{
  double sum = 0.0;
  int n = 0;
  for (int y = 1; y < H - 1; y++)
    for (int x = 1; x < W - 1; x++) {
      double d = gt[y * W + x];
      bool smooth = isfinite(d);
      for (int j = -1; j <= 1 && smooth; j++)
        for (int i = -1; i <= 1 && smooth; i++)
          smooth = fabs(gt[(y + j) * W + x + i] - d) < 0.25;
      double xr = x - d - shift;
      if (!smooth || xr < 0.0 || xr > W - 1)
        continue;
      /* Occluded in the right view: a nearer left pixel lands on the same spot. */
      bool occluded = false;
      for (int x2 = x + 1; x2 < W && !occluded; x2++) {
        double d2 = gt[y * W + x2];
        occluded = isfinite(d2) && d2 > d + 0.25 && fabs((x2 - d2) - (x - d)) < 1.0;
      }
      if (occluded)
        continue;
      if (exact) {
        double xn = round(xr);
        if (fabs(xr - xn) > 0.15)
          continue;
        sum += fabs((double)left[y * W + x] - right[y * W + (int)xn]);
        n++;
        continue;
      }
      int x0 = MIN((int)floor(xr), W - 2);
      double a = xr - x0;
      double r = (1.0 - a) * right[y * W + x0] + a * right[y * W + x0 + 1];
      sum += fabs(left[y * W + x] - r);
      n++;
    }
  *count = n;
  return n ? sum / n : INFINITY;
}

static void
test_warp(void)
{
  static const char *const pairs[] = { "a", "b" };
  for (int p = 0; p < 2; p++)
    for (int f = 0; f < FRAMES; f++) {
      g_autofree char *lp = frame_path(clip_dir, pairs[p], "left", f, "png");
      g_autofree char *rp = frame_path(clip_dir, pairs[p], "right", f, "png");
      g_autofree char *gp = frame_path(clip_dir, pairs[p], "gt", f, "pfm");
      int w, h, n, n_exact, n_shift;
      g_autofree guint8 *left = read_png(lp, &w, &h);
      g_autofree guint8 *right = read_png(rp, &w, &h);
      g_autofree float *gt = read_pfm(gp, &w, &h);
      g_assert_cmpint(w, ==, W);
      g_assert_cmpint(h, ==, H);
      double e = warp_error(left, right, gt, 0.0, false, &n);
      double e_exact = warp_error(left, right, gt, 0.0, true, &n_exact);
      double e_shift = warp_error(left, right, gt, 1.0, true, &n_shift);
      g_test_message("pair %s frame %d: mean |L - warp(R)| %.2f over %d px (bilinear), "
                     "%.2f over %d px (at pixel centres), %.2f with gt + 1 px", pairs[p], f,
                     e, n, e_exact, n_exact, e_shift);
      g_assert_cmpint(n, >, W * H / 2);
      g_assert_cmpint(n_exact, >, W * H / 8);
      /* Noise sigma 1 in both views: E|n1 - n2| = 2 / sqrt(pi) = 1.13. */
      g_assert_cmpfloat(e_exact, <, 1.5);
      g_assert_cmpfloat(e, <, 2.0);
      g_assert_cmpfloat(e_shift, >, 1.8 * e_exact);
    }
}

/* Every gt pixel reprojected through calib.conf lands on the scene: on the ground
 * (z = 0), on a player listed in players.csv, on the ball, or outside the pitch. */
static void
test_geometry(void)
{
  g_autoptr(GArray) rows = read_players(clip_dir);
  double ball[FRAMES][3];
  read_ball(clip_dir, ball);
  int on_players = 0, on_ground = 0, on_ball = 0;
  static const char *const pairs[] = { "a", "b" };
  for (int p = 0; p < 2; p++) {
    g_autofree char *cp = g_build_filename(clip_dir, pairs[p], "calib.conf", NULL);
    StereoCalib c;
    g_assert_true(calib_load(cp, &c, NULL));
    for (int f = 0; f < FRAMES; f++) {
      g_autofree char *gp = frame_path(clip_dir, pairs[p], "gt", f, "pfm");
      int w, h;
      g_autofree float *gt = read_pfm(gp, &w, &h);
      for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
          double q[3];
          if (!calib_pixel_to_pitch(&c, x, y, gt[y * W + x], q))
            continue;
          if (fabs(q[0]) > 50.0 || fabs(q[1]) > 32.0)
            continue;                               /* goals, boards, stands */
          if (fabs(q[2]) < 2e-3) {
            on_ground++;
            continue;
          }
          double best = INFINITY;
          for (int i = 0; i < 22; i++) {
            const Row *r = &g_array_index(rows, Row, f * 22 + i);
            best = MIN(best, hypot(q[0] - r->x, q[1] - r->y));
          }
          if (best <= 0.245 && q[2] > 0.0 && q[2] < 1.95) {
            on_players++;
            continue;
          }
          /* The only other thing on the pitch is the 0.22 m ball. */
          double db = sqrt((q[0] - ball[f][0]) * (q[0] - ball[f][0]) +
                           (q[1] - ball[f][1]) * (q[1] - ball[f][1]) +
                           (q[2] - ball[f][2]) * (q[2] - ball[f][2]));
          if (db > 0.1102)
            g_error("pair %s frame %d pixel (%d, %d): (%.3f, %.3f, %.3f) is on nothing, "
                    "nearest player %.3f m, ball %.3f m", pairs[p], f, x, y, q[0], q[1],
                    q[2], best, db);
          on_ball++;
        }
    }
  }
  g_test_message("gt pixels on the ground %d, on players %d, on the ball %d", on_ground,
                 on_players, on_ball);
  g_assert_cmpint(on_ground, >, W * H);
  g_assert_cmpint(on_players, >, 10);
}

static double
bilinear(const guint8 *img, double u, double v)
{
  int x0 = MIN((int)floor(u), W - 2), y0 = MIN((int)floor(v), H - 2);
  double a = u - x0, b = v - y0;
  const guint8 *p = img + y0 * W + x0;
  return (1 - b) * ((1 - a) * p[0] + a * p[1]) + b * ((1 - a) * p[W] + a * p[W + 1]);
}

static void
test_distortion(void)
{
  static const char conf[] =
    "[output]\nframes=1\nformat=png\nseed=3\nsupersample=3\n[scene]\nplayers=22\n"
    "[pair plain]\nposition=0,-60,15\nlook_at=0,-5,0\nbaseline=1.5\nfocal=150\n"
    "width=160\nheight=90\nnoise=0\n"
    "[pair bent]\nposition=0,-60,15\nlook_at=0,-5,0\nbaseline=1.5\nfocal=150\n"
    "width=160\nheight=90\nnoise=0\ndistortion=-0.2,0.05,0.002,-0.001,0\n";
  g_autofree char *out = g_build_filename(tmp_dir, "distortion", NULL);
  g_assert_cmpint(run_sim(conf, "distortion.conf", out, NULL), ==, 0);
  g_autofree char *cp = g_build_filename(out, "bent", "calib.conf", NULL);
  StereoCalib c;
  g_assert_true(calib_load(cp, &c, NULL));
  g_assert_cmpfloat(c.dist_left[0], ==, -0.2);
  g_assert_cmpfloat(c.dist_right[2], ==, 0.002);
  static const char *const sides[2] = { "left", "right" };
  for (int s = 0; s < 2; s++) {
    g_autofree char *pp = frame_path(out, "plain", sides[s], 0, "png");
    g_autofree char *bp = frame_path(out, "bent", sides[s], 0, "png");
    int w, h;
    g_autofree guint8 *plain = read_png(pp, &w, &h);
    g_autofree guint8 *bent = read_png(bp, &w, &h);
    /* Rectify the raw view with the calibration's map; compare with the pinhole view. */
    double sum = 0.0, sum_raw = 0.0;
    int n = 0;
    for (int y = 2; y < H - 2; y++)
      for (int x = 2; x < W - 2; x++) {
        double u, v;
        calib_rectified_to_raw(&c, s ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
        if (u < 0 || v < 0 || u > W - 1 || v > H - 1)
          continue;
        sum += fabs(bilinear(bent, u, v) - plain[y * W + x]);
        sum_raw += fabs((double)bent[y * W + x] - plain[y * W + x]);
        n++;
      }
    g_test_message("%s: rectified raw view vs pinhole view: mean |diff| %.2f "
                   "(%.2f without rectification), %d px", sides[s], sum / n, sum_raw / n, n);
    g_assert_cmpint(n, >, W * H / 2);
    g_assert_cmpfloat(sum / n, <, 2.5);
    g_assert_cmpfloat(sum_raw / n, >, 2.0 * sum / n);
  }
  /* The ground truth is of the rectified view: the same for both pairs, bit for bit. */
  g_autofree char *g1 = frame_path(out, "plain", "gt", 0, "pfm");
  g_autofree char *g2 = frame_path(out, "bent", "gt", 0, "pfm");
  int w, h;
  g_autofree float *gt1 = read_pfm(g1, &w, &h);
  g_autofree float *gt2 = read_pfm(g2, &w, &h);
  g_assert_true(memcmp(gt1, gt2, sizeof(float) * W * H) == 0);
}

static void
test_jpeg(void)
{
  static const char conf[] =
    "[output]\nframes=1\nformat=jpg\njpeg_quality=75\n[scene]\nplayers=4\nstands=false\n"
    "[pair x]\nposition=0,-60,15\nlook_at=0,0,0\nbaseline=1\nfocal=100\n"
    "width=64\nheight=48\n";
  g_autofree char *out = g_build_filename(tmp_dir, "jpeg", NULL);
  g_assert_cmpint(run_sim(conf, "jpeg.conf", out, NULL), ==, 0);
  static const char *const sides[2] = { "left", "right" };
  for (int s = 0; s < 2; s++) {
    g_autofree char *path = frame_path(out, "x", sides[s], 0, "jpg");
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    tjhandle tj = tjInitDecompress();
    int w = 0, h = 0, sub = -1, cs = -1;
    g_assert_cmpint(tjDecompressHeader3(tj, (unsigned char *)data, len, &w, &h, &sub, &cs),
                    ==, 0);
    tjDestroy(tj);
    g_assert_cmpint(w, ==, 64);
    g_assert_cmpint(h, ==, 48);
    g_assert_cmpint(sub, ==, TJSAMP_GRAY);
  }
}

typedef struct {
  const char *name, *from, *to, *expect;
} ConfigCase;

static const ConfigCase config_cases[] = {
  { "malformed", "focal=175", "focal=17x5", "[pair a] focal: '17x5' is not a number" },
  { "range", "fps=25", "fps=0", "[output] fps: 0 is outside" },
  { "unknown-key", "players=22", "players=22\ncolour=red", "[scene] colour: unknown key" },
  { "unknown-group", "[scene]", "[sceen]", "[sceen]: unknown group" },
  { "missing", "baseline=1.0\n", "", "[pair b] baseline: missing" },
  { "count", "position=5,-50,12", "position=5,-50", "[pair b] position: expected 3 numbers" },
  { "format", "format=png", "format=tiff", "[output] format: 'tiff' is not jpg or png" },
  { "vertical", "look_at=5,-10,0", "look_at=5,-50,0", "[pair b] look_at: " },
  { "name", "[pair a]", "[pair a/b]", "[pair a/b]: pair name" },
  /* Issue 12: a key or a group twice, hexadecimal numbers. */
  { "duplicate-key", "focal=175", "focal=175\nfocal=200",
    "[pair a] focal: set twice in this group (lines 13 and 14)" },
  { "duplicate-group", "[pair b]", "[pair a]", "[pair a]: appears twice in this file (lines 9 and 17)" },
  { "hex", "focal=175", "focal=0x10", "[pair a] focal: '0x10' is not a number" },
  { "hex-integer", "players=22", "players=0x16", "[scene] players: '0x16' is not an integer" },
};

/* A FIFO or /dev/zero as --config: exit 78 at once, naming the file (timeout turns a
 * hang into exit 124). */
static void
test_config_not_file(void)
{
  g_autofree char *fifo = g_build_filename(tmp_dir, "fifo.conf", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  const char *paths[] = { fifo, "/dev/zero" };
  const char *kinds[] = { "a FIFO", "a character device" };
  for (int i = 0; i < 2; i++) {
    const char *argv[] = { "timeout", "60", STEREOD_SIM, "--config", paths[i], "--quiet",
                           NULL };
    g_autofree char *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               NULL, &err, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 78);
    g_autofree char *want = g_strdup_printf("stereod-sim: %s: not a regular file (%s)\n",
                                            paths[i], kinds[i]);
    g_assert_cmpstr(err, ==, want);
  }
  g_unlink(fifo);
}

static void
test_config_error(gconstpointer data)
{
  const ConfigCase *cc = data;
  const char *at = strstr(tiny_conf, cc->from);
  g_assert_nonnull(at);
  g_autofree char *head = g_strndup(tiny_conf, (gsize)(at - tiny_conf));
  g_autofree char *text = g_strconcat(head, cc->to, at + strlen(cc->from), NULL);
  g_autofree char *name = g_strdup_printf("bad-%s.conf", cc->name);
  g_autofree char *out = g_build_filename(tmp_dir, "bad", NULL);
  g_autofree char *err = NULL;
  g_assert_cmpint(run_sim(text, name, out, &err), ==, 78);
  g_autofree char *conf = g_build_filename(tmp_dir, name, NULL);
  g_autofree char *expect = g_strdup_printf("stereod-sim: %s: %s", conf, cc->expect);
  g_test_message("%s", err);
  g_assert_true(g_str_has_prefix(err, expect));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
}

/* The demo calibrations that config/stereod.conf names (config/calib/demo-*.conf) are
 * byte for byte what stereod-sim writes for config/demo/sim.conf. */
static void
test_demo_calibrations(void)
{
  g_autofree char *sim_conf = g_build_filename(STEREOD_SOURCE_DIR, "config", "demo",
                                               "sim.conf", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SimConfig) cfg = sim_config_load(sim_conf, &error);
  g_assert_no_error(error);
  g_assert_cmpint(cfg->n_pairs, ==, 2);
  for (int i = 0; i < cfg->n_pairs; i++) {
    SimCamera camera;
    sim_camera_init(&camera, &cfg->pairs[i]);
    StereoCalib calib;
    sim_camera_get_calib(&camera, &calib);
    g_autofree char *want = calib_to_data(&calib);
    g_autofree char *name = g_strdup_printf("demo-%s.conf", cfg->pairs[i].name);
    g_autofree char *path = g_build_filename(STEREOD_SOURCE_DIR, "config", "calib", name, NULL);
    g_autofree char *have = NULL;
    g_assert_true(g_file_get_contents(path, &have, NULL, NULL));
    if (strcmp(have, want) != 0)
      g_error("%s is not what stereod-sim writes for %s (regenerate it: "
              "config/calib/README.md)", path, sim_conf);
  }
}

static void
remove_tree(const char *path)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    for (const char *n; dir && (n = g_dir_read_name(dir));) {
      g_autofree char *p = g_build_filename(path, n, NULL);
      remove_tree(p);
    }
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("test-sim-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  clip_dir = g_build_filename(tmp_dir, "clip", NULL);
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(run_sim(tiny_conf, "tiny.conf", clip_dir, NULL), ==, 0);
  g_test_message("tiny clip rendered in %.0f ms", (g_get_monotonic_time() - t0) / 1e3);
  g_test_add_func("/sim/files", test_files);
  g_test_add_func("/sim/players", test_players);
  g_test_add_func("/sim/calib", test_calib);
  g_test_add_func("/sim/warp", test_warp);
  g_test_add_func("/sim/geometry", test_geometry);
  g_test_add_func("/sim/distortion", test_distortion);
  g_test_add_func("/sim/jpeg", test_jpeg);
  g_test_add_func("/sim/config-not-file", test_config_not_file);
  g_test_add_func("/sim/demo-calibrations", test_demo_calibrations);
  for (gsize i = 0; i < G_N_ELEMENTS(config_cases); i++) {
    g_autofree char *name = g_strdup_printf("/sim/config-error/%s", config_cases[i].name);
    g_test_add_data_func(name, &config_cases[i], test_config_error);
  }
  int rc = g_test_run();
  remove_tree(tmp_dir);
  return rc;
}
