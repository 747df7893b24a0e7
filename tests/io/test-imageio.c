/* test-imageio.c: image and disparity files (tools/imageio.h).
 * Inputs are random (g_test_rand_*: rerun with --seed to reproduce). */
#include "tools/imageio-private.h"
#include "io-test-util.h"

#include <math.h>
#include <png.h>
#include <string.h>
#include <turbojpeg.h>

static uint8_t *
random_plane(int width, int height, size_t stride)
{
  uint8_t *p = g_malloc(stride * height);
  for (size_t i = 0; i < stride * height; i++)
    p[i] = (uint8_t)g_test_rand_int_range(0, 256);
  return p;
}

/* The reader must return a correct rounding of the real-valued luma. */
static void
assert_luma(uint8_t got, double r, double g, double b, double maxval)
{
  double want = 255.0 * (0.299 * r + 0.587 * g + 0.114 * b) / maxval;
  if (fabs(got - want) > 0.5 + 1e-9)
    g_error("luma of (%g, %g, %g)/%g: got %u, want %.4f", r, g, b, maxval, got, want);
}

static ImageioU8 *
read_ok(const char *path)
{
  g_autoptr(GError) error = NULL;
  ImageioU8 *img = imageio_read_gray(path, &error);
  g_assert_no_error(error);
  g_assert_nonnull(img);
  g_assert_cmpuint(img->stride, ==, (size_t)img->width);
  return img;
}

/* ---------------------------------------------------------------- PNG */

static void
test_png8_stride(void)
{
  const int w = 37, h = 23;
  const size_t stride = 64;
  g_autofree uint8_t *src = random_plane(w, h, stride);
  g_autofree char *path = io_tmp_path("gray8.png");
  g_autoptr(GError) error = NULL;
  g_assert_true(imageio_write_png8(path, src, w, h, stride, &error));
  g_assert_no_error(error);
  g_autoptr(ImageioU8) img = read_ok(path);
  g_assert_cmpint(img->width, ==, w);
  g_assert_cmpint(img->height, ==, h);
  for (int y = 0; y < h; y++)
    g_assert_cmpmem(img->data + y * w, w, src + y * stride, w);
}

typedef struct {
  const char *what;
  int color, depth, channels;
  bool interlace;
} PngLayout;

static void
test_png_layouts(void)
{
  static const PngLayout layouts[] = {
    { "gray1", PNG_COLOR_TYPE_GRAY, 1, 1, false },
    { "gray2", PNG_COLOR_TYPE_GRAY, 2, 1, false },
    { "gray4", PNG_COLOR_TYPE_GRAY, 4, 1, false },
    { "gray16", PNG_COLOR_TYPE_GRAY, 16, 1, false },
    { "gray16-interlaced", PNG_COLOR_TYPE_GRAY, 16, 1, true },
    { "gray-alpha8", PNG_COLOR_TYPE_GRAY_ALPHA, 8, 2, false },
    { "gray-alpha16", PNG_COLOR_TYPE_GRAY_ALPHA, 16, 2, false },
    { "rgb8", PNG_COLOR_TYPE_RGB, 8, 3, false },
    { "rgb8-interlaced", PNG_COLOR_TYPE_RGB, 8, 3, true },
    { "rgb16", PNG_COLOR_TYPE_RGB, 16, 3, false },
    { "rgba8", PNG_COLOR_TYPE_RGBA, 8, 4, false },
    { "rgba16", PNG_COLOR_TYPE_RGBA, 16, 4, false },
    { "palette4", PNG_COLOR_TYPE_PALETTE, 4, 1, false },
    { "palette8", PNG_COLOR_TYPE_PALETTE, 8, 1, true },
  };
  const int w = 29, h = 17;
  for (size_t l = 0; l < G_N_ELEMENTS(layouts); l++) {
    const PngLayout *L = &layouts[l];
    const bool wide = L->depth == 16;
    const size_t stride = (size_t)w * L->channels * (wide ? 2 : 1) + 6;
    /* The largest sample (palette index for palette images). */
    const uint32_t maxval = (1u << L->depth) - 1;
    g_autofree uint8_t *rows = g_malloc0(stride * h);
    uint8_t palette[3 * 256];
    int n_palette = L->color == PNG_COLOR_TYPE_PALETTE ? (int)maxval + 1 : 0;
    for (int i = 0; i < 3 * n_palette; i++)
      palette[i] = (uint8_t)g_test_rand_int_range(0, 256);
    for (int y = 0; y < h; y++)
      for (int i = 0; i < w * L->channels; i++) {
        uint32_t v = (uint32_t)g_test_rand_int_range(0, (int)maxval + 1);
        if (wide)
          ((uint16_t *)(rows + y * stride))[i] = (uint16_t)v;
        else
          rows[y * stride + i] = (uint8_t)v;
      }
    /* Pin a few samples to the extremes and to pure colours. */
    if (L->channels >= 3 && !wide) {
      uint8_t pure[4][3] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 }, { 255, 255, 255 } };
      for (int k = 0; k < 4; k++)
        memcpy(rows + k * L->channels, pure[k], 3);
    }

    g_autoptr(GByteArray) png = g_byte_array_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(imageio_png_encode(rows, w, h, stride, L->color, L->depth, palette,
                                     n_palette, L->interlace, png, L->what, &error));
    g_assert_no_error(error);
    g_autofree char *name = g_strdup_printf("%s.png", L->what);
    g_autofree char *path = io_tmp_write(name, png->data, png->len);
    g_autoptr(ImageioU8) img = read_ok(path);
    g_assert_cmpint(img->width, ==, w);
    g_assert_cmpint(img->height, ==, h);

    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        uint32_t s[4];
        for (int c = 0; c < L->channels; c++)
          s[c] = wide ? ((uint16_t *)(rows + y * stride))[x * L->channels + c]
                      : rows[y * stride + x * L->channels + c];
        uint8_t got = img->data[y * w + x];
        if (L->color == PNG_COLOR_TYPE_PALETTE)
          assert_luma(got, palette[3 * s[0]], palette[3 * s[0] + 1], palette[3 * s[0] + 2],
                      255);
        else if (L->channels >= 3)
          assert_luma(got, s[0], s[1], s[2], maxval);
        else
          assert_luma(got, s[0], s[0], s[0], maxval);
      }
    if (L->channels >= 3 && !wide) {
      g_assert_cmpuint(img->data[0], ==, 76);   /* 0.299 * 255 = 76.245 */
      g_assert_cmpuint(img->data[1], ==, 150);  /* 0.587 * 255 = 149.685 */
      g_assert_cmpuint(img->data[2], ==, 29);   /* 0.114 * 255 = 29.07 */
      g_assert_cmpuint(img->data[3], ==, 255);
    }
  }
}

/* ---------------------------------------------------------------- PGM / PPM */

static void
test_pnm(void)
{
  /* Plain and raw, gray and colour, 8 and 16 bit, comments in odd places. */
  const char *p2 = "P2\n# a comment\n3 2 # trailing\n# another\n1000\n"
                   "0 500 1000\n  999 1 2\n";
  g_autofree char *path = io_tmp_write("p2.pgm", p2, strlen(p2));
  g_autoptr(ImageioU8) img = read_ok(path);
  g_assert_cmpint(img->width, ==, 3);
  g_assert_cmpint(img->height, ==, 2);
  const uint32_t v2[6] = { 0, 500, 1000, 999, 1, 2 };
  for (int i = 0; i < 6; i++)
    assert_luma(img->data[i], v2[i], v2[i], v2[i], 1000);
  g_assert_cmpuint(img->data[1], ==, 128);  /* 127.5 rounds half up */

  const char *p3 = "P3 2 1 255 255 0 0 10 20 30";
  g_free(path);
  path = io_tmp_write("p3.ppm", p3, strlen(p3));
  g_clear_pointer(&img, imageio_u8_free);
  img = read_ok(path);
  g_assert_cmpuint(img->data[0], ==, 76);
  assert_luma(img->data[1], 10, 20, 30, 255);

  for (int wide = 0; wide <= 1; wide++)
    for (int colour = 0; colour <= 1; colour++) {
      const int w = 11, h = 7, ch = colour ? 3 : 1;
      const uint32_t maxval = wide ? 65535 : 255;
      g_autofree char *header = g_strdup_printf("P%c\n#c\n%d %d\n%u\n", colour ? '6' : '5',
                                                w, h, maxval);
      size_t hl = strlen(header), n = (size_t)w * h * ch;
      g_autofree uint8_t *file = g_malloc(hl + n * 2);
      g_autofree uint32_t *s = g_new(uint32_t, n);
      memcpy(file, header, hl);
      for (size_t i = 0; i < n; i++) {
        s[i] = (uint32_t)g_test_rand_int_range(0, (int)maxval + 1);
        if (wide) {
          file[hl + 2 * i] = (uint8_t)(s[i] >> 8);
          file[hl + 2 * i + 1] = (uint8_t)s[i];
        } else {
          file[hl + i] = (uint8_t)s[i];
        }
      }
      g_free(path);
      path = io_tmp_write(colour ? "raw.ppm" : "raw.pgm", file, hl + n * (wide ? 2 : 1));
      g_clear_pointer(&img, imageio_u8_free);
      img = read_ok(path);
      g_assert_cmpint(img->width, ==, w);
      g_assert_cmpint(img->height, ==, h);
      for (int i = 0; i < w * h; i++)
        if (colour)
          assert_luma(img->data[i], s[3 * i], s[3 * i + 1], s[3 * i + 2], maxval);
        else
          assert_luma(img->data[i], s[i], s[i], s[i], maxval);
    }

  /* Our own PGM writer, with a stride. */
  const int w = 13, h = 5;
  g_autofree uint8_t *src = random_plane(w, h, 16);
  g_free(path);
  path = io_tmp_path("out.PGM");
  g_autoptr(GError) error = NULL;
  g_assert_true(imageio_write_gray(path, src, w, h, 16, &error));
  g_assert_no_error(error);
  g_autofree char *contents = NULL;
  g_assert_true(g_file_get_contents(path, &contents, NULL, NULL));
  g_assert_true(g_str_has_prefix(contents, "P5\n13 5\n255\n"));
  g_clear_pointer(&img, imageio_u8_free);
  img = read_ok(path);
  for (int y = 0; y < h; y++)
    g_assert_cmpmem(img->data + y * w, w, src + y * 16, w);
}

/* ---------------------------------------------------------------- JPEG */

static uint8_t *
jpeg_encode(const uint8_t *pixels, int w, int h, int pf, int samp, unsigned long *size)
{
  tjhandle tj = tjInitCompress();
  unsigned char *jpeg = NULL;
  g_assert_cmpint(tjCompress2(tj, pixels, w, 0, h, pf, &jpeg, size, samp, 100, 0), ==, 0);
  uint8_t *copy = g_memdup2(jpeg, *size);
  tjFree(jpeg);
  tjDestroy(tj);
  return copy;
}

/* A smooth image, so that quality-100 JPEG is nearly lossless. */
static uint8_t
smooth(int x, int y, int c, double phase)
{
  return (uint8_t)lround(127.5 + 100.0 * sin(0.11 * x + 0.07 * y + phase + 1.7 * c));
}

static void
test_jpeg(void)
{
  const int w = 64, h = 48;
  double phase = g_test_rand_double_range(0, 6.28);
  g_autofree uint8_t *gray = g_malloc((size_t)w * h);
  g_autofree uint8_t *rgb = g_malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      gray[y * w + x] = smooth(x, y, 0, phase);
      for (int c = 0; c < 3; c++)
        rgb[(y * w + x) * 3 + c] = smooth(x, y, c, phase);
    }

  unsigned long size;
  g_autofree uint8_t *jg = jpeg_encode(gray, w, h, TJPF_GRAY, TJSAMP_GRAY, &size);
  g_autofree char *path = io_tmp_write("gray.jpg", jg, size);
  g_autoptr(ImageioU8) img = read_ok(path);
  g_assert_cmpint(img->width, ==, w);
  g_assert_cmpint(img->height, ==, h);
  for (int i = 0; i < w * h; i++)
    g_assert_cmpint(abs((int)img->data[i] - gray[i]), <=, 2);

  g_autofree uint8_t *jc = jpeg_encode(rgb, w, h, TJPF_RGB, TJSAMP_420, &size);
  g_free(path);
  /* The extension lies on purpose: detection is by content. */
  path = io_tmp_write("colour.png", jc, size);
  g_clear_pointer(&img, imageio_u8_free);
  img = read_ok(path);
  for (int i = 0; i < w * h; i++) {
    double want = 0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2];
    g_assert_cmpfloat(fabs(img->data[i] - want), <=, 2.5);
  }
}

/* ---------------------------------------------------------------- registration */

void imageio_disparity_tests(void);  /* test-imageio-disparity.c */
void imageio_error_tests(void);      /* test-imageio-errors.c */

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  io_tmp_init();
  g_test_add_func("/imageio/png/gray8-stride", test_png8_stride);
  g_test_add_func("/imageio/png/layouts", test_png_layouts);
  g_test_add_func("/imageio/pnm", test_pnm);
  g_test_add_func("/imageio/jpeg", test_jpeg);
  imageio_disparity_tests();
  imageio_error_tests();
  int rc = g_test_run();
  io_tmp_cleanup();
  return rc;
}
