/* stages-fixture.c: the helpers of the stage tests (stages-fixture.h). */
#include "tests/stereo/stages-fixture.h"

#include <math.h>
#include <string.h>

#include "kernels/stereo-private.h"
#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"
#include "tests/common/texture.h"

GRand *stages_rng;

GpuImage *
image_new(GpuContext *ctx, int w, int h, GpuFormat fmt)
{
  GError *error = NULL;
  GpuImageParams ip = { .label = "test", .width = w, .height = h, .layers = 1, .format = fmt };
  GpuImage *img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  return img;
}

GpuBuffer *
storage_buffer(GpuContext *ctx, const char *label, size_t size)
{
  GError *error = NULL;
  GpuBufferParams bp = { .label = label, .size = size, .usage = GPU_BUFFER_STORAGE };
  GpuBuffer *buf = gpu_buffer_new(ctx, &bp, &error);
  g_assert_no_error(error);
  return buf;
}

void
poison(GpuImage *img)
{
  const float nan4[4] = { NAN, NAN, NAN, NAN };
  GError *error = NULL;
  g_assert_true(gpu_image_fill(img, nan4, &error));
  g_assert_no_error(error);
}

/* Uploads channels of up to 4 reference images into one float image (chan_of[i] = which
 * source channel goes to texture channel i; src NULL = 0). */
void
upload_channels(GpuImage *img, const RefImage *const *src, const int *chan, int n)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  g_autofree float *buf = g_new0(float, (size_t)w * h * tc);
  for (int i = 0; i < n && i < tc; i++) {
    if (!src[i])
      continue;
    g_assert_cmpint(src[i]->w, ==, w);
    g_assert_cmpint(src[i]->h, ==, h);
    for (int p = 0; p < w * h; p++)
      buf[(size_t)p * tc + i] = (float)src[i]->data[(size_t)p * src[i]->ch + chan[i]];
  }
  GError *error = NULL;
  g_assert_true(gpu_image_upload(img, 0, buf, (size_t)w * tc * sizeof(float), &error));
  g_assert_no_error(error);
}

float *
download_layer(GpuImage *img, int layer)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  float *buf = g_new(float, (size_t)w * h * tc);
  GError *error = NULL;
  g_assert_true(gpu_image_download(img, layer, buf, (size_t)w * tc * sizeof(float), &error));
  g_assert_no_error(error);
  return buf;
}

float *
download(GpuImage *img)
{
  return download_layer(img, 0);
}

/* Rounds a reference image to float precision in place (what the GPU sees as input). */
void
round_to_float(RefImage *img)
{
  for (size_t i = 0; i < (size_t)img->w * img->h * img->ch; i++)
    img->data[i] = (float)img->data[i];
}

RefImage *
random_image(int w, int h, int ch, double lo, double hi)
{
  RefImage *img = ref_image_new(w, h, ch);
  for (size_t i = 0; i < (size_t)w * h * ch; i++)
    img->data[i] = (float)g_rand_double_range(stages_rng, lo, hi);
  return img;
}

/* A smooth random texture (sum of random sinusoids) sampled at x + shift: a textured
 * pair with known disparity `shift` when used for left (0) and right (-shift). */

void
make_pair(int w, int h, double disparity, uint8_t *left, uint8_t *right)
{
  TestTexture t;
  test_texture_init(&t, stages_rng, 24, 0.15, 1.4, 0, G_PI, 0.25, 3.0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      left[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x, y));
      right[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x + disparity, y));
    }
}

GpuBuffer *
layer_params(GpuContext *ctx, int n, const int *pairs, double min_magnitude)
{
  const double none[3] = { 0.0, 0.0, STEREO_GROUND_NONE };
  return layer_params_ground(ctx, n, pairs, min_magnitude, none);
}

GpuBuffer *
layer_params_ground(GpuContext *ctx, int n, const int *pairs, double min_magnitude,
                    const double ground[3])
{
  double planes[64][3];
  g_assert_cmpint(n, <=, 64);
  for (int k = 0; k < n; k++)
    memcpy(planes[k], ground, sizeof planes[k]);
  return layer_params_grounds(ctx, n, pairs, min_magnitude, planes);
}

GpuBuffer *
layer_params_grounds(GpuContext *ctx, int n, const int *pairs, double min_magnitude,
                     const double (*ground)[3])
{
  /* common.glsl's LayerParams, std430: no calibration, no f32 metres plane */
  StereoLayerParams lp[64];
  g_assert_cmpint(n, <=, 64);
  for (int k = 0; k < n; k++)
    lp[k] = (StereoLayerParams){ .pair = pairs ? pairs[k] : k,
                                 .min_magnitude = (float)min_magnitude, .metres_offset = -1,
                                 .ground_a = (float)ground[k][0], .ground_b = (float)ground[k][1],
                                 .ground_c = (float)ground[k][2] };
  GpuBuffer *buf = storage_buffer(ctx, "layers", (size_t)n * sizeof lp[0]);
  GError *error = NULL;
  g_assert_true(gpu_buffer_write(buf, 0, lp, (size_t)n * sizeof lp[0], &error));
  g_assert_no_error(error);
  return buf;
}

void
check_all_finite(const float *v, size_t n, const char *what)
{
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      g_error("%s: element %zu was not written (%g)", what, i, v[i]);
}

void
fixture_setup(Fixture *f, int w, int h)
{
  f->ctx = gpu_test_context();
  if (!f->ctx)
    return;
  stereo_params_init(&f->p, w, h);
  f->p.max_disparity = 24;
  f->p.refine = true;   /* the refinement programs are made only then */
  GError *error = NULL;
  f->ps = stereo_passes_new(f->ctx, &f->p, &error);
  g_assert_no_error(error);
}

void
fixture_remake_passes(Fixture *f)
{
  GError *error = NULL;
  stereo_passes_free(f->ps);
  f->ps = stereo_passes_new(f->ctx, &f->p, &error);
  g_assert_no_error(error);
}

void
fixture_teardown(Fixture *f)
{
  stereo_passes_free(f->ps);
  gpu_context_free(f->ctx);
}

GpuImage *
pair_image(GpuContext *ctx, const RefImage *l, const RefImage *r)
{
  GpuImage *img = image_new(ctx, l->w, l->h, GPU_FORMAT_RG32F);
  const RefImage *s[2] = { l, r };
  upload_channels(img, s, (int[]){ 0, 0 }, 2);
  return img;
}

void
textured_pair(int w, int h, double shift, RefImage **l, RefImage **r)
{
  g_autofree uint8_t *l8 = g_new(uint8_t, w * h);
  g_autofree uint8_t *r8 = g_new(uint8_t, w * h);
  make_pair(w, h, shift, l8, r8);
  *l = ref_ingest(l8, w, h, w);
  *r = ref_ingest(r8, w, h, w);
}

void
stages_init(int *argc, char ***argv)
{
  g_test_init(argc, argv, NULL);
  stages_rng = test_seeded_rand();
}

int
stages_run(void)
{
  int r = g_test_run();
  g_rand_free(stages_rng);
  return r;
}
