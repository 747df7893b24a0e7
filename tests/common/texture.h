/* texture.h: a smooth random texture for GPU tests (a sum of random sinusoids with a
 * 1/f-like amplitude), evaluated at any real position so that a stereo pair with exact
 * disparity is sampled without resampling error. Header-only; test code. */
#pragma once

#include <glib.h>
#include <math.h>

#define TEST_TEXTURE_MAX 32

typedef struct {
  int n;
  double a[TEST_TEXTURE_MAX], fx[TEST_TEXTURE_MAX], fy[TEST_TEXTURE_MAX], ph[TEST_TEXTURE_MAX];
} TestTexture;

/* n components with frequencies in [f_lo, f_hi] rad/px at angles in [ang_lo, ang_hi]
 * from the x axis and amplitude `gain` / (1 + `fall` f). */
static inline void
test_texture_init(TestTexture *t, GRand *rng, int n, double f_lo, double f_hi, double ang_lo,
                  double ang_hi, double gain, double fall)
{
  t->n = MIN(n, TEST_TEXTURE_MAX);
  for (int i = 0; i < t->n; i++) {
    double f = g_rand_double_range(rng, f_lo, f_hi);
    double ang = g_rand_double_range(rng, ang_lo, ang_hi);
    t->fx[i] = f * cos(ang);
    t->fy[i] = f * sin(ang);
    t->a[i] = gain / (1.0 + fall * f) * g_rand_double_range(rng, 0.5, 1.0);
    t->ph[i] = g_rand_double_range(rng, 0, 2 * G_PI);
  }
}

/* The texture at (x, y), clamped to [0, 1]. */
static inline double
test_texture_at(const TestTexture *t, double x, double y)
{
  double v = 0.5;
  for (int i = 0; i < t->n; i++)
    v += t->a[i] * sin(t->fx[i] * x + t->fy[i] * y + t->ph[i]);
  return CLAMP(v, 0.0, 1.0);
}
