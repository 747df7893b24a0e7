/* test-imageio-errors.c: missing, truncated, garbage and oversized files give errors
 * (one line, naming the file), never crashes. Run under -Db_sanitize=address,undefined to
 * catch reads past the end. */
#include "tools/imageio-private.h"
#include "io-test-util.h"

#include <glib/gstdio.h>
#include <png.h>
#include <string.h>
#include <turbojpeg.h>

static void
assert_error_line(const GError *error, const char *name)
{
  g_assert_nonnull(error);
  g_assert_true(g_str_has_prefix(error->message, name));
  g_assert_null(strchr(error->message, '\n'));
}

static void
assert_file_fails(const char *path, GQuark domain, int code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) img = imageio_read_gray(path, &error);
  g_assert_null(img);
  g_assert_error(error, domain, code);
  assert_error_line(error, path);
}

/* Valid files of every kind, built fresh for each run. */
static GBytes *
make_png(void)
{
  const int w = 48, h = 16;
  g_autofree uint8_t *rgb = g_malloc(w * h * 3);
  for (int i = 0; i < w * h * 3; i++)
    rgb[i] = (uint8_t)g_test_rand_int_range(0, 256);
  GByteArray *out = g_byte_array_new();
  g_assert_true(imageio_png_encode(rgb, w, h, w * 3, PNG_COLOR_TYPE_RGB, 8, NULL, 0, false,
                                   out, "png", NULL));
  return g_byte_array_free_to_bytes(out);
}

static GBytes *
make_jpeg(void)
{
  const int w = 48, h = 24;
  g_autofree uint8_t *rgb = g_malloc(w * h * 3);
  for (int i = 0; i < w * h * 3; i++)
    rgb[i] = (uint8_t)g_test_rand_int_range(0, 256);
  tjhandle tj = tjInitCompress();
  unsigned char *jpeg = NULL;
  unsigned long size = 0;
  g_assert_cmpint(tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_420, 80, 0),
                  ==, 0);
  GBytes *b = g_bytes_new(jpeg, size);
  tjFree(jpeg);
  tjDestroy(tj);
  return b;
}

static GBytes *
make_pnm(const char *magic, int maxval)
{
  const int w = 9, h = 4;
  const int ch = magic[1] == '6' ? 3 : 1, bps = maxval > 255 ? 2 : 1;
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "%s\n# x\n%d %d\n%d\n", magic, w, h, maxval);
  for (int i = 0; i < w * h * ch; i++) {
    int v = g_test_rand_int_range(0, maxval + 1);
    if (magic[1] == '2')
      g_string_append_printf(s, "%d ", v);
    else if (bps == 2) {
      g_string_append_c(s, (char)(v >> 8));
      g_string_append_c(s, (char)v);
    } else {
      g_string_append_c(s, (char)v);
    }
  }
  return g_string_free_to_bytes(s);
}

/* Every proper prefix of a valid file fails cleanly (decoded from memory). */
static void
check_prefixes(GBytes *bytes, const char *what, size_t keep_at_least)
{
  size_t size;
  const uint8_t *data = g_bytes_get_data(bytes, &size);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(ImageioU8) full = imageio_decode_gray(data, size, what, &error);
    g_assert_no_error(error);
  }
  for (size_t n = 0; n + keep_at_least < size; n++) {
    /* A copy of exactly n bytes, so that a read past the end is caught by ASan. */
    g_autofree uint8_t *copy = g_memdup2(data, n);
    g_autoptr(GError) error = NULL;
    g_autoptr(ImageioU8) img = imageio_decode_gray(copy, n, what, &error);
    if (img)
      g_error("%s: prefix of %zu of %zu bytes decoded without an error", what, n, size);
    assert_error_line(error, what);
    g_assert_true(error->domain == IMAGEIO_ERROR);
  }
}

static void
test_truncated(void)
{
  g_autoptr(GBytes) png = make_png();
  g_autoptr(GBytes) jpeg = make_jpeg();
  g_autoptr(GBytes) p5 = make_pnm("P5", 255);
  g_autoptr(GBytes) p6 = make_pnm("P6", 4095);
  g_autoptr(GBytes) p2 = make_pnm("P2", 255);
  check_prefixes(png, "png", 0);
  check_prefixes(jpeg, "jpeg", 0);
  check_prefixes(p5, "p5", 0);
  check_prefixes(p6, "p6", 0);
  /* A plain file cut inside its last number is still a valid file: keep 4 bytes. */
  check_prefixes(p2, "p2", 4);

  /* The same through files, as a user meets them. */
  size_t size;
  const uint8_t *data = g_bytes_get_data(png, &size);
  g_autofree char *path = io_tmp_write("cut.png", data, size / 2);
  assert_file_fails(path, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);
  data = g_bytes_get_data(jpeg, &size);
  g_free(path);
  path = io_tmp_write("cut.jpg", data, size - 10);
  assert_file_fails(path, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);
}

/* Random byte flips: any outcome but a crash (or a sanitizer report) is fine. */
static void
test_fuzz(void)
{
  GBytes *files[4] = { make_png(), make_jpeg(), make_pnm("P6", 255), make_pnm("P2", 65535) };
  int failures = 0, runs = 0;
  for (int f = 0; f < 4; f++) {
    size_t size;
    const uint8_t *data = g_bytes_get_data(files[f], &size);
    for (int iter = 0; iter < 150; iter++) {
      g_autofree uint8_t *copy = g_memdup2(data, size);
      int flips = g_test_rand_int_range(1, 6);
      for (int k = 0; k < flips; k++)
        copy[g_test_rand_int_range(0, (int)size)] = (uint8_t)g_test_rand_int_range(0, 256);
      g_autoptr(GError) error = NULL;
      g_autoptr(ImageioU8) img = imageio_decode_gray(copy, size, "fuzz", &error);
      g_assert_true((img == NULL) != (error == NULL));
      if (error) {
        assert_error_line(error, "fuzz");
        failures++;
      }
      runs++;
    }
  }
  for (int f = 0; f < 4; f++)
    g_bytes_unref(files[f]);
  g_test_message("%d of %d damaged files were refused", failures, runs);
  /* Garbage after each magic. */
  static const char *magics[] = { "\x89PNG\r\n\x1a\n", "\xff\xd8\xff", "P5", "P6 ", "P2\n" };
  for (size_t m = 0; m < G_N_ELEMENTS(magics); m++)
    for (int iter = 0; iter < 50; iter++) {
      uint8_t buf[300];
      size_t ml = strlen(magics[m]);
      memcpy(buf, magics[m], ml);
      size_t n = ml + (size_t)g_test_rand_int_range(0, (int)(sizeof buf - ml));
      for (size_t i = ml; i < n; i++)
        buf[i] = (uint8_t)g_test_rand_int_range(0, 256);
      g_autoptr(GError) error = NULL;
      g_autoptr(ImageioU8) img = imageio_decode_gray(buf, n, "garbage", &error);
      g_assert_null(img);
      assert_error_line(error, "garbage");
    }
}

static void
test_bad_files(void)
{
  g_autofree char *missing = io_tmp_path("does-not-exist.png");
  assert_file_fails(missing, G_FILE_ERROR, G_FILE_ERROR_NOENT);
  g_autofree char *dir = io_tmp_path("a-directory.png");
  g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
  assert_file_fails(dir, G_FILE_ERROR, G_FILE_ERROR_ISDIR);

  g_autofree char *empty = io_tmp_write("empty.png", "", 0);
  assert_file_fails(empty, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);
  g_autofree char *text = io_tmp_write("text.jpg", "hello, world\n", 13);
  assert_file_fails(text, IMAGEIO_ERROR, IMAGEIO_ERROR_UNKNOWN_FORMAT);

  static const char *unsupported[] = { "P1\n2 2\n0 1 1 0\n", "P4\n8 1\n\x55",
                                       "P7\nWIDTH 1\n", "Pf\n1 1\n-1.0\n\0\0\0\0" };
  for (size_t i = 0; i < G_N_ELEMENTS(unsupported); i++) {
    g_autofree char *path = io_tmp_write("unsupported", unsupported[i],
                                         strlen(unsupported[i]) + (i == 3 ? 4 : 0));
    assert_file_fails(path, IMAGEIO_ERROR, IMAGEIO_ERROR_UNSUPPORTED);
  }

  static const char *malformed[] = { "P5\n", "P5 3", "P5 3 2 0\n......", "P5 3 2 70000\n",
                                     "P5 3 2 255", "P2 2 1 9 3 10", "P2 2 1 9 3 x",
                                     "P5x 3 2 255\n123456", "P5 -3 2 255\n123456" };
  for (size_t i = 0; i < G_N_ELEMENTS(malformed); i++) {
    g_autofree char *path = io_tmp_write("malformed.pgm", malformed[i], strlen(malformed[i]));
    assert_file_fails(path, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);
  }

  /* Oversized: refused from the header, before anything that size is allocated. */
  const char *huge = "P5\n20000 10\n255\n";
  g_autofree char *hp = io_tmp_write("huge.pgm", huge, strlen(huge));
  assert_file_fails(hp, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
  const char *zero = "P5\n0 10\n255\n";
  g_autofree char *zp = io_tmp_write("zero.pgm", zero, strlen(zero));
  assert_file_fails(zp, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
  const char *big_short = "P5\n16384 16384\n255\nabc";
  g_autofree char *bp = io_tmp_write("big.pgm", big_short, strlen(big_short));
  assert_file_fails(bp, IMAGEIO_ERROR, IMAGEIO_ERROR_CORRUPT);

  const int wide = IMAGEIO_MAX_SIDE + 1;
  g_autofree uint8_t *row = g_malloc0(wide);
  g_autoptr(GByteArray) png = g_byte_array_new();
  g_assert_true(imageio_png_encode(row, wide, 1, wide, PNG_COLOR_TYPE_GRAY, 8, NULL, 0, false,
                                   png, "wide", NULL));
  g_autofree char *wp = io_tmp_write("wide.png", png->data, png->len);
  assert_file_fails(wp, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);

  /* PFM reader: truncated, malformed, too large. */
  static const char *pfms[] = { "", "Pf", "Pf\n2 2\n", "Pf\n2 2\n-1.0\n\0\0\0\0",
                                "Pf\n2 2\n0\n", "Pf\n2 2 x\n", "Pf\n99999 1\n-1\n" };
  for (size_t i = 0; i < G_N_ELEMENTS(pfms); i++) {
    g_autofree char *path = io_tmp_write("bad.pfm", pfms[i], strlen(pfms[i]) + (i == 3 ? 4 : 0));
    g_autoptr(GError) error = NULL;
    g_autoptr(ImageioF32) f = imageio_read_pfm(path, &error);
    g_assert_null(f);
    assert_error_line(error, path);
    g_assert_true(error->domain == IMAGEIO_ERROR);
  }

  /* Writing into a directory that does not exist. */
  g_autofree char *nowhere = g_build_filename(missing, "out.pfm", NULL);
  float d[4] = { 1, 2, 3, 4 };
  g_autoptr(GError) error = NULL;
  g_assert_false(imageio_write_pfm(nowhere, d, 2, 2, 8, &error));
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
}

void imageio_error_tests(void);

void
imageio_error_tests(void)
{
  g_test_add_func("/imageio/errors/bad-files", test_bad_files);
  g_test_add_func("/imageio/errors/truncated", test_truncated);
  g_test_add_func("/imageio/errors/fuzz", test_fuzz);
}
