/* test-flow-io: the optical-flow files of tools/imageio-flo.c: Middlebury .flo round trips
 * and refusals (sizes claimed by a header are checked before anything is allocated), the
 * KITTI flow PNG convention, the colour wheel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/imageio-private.h"

static char *tmpdir;

static char *
path_of(const char *name)
{
  return g_build_filename(tmpdir, name, NULL);
}

static void
test_flo_round_trip(void)
{
  const int w = 7, h = 5;
  float u[35], v[35];
  for (int i = 0; i < w * h; i++) {
    u[i] = -3.25f + 0.37f * i;
    v[i] = 1.5f - 0.11f * i;
  }
  u[3] = NAN;                 /* unknown in either plane makes the vector unknown */
  v[8] = INFINITY;
  u[9] = 2e9f;
  g_autofree char *p = path_of("a.flo");
  GError *error = NULL;
  g_assert_true(imageio_write_flo(p, u, v, w, h, w * sizeof(float), &error));
  g_assert_no_error(error);
  gsize len;
  g_autofree char *bytes = NULL;
  g_assert_true(g_file_get_contents(p, &bytes, &len, NULL));
  g_assert_cmpuint(len, ==, 12 + 8 * w * h);
  float magic, unk;
  memcpy(&magic, bytes, 4);
  g_assert_cmpfloat(magic, ==, 202021.25f);
  memcpy(&unk, bytes + 12 + 8 * 3, 4);
  g_assert_cmpfloat(unk, ==, 1e10f);
  g_autoptr(ImageioFlow) f = imageio_read_flo(p, &error);
  g_assert_no_error(error);
  g_assert_cmpint(f->u->width, ==, w);
  g_assert_cmpint(f->u->height, ==, h);
  for (int i = 0; i < w * h; i++) {
    bool known = i != 3 && i != 8 && i != 9;
    g_assert_cmpint(imageio_flow_known(f->u->data[i], f->v->data[i]), ==, known);
    if (known) {
      g_assert_cmpfloat(f->u->data[i], ==, u[i]);
      g_assert_cmpfloat(f->v->data[i], ==, v[i]);
    } else {
      g_assert_true(isnan(f->u->data[i]) && isnan(f->v->data[i]));
    }
  }
}

static void
expect_flo_error(const void *data, size_t size, ImageioErrorCode code)
{
  GError *error = NULL;
  g_autoptr(ImageioFlow) f = imageio_decode_flo(data, size, "x.flo", &error);
  g_assert_null(f);
  g_assert_error(error, IMAGEIO_ERROR, (int)code);
  g_assert_true(g_str_has_prefix(error->message, "x.flo: "));
  g_assert_null(strchr(error->message, '\n'));
  g_error_free(error);
}

static void
test_flo_refusals(void)
{
  uint8_t buf[12 + 8 * 4];
  float magic = 202021.25f;
  int32_t wh[2] = { 2, 2 };
  memcpy(buf, &magic, 4);
  memcpy(buf + 4, wh, 8);
  memset(buf + 12, 0, sizeof(buf) - 12);
  GError *error = NULL;
  g_autoptr(ImageioFlow) ok = imageio_decode_flo(buf, sizeof(buf), "x.flo", &error);
  g_assert_no_error(error);
  g_assert_nonnull(ok);
  expect_flo_error(buf, 11, IMAGEIO_ERROR_UNKNOWN_FORMAT);          /* no header */
  expect_flo_error(buf, sizeof(buf) - 1, IMAGEIO_ERROR_CORRUPT);    /* truncated */
  uint8_t bad[sizeof(buf)];
  memcpy(bad, buf, sizeof(buf));
  bad[0] ^= 1;
  expect_flo_error(bad, sizeof(bad), IMAGEIO_ERROR_UNKNOWN_FORMAT);
  /* Absurd or negative sizes are refused before anything that size is allocated. */
  int32_t huge[2] = { 1 << 30, 1 << 30 };
  memcpy(bad, buf, sizeof(buf));
  memcpy(bad + 4, huge, 8);
  expect_flo_error(bad, sizeof(bad), IMAGEIO_ERROR_TOO_LARGE);
  int32_t neg[2] = { -2, 2 };
  memcpy(bad + 4, neg, 8);
  expect_flo_error(bad, sizeof(bad), IMAGEIO_ERROR_TOO_LARGE);
  int32_t big[2] = { 4000, 4000 };   /* allowed sides, but the file does not hold them */
  memcpy(bad + 4, big, 8);
  expect_flo_error(bad, sizeof(bad), IMAGEIO_ERROR_CORRUPT);
  g_autofree char *p = path_of("missing.flo");
  g_assert_null(imageio_read_flo(p, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_clear_error(&error);
}

static void
test_kitti(void)
{
  uint16_t rgb[3];
  imageio_flow_to_kitti(1.5f, -2.25f, rgb);
  g_assert_cmpuint(rgb[0], ==, 32768 + 96);
  g_assert_cmpuint(rgb[1], ==, 32768 - 144);
  g_assert_cmpuint(rgb[2], ==, 1);
  imageio_flow_to_kitti(1000.0f, -1000.0f, rgb);   /* beyond +-512 px: clamped */
  g_assert_cmpuint(rgb[0], ==, 65535);
  g_assert_cmpuint(rgb[1], ==, 0);
  imageio_flow_to_kitti(NAN, 0.0f, rgb);
  g_assert_cmpuint(rgb[0] | rgb[1] | rgb[2], ==, 0);

  const int w = 6, h = 4;
  float u[24], v[24];
  for (int i = 0; i < w * h; i++) {
    u[i] = (float)(i - 10) / 64.0f;
    v[i] = (float)(3 * i) / 64.0f - 0.5f;
  }
  u[5] = 1e10f;
  g_autofree char *p = path_of("k.png");
  GError *error = NULL;
  g_assert_true(imageio_write_kitti_flow(p, u, v, w, h, w * sizeof(float), &error));
  g_autoptr(ImageioFlow) f = imageio_read_kitti_flow(p, &error);
  g_assert_no_error(error);
  for (int i = 0; i < w * h; i++) {
    if (i == 5) {
      g_assert_false(imageio_flow_known(f->u->data[i], f->v->data[i]));
      continue;
    }
    g_assert_cmpfloat(f->u->data[i], ==, u[i]);   /* multiples of 1/64 survive exactly */
    g_assert_cmpfloat(f->v->data[i], ==, v[i]);
  }
  /* A gray 16-bit PNG is not a flow PNG. */
  uint16_t gray[24] = { 0 };
  g_assert_true(imageio_write_png16(p, gray, w, h, w * 2, &error));
  g_assert_null(imageio_read_kitti_flow(p, &error));
  g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_UNSUPPORTED);
  g_clear_error(&error);
  /* Truncated data fails cleanly. */
  g_assert_true(imageio_write_kitti_flow(p, u, v, w, h, w * sizeof(float), &error));
  gsize len;
  g_autofree char *bytes = NULL;
  g_assert_true(g_file_get_contents(p, &bytes, &len, NULL));
  g_assert_true(g_file_set_contents(p, bytes, (gssize)len - 20, NULL));
  g_assert_null(imageio_read_kitti_flow(p, &error));
  g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);
  g_clear_error(&error);
}

static void
test_color(void)
{
  uint8_t c[3];
  imageio_flow_color(0.0f, 0.0f, 1.0f, c);          /* no motion: white */
  g_assert_cmpuint(c[0] & c[1] & c[2], ==, 255);
  imageio_flow_color(NAN, 0.0f, 1.0f, c);           /* unknown: black */
  g_assert_cmpuint(c[0] | c[1] | c[2], ==, 0);
  imageio_flow_color(1.0f, 0.0f, 1.0f, c);          /* rightwards: red, saturated */
  g_assert_cmpuint(c[0], ==, 255);
  g_assert_cmpuint(c[1], <, 64);
  imageio_flow_color(-1.0f, 0.0f, 1.0f, c);         /* leftwards: cyan */
  g_assert_cmpuint(c[0], <, 64);
  g_assert_cmpuint(c[1], >, 200);
  g_assert_cmpuint(c[2], >, 200);
  uint8_t d[3];
  imageio_flow_color(0.5f, 0.0f, 1.0f, d);          /* half the magnitude: paler */
  g_assert_cmpuint(d[1], >, 100);

  float u[16], v[16];
  for (int i = 0; i < 16; i++) {
    u[i] = (float)i;
    v[i] = -(float)i;
  }
  g_autofree char *p = path_of("c.jpg");
  GError *error = NULL;
  float used;
  g_assert_true(imageio_write_flow_color_jpeg(p, u, v, 4, 4, 16, 0.0f, 90, &used, &error));
  g_assert_cmpfloat(fabs(used - 15.0f * sqrtf(2.0f)), <, 1e-4);
  g_autoptr(ImageioU8) back = imageio_read_gray(p, &error);
  g_assert_no_error(error);
  g_assert_cmpint(back->width, ==, 4);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmpdir = g_dir_make_tmp("stereod-flow-io-XXXXXX", NULL);
  g_test_add_func("/flow/io/flo-round-trip", test_flo_round_trip);
  g_test_add_func("/flow/io/flo-refusals", test_flo_refusals);
  g_test_add_func("/flow/io/kitti", test_kitti);
  g_test_add_func("/flow/io/color", test_color);
  int r = g_test_run();
  g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmpdir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", tmpdir);
  g_free(tmpdir);
  return r;
}
