/* engine-test.c: scenes and engines for the engine tests (engine-test.h). */
#include "tests/stereo/engine-test.h"

#include <math.h>

#include "tests/common/texture.h"

/* The pair of texture t with the box (x0..x1, y0..y1, left view) textured by b at
 * disparity d1 and the rest by t at d0 (b == t: one texture throughout). */
static void
box_scene(const TestTexture *t, const TestTexture *b, int w, int h, double d0, double d1,
          int x0, int x1, int y0, int y1, uint8_t *left, uint8_t *right)
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      bool in_box_l = y > y0 && y < y1 && x > x0 && x < x1;
      left[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(in_box_l ? b : t, x, y));
      bool in_box_r = y > y0 && y < y1 && x + d1 > x0 && x + d1 < x1;
      right[y * w + x] = (uint8_t)lround(255.0 * (in_box_r ? test_texture_at(b, x + d1, y)
                                                         : test_texture_at(t, x + d0, y)));
    }
}

void
engine_test_scene(GRand *rng, int w, int h, double d0, double d1, uint8_t *left,
                  uint8_t *right)
{
  TestTexture t;
  test_texture_init(&t, rng, 24, 0.15, 1.4, 0, G_PI, 0.25, 3.0);
  box_scene(&t, &t, w, h, d0, d1, w / 3, 2 * w / 3, h / 4, 3 * h / 4, left, right);
}

void
engine_test_plain_box_scene(GRand *rng, int w, int h, double d0, double d1, int x0, int x1,
                            int y0, int y1, uint8_t *left, uint8_t *right)
{
  TestTexture t, b;
  test_texture_init(&t, rng, 24, 0.15, 1.4, 0, G_PI, 0.25, 3.0);
  test_texture_init(&b, rng, 24, 0.15, 0.35, 0, G_PI, 0.1, 0.0);
  box_scene(&t, &b, w, h, d0, d1, x0, x1, y0, y1, left, right);
}

StereoEngine *
engine_test_new(GpuContext *ctx, const StereoParams *p, StereoOutputFormat fmt, int in_flight)
{
  GError *error = NULL;
  StereoEngineParams ep = { .label = "test", .params = *p, .output = fmt,
                            .in_flight = in_flight };
  StereoEngine *e = stereo_engine_new(ctx, &ep, &error);
  g_assert_no_error(error);
  return e;
}
