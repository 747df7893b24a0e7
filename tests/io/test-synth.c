/* test-synth.c: the synthetic pairs' ground truth is right (tools/synth.h). */
#include "tools/synth.h"

#include <math.h>
#include <string.h>

/* Statistics of |L(x, y) - R(x - dL(x, y) + shift, y)|, R sampled by linear interpolation,
 * over the pixels whose match is visible and whose two R samples show the same surface. */
typedef struct {
  double mean, p99, max;
  int count;
} WarpStats;

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static WarpStats
warp_error(const SynthPair *pair, double shift)
{
  const int W = pair->width, H = pair->height;
  g_autofree double *err = g_new(double, (size_t)W * H);
  WarpStats st = { 0 };
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      size_t i = (size_t)y * W + x;
      if (pair->mask[i] != SYNTH_MASK_VISIBLE)
        continue;
      double d = pair->disparity[i];
      double xr = x - d + shift;
      int i0 = (int)floor(xr);
      if (i0 < 0 || i0 + 1 > W - 1)
        continue;
      const float *dr = pair->disparity_right + (size_t)y * W;
      if (fabs(dr[i0] + i0 - x) > 2.0 || fabs(dr[i0 + 1] + i0 + 1 - x) > 2.0)
        continue;  /* a neighbour shows another surface (box edge) */
      double f = xr - i0;
      const uint8_t *r = pair->right + (size_t)y * W;
      double e = fabs(pair->left[i] - ((1.0 - f) * r[i0] + f * r[i0 + 1]));
      err[st.count++] = e;
      st.mean += e;
    }
  g_assert_cmpint(st.count, >, 0);
  st.mean /= st.count;
  qsort(err, st.count, sizeof(double), cmp_double);
  st.p99 = err[(int)(0.99 * (st.count - 1))];
  st.max = err[st.count - 1];
  return st;
}

static SynthPair *
make(const SynthParams *p)
{
  g_autoptr(GError) error = NULL;
  SynthPair *pair = synth_pair_new(p, &error);
  g_assert_no_error(error);
  g_assert_nonnull(pair);
  return pair;
}

static void
check_warp(const SynthParams *p, const char *what)
{
  g_autoptr(SynthPair) pair = make(p);
  WarpStats st = warp_error(pair, 0.0);
  WarpStats off = warp_error(pair, 1.0);
  g_test_message("%s: |L - R(x - dL)| mean %.3f, p99 %.2f, max %.2f over %d px; "
                 "1 px off: mean %.2f", what, st.mean, st.p99, st.max, st.count, off.mean);
  /* Rounding both views to 8 bits costs <= 1 grey level; linear interpolation of the
   * band-limited texture a little more at its finest components. */
  g_assert_cmpfloat(st.mean, <, 0.8);
  g_assert_cmpfloat(st.p99, <, 3.0);
  /* And the check can tell a wrong disparity. */
  g_assert_cmpfloat(off.mean, >, 5.0 * st.mean);
  g_assert_cmpint(st.count, >, pair->width * pair->height / 2);
}

static void
test_constant(void)
{
  SynthParams p;
  synth_params_init(&p, SYNTH_SCENE_CONSTANT, 160, 120);
  p.seed = g_test_rand_int();
  /* Integer disparity: the right view samples the texture at exactly the same points. */
  p.d0 = 9.0;
  g_autoptr(SynthPair) pair = make(&p);
  for (int y = 0; y < p.height; y++)
    for (int x = 9; x < p.width; x++) {
      g_assert_cmpuint(pair->left[y * p.width + x], ==, pair->right[y * p.width + x - 9]);
      g_assert_cmpuint(pair->mask[y * p.width + x], ==, SYNTH_MASK_VISIBLE);
    }
  for (int x = 0; x < 9; x++) {
    g_assert_cmpuint(pair->mask[x], ==, SYNTH_MASK_OUTSIDE);
    g_assert_true(isnan(pair->disparity_nocc[x]));
    g_assert_cmpfloat(pair->disparity[x], ==, 9.0f);
  }
  /* Fractional disparity. */
  p.d0 = g_test_rand_double_range(3.0, 20.0);
  check_warp(&p, "constant");
}

static void
test_slanted(void)
{
  SynthParams p;
  synth_params_init(&p, SYNTH_SCENE_SLANTED, 200, 150);
  p.seed = g_test_rand_int();
  check_warp(&p, "slanted");
  p.d0 = 30.0;
  p.dx = -0.1;
  p.dy = 0.05;
  check_warp(&p, "slanted (receding)");
  /* The ground truth is the plane and the right view's is consistent with it. */
  g_autoptr(SynthPair) pair = make(&p);
  for (int y = 0; y < p.height; y += 7)
    for (int x = 0; x < p.width; x += 5) {
      double d = p.d0 + p.dx * x + p.dy * y;
      g_assert_cmpfloat(fabs(pair->disparity[y * p.width + x] - d), <, 1e-4);
      /* Right pixel x' sees the plane point x' + dR, whose left disparity is dR. */
      double dr = pair->disparity_right[y * p.width + x];
      g_assert_cmpfloat(fabs(p.d0 + p.dx * (x + dr) + p.dy * y - dr), <, 1e-4);
    }
}

static void
test_box(void)
{
  SynthParams p;
  synth_params_init(&p, SYNTH_SCENE_BOX, 180, 120);
  p.seed = g_test_rand_int();
  p.d0 = 5.0;
  p.d1 = 17.0;
  g_autoptr(SynthPair) pair = make(&p);
  const int W = p.width, band = (int)(p.d1 - p.d0);
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < W; x++) {
      bool box = y >= p.box_y && y < p.box_y + p.box_h && x >= p.box_x &&
                 x < p.box_x + p.box_w;
      /* The background just left of the box is hidden behind it in the right view. */
      bool occluded = !box && y >= p.box_y && y < p.box_y + p.box_h &&
                      x >= p.box_x - band && x < p.box_x;
      int want = x - pair->disparity[y * W + x] < 0 ? SYNTH_MASK_OUTSIDE
                 : occluded                         ? SYNTH_MASK_OCCLUDED
                                                    : SYNTH_MASK_VISIBLE;
      g_assert_cmpfloat(pair->disparity[y * W + x], ==, box ? p.d1 : p.d0);
      g_assert_cmpint(pair->mask[y * W + x], ==, want);
      if (want == SYNTH_MASK_VISIBLE) {
        /* Integer disparities: the match is exact. */
        int xr = x - (int)pair->disparity[y * W + x];
        g_assert_cmpuint(pair->left[y * W + x], ==, pair->right[y * W + xr]);
        g_assert_cmpfloat(pair->disparity_right[y * W + xr], ==, pair->disparity[y * W + x]);
      }
    }
  /* The box's texture is not the background's: its edge is visible in the left image. */
  double diff = 0.0;
  int n = 0;
  for (int y = p.box_y; y < p.box_y + p.box_h; y++, n++)
    diff += fabs((double)pair->left[y * W + p.box_x] - pair->left[y * W + p.box_x - 1]);
  g_assert_cmpfloat(diff / n, >, 8.0);

  p.d0 = 4.3;
  p.d1 = 15.6;
  check_warp(&p, "box");
}

static void
test_texture(void)
{
  SynthParams p;
  synth_params_init(&p, SYNTH_SCENE_CONSTANT, 256, 128);
  p.seed = g_test_rand_int();
  g_autoptr(SynthPair) a = make(&p);
  g_autoptr(SynthPair) b = make(&p);
  const size_t n = (size_t)p.width * p.height;
  g_assert_cmpmem(a->left, n, b->left, n);
  g_assert_cmpmem(a->right, n, b->right, n);

  double sum = 0, sum2 = 0, grad = 0;
  for (size_t i = 0; i < n; i++) {
    sum += a->left[i];
    sum2 += (double)a->left[i] * a->left[i];
    if (i % p.width)
      grad += fabs((double)a->left[i] - a->left[i - 1]);
  }
  double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
  g_test_message("texture: mean %.1f, sd %.1f (contrast %.0f), mean |dx| %.2f", mean, sd,
                 p.contrast, grad / n);
  g_assert_cmpfloat(fabs(mean - 128.0), <, 25.0);
  g_assert_cmpfloat(sd, >, 0.6 * p.contrast);
  g_assert_cmpfloat(sd, <, 1.4 * p.contrast);
  g_assert_cmpfloat(grad / n, >, 2.0);  /* textured at the pixel scale */

  p.seed++;
  g_autoptr(SynthPair) c = make(&p);
  g_assert_true(memcmp(a->left, c->left, n) != 0);
}

static void
test_photometric(void)
{
  SynthParams p;
  synth_params_init(&p, SYNTH_SCENE_CONSTANT, 128, 96);
  p.seed = g_test_rand_int();
  p.contrast = 25.0;  /* keeps gain * texture + offset inside 0..255 */
  g_autoptr(SynthPair) clean = make(&p);
  p.gain = 1.2;
  p.offset = -10.0;
  g_autoptr(SynthPair) gained = make(&p);
  p.gain = 1.0;
  p.offset = 0.0;
  p.noise = 4.0;
  g_autoptr(SynthPair) noisy = make(&p);
  const size_t n = (size_t)p.width * p.height;
  g_assert_cmpmem(clean->left, n, noisy->left, n);  /* the left view is untouched */
  double s = 0, s2 = 0;
  for (size_t i = 0; i < n; i++) {
    double want = 1.2 * clean->right[i] - 10.0;
    if (want > 1 && want < 254)
      g_assert_cmpfloat(fabs(gained->right[i] - want), <=, 1.2 * 0.5 + 0.5 + 1e-9);
    double e = (double)noisy->right[i] - clean->right[i];
    s += e;
    s2 += e * e;
  }
  double sd = sqrt(s2 / n - (s / n) * (s / n));
  g_test_message("noise: mean %.3f sd %.3f (sigma 4)", s / n, sd);
  g_assert_cmpfloat(fabs(s / n), <, 0.2);
  g_assert_cmpfloat(fabs(sd - 4.0), <, 0.4);
}

static void
test_invalid(void)
{
  SynthParams p;
  const SynthScene scenes[] = { SYNTH_SCENE_CONSTANT, SYNTH_SCENE_SLANTED, SYNTH_SCENE_BOX };
  for (int i = 0; i < 3; i++) {
    synth_params_init(&p, scenes[i], 320, 240);
    g_assert_true(synth_params_validate(&p, NULL));
  }
  for (int k = 0; k < 8; k++) {
    synth_params_init(&p, k < 4 ? SYNTH_SCENE_SLANTED : SYNTH_SCENE_BOX, 320, 240);
    switch (k) {
    case 0: p.dx = 0.6; break;
    case 1: p.d0 = -1.0; p.dx = 0; p.dy = 0; break;  /* negative disparity */
    case 2: p.d0 = 300; break;                        /* beyond the width */
    case 3: p.width = 8; break;
    case 4: p.d1 = p.d0; break;                       /* box not in front */
    case 5: p.box_x = 300; break;                     /* box outside */
    case 6: p.box_h = 0; break;
    case 7: p.gain = 0; break;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(SynthPair) pair = synth_pair_new(&p, &error);
    g_assert_null(pair);
    g_assert_error(error, SYNTH_ERROR, 0);
  }
  SynthScene s;
  g_assert_true(synth_scene_from_name("box", &s) && s == SYNTH_SCENE_BOX);
  g_assert_false(synth_scene_from_name("boxes", &s));
  g_assert_cmpstr(synth_scene_name(SYNTH_SCENE_SLANTED), ==, "slanted");
}

static void
test_noise_u8(void)
{
  const int w = 61, h = 40;
  const size_t stride = 64;
  g_autofree uint8_t *a = g_malloc(stride * h);
  g_autofree uint8_t *b = g_malloc(stride * h);
  memset(a, 0xa5, stride * h);
  memset(b, 0xa5, stride * h);
  uint32_t seed = g_test_rand_int();
  synth_noise_u8(a, w, h, stride, seed);
  synth_noise_u8(b, w, h, stride, seed);
  g_assert_cmpmem(a, stride * h, b, stride * h);
  int hist[256] = { 0 };
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++)
      hist[a[y * stride + x]]++;
    for (size_t x = w; x < stride; x++)
      g_assert_cmpuint(a[y * stride + x], ==, 0xa5);  /* padding untouched */
  }
  /* Roughly uniform: every quarter of the range gets about a quarter of the pixels. */
  for (int q = 0; q < 4; q++) {
    int c = 0;
    for (int v = 64 * q; v < 64 * (q + 1); v++)
      c += hist[v];
    g_assert_cmpfloat(fabs(c - w * h / 4.0), <, 0.15 * w * h / 4.0);
  }
  synth_noise_u8(b, w, h, stride, seed + 1);
  g_assert_true(memcmp(a, b, stride * h) != 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/synth/constant", test_constant);
  g_test_add_func("/synth/slanted", test_slanted);
  g_test_add_func("/synth/box", test_box);
  g_test_add_func("/synth/texture", test_texture);
  g_test_add_func("/synth/photometric", test_photometric);
  g_test_add_func("/synth/invalid", test_invalid);
  g_test_add_func("/synth/noise-u8", test_noise_u8);
  return g_test_run();
}
