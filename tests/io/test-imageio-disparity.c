/* test-imageio-disparity.c: PFM, KITTI PNG16 and colour JPEG disparity files. */
#include "tools/imageio-private.h"
#include "io-test-util.h"

#include <math.h>
#include <string.h>
#include <turbojpeg.h>

static uint32_t
float_bits(float f)
{
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* ---------------------------------------------------------------- PFM */

static void
test_pfm_write(void)
{
  const int w = 5, h = 3, pitch = 8;  /* floats per row in memory */
  float src[3 * 8];
  for (int i = 0; i < h * pitch; i++)
    src[i] = (float)g_test_rand_double_range(0.0, 100.0);
  src[0 * pitch + 1] = NAN;
  src[2 * pitch + 4] = NAN;
  src[1 * pitch + 2] = INFINITY;

  g_autofree char *path = io_tmp_path("d.pfm");
  g_autoptr(GError) error = NULL;
  g_assert_true(imageio_write_pfm(path, src, w, h, pitch * sizeof(float), &error));
  g_assert_no_error(error);

  /* Byte level: Middlebury header, little endian, bottom row first, NaN -> +inf. */
  g_autofree char *raw = NULL;
  size_t len;
  g_assert_true(g_file_get_contents(path, &raw, &len, NULL));
  const char *header = "Pf\n5 3\n-1.0\n";
  g_assert_cmpuint(len, ==, strlen(header) + 4 * w * h);
  g_assert_cmpmem(raw, strlen(header), header, strlen(header));
  const uint8_t *data = (const uint8_t *)raw + strlen(header);
  for (int r = 0; r < h; r++)
    for (int x = 0; x < w; x++) {
      const uint8_t *b = data + 4 * (r * w + x);
      uint32_t u = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
      float want = src[(h - 1 - r) * pitch + x];
      if (isnan(want))
        g_assert_cmphex(u, ==, 0x7f800000u);
      else
        g_assert_cmphex(u, ==, float_bits(want));
    }

  /* And back: finite values bit-exact, inf and NaN as NaN. */
  g_autoptr(ImageioF32) img = imageio_read_pfm(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(img->width, ==, w);
  g_assert_cmpint(img->height, ==, h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float want = src[y * pitch + x], got = img->data[y * w + x];
      if (isfinite(want))
        g_assert_cmphex(float_bits(got), ==, float_bits(want));
      else
        g_assert_true(isnan(got));
    }
}

static void
test_pfm_read_variants(void)
{
  /* Big endian (positive scale), header on one line, values 1..4 stored bottom row first:
   * the file's first row is the image's last. */
  const float v[4] = { 1.5f, 2.5f, 3.5f, -4.25f };
  for (int big = 0; big <= 1; big++) {
    const char *header = big ? "Pf 2 2 1.0\n" : "Pf\n2\n2\n-0.5\n";
    size_t hl = strlen(header);
    uint8_t file[64];
    memcpy(file, header, hl);
    for (int i = 0; i < 4; i++) {
      uint32_t u = float_bits(v[i]);
      u = big ? GUINT32_TO_BE(u) : GUINT32_TO_LE(u);
      memcpy(file + hl + 4 * i, &u, 4);
    }
    g_autofree char *path = io_tmp_write("v.pfm", file, hl + 16);
    g_autoptr(GError) error = NULL;
    g_autoptr(ImageioF32) img = imageio_read_pfm(path, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(img->data[0], ==, v[2]);  /* top-left = start of the last file row */
    g_assert_cmpfloat(img->data[1], ==, v[3]);
    g_assert_cmpfloat(img->data[2], ==, v[0]);
    g_assert_cmpfloat(img->data[3], ==, v[1]);
  }
  const char colour[] = "PF\n1 1\n-1.0\n\0\0\0\0\0\0\0\0\0\0\0\0";
  g_autofree char *path = io_tmp_write("c.pfm", colour, sizeof colour - 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioF32) img = imageio_read_pfm(path, &error);
  g_assert_null(img);
  g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_UNSUPPORTED);
}

/* ---------------------------------------------------------------- KITTI PNG16 */

static void
test_png16(void)
{
  static const struct { float d; uint16_t v; } cases[] = {
    { 1.0f, 256 },
    { 10.25f, 2624 },
    { 100.5f / 256.0f, 101 },     /* half rounds up */
    { 100.49f / 256.0f, 100 },
    { 0.0f, 1 },                  /* valid zero stays valid */
    { 1.0f / 1024.0f, 1 },
    { -2.0f, 1 },
    { 255.99f, 65533 },
    { 65535.0f / 256.0f, 65535 },
    { 256.0f, 65535 },            /* clamped */
    { 1e9f, 65535 },
    { NAN, 0 },
    { INFINITY, 0 },
    { -INFINITY, 0 },
  };
  const int w = (int)G_N_ELEMENTS(cases), h = 2;
  const size_t stride = (w + 3) * sizeof(float);
  g_autofree float *src = g_malloc0(stride * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float *row = (float *)((uint8_t *)src + y * stride);
      row[x] = cases[(x + y) % w].d;
    }
  for (int i = 0; i < w; i++)
    g_assert_cmpuint(imageio_disparity_to_kitti(cases[i].d), ==, cases[i].v);

  g_autofree char *path = io_tmp_path("kitti.png");
  g_autoptr(GError) error = NULL;
  g_assert_true(imageio_write_png16_disparity(path, src, w, h, stride, &error));
  g_assert_no_error(error);
  g_autoptr(ImageioU16) raw = imageio_read_png16(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(raw->width, ==, w);
  g_assert_cmpint(raw->height, ==, h);
  g_autoptr(ImageioF32) back = imageio_read_png16_disparity(path, &error);
  g_assert_no_error(error);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint16_t v = cases[(x + y) % w].v;
      g_assert_cmpuint(((uint16_t *)IMAGEIO_ROW(raw, y))[x], ==, v);
      float d = ((float *)IMAGEIO_ROW(back, y))[x];
      if (v == 0)
        g_assert_true(isnan(d));
      else
        g_assert_cmpfloat(d, ==, v / 256.0f);
    }

  /* An 8-bit PNG is not a KITTI disparity file. */
  uint8_t gray[4] = { 1, 2, 3, 4 };
  g_autofree char *p8 = io_tmp_path("gray.png");
  g_assert_true(imageio_write_png8(p8, gray, 2, 2, 2, &error));
  g_autoptr(ImageioU16) none = imageio_read_png16(p8, &error);
  g_assert_null(none);
  g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_UNSUPPORTED);
}

/* ---------------------------------------------------------------- colour */

static int
cmp_float(const void *a, const void *b)
{
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

static void
test_percentile(void)
{
  const float small[7] = { 5, NAN, 1, 3, INFINITY, 2, 4 };
  g_assert_cmpfloat(imageio_disparity_percentile(small, 7, 1, sizeof small, 0.5), ==, 3);
  g_assert_cmpfloat(imageio_disparity_percentile(small, 7, 1, sizeof small, 0.99), ==, 5);
  g_assert_cmpfloat(imageio_disparity_percentile(small, 7, 1, sizeof small, 0.0), ==, 1);
  const float none[2] = { NAN, -INFINITY };
  g_assert_true(isnan(imageio_disparity_percentile(none, 2, 1, sizeof none, 0.5)));

  /* Random data with many duplicates against a sort. */
  const int w = 301, h = 7;
  g_autofree float *v = g_new(float, w * h);
  g_autofree float *sorted = g_new(float, w * h);
  int n = 0;
  for (int i = 0; i < w * h; i++) {
    v[i] = g_test_rand_int_range(0, 10) == 0 ? NAN : (float)g_test_rand_int_range(0, 50);
    if (!isnan(v[i]))
      sorted[n++] = v[i];
  }
  qsort(sorted, n, sizeof(float), cmp_float);
  const double qs[] = { 0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0 };
  for (size_t i = 0; i < G_N_ELEMENTS(qs); i++) {
    int k = MAX((int)ceil(qs[i] * n) - 1, 0);
    g_assert_cmpfloat(imageio_disparity_percentile(v, w, h, w * sizeof(float), qs[i]), ==,
                      sorted[k]);
  }
}

static void
test_colormap(void)
{
  uint8_t a[3], b[3];
  imageio_colormap_turbo(NAN, a);
  g_assert_true(a[0] == 0 && a[1] == 0 && a[2] == 0);
  imageio_colormap_turbo(0.0f, a);
  g_assert_true(a[0] < 80 && a[1] < 80 && a[2] < 80);   /* dark at the far end */
  imageio_colormap_turbo(-3.0f, b);
  g_assert_cmpmem(a, 3, b, 3);
  imageio_colormap_turbo(0.15f, a);
  g_assert_true(a[2] > 200 && a[2] > a[0] && a[2] > a[1]);  /* then blue */
  imageio_colormap_turbo(0.5f, a);
  g_assert_true(a[1] > 200 && a[1] > a[0] && a[1] > a[2]);  /* green in the middle */
  imageio_colormap_turbo(1.0f, a);
  g_assert_true(a[0] > 100 && a[0] > 4 * a[1] && a[0] > 4 * a[2]);  /* dark red end */
  imageio_colormap_turbo(7.0f, b);
  g_assert_cmpmem(a, 3, b, 3);
}

static void
test_color_jpeg(void)
{
  /* 8x8 blocks of one value each, so JPEG keeps them nearly exact: block (bx, by) is
   * invalid in the left half, d = 3 (bx - 4) + by otherwise. */
  const int w = 64, h = 32;
  g_autofree float *d = g_new(float, w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int bx = x / 8, by = y / 8;
      d[y * w + x] = bx < 4 ? NAN : (float)(3 * (bx - 4) + by);
    }
  g_autofree char *path = io_tmp_path("c.jpg");
  g_autoptr(GError) error = NULL;
  float used = 0;
  g_assert_true(imageio_write_color_jpeg(path, d, w, h, w * sizeof(float), 0.0f, 95, &used,
                                         &error));
  g_assert_no_error(error);
  g_assert_cmpfloat(used, ==, imageio_disparity_percentile(d, w, h, w * 4, 0.99));
  g_assert_cmpfloat(used, ==, 12.0f);  /* values 0..12, 64 px each of 1024: 99% -> 12 */

  g_autofree char *jpeg = NULL;
  size_t size;
  g_assert_true(g_file_get_contents(path, &jpeg, &size, NULL));
  tjhandle tj = tjInitDecompress();
  int jw, jh, ss, cs;
  g_assert_cmpint(tjDecompressHeader3(tj, (uint8_t *)jpeg, size, &jw, &jh, &ss, &cs), ==, 0);
  g_assert_cmpint(jw, ==, w);
  g_assert_cmpint(jh, ==, h);
  g_autofree uint8_t *rgb = g_malloc(w * h * 3);
  g_assert_cmpint(tjDecompress2(tj, (uint8_t *)jpeg, size, rgb, w, 0, h, TJPF_RGB, 0), ==, 0);
  tjDestroy(tj);
  for (int y = 2; y < h; y += 8)
    for (int x = 2; x < w; x += 4) {
      uint8_t want[3];
      imageio_colormap_turbo(isnan(d[y * w + x]) ? NAN : d[y * w + x] / used, want);
      for (int c = 0; c < 3; c++)
        g_assert_cmpint(abs(rgb[(y * w + x) * 3 + c] - want[c]), <=, 10);
    }
}

void imageio_disparity_tests(void);

void
imageio_disparity_tests(void)
{
  g_test_add_func("/imageio/pfm/write", test_pfm_write);
  g_test_add_func("/imageio/pfm/read-variants", test_pfm_read_variants);
  g_test_add_func("/imageio/png16", test_png16);
  g_test_add_func("/imageio/percentile", test_percentile);
  g_test_add_func("/imageio/colormap", test_colormap);
  g_test_add_func("/imageio/color-jpeg", test_color_jpeg);
}
