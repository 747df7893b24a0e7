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

void
bench_make_bars(int w, int h, uint8_t *l, uint8_t *r)
{
  /* BT.601 luma of the 75 % bars, the castellations under them and the bottom row
   * (-I, white, +Q, black, the PLUGE's three levels, black), as videotestsrc draws them */
  static const uint8_t top[7] = { 180, 162, 131, 112, 84, 65, 35 };
  static const uint8_t mid[7] = { 35, 16, 84, 16, 131, 16, 180 };
  static const uint8_t bottom[8] = { 45, 235, 29, 16, 9, 16, 23, 16 };
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t v;
      if (y < h * 2 / 3)
        v = top[x * 7 / w];
      else if (y < h * 3 / 4)
        v = mid[x * 7 / w];
      else {
        /* four fifths of the first five sevenths in -I, white, +Q, black; then the PLUGE */
        int i = x * 28 / w;   /* 28ths of the width */
        v = i < 5 ? bottom[0] : i < 10 ? bottom[1] : i < 15 ? bottom[2] : i < 20 ? bottom[3]
          : i < 21 ? bottom[4] : i < 22 ? bottom[5] : i < 23 ? bottom[6] : bottom[7];
      }
      l[(size_t)y * w + x] = r[(size_t)y * w + x] = v;
    }
}
