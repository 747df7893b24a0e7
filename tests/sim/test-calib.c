/* test-calib: calibration files (the documented example, round trip, every distortion
 * model, one test per kind of error) and the geometry helpers against values computed
 * by hand. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/calib.h"
#include "tests/common/test-seed.h"

static char *example_path;
static char *tmp_dir;

static char *
example_text(void)
{
  char *text = NULL;
  g_assert_true(g_file_get_contents(example_path, &text, NULL, NULL));
  return text;
}

static void
test_example(void)
{
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_load(example_path, &c, &error));
  g_assert_no_error(error);
  g_assert_cmpint(c.width, ==, 640);
  g_assert_cmpint(c.height, ==, 360);
  g_assert_cmpfloat_with_epsilon(calib_focal(&c), 700.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(calib_baseline(&c), 1.6, 1e-12);
  g_assert_cmpfloat_with_epsilon(calib_doffs(&c), 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(c.dist_left[0], -0.081, 1e-15);
  g_assert_cmpfloat_with_epsilon(c.K_right[5], 181.0, 1e-15);
  g_assert_cmpfloat_with_epsilon(c.pose_centre[1], -79.0, 1e-15);
}

static void
test_round_trip(void)
{
  static const double R[9] = { 0.6, 0, -0.8, 0.8, 0, 0.6, 0, -1, 0 };
  static const double C[3] = { 12.25, -80.5, 23.0 };
  static const double D[5] = { -0.1, 0.02, 0.001, -0.002, 0.003 };
  StereoCalib c, back;
  calib_init_ideal(&c, 1920, 1080, 1234.5678, 959.5, 539.5, 1.75, D, R, C);
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_validate(&c, &error));
  g_autofree char *path = g_build_filename(tmp_dir, "round.conf", NULL);
  g_assert_true(calib_save(path, &c, &error));
  g_assert_no_error(error);
  g_assert_true(calib_load(path, &back, &error));
  g_assert_no_error(error);
  /* Every number survives exactly (%.17g); -0 may come back as 0, equal as numbers. */
  g_assert_cmpint(back.width, ==, c.width);
  g_assert_cmpint(back.height, ==, c.height);
  const double *a = c.K_left, *b = back.K_left;
  gsize n = (sizeof(c) - G_STRUCT_OFFSET(StereoCalib, K_left)) / sizeof(double);
  g_assert_cmpuint(n, ==, 9 + 14 + 9 + 14 + 9 + 9 + 12 + 12 + 16 + 9 + 3);
  for (gsize i = 0; i < n; i++)
    g_assert_true(a[i] == b[i]);
}

#define CUT "\x01cut"

/* Replaces the first line starting with `prefix` by `line` (NULL: drops it; CUT: drops
 * it and everything after it). */
static char *
edit(const char *text, const char *prefix, const char *line)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *out = g_string_new(NULL);
  bool done = false;
  for (int i = 0; lines[i]; i++) {
    if (!done && g_str_has_prefix(lines[i], prefix)) {
      done = true;
      if (line && strcmp(line, CUT) == 0)
        break;
      if (line)
        g_string_append_printf(out, "%s\n", line);
      continue;
    }
    g_string_append_printf(out, "%s\n", lines[i]);
  }
  g_assert_true(done);
  return g_string_free(out, false);
}

/* calib-v1.conf is what calib_save wrote before the distortion keys took more than five
 * numbers: it must load and be written back byte for byte. */
static void
test_v1_bytes(void)
{
  g_autofree char *path = g_build_filename(STEREOD_SOURCE_DIR, "tests", "sim", "calib-v1.conf",
                                           NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_load(path, &c, &error));
  g_assert_no_error(error);
  g_assert_cmpint(calib_dist_model(c.dist_left), ==, 5);
  for (int i = 5; i < CALIB_DIST_COUNT; i++)
    g_assert_true(c.dist_left[i] == 0.0 && c.dist_right[i] == 0.0);
  g_autofree char *again = calib_to_data(&c);
  g_assert_cmpstr(again, ==, text);
}

/* The numbers of `key` in the text of a calibration: how many, and the first line. */
static int
count_numbers(const char *text, const char *group, const char *key)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_assert_true(g_key_file_load_from_data(kf, text, -1, G_KEY_FILE_NONE, NULL));
  g_autofree char *value = g_key_file_get_value(kf, group, key, NULL);
  g_assert_nonnull(value);
  g_auto(GStrv) tokens = g_strsplit_set(value, " ", -1);
  int n = 0;
  for (int i = 0; tokens[i]; i++)
    n += tokens[i][0] != '\0';
  return n;
}

/* The denominator check is over the image: the same lens passes when the image does not
 * reach its zero (r^2 = 2.22 for k4 = -0.45 against 2.05 at the corners). */
static void
test_denominator(void)
{
  g_autofree char *text = example_text();
  g_autofree char *ok = edit(text, "distortion=-0.081",
                             "distortion=-0.081 0.112 0.0004 -0.0002 0  -0.45 0 0");
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_load_data(ok, strlen(ok), "denominator", &c, &error));
  g_assert_no_error(error);
  /* Cropping the image to its upper half (r^2 up to 0.89) admits k4 = -1 (zero at 1). */
  c.dist_left[CALIB_DIST_K4] = -1.0;
  g_assert_false(calib_validate(&c, &error));
  g_test_message("%s", error->message);
  g_assert_nonnull(strstr(error->message, "r^2 up to 2.05"));
  g_clear_error(&error);
  c.height = 180;
  c.P1[6] = c.P2[6] = 179.5;    /* the same principal point, the lower half cut off */
  g_assert_true(calib_validate(&c, &error));
  g_assert_no_error(error);
}

/* Each of OpenCV's models: saved with its own count (the shortest that holds the
 * non-zero terms), loaded back exactly. */
static void
test_models(void)
{
  static const double R[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, C[3] = { 0, -80, 20 };
  static const double full[CALIB_DIST_COUNT] = {
    4.1, -2.2, 0.0011, -0.0007, 0.35, 4.0, -2.0, 0.3, 0.0021, -0.0013, 0.0008, 0.0004,
    0.012, -0.008,
  };
  static const int models[] = { 5, 8, 12, 14 };
  for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
    StereoCalib c, back;
    calib_init_ideal(&c, 640, 360, 700, 319.5, 179.5, 1.6, NULL, R, C);
    memcpy(c.dist_left, full, models[m] * sizeof(double));
    /* The right side with the model before (four numbers before five): written shorter. */
    int shorter = m ? models[m - 1] : 4;
    memcpy(c.dist_right, full, shorter * sizeof(double));
    g_autoptr(GError) error = NULL;
    g_assert_true(calib_validate(&c, &error));
    g_autofree char *text = calib_to_data(&c);
    g_assert_cmpint(count_numbers(text, "left", "distortion"), ==, models[m]);
    g_assert_cmpint(count_numbers(text, "right", "distortion"), ==, MAX(shorter, 5));
    g_assert_true(calib_load_data(text, strlen(text), "models", &back, &error));
    g_assert_no_error(error);
    g_assert_true(memcmp(back.dist_left, c.dist_left, sizeof(c.dist_left)) == 0);
    g_assert_true(memcmp(back.dist_right, c.dist_right, sizeof(c.dist_right)) == 0);
  }
  /* Four numbers are k1 k2 p1 p2 (OpenCV's shortest model): k3 and the rest 0. */
  g_autofree char *text = example_text();
  g_autofree char *four = edit(text, "distortion=-0.081",
                               "distortion=-0.081 0.112 0.0004 -0.0002");
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_load_data(four, strlen(four), "four", &c, &error));
  g_assert_cmpfloat(c.dist_left[3], ==, -0.0002);
  for (int i = 4; i < CALIB_DIST_COUNT; i++)
    g_assert_cmpfloat(c.dist_left[i], ==, 0.0);
}

typedef struct {
  const char *name;
  const char *prefix;      /* the line to change */
  const char *line;        /* its replacement, NULL to drop it */
  CalibError code;
  const char *expect;      /* "[group] key" in the message */
  const char *problem;     /* a word of the problem */
} ErrorCase;

static const ErrorCase error_cases[] = {
  /* Issue 12: a key or a group twice, hexadecimal numbers. */
  { "duplicate-key", "centre=", "centre=-20 -79 25\ncentre=0 0 0", CALIB_ERROR_MALFORMED,
    "[pose] centre", "set twice in this group" },
  { "duplicate-group", "[pose]", "[left]\n[pose]", CALIB_ERROR_MALFORMED, "[left]",
    "appears twice in this file" },
  { "hex", "K=702.5", "K=0x2be 0 321.2  0 701.8 178.4  0 0 1", CALIB_ERROR_MALFORMED,
    "[left] K", "'0x2be' is not a number" },
  { "hex-width", "width=", "width=0x280", CALIB_ERROR_MALFORMED, "[calibration] width",
    "'0x280' is not an integer" },
  { "missing-key", "distortion=-0.081", NULL, CALIB_ERROR_MISSING, "[left] distortion",
    "missing" },
  { "missing-group", "[pose]", CUT, CALIB_ERROR_MISSING, "[pose] rotation", "missing" },
  { "unknown-group", "[pose]", "[posture]", CALIB_ERROR_UNKNOWN, "[posture]", "unknown" },
  { "malformed", "K=702.5", "K=702.5 0 321.2  0 abc 178.4  0 0 1", CALIB_ERROR_MALFORMED,
    "[left] K", "'abc' is not a number" },
  { "count", "P1=", "P1=700 0 319.5 0  0 700 179.5 0  0 0 1", CALIB_ERROR_MALFORMED,
    "[rectification] P1", "expected 12 numbers, found 11" },
  { "non-finite", "centre=", "centre=-20 nan 25", CALIB_ERROR_MALFORMED, "[pose] centre",
    "finite" },
  { "infinite", "distortion=-0.077", "distortion=-0.077 0.104 inf 0.0001 -0.027",
    CALIB_ERROR_MALFORMED, "[right] distortion", "finite" },
  { "negative-focal", "K=699.1", "K=-699.1 0 317.9  0 698.7 181.0  0 0 1",
    CALIB_ERROR_INVALID, "[right] K", "positive" },
  { "not-intrinsics", "K=702.5", "K=702.5 0 321.2  0 701.8 178.4  0 0 2",
    CALIB_ERROR_INVALID, "[left] K", "form" },
  { "baseline-sign", "P2=", "P2=700 0 319.5 1120  0 700 179.5 0  0 0 1 0",
    CALIB_ERROR_INVALID, "[rectification] P2", "negative" },
  { "focal-mismatch", "P2=", "P2=701 0 319.5 -1120  0 701 179.5 0  0 0 1 0",
    CALIB_ERROR_INVALID, "[rectification] P2", "P1" },
  { "q-mismatch", "Q=", "Q=1 0 0 -319.5  0 1 0 -179.5  0 0 0 700  0 0 0.6 0",
    CALIB_ERROR_INVALID, "[rectification] Q", "P1 and P2" },
  { "not-rotation", "R2=", "R2=1 0 0  0 0.8 -0.6  0 0.6 0.81", CALIB_ERROR_INVALID,
    "[rectification] R2", "rotation" },
  { "reflection", "R1=", "R1=-1 0 0  0 0.8 -0.6  0 0.6 0.8", CALIB_ERROR_INVALID,
    "[rectification] R1", "reflection" },
  { "pose-rotation", "rotation=", "rotation=1 0 0 0 1 0 0 0 0", CALIB_ERROR_INVALID,
    "[pose] rotation", "rotation" },
  { "unknown-key", "centre=", "centre=-20 -79 25\nheight=3", CALIB_ERROR_UNKNOWN,
    "[pose] height", "unknown key" },
  { "version", "version=", "version=2", CALIB_ERROR_INVALID, "[calibration] version",
    "outside" },
  { "width", "width=", "width=640.5", CALIB_ERROR_MALFORMED, "[calibration] width",
    "integer" },
  { "height-range", "height=", "height=0", CALIB_ERROR_INVALID, "[calibration] height",
    "outside" },
  { "distortion-count", "distortion=-0.081", "distortion=-0.081 0.112 0.0004 -0.0002 0 0",
    CALIB_ERROR_MALFORMED, "[left] distortion", "4, 5, 8, 12 or 14" },
  { "distortion-15", "distortion=-0.077",
    "distortion=-0.077 0.104 0 0 0  0 0 0  0 0 0 0  0 0 0", CALIB_ERROR_MALFORMED,
    "[right] distortion", "found 15" },
  { "k4-range", "distortion=-0.081", "distortion=-0.081 0.112 0.0004 -0.0002 0  2000 0 0",
    CALIB_ERROR_INVALID, "[left] distortion", "k4 = 2000 is outside -1000..1000" },
  { "s3-range", "distortion=-0.081",
    "distortion=-0.081 0.112 0.0004 -0.0002 0  0 0 0  0 0 -1e4 0", CALIB_ERROR_INVALID,
    "[left] distortion", "s3" },
  { "tilt-range", "distortion=-0.077",
    "distortion=-0.077 0.104 0 0 0  0 0 0  0 0 0 0  0 0.6", CALIB_ERROR_INVALID,
    "[right] distortion", "tau_y = 0.6 is outside -0.5..0.5 (radians)" },
  /* 1 - 0.55 r^2 <= 0 from r^2 = 1.82; the example's R1 and R2 tilt the views down by 37
   * degrees, so their bottom corners reach r^2 = 2.05 (test_denominator: -0.45 passes). */
  { "denominator", "distortion=-0.081", "distortion=-0.081 0.112 0.0004 -0.0002 0  -0.55 0 0",
    CALIB_ERROR_INVALID, "[left] distortion", "denominator" },
  /* Positive at r^2 = 0 and 2.05 but not between: (1 - 2 s)(1 - s / 1.5) without and
   * with a factor (1 + s), the minimum found where the derivative vanishes. */
  { "denominator-k5", "distortion=-0.077",
    "distortion=-0.077 0.104 0 0 0  -2.6666667 1.3333333 0", CALIB_ERROR_INVALID,
    "[right] distortion", "denominator" },
  { "denominator-k6", "distortion=-0.077",
    "distortion=-0.077 0.104 0 0 0  -1.6666667 -1.3333333 1.3333333", CALIB_ERROR_INVALID,
    "[right] distortion", "denominator" },
  { "behind", "R1=", "R1=0 0 -1  0 1 0  1 0 0", CALIB_ERROR_INVALID, "[rectification] R1",
    "behind the raw left camera" },
};

static void
test_error(gconstpointer data)
{
  const ErrorCase *ec = data;
  g_autofree char *text = example_text();
  g_autofree char *bad = edit(text, ec->prefix, ec->line);
  g_autofree char *name = g_strdup_printf("%s.conf", ec->name);
  g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, bad, -1, NULL));
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_false(calib_load(path, &c, &error));
  g_assert_error(error, CALIB_ERROR, (gint)ec->code);
  g_test_message("%s", error->message);
  g_autofree char *where = g_strdup_printf("%s: %s", path, ec->expect);
  g_assert_true(g_str_has_prefix(error->message, where));
  g_assert_nonnull(strstr(error->message, ec->problem));
}

static void
test_unreadable(void)
{
  g_autofree char *path = g_build_filename(tmp_dir, "absent.conf", NULL);
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_false(calib_load(path, &c, &error));
  g_assert_error(error, CALIB_ERROR, CALIB_ERROR_IO);
  g_assert_true(g_str_has_prefix(error->message, path));
}

/* Files that are not files, too large a file, a NUL byte: refused at once, naming the
 * file; a BOM is skipped. SIGALRM ends the test if anything blocks on the FIFO. */
static void
test_file_checks(void)
{
  g_autofree char *fifo = g_build_filename(tmp_dir, "fifo.conf", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  alarm(30);
  StereoCalib c;
  g_autoptr(GError) error = NULL;
  g_assert_false(calib_load(fifo, &c, &error));
  g_assert_error(error, CALIB_ERROR, CALIB_ERROR_IO);
  g_autofree char *want = g_strdup_printf("%s: not a regular file (a FIFO)", fifo);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_error(&error);
  g_assert_false(calib_load("/dev/zero", &c, &error));
  g_assert_error(error, CALIB_ERROR, CALIB_ERROR_IO);
  g_assert_cmpstr(error->message, ==, "/dev/zero: not a regular file (a character device)");
  g_clear_error(&error);
  alarm(0);
  g_unlink(fifo);

  g_autofree char *text = example_text();
  g_autofree char *padding = g_strnfill(1 << 20, '#');
  g_autofree char *big_text = g_strdup_printf("%s%s\n", text, padding);
  g_autofree char *big = g_build_filename(tmp_dir, "big.conf", NULL);
  g_assert_true(g_file_set_contents(big, big_text, -1, NULL));
  g_assert_false(calib_load(big, &c, &error));
  g_assert_error(error, CALIB_ERROR, CALIB_ERROR_IO);
  g_autofree char *want_big = g_strdup_printf("%s: larger than 1048576 bytes", big);
  g_assert_cmpstr(error->message, ==, want_big);
  g_clear_error(&error);
  g_unlink(big);

  /* A NUL byte inside a number list: GKeyFile alone would read "-20" and stop. */
  g_autofree char *nul_text = g_strdup(text);
  char *centre = strstr(nul_text, "centre=");
  g_assert_nonnull(centre);
  char *space = strchr(centre, ' ');
  *space = '\0';
  g_assert_false(calib_load_data(nul_text, strlen(text), "nul.conf", &c, &error));
  g_assert_error(error, CALIB_ERROR, CALIB_ERROR_SYNTAX);
  g_assert_true(g_str_has_prefix(error->message, "nul.conf: [pose] centre: line "));
  g_assert_nonnull(strstr(error->message, "contains a NUL byte"));
  g_clear_error(&error);

  g_autofree char *bom_text = g_strdup_printf("\xef\xbb\xbf%s", text);
  g_assert_true(calib_load_data(bom_text, strlen(bom_text), "bom.conf", &c, &error));
  g_assert_no_error(error);
  g_assert_cmpint(c.width, ==, 640);
}

/* A camera 80 m behind the y = 0 line, 20 m up, looking along +y, level. */
static void
level_calib(StereoCalib *c, double cx_right)
{
  static const double R[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };
  static const double C[3] = { 0, -80, 20 };
  calib_init_ideal(c, 640, 360, 700, 319.5, 179.5, 1.6, NULL, R, C);
  /* A disparity offset as stereoRectify without CALIB_ZERO_DISPARITY leaves it. */
  c->P2[2] = cx_right;
  c->Q[15] = (c->P1[2] - cx_right) / (c->P2[3] / c->P2[0]);
}

static void
test_geometry(void)
{
  StereoCalib c;
  level_calib(&c, 319.5);
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_validate(&c, &error));
  /* Z = f B / d = 700 * 1.6 / 20 = 56 m. */
  g_assert_cmpfloat_with_epsilon(calib_depth_mm(&c, 20.0), 56000.0, 1e-9);
  g_assert_true(isinf(calib_depth_mm(&c, 0.0)));
  g_assert_true(isnan(calib_depth_mm(&c, NAN)));
  /* 100 px right of the principal point at 56 m: X = 100 * 56 / 700 = 8 m. */
  double p[3];
  g_assert_true(calib_reproject(&c, 419.5, 179.5, 20.0, p));
  g_assert_cmpfloat_with_epsilon(p[0], 8.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(p[1], 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(p[2], 56.0, 1e-12);
  /* 35 px below at d = 14: Z = 80, Y = 35 * 80 / 700 = 4 m below the axis. */
  g_assert_true(calib_reproject(&c, 319.5, 214.5, 14.0, p));
  g_assert_cmpfloat_with_epsilon(p[1], 4.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(p[2], 80.0, 1e-12);
  /* In the pitch: camera x -> pitch x, camera y (down) -> -z, camera z -> +y. */
  double q[3];
  g_assert_true(calib_pixel_to_pitch(&c, 419.5, 179.5, 20.0, q));
  g_assert_cmpfloat_with_epsilon(q[0], 8.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(q[1], -24.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(q[2], 20.0, 1e-12);
  g_assert_true(calib_pixel_to_pitch(&c, 319.5, 214.5, 14.0, q));
  g_assert_cmpfloat_with_epsilon(q[1], 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(q[2], 16.0, 1e-12);
  double cam[3] = { 0, 2, 10 };
  calib_camera_to_pitch(&c, cam, q);
  g_assert_cmpfloat_with_epsilon(q[1], -70.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(q[2], 18.0, 1e-12);
  /* No point for d <= doffs or a non-finite d. */
  g_assert_false(calib_reproject(&c, 10, 10, 0.0, p));
  g_assert_false(calib_reproject(&c, 10, 10, INFINITY, p));

  /* With doffs = 10 px the same depth needs d = 30. */
  level_calib(&c, 309.5);
  g_assert_true(calib_validate(&c, &error));
  g_assert_cmpfloat_with_epsilon(calib_doffs(&c), 10.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(calib_depth_mm(&c, 30.0), 56000.0, 1e-9);
  g_assert_true(calib_reproject(&c, 419.5, 179.5, 30.0, p));
  g_assert_cmpfloat_with_epsilon(p[0], 8.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(p[2], 56.0, 1e-12);
  g_assert_true(isinf(calib_depth_mm(&c, 10.0)));
}

/* calib_pitch_max_disparity against closed forms, over the pitch and 3 m around it
 * (x in [-55.5, 55.5], y in [-37, 37]) up to top = 2.5 m; f 700 px, B 1.6 m, 640 x 360:
 *  - 20 m up looking straight down over the pitch: the planes are fronto-parallel, the
 *    nearer z = top at depth 20 - top everywhere: d = f B / (20 - top);
 *  - 20 m up at y = -40 looking level along +y: the bottom corners' rays (y' = 179.5 / f
 *    down) meet z = top at depth (20 - top) / y' = 68.2 m, inside the area: d = f B y' /
 *    (20 - top) (z = 0 is met at 78 m, beyond y = 37: not seen);
 *  - the same at y = -120: those rays come down before the area (y = -51.8); the nearest
 *    points seen are on its edge y = -37, depth 83 m, at both heights: d = f B / 83;
 *  - the same at y = -40 but 2 m up, inside the layer: z = top is seen at the area's edge
 *    (depth 3 m, 0.5 m above the camera: within the view's 0.256 up), d = f B / 3;
 *  - looking straight up: nothing (0); looking level at y = +60 away from the pitch
 *    (along +y): nothing. */
static void
test_pitch_max_disparity(void)
{
  StereoCalib c;
  const double f = 700, B = 1.6, top = 2.5, X = 55.5, Y = 37;
  const double down[9] = { 1, 0, 0, 0, -1, 0, 0, 0, -1 };   /* camera y = -pitch y, z = -z */
  const double level[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };   /* camera y = -pitch z, z = +y */
  const double up[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };       /* camera z = pitch +z */
  const double over[3] = { 3, 10, 20 }, behind[3] = { 0, -40, 20 }, far[3] = { 0, -120, 20 };
  const double low[3] = { 0, -40, 2 }, away[3] = { 0, 60, 20 };
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, down, over);
  g_assert_cmpfloat_with_epsilon(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top),
                                 f * B / (20 - top), 1e-9);
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, level, behind);
  double yb = 179.5 / f;
  g_assert_cmpfloat_with_epsilon(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top),
                                 f * B * yb / (20 - top), 1e-9);
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, level, far);
  g_assert_cmpfloat_with_epsilon(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top),
                                 f * B / 83, 1e-9);
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, level, low);
  g_assert_cmpfloat_with_epsilon(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top),
                                 f * B / 3, 1e-9);
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, up, over);
  g_assert_cmpfloat(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top), ==, 0.0);
  calib_init_ideal(&c, 640, 360, f, 319.5, 179.5, B, NULL, level, away);
  g_assert_cmpfloat(calib_pitch_max_disparity(&c, -X, X, -Y, Y, top), ==, 0.0);
}

/* calib_ground_plane (the pitch-plane prior): on random poses looking down at the pitch
 * (tilts, rolls, headings, heights 3-40 m, a disparity offset), the point of every
 * sampled pixel at the plane's disparity lies on the pitch (z = 0) wherever it is in
 * front of the camera; against a closed form for a level camera (d = f B (y - cy) / (fy
 * h) below the horizon); refused for a camera on the ground or a baseline longer than
 * half its height. */
static void
test_ground_plane(void)
{
  g_autoptr(GRand) rng = test_seeded_rand();
  StereoCalib c;
  double plane[3];
  for (int k = 0; k < 200; k++) {
    double tilt = g_rand_double_range(rng, 0.05, 1.2), roll = g_rand_double_range(rng, -0.1, 0.1);
    double head = g_rand_double_range(rng, -G_PI, G_PI), h = g_rand_double_range(rng, 3, 40);
    /* camera axes in pitch coordinates: x right, y down, z forward (down by tilt) */
    double fx[3] = { cos(head), sin(head), 0 }, fw[3] = { -sin(head), cos(head), 0 };
    double z[3], y[3], x[3];
    for (int i = 0; i < 3; i++)
      z[i] = cos(tilt) * fw[i];
    z[2] = -sin(tilt);
    /* y = z x fx (down), then roll about z */
    double y0[3] = { z[1] * fx[2] - z[2] * fx[1], z[2] * fx[0] - z[0] * fx[2],
                     z[0] * fx[1] - z[1] * fx[0] };
    for (int i = 0; i < 3; i++) {
      x[i] = cos(roll) * fx[i] + sin(roll) * y0[i];
      y[i] = -sin(roll) * fx[i] + cos(roll) * y0[i];
    }
    double R[9] = { x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2] };
    double C[3] = { g_rand_double_range(rng, -60, 60), g_rand_double_range(rng, -60, 60), h };
    double f = g_rand_double_range(rng, 900, 5000), B = g_rand_double_range(rng, 1, MIN(4, h / 2));
    calib_init_ideal(&c, 1280, 720, f, 639.5, 359.5, B, NULL, R, C);
    if (k % 2) {   /* a disparity offset */
      c.P2[2] = 639.5 - 12.0;
      c.Q[15] = (c.P1[2] - c.P2[2]) / (c.P2[3] / c.P2[0]);
    }
    g_assert_true(calib_ground_plane(&c, plane));
    int on = 0;
    for (int j = 0; j < 50; j++) {
      double px = g_rand_double_range(rng, 0, 1279), py = g_rand_double_range(rng, 0, 719);
      double d = plane[0] * px + plane[1] * py + plane[2], q[3];
      if (d - calib_doffs(&c) <= 1e-6)
        continue;   /* above the horizon: behind the camera */
      g_assert_true(calib_pixel_to_pitch(&c, px, py, d, q));
      g_assert_cmpfloat(fabs(q[2]), <, 1e-6 * (1 + fabs(q[1] - C[1]) + fabs(q[0] - C[0])));
      on++;
    }
    g_assert_cmpint(on, >, 0);
  }
  /* level, 20 m up: d = f B (y - cy) / (f h) */
  level_calib(&c, 319.5);
  g_assert_true(calib_ground_plane(&c, plane));
  g_assert_cmpfloat_with_epsilon(plane[0], 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(plane[1], 1.6 / 20.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(plane[2], -179.5 * 1.6 / 20.0, 1e-9);
  /* on the ground, and a baseline of 12 m at 20 m (a = B R[6] / h of a rolled camera) */
  static const double R[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };
  calib_init_ideal(&c, 640, 360, 700, 319.5, 179.5, 1.6, NULL, R, (double[3]){ 0, -80, 0.2 });
  g_assert_false(calib_ground_plane(&c, plane));
  static const double rolled[9] = { 0, 0, 1, 0, 1, 0, -1, 0, 0 };   /* camera x = pitch -z */
  calib_init_ideal(&c, 640, 360, 700, 319.5, 179.5, 12, NULL, rolled, (double[3]){ 0, 0, 20 });
  g_assert_false(calib_ground_plane(&c, plane));
}

static void
test_rectify_map(void)
{
  StereoCalib c;
  level_calib(&c, 319.5);
  double u, v;
  /* No distortion, no rotation: identity. */
  calib_rectified_to_raw(&c, CALIB_LEFT, 12.25, 300.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 12.25, 1e-12);
  g_assert_cmpfloat_with_epsilon(v, 300.5, 1e-12);
  /* k1 = -0.1: xn = 100 / 700, r^2 = 1/49, u = 319.5 + 100 (1 - 0.1 / 49). */
  c.dist_left[0] = -0.1;
  calib_rectified_to_raw(&c, CALIB_LEFT, 419.5, 179.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5 + 100.0 * (1.0 - 0.1 / 49.0), 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 179.5, 1e-12);
  /* p1 = 0.01 at xn = yn = 0.1 (70 px right and down): xd = 0.1 + 2 p1 xn yn,
   * yd = 0.1 + p1 (r^2 + 2 yn^2), r^2 = 0.02. */
  c.dist_left[0] = 0.0;
  c.dist_left[2] = 0.01;
  calib_rectified_to_raw(&c, CALIB_LEFT, 389.5, 249.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5 + 700.0 * (0.1 + 0.0002), 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 179.5 + 700.0 * (0.1 + 0.0004), 1e-9);
  /* R2 tilts the right camera: the rectified principal ray (0, 0, 1) is R2^T (0, 0, 1)
   * = (0, 0.6, 0.8) in the raw frame, so it lands 0.75 f below cy. */
  static const double R[9] = { 1, 0, 0, 0, 0.8, -0.6, 0, 0.6, 0.8 };
  memcpy(c.R2, R, sizeof(R));
  c.K_right[5] = 200.0;
  calib_rectified_to_raw(&c, CALIB_RIGHT, 319.5, 179.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5, 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 200.0 + 0.75 * 700.0, 1e-9);

  /* The rational k4 divides: xn = 100 / 700, u = 319.5 + 100 / (1 + 0.1 / 49). */
  level_calib(&c, 319.5);
  c.dist_left[CALIB_DIST_K4] = 0.1;
  calib_rectified_to_raw(&c, CALIB_LEFT, 419.5, 179.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5 + 100.0 / (1.0 + 0.1 / 49.0), 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 179.5, 1e-12);
  /* Thin prism at xn = yn = 0.1 (r^2 = 0.02): xd = 0.1 + s1 r^2 + s2 r^4,
   * yd = 0.1 + s3 r^2 + s4 r^4. */
  level_calib(&c, 319.5);
  c.dist_left[CALIB_DIST_S1] = 0.01;
  c.dist_left[CALIB_DIST_S2] = 0.5;
  c.dist_left[CALIB_DIST_S3] = -0.02;
  c.dist_left[CALIB_DIST_S4] = 0.25;
  calib_rectified_to_raw(&c, CALIB_LEFT, 389.5, 249.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5 + 700.0 * (0.1 + 0.0002 + 0.0002), 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 179.5 + 700.0 * (0.1 - 0.0004 + 0.0001), 1e-9);
  /* Tilt about x alone: Rt = Rx, T = [c 0 0; 0 1 0; 0 -s c] (c, s of tau_x), so (xd, yd)
   * -> (c xd, yd) / (c - s yd); the principal point stays. */
  level_calib(&c, 319.5);
  double tau = 0.1, ct = cos(tau), st = sin(tau);
  c.dist_left[CALIB_DIST_TAU_X] = tau;
  calib_rectified_to_raw(&c, CALIB_LEFT, 319.5, 179.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5, 1e-12);
  g_assert_cmpfloat_with_epsilon(v, 179.5, 1e-12);
  calib_rectified_to_raw(&c, CALIB_LEFT, 389.5, 249.5, &u, &v);
  g_assert_cmpfloat_with_epsilon(u, 319.5 + 700.0 * ct * 0.1 / (ct - st * 0.1), 1e-9);
  g_assert_cmpfloat_with_epsilon(v, 179.5 + 700.0 * 0.1 / (ct - st * 0.1), 1e-9);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  example_path = g_build_filename(STEREOD_SOURCE_DIR, "config", "calib", "example.conf", NULL);
  tmp_dir = g_dir_make_tmp("test-calib-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/calib/example", test_example);
  g_test_add_func("/calib/round-trip", test_round_trip);
  g_test_add_func("/calib/v1-bytes", test_v1_bytes);
  g_test_add_func("/calib/models", test_models);
  g_test_add_func("/calib/denominator", test_denominator);
  g_test_add_func("/calib/error/unreadable", test_unreadable);
  g_test_add_func("/calib/error/file-checks", test_file_checks);
  for (gsize i = 0; i < G_N_ELEMENTS(error_cases); i++) {
    g_autofree char *name = g_strdup_printf("/calib/error/%s", error_cases[i].name);
    g_test_add_data_func(name, &error_cases[i], test_error);
  }
  g_test_add_func("/calib/geometry", test_geometry);
  g_test_add_func("/calib/rectify-map", test_rectify_map);
  g_test_add_func("/calib/ground-plane", test_ground_plane);
  g_test_add_func("/calib/pitch-max-disparity", test_pitch_max_disparity);
  int rc = g_test_run();
  g_autoptr(GDir) dir = g_dir_open(tmp_dir, 0, NULL);
  for (const char *n; dir && (n = g_dir_read_name(dir));) {
    g_autofree char *p = g_build_filename(tmp_dir, n, NULL);
    g_unlink(p);
  }
  g_rmdir(tmp_dir);
  return rc;
}
