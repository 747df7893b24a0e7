/* flow-fixture.c: the helpers of the optical-flow GPU tests (flow-fixture.h). */
#include "tests/flow/flow-fixture.h"

#include <math.h>

#include "tests/common/gpu-test.h"
#include "tests/common/test-seed.h"
#include "tests/common/texture.h"

GRand *flow_rng;

void
flow_fixture_setup(FlowFixture *f, int w, int h)
{
  f->ctx = gpu_test_context();
  if (!f->ctx)
    return;
  flow_params_init(&f->p, w, h);
  GError *error = NULL;
  f->ps = flow_passes_new(f->ctx, &f->p, &error);
  g_assert_no_error(error);
}

void
flow_fixture_teardown(FlowFixture *f)
{
  flow_passes_free(f->ps);
  gpu_context_free(f->ctx);
}

GpuImage *
flow_image_new(GpuContext *ctx, int w, int h, int layers, GpuFormat fmt)
{
  GError *error = NULL;
  GpuImageParams ip = { .label = "test", .width = w, .height = h, .layers = layers,
                        .format = fmt };
  GpuImage *img = gpu_image_new(ctx, &ip, &error);
  g_assert_no_error(error);
  return img;
}

GpuBuffer *
flow_storage_new(GpuContext *ctx, size_t size)
{
  GError *error = NULL;
  GpuBufferParams bp = { .label = "test", .size = size, .usage = GPU_BUFFER_STORAGE };
  GpuBuffer *buf = gpu_buffer_new(ctx, &bp, &error);
  g_assert_no_error(error);
  return buf;
}

void
flow_poison(GpuImage *img)
{
  const float nan4[4] = { NAN, NAN, NAN, NAN };
  GError *error = NULL;
  g_assert_true(gpu_image_fill(img, nan4, &error));
  g_assert_no_error(error);
}

void
flow_upload(GpuImage *img, const RefImage *ref, int per)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  g_assert_cmpint(ref->w, ==, w);
  g_assert_cmpint(ref->h, ==, h);
  g_assert_cmpint(per, <=, tc);
  int layers = (ref->ch + per - 1) / per;   /* the last layer padded with 0 */
  g_assert_cmpint(layers, <=, gpu_image_get_layers(img));
  g_autofree float *buf = g_new0(float, (size_t)w * h * tc);
  for (int l = 0; l < layers; l++) {
    for (int i = 0; i < w * h; i++)
      for (int c = 0; c < per; c++)
        buf[(size_t)i * tc + c] = l * per + c < ref->ch ?
          (float)ref->data[(size_t)i * ref->ch + l * per + c] : 0.0f;
    GError *error = NULL;
    g_assert_true(gpu_image_upload(img, l, buf, (size_t)w * tc * sizeof(float), &error));
    g_assert_no_error(error);
  }
}

RefImage *
flow_download(GpuImage *img, int per)
{
  int w = gpu_image_get_width(img), h = gpu_image_get_height(img);
  int tc = gpu_format_channels(gpu_image_get_format(img));
  int layers = gpu_image_get_layers(img);
  RefImage *out = ref_image_new(w, h, layers * per);
  g_autofree float *buf = g_new(float, (size_t)w * h * tc);
  for (int l = 0; l < layers; l++) {
    GError *error = NULL;
    g_assert_true(gpu_image_download(img, l, buf, (size_t)w * tc * sizeof(float), &error));
    g_assert_no_error(error);
    for (int i = 0; i < w * h; i++)
      for (int c = 0; c < per; c++)
        out->data[(size_t)i * out->ch + l * per + c] = buf[(size_t)i * tc + c];
  }
  return out;
}

void
flow_round_to_float(RefImage *img)
{
  for (size_t i = 0; i < (size_t)img->w * img->h * img->ch; i++)
    img->data[i] = (float)img->data[i];
}

RefImage *
flow_random_image(int w, int h, int ch, double lo, double hi)
{
  RefImage *img = ref_image_new(w, h, ch);
  for (size_t i = 0; i < (size_t)w * h * ch; i++)
    img->data[i] = (float)g_rand_double_range(flow_rng, lo, hi);
  return img;
}

void
flow_textured_pair(int w, int h, double du, double dv, uint8_t *f0, uint8_t *f1)
{
  TestTexture t;
  test_texture_init(&t, flow_rng, 24, 0.15, 1.4, 0, 2 * G_PI, 0.25, 3.0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      f0[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x, y));
      f1[y * w + x] = (uint8_t)lround(255.0 * test_texture_at(&t, x - du, y - dv));
    }
}

RefImage *
flow_features_of(const FlowParams *p, const uint8_t *frame, int w, int h, double *means)
{
  g_autoptr(RefImage) img = ref_ingest(frame, w, h, w);
  g_autoptr(RefImage) rows = ref_flow_rows(p, img);
  g_autoptr(RefImage) q = ref_flow_columns(p, rows);
  RefImage *f = ref_flow_features(p, q);
  flow_round_to_float(f);
  if (means) {
    ref_flow_means(p, f, means);
    for (int k = 0; k < p->orientations; k++)
      means[k] = (float)means[k];
  }
  return f;
}

void
flow_fixture_init(int *argc, char ***argv)
{
  g_test_init(argc, argv, NULL);
  flow_rng = test_seeded_rand();
}

int
flow_fixture_run(void)
{
  int r = g_test_run();
  g_rand_free(flow_rng);
  return r;
}
