/* test-reference.c: checks the CPU reference against the analytic facts of
 * ALGORITHM.md §4.1 and docs/algorithm.md, a synthetic constant-disparity pair, the
 * engine's rectification map against the reference's, and the Middlebury scoring code
 * on hand-made cases. */
#include <math.h>
#include <string.h>

#include "middlebury.h"
#include "reference.h"
#include "tests/common/test-seed.h"

/* A w x h image of f(x). */
static RefImage *
image_of_x(int w, int h, double (*f)(double x, double a), double a)
{
  RefImage *img = ref_image_new(w, h, 1);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      img->data[(size_t)y * w + x] = f(x, a);
  return img;
}

static double
grating(double x, double w)
{
  return 0.5 + 0.3 * cos(w * x + (w == G_PI / 2 ? 0.7 : (w == 1.2 ? 0.2 : 0.0)));
}

static void
test_taps(void)
{
  StereoParams p;
  stereo_params_init(&p, 640, 480);
  double hre[11], him[11], v[11];
  stereo_params_filter_taps(&p, hre, him, v);
  double sre = 0, sim = 0, sv = 0;
  for (int k = 0; k < 11; k++) {
    sre += hre[k];
    sim += him[k];
    sv += v[k];
  }
  g_assert_cmpfloat_with_epsilon(sre, 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(sim, 0.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(sv, 1.0, 1e-12);
  static const double t_re[6] = { 0.35537, -0.00378, -0.24502, -0.00172, 0.07318, -0.00035 };
  static const double t_im[6] = { 0, -0.32573, 0, 0.14781, 0, -0.03044 };
  static const double t_v[6] = { 0.17977, 0.16287, 0.12110, 0.07391, 0.03702, 0.01522 };
  for (int k = 0; k <= 5; k++) {
    g_assert_cmpfloat_with_epsilon(hre[5 + k], t_re[k], 6e-6);
    g_assert_cmpfloat_with_epsilon(hre[5 - k], t_re[k], 6e-6);
    g_assert_cmpfloat_with_epsilon(him[5 + k], t_im[k], 6e-6);
    g_assert_cmpfloat_with_epsilon(him[5 - k], -t_im[k], 6e-6);
    g_assert_cmpfloat_with_epsilon(v[5 + k], t_v[k], 6e-6);
    g_assert_cmpfloat_with_epsilon(v[5 - k], t_v[k], 6e-6);
  }
}

static void
test_filter_grating(void)
{
  StereoParams p;
  stereo_params_init(&p, 64, 32);
  g_autoptr(RefImage) img = image_of_x(64, 32, grating, G_PI / 2);
  g_autoptr(RefImage) q = ref_quadrature(&p, img);
  int n = 0;
  for (int y = 0; y < 32; y++)
    for (int x = p.radius; x < 64 - p.radius - 1; x++) {
      const double *a = ref_image_at(q, x, y), *b = ref_image_at(q, x + 1, y);
      g_assert_cmpfloat_with_epsilon(hypot(a[0], a[1]), 0.300, 0.001);
      /* arg(q(x+1) conj(q(x))) */
      double step = atan2(b[1] * a[0] - b[0] * a[1], b[0] * a[0] + b[1] * a[1]);
      g_assert_cmpfloat_with_epsilon(step, p.omega0, 0.02);
      n++;
    }
  g_assert_cmpint(n, >, 1000);
}

/* Runs the local-frequency estimator at every interior pixel of a grating of frequency w;
 * returns how many pixels pass the stability test and checks omega when `expect` > 0. */
static int
local_frequency_run(const StereoParams *p, double w, double expect)
{
  g_autoptr(RefImage) img = image_of_x(96, 32, grating, w);
  g_autoptr(RefImage) q = ref_quadrature(p, img);
  double lim = (p->tau / p->sigma) * (p->tau / p->sigma);
  int pass = 0, n = 0;
  for (int y = p->radius; y < 32 - p->radius; y++)
    for (int x = p->radius + 1; x < 96 - p->radius - 1; x++) {
      double omega, z2;
      g_assert_true(ref_local_frequency(p, ref_image_at(q, x - 1, y), ref_image_at(q, x, y),
                                        ref_image_at(q, x + 1, y), &omega, &z2));
      if (expect > 0)
        g_assert_cmpfloat_with_epsilon(omega, expect, 0.001);
      pass += z2 <= lim;
      n++;
    }
  g_assert_cmpint(n, >, 1000);
  return pass;
}

static void
test_local_frequency(void)
{
  StereoParams p;
  stereo_params_init(&p, 96, 32);
  /* cos(1.2 x + 0.2): omega = 1.200 and every pixel stable. */
  g_assert_cmpint(local_frequency_run(&p, 1.2, 1.2), >, 1000);
  /* cos(0.5 x): the stability test of ALGORITHM.md §4.1 (stated there for tau = 1.0)
   * rejects every pixel. */
  p.tau = 1.0;
  g_assert_cmpint(local_frequency_run(&p, 0.5, 0.0), ==, 0);
}

/* A smooth random texture: a sum of random sinusoids with 1/f amplitudes, evaluated
 * exactly at any x, so the shifted view needs no interpolation. */
typedef struct {
  double fx[48], fy[48], ph[48], amp[48];
} Texture;

static double
texture_at(const Texture *t, double x, double y)
{
  double s = 0.5;
  for (int i = 0; i < 48; i++)
    s += t->amp[i] * cos(t->fx[i] * x + t->fy[i] * y + t->ph[i]);
  return s;
}

static void
test_constant_disparity(void)
{
  const int W = 160, H = 120;
  const double D = 13.37;
  GRand *rng = g_rand_new_with_seed(12345);
  Texture tex;
  double norm = 0;
  for (int i = 0; i < 48; i++) {
    double f = g_rand_double_range(rng, 0.08, 1.4), a = g_rand_double_range(rng, 0, 2 * G_PI);
    tex.fx[i] = f * cos(a);
    tex.fy[i] = f * sin(a);
    tex.ph[i] = g_rand_double_range(rng, 0, 2 * G_PI);
    tex.amp[i] = 1.0 / f;
    norm += tex.amp[i];
  }
  for (int i = 0; i < 48; i++)
    tex.amp[i] *= 0.9 / norm;   /* |sum| <= 0.45: stays inside 0..1 */
  g_rand_free(rng);

  g_autofree uint8_t *l = g_new(uint8_t, W * H);
  g_autofree uint8_t *r = g_new(uint8_t, W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      /* L(x, y) = R(x - D, y)  <=>  R(x, y) = T(x + D, y) */
      l[y * W + x] = (uint8_t)lround(255 * texture_at(&tex, x, y));
      r[y * W + x] = (uint8_t)lround(255 * texture_at(&tex, x + D, y));
    }
  StereoParams p;
  stereo_params_init(&p, W, H);
  p.max_disparity = 32;
  g_autofree float *d = g_new(float, W * H);
  g_autofree uint8_t *c = g_new(uint8_t, W * H);
  g_autoptr(GError) error = NULL;
  g_assert_true(ref_stereo_run(&p, l, W, r, W, d, c, &error));
  g_assert_no_error(error);
  double sum = 0;
  int n = 0, n_in = 0;
  for (int y = 0; y < H; y++)
    for (int x = (int)ceil(D); x < W; x++) {   /* pixels with a match in R */
      n_in++;
      if (c[y * W + x] < 128)
        continue;
      sum += fabs(d[y * W + x] - D);
      n++;
    }
  g_test_message("constant disparity: mean |error| %.4f px over %d of %d pixels", sum / n, n,
                 n_in);
  g_assert_cmpfloat(n, >, 0.9 * n_in);
  g_assert_cmpfloat(sum / n, <, 0.05);
}

static void
test_post_median_densify(void)
{
  /* One row of 9 (h = 3 copies): the median keeps the lower median, densify takes the
   * smaller neighbour. */
  enum { W = 9, H = 3 };
  double d[W * H];
  bool valid[W * H], filled[W * H];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      d[y * W + x] = x < 4 ? 10.0 : 20.0;
      valid[y * W + x] = x != 4;
    }
  ref_densify(W, H, NULL, d, valid, filled);
  for (int y = 0; y < H; y++) {
    g_assert_true(filled[y * W + 4] && valid[y * W + 4]);
    g_assert_false(filled[y * W + 3]);
    /* min(10, 20) = 10; the 9x3 median then sees 15 x 10 and 12 x 20: 10. */
    g_assert_cmpfloat(d[y * W + 4], ==, 10.0);
  }
  /* Median: a single valid pixel in an invalid area stays invalid; a 2x3 block too. */
  double m[25] = { 0 };
  bool mv[25] = { 0 };
  mv[12] = true;
  m[12] = 5;
  ref_median3x3(5, 5, m, mv);
  for (int i = 0; i < 25; i++)
    g_assert_false(mv[i]);
  for (int i = 0; i < 25; i++) {
    m[i] = i;
    mv[i] = true;
  }
  ref_median3x3(5, 5, m, mv);
  g_assert_true(mv[12]);
  g_assert_cmpfloat(m[12], ==, 12);   /* 6 7 8 11 12 13 16 17 18 -> 12 */
  g_assert_false(mv[0]);              /* 4 valid in the corner: not enough */
  g_assert_true(mv[1]);               /* 6 on the edge */
  g_assert_cmpfloat(m[1], ==, 2);     /* 0 1 2 5 6 7: index (6-1)/2 = 2 */
}

static void
test_scoring(void)
{
  /* 6 x 2, scale 2 (gt = 2 d). */
  const uint8_t gt[12] = { 2, 2, 2, 2, 6, 2,
                           0, 8, 2, 2, 2, 2 };
  const uint8_t gr[12] = { 2, 2, 2, 2, 2, 2,
                           2, 2, 2, 2, 3, 2 };
  /* noc, row 0: x = 0 matches x = -1 (outside), x = 4 (d 3) meets gt_right 1 at x = 1
   * (off by 2): both occluded; x = 1, 2, 3, 5 scored. Row 1: x = 0 unknown, x = 1 (d 4)
   * matches x = -3; x = 5 meets gt_right 1.5 (off by 0.5): scored; x = 2..5 scored. */
  const float est[12] = { 1.0f, 2.5f, NAN, 9.0f, 4.5f, 1.9f,
                          1.0f, 4.0f, 0.0f, 1.0f, 2.0f, -1.5f };
  /* |errors| at noc: 1.5, missing, 8, 0.9 | 1.0, 0, 1.0, 2.5 */
  MiddleburyScore s = middlebury_score_raw(6, 2, 2.0, gt, gr, est);
  g_assert_cmpint(s.n_noc, ==, 8);
  g_assert_cmpfloat_with_epsilon(s.bad1, 100.0 * 4 / 8, 1e-9);   /* 1.5, NaN, 8, 2.5 */
  g_assert_cmpfloat_with_epsilon(s.bad2, 100.0 * 3 / 8, 1e-9);   /* NaN, 8, 2.5 */
  g_assert_cmpfloat_with_epsilon(s.density, 100.0 * 7 / 8, 1e-9);
  g_assert_cmpfloat_with_epsilon(s.mae, (1.5 + 8 + 0.9 + 1 + 0 + 1 + 2.5) / 7, 1e-6);
  /* Without gt_right every gt > 0 pixel is scored: 11, of which 10 estimated; bad-2:
   * NaN, 8 and 2.5 (the new ones, row 0 x = 0 and 4 and row 1 x = 1, are off by 0, 1.5
   * and 0). */
  s = middlebury_score_raw(6, 2, 2.0, gt, NULL, est);
  g_assert_cmpint(s.n_noc, ==, 11);
  g_assert_cmpfloat_with_epsilon(s.bad1, 100.0 * 5 / 11, 1e-9);
  g_assert_cmpfloat_with_epsilon(s.bad2, 100.0 * 3 / 11, 1e-9);
  g_assert_cmpfloat_with_epsilon(s.density, 100.0 * 10 / 11, 1e-9);
}

static void
test_scene_load(void)
{
  const char *dir = g_getenv("STEREOD_MIDDLEBURY_DIR");
  g_autofree char *path = dir ? g_build_filename(dir, "tsukuba", NULL) : NULL;
  if (!path || !g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_test_skip("no Middlebury data (STEREOD_MIDDLEBURY_DIR)");
    return;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(MiddleburyScene) sc = middlebury_scene_load(path, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpint(sc->width, ==, 384);
  g_assert_cmpint(sc->height, ==, 288);
  g_assert_cmpfloat(sc->scale, ==, 16.0);
  g_assert_null(sc->gt_right);
  /* Scoring the ground truth itself: everything right, full density. */
  g_autofree float *d = g_new(float, 384 * 288);
  for (int i = 0; i < 384 * 288; i++)
    d[i] = sc->gt[i] / 16.0f;
  MiddleburyScore s = middlebury_score(sc, d);
  g_assert_cmpfloat(s.bad1, ==, 0.0);
  g_assert_cmpfloat(s.density, ==, 100.0);
  g_assert_cmpint(s.n_noc, >, 384 * 288 / 2);
}

/* The automatic search level (stereo-params.h): level 2 at 1920 x 1080 (480 x 270), level
 * 1 for the demo's 960 x 540, Middlebury's quarter size and anything smaller, level 3 at
 * 3840 x 2160; a search level given explicitly is kept; the phase stage starts there. */
static void
test_search_level(void)
{
  static const struct { int w, h, level; } cases[] = {
    { 1920, 1080, 2 }, { 3840, 2160, 3 }, { 1280, 720, 1 }, { 960, 540, 1 },
    { 450, 375, 1 }, { 640, 480, 1 }, { 320, 240, 1 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    StereoParams p;
    stereo_params_init(&p, cases[i].w, cases[i].h);
    g_assert_cmpint(p.search_level, ==, STEREO_SEARCH_LEVEL_AUTO);
    g_assert_true(stereo_params_validate(&p, NULL));
    g_assert_cmpint(stereo_params_get_search_level(&p), ==, cases[i].level);
    g_assert_true(stereo_params_use_search(&p));
    g_assert_cmpint(stereo_params_start_level(&p), ==, cases[i].level);
    int t_min, t_max;
    stereo_params_search_range(&p, &t_min, &t_max);
    g_assert_cmpint(t_max, ==, (int)ceil(128.0 / (1 << cases[i].level)));
    p.search_level = 1;
    g_assert_cmpint(stereo_params_get_search_level(&p), ==, 1);
  }
  StereoParams p;
  stereo_params_init(&p, 1920, 1080);
  p.levels = 2;   /* the search cannot lie below the coarsest phase level */
  g_assert_cmpint(stereo_params_get_search_level(&p), ==, 1);
  p.search_level = -3;
  g_assert_false(stereo_params_validate(&p, NULL));
}

/* The automatic rounds (stereo-params.h): one round a level from 2^20 pixels (1920 x 1080,
 * 3840 x 2160), two below (1280 x 720, the demo's 960 x 540, Middlebury); an explicit
 * `iterations` is kept above level 0 and at an automatic level 0 below 2^20 pixels, an
 * explicit `iterations_level0` at level 0; out of range values are refused. */
static void
test_level_iterations(void)
{
  static const struct { int w, h, rounds; } cases[] = {
    { 1920, 1080, 1 }, { 3840, 2160, 1 }, { 1024, 1024, 1 }, { 1280, 720, 2 },
    { 960, 540, 2 }, { 450, 375, 2 }, { 1023, 1024, 2 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    StereoParams p;
    stereo_params_init(&p, cases[i].w, cases[i].h);
    g_assert_cmpint(p.iterations, ==, STEREO_ITERATIONS_AUTO);
    g_assert_cmpint(p.iterations_level0, ==, STEREO_ITERATIONS_AUTO);
    g_assert_true(stereo_params_validate(&p, NULL));
    for (int s = 0; s < 5; s++)
      g_assert_cmpint(stereo_params_level_iterations(&p, s), ==, cases[i].rounds);
    p.iterations = 3;
    g_assert_true(stereo_params_validate(&p, NULL));
    g_assert_cmpint(stereo_params_level_iterations(&p, 1), ==, 3);
    g_assert_cmpint(stereo_params_level_iterations(&p, 0), ==, cases[i].rounds == 1 ? 1 : 3);
    p.iterations_level0 = 4;
    g_assert_true(stereo_params_validate(&p, NULL));
    g_assert_cmpint(stereo_params_level_iterations(&p, 0), ==, 4);
    g_assert_cmpint(stereo_params_level_iterations(&p, 1), ==, 3);
    p.iterations = STEREO_ITERATIONS_AUTO;
    g_assert_cmpint(stereo_params_level_iterations(&p, 2), ==, cases[i].rounds);
    const int bad[] = { 0, -1, 9, -3 };
    for (size_t k = 0; k < G_N_ELEMENTS(bad); k++) {
      p.iterations_level0 = bad[k];
      g_assert_false(stereo_params_validate(&p, NULL));
      p.iterations_level0 = STEREO_ITERATIONS_AUTO;
      p.iterations = bad[k];
      g_assert_false(stereo_params_validate(&p, NULL));
      p.iterations = STEREO_ITERATIONS_AUTO;
    }
  }
}

/* A random rotation of at most `angle` radians about a random axis (Rodrigues). */
static void
random_rotation(GRand *rng, double angle, double R[9])
{
  double a[3], n = 0;
  for (int i = 0; i < 3; i++) {
    a[i] = g_rand_double_range(rng, -1, 1);
    n += a[i] * a[i];
  }
  n = sqrt(n);
  double t = g_rand_double_range(rng, -angle, angle), c = cos(t), s = sin(t);
  double x = a[0] / n, y = a[1] / n, z = a[2] / n;
  double r[9] = {
    c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s,
    y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s,
    z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c),
  };
  memcpy(R, r, sizeof(r));
}

/* calib_rectified_to_raw (the engine's map) against ref_rectified_to_raw (written
 * independently from OpenCV's formulas) for each of OpenCV's models, on random
 * calibrations with coefficients as fitted lenses have them: rational models with large
 * k1 and k4 that nearly cancel, skew-free K, rotations up to 0.1 rad, the rectified
 * principal point and focal length off the raw ones. Both are double: 1e-9 px. */
static void
test_rectify_map(void)
{
  g_autoptr(GRand) rng = test_seeded_rand();
  static const int models[] = { 4, 5, 8, 12, 14 };
  for (gsize m = 0; m < G_N_ELEMENTS(models); m++) {
    double max_err = 0.0, max_rel = 0.0, max_shift = 0.0;
    for (int trial = 0; trial < 50; trial++) {
      const double rot[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, centre[3] = { 0 };
      const int w = 640, h = 480;
      double f = g_rand_double_range(rng, 300, 1500);
      StereoCalib c;
      calib_init_ideal(&c, w, h, f * g_rand_double_range(rng, 0.8, 1.1),
                       0.5 * w + g_rand_double_range(rng, -20, 20),
                       0.5 * h + g_rand_double_range(rng, -20, 20), 0.3, NULL, rot, centre);
      for (int side = 0; side < 2; side++) {
        double *K = side ? c.K_right : c.K_left, *D = side ? c.dist_right : c.dist_left;
        K[0] = f * g_rand_double_range(rng, 0.95, 1.05);
        K[4] = K[0] * g_rand_double_range(rng, 0.98, 1.02);
        K[2] = 0.5 * w + g_rand_double_range(rng, -30, 30);
        K[5] = 0.5 * h + g_rand_double_range(rng, -30, 30);
        do {
          memset(D, 0, CALIB_DIST_COUNT * sizeof(double));
          bool rational = models[m] >= 8 && g_rand_boolean(rng);
          D[0] = rational ? g_rand_double_range(rng, 0, 20)
                          : g_rand_double_range(rng, -0.4, 0.2);
          D[1] = g_rand_double_range(rng, -0.3, 0.3) * (rational ? 10 : 1);
          D[2] = g_rand_double_range(rng, -0.003, 0.003);
          D[3] = g_rand_double_range(rng, -0.003, 0.003);
          if (models[m] >= 5)
            D[4] = g_rand_double_range(rng, -0.1, 0.1) * (rational ? 10 : 1);
          if (models[m] >= 8) {
            /* A fitted rational lens divides nearly as much as it multiplies. */
            D[5] = (rational ? D[0] : 0) + g_rand_double_range(rng, -0.3, 0.3);
            D[6] = (rational ? D[1] : 0) + g_rand_double_range(rng, -0.3, 0.3);
            D[7] = (rational ? D[4] : 0) + g_rand_double_range(rng, -0.1, 0.1);
          }
          for (int i = 8; i < models[m] && i < 12; i++)
            D[i] = g_rand_double_range(rng, -0.005, 0.005);
          for (int i = 12; i < models[m]; i++)
            D[i] = g_rand_double_range(rng, -0.05, 0.05);
          random_rotation(rng, 0.1, side ? c.R2 : c.R1);
        } while (!calib_validate(&c, NULL));
      }
      for (int k = 0; k < 100; k++) {
        double x = k < 4 ? (k & 1) * (w - 1) : g_rand_double_range(rng, 0, w - 1);
        double y = k < 4 ? (k >> 1) * (h - 1) : g_rand_double_range(rng, 0, h - 1);
        for (int side = 0; side < 2; side++) {
          double u, v, ru, rv;
          calib_rectified_to_raw(&c, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
          ref_rectified_to_raw(&c, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &ru, &rv);
          max_err = MAX(max_err, MAX(fabs(u - ru), fabs(v - rv)));
          /* relative to the position's size: the two evaluations' rounding grows with it
           * (a tilted sensor's model sends a corner 18000 px out: 1.1e-9 px there failed
           * an absolute 1e-9 bound once; relative errors reach about 1.2e-12) */
          max_rel = MAX(max_rel, MAX(fabs(u - ru) / MAX(1.0, fabs(ru)),
                                     fabs(v - rv) / MAX(1.0, fabs(rv))));
          max_shift = MAX(max_shift, MAX(fabs(u - x), fabs(v - y)));
        }
      }
    }
    g_test_message("rectify map, %d coefficients: max |calib - ref| %.3g px, %.3g of the "
                   "position (the map moves pixels by up to %.0f px)", models[m], max_err,
                   max_rel, max_shift);
    g_assert_cmpfloat(max_rel, <, 1e-10);
  }
}

/* The automatic search window (stereo-params.h): 7 x 7 where the search runs on level 2
 * or coarser (1920 x 1080, 3840 x 2160), 9 x 9 on level 1 (960 x 540, Middlebury) and for
 * the level-0 refinement; an explicit window is kept for both; out of range refused. */
static void
test_search_radius(void)
{
  static const struct { int w, h, level, radius; } cases[] = {
    { 1920, 1080, 2, 3 }, { 3840, 2160, 3, 3 }, { 960, 540, 1, 4 }, { 450, 375, 1, 4 },
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    StereoParams p;
    stereo_params_init(&p, cases[i].w, cases[i].h);
    g_assert_cmpint(p.search_radius, ==, STEREO_SEARCH_RADIUS_AUTO);
    g_assert_true(stereo_params_validate(&p, NULL));
    g_assert_cmpint(stereo_params_get_search_level(&p), ==, cases[i].level);
    g_assert_cmpint(stereo_params_get_search_radius(&p), ==, cases[i].radius);
    g_assert_cmpint(stereo_params_get_refine_radius(&p), ==, 4);
    p.search_level = 1;   /* an explicit level 1: the level-1 window */
    g_assert_cmpint(stereo_params_get_search_radius(&p), ==, 4);
    p.search_radius = 5;
    g_assert_true(stereo_params_validate(&p, NULL));
    g_assert_cmpint(stereo_params_get_search_radius(&p), ==, 5);
    g_assert_cmpint(stereo_params_get_refine_radius(&p), ==, 5);
    const int bad[] = { 0, -1, 8, -3 };
    for (size_t k = 0; k < G_N_ELEMENTS(bad); k++) {
      p.search_radius = bad[k];
      g_assert_false(stereo_params_validate(&p, NULL));
    }
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/reference/taps", test_taps);
  g_test_add_func("/reference/search-level", test_search_level);
  g_test_add_func("/reference/level-iterations", test_level_iterations);
  g_test_add_func("/reference/search-radius", test_search_radius);
  g_test_add_func("/reference/filter-grating", test_filter_grating);
  g_test_add_func("/reference/local-frequency", test_local_frequency);
  g_test_add_func("/reference/constant-disparity", test_constant_disparity);
  g_test_add_func("/reference/post-median-densify", test_post_median_densify);
  g_test_add_func("/reference/rectify-map", test_rectify_map);
  g_test_add_func("/middlebury/scoring", test_scoring);
  g_test_add_func("/middlebury/scene-load", test_scene_load);
  return g_test_run();
}
