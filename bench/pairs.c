/* pairs.c: synthetic pairs for the benchmarks (pairs.h). */
#include "bench/pairs.h"

#include <math.h>

void
bench_make_pair(GRand *rng, int w, int h, double dmax, uint8_t *l, uint8_t *r)
{
  double a[16], fx[16], fy[16], ph[16];
  for (int i = 0; i < 16; i++) {
    double f = g_rand_double_range(rng, 0.2, 1.4), ang = g_rand_double_range(rng, -1.2, 1.2);
    fx[i] = f * cos(ang);
    fy[i] = f * sin(ang);
    a[i] = 0.25 / (1.0 + 2.0 * f);
    ph[i] = g_rand_double_range(rng, 0, 2 * G_PI);
  }
  for (int y = 0; y < h; y++) {
    double d = 0.2 * dmax + 0.5 * dmax * y / h;
    for (int x = 0; x < w; x++) {
      double dd = (y > h / 3 && y < 2 * h / 3 && x > w / 3 && x < 2 * w / 3) ? d + 0.2 * dmax : d;
      for (int k = 0; k < 2; k++) {
        double xs = k == 0 ? x : x + dd;
        double v = 0.5;
        for (int i = 0; i < 16; i++)
          v += a[i] * sin(fx[i] * xs + fy[i] * y + ph[i]);
        uint8_t u = (uint8_t)lround(255.0 * CLAMP(v, 0.0, 1.0));
        (k == 0 ? l : r)[(size_t)y * w + x] = u;
      }
    }
  }
}
