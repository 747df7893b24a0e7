/* test-imageio-errors.c: missing, truncated, garbage and oversized files give errors
 * (one line, naming the file), never crashes; files that are not files (a FIFO,
 * /dev/zero) fail at once; the pixel and file size limits hold before anything is
 * allocated. Run under -Db_sanitize=address,undefined to catch reads past the end. */
#include "tools/imageio-private.h"
#include "io-test-util.h"

#include <glib/gstdio.h>
#include <png.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <zlib.h>

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
  const char *big_short = "P5\n4000 4000\n255\nabc";
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

/* A FIFO with no writer and /dev/zero are refused at once: the open does not wait for a
 * writer, nothing reads "until the end" of an endless device. SIGALRM ends the test if
 * either blocks. */
static void
test_not_files(void)
{
  g_autofree char *fifo = io_tmp_path("fifo.png");
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  alarm(20);
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) img = imageio_read_gray(fifo, &error);
  g_assert_null(img);
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
  g_autofree char *want = g_strdup_printf("%s: not a regular file (a FIFO)", fifo);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_error(&error);
  g_autoptr(ImageioF32) pfm = imageio_read_pfm(fifo, &error);
  g_assert_null(pfm);
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
  g_clear_error(&error);
  g_autoptr(ImageioU8) zero = imageio_read_gray("/dev/zero", &error);
  g_assert_null(zero);
  g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL);
  g_assert_cmpstr(error->message, ==, "/dev/zero: not a regular file (a character device)");
  alarm(0);
  g_unlink(fifo);
}

/* A file over max_file_size is refused from its size, whatever it holds. */
static void
test_file_size_limit(void)
{
  g_autoptr(GBytes) png = make_png();
  size_t size;
  const uint8_t *data = g_bytes_get_data(png, &size);
  g_autofree char *path = io_tmp_write("limit.png", data, size);
  ImageioLimits tight = { .max_file_size = size - 1 };
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) img = imageio_read_gray_full(path, &tight, &error);
  g_assert_null(img);
  g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
  g_autofree char *want = g_strdup_printf("%s: larger than %zu bytes", path, size - 1);
  g_assert_cmpstr(error->message, ==, want);
  g_clear_error(&error);
  ImageioLimits exact = { .max_file_size = size };
  g_autoptr(ImageioU8) ok = imageio_read_gray_full(path, &exact, &error);
  g_assert_no_error(error);
  g_assert_cmpint(ok->width, ==, 48);

  /* The default file limit follows the pixel limit, saturating. */
  ImageioLimits d = imageio_limits_resolve(NULL);
  g_assert_cmpuint(d.max_pixels, ==, IMAGEIO_DEFAULT_MAX_PIXELS);
  g_assert_cmpuint(d.max_file_size, ==, 8 * IMAGEIO_DEFAULT_MAX_PIXELS + (16u << 20));
  ImageioLimits huge = imageio_limits_resolve(&(ImageioLimits){ .max_pixels = G_MAXUINT64 });
  g_assert_cmpuint(huge.max_file_size, ==, (uint64_t)G_MAXSSIZE - 1);
}

/* Every decoder refuses one pixel over max_pixels and takes exactly max_pixels. */
static void
test_pixel_limit_each_format(void)
{
  g_autofree float *pfm_data = g_new0(float, 7 * 5);
  g_autofree char *pfm_path = io_tmp_path("limit.pfm");
  g_assert_true(imageio_write_pfm(pfm_path, pfm_data, 7, 5, 7 * sizeof(float), NULL));
  g_autofree char *pfm_text = NULL;
  gsize pfm_size = 0;
  g_assert_true(g_file_get_contents(pfm_path, &pfm_text, &pfm_size, NULL));
  GBytes *files[] = { make_png(), make_jpeg(), make_pnm("P5", 255), make_pnm("P2", 255),
                      g_bytes_new(pfm_text, pfm_size) };
  const uint64_t pixels[] = { 48 * 16, 48 * 24, 9 * 4, 9 * 4, 7 * 5 };
  for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
    size_t size;
    const void *data = g_bytes_get_data(files[i], &size);
    ImageioLimits below = { .max_pixels = pixels[i] - 1 }, at = { .max_pixels = pixels[i] };
    g_autoptr(GError) error = NULL;
    bool is_pfm = i == G_N_ELEMENTS(files) - 1;
    if (is_pfm) {
      g_autoptr(ImageioF32) no = imageio_decode_pfm_full(data, size, "f", &below, &error);
      g_assert_null(no);
      g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
      g_clear_error(&error);
      g_autoptr(ImageioF32) yes = imageio_decode_pfm_full(data, size, "f", &at, &error);
      g_assert_no_error(error);
    } else {
      g_autoptr(ImageioU8) no = imageio_decode_gray_full(data, size, "f", &below, &error);
      g_assert_null(no);
      g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
      g_autofree char *want = g_strdup_printf("f: image size %dx%d is %" G_GUINT64_FORMAT
                                              " pixels, more than the limit of %"
                                              G_GUINT64_FORMAT, i == 0 ? 48 : i == 1 ? 48 : 9,
                                              i == 0 ? 16 : i == 1 ? 24 : 4, pixels[i],
                                              pixels[i] - 1);
      g_assert_cmpstr(error->message, ==, want);
      g_clear_error(&error);
      g_autoptr(ImageioU8) yes = imageio_decode_gray_full(data, size, "f", &at, &error);
      g_assert_no_error(error);
    }
    g_bytes_unref(files[i]);
  }
}

/* Appends one PNG chunk (length, type, data, CRC over type and data). */
static void
append_chunk(GByteArray *out, const char *type, const uint8_t *data, uint32_t length)
{
  uint8_t be[4] = { length >> 24, length >> 16, length >> 8, length };
  g_byte_array_append(out, be, 4);
  g_byte_array_append(out, (const uint8_t *)type, 4);
  if (length)
    g_byte_array_append(out, data, length);
  uLong crc = crc32(0, (const Bytef *)type, 4);
  if (length)   /* crc32(crc, NULL, 0) would return the initial value */
    crc = crc32(crc, data, length);
  uint8_t c[4] = { crc >> 24, crc >> 16, crc >> 8, crc };
  g_byte_array_append(out, c, 4);
}

/* An all-black side x side 8-bit gray PNG compressed at zlib level 9: a complete, valid
 * image in very few bytes (deflate's best ratio is about 1030:1): 4096 x 4096 is 16 KB. */
static GBytes *
make_small_huge_png(int side)
{
  gsize raw_size = (gsize)side * (side + 1);   /* filter byte + row */
  g_autofree uint8_t *raw = g_malloc0(raw_size);
  uLongf z_size = compressBound(raw_size);
  g_autofree uint8_t *z = g_malloc(z_size);
  g_assert_cmpint(compress2(z, &z_size, raw, raw_size, 9), ==, Z_OK);
  GByteArray *out = g_byte_array_new();
  g_byte_array_append(out, (const uint8_t *)"\x89PNG\r\n\x1a\n", 8);
  uint8_t ihdr[13] = { side >> 24, side >> 16, side >> 8, side,
                       side >> 24, side >> 16, side >> 8, side, 8, 0, 0, 0, 0 };
  append_chunk(out, "IHDR", ihdr, 13);
  append_chunk(out, "IDAT", z, (uint32_t)z_size);
  append_chunk(out, "IEND", NULL, 0);
  return g_byte_array_free_to_bytes(out);
}

/* The bytes of address space this process has mapped (/proc/self/statm, field 1). */
static guint64
mapped_bytes(void)
{
  g_autofree char *statm = NULL;
  g_assert_true(g_file_get_contents("/proc/self/statm", &statm, NULL, NULL));
  return g_ascii_strtoull(statm, NULL, 10) * (guint64)sysconf(_SC_PAGESIZE);
}

/* A small PNG that declares side x side is refused from its header, before anything of
 * the image's size is allocated: a subprocess reads it with its address space capped
 * 8 MiB above what it uses, where a plane of side x side bytes could not be allocated
 * (checked with g_try_malloc). `limits` NULL is the default limit (64 Mpixel). */
static void
assert_refused_before_allocating(int side, const ImageioLimits *limits, const char *path)
{
  if (g_test_subprocess()) {
#if defined(__SANITIZE_ADDRESS__)
    /* ASan reserves terabytes of shadow memory: an address-space cap cannot be used. */
    g_test_message("address-space cap skipped under AddressSanitizer");
#else
    guint64 cap = mapped_bytes() + (8u << 20);
    struct rlimit rl = { .rlim_cur = cap, .rlim_max = RLIM_INFINITY };
    g_assert_cmpint(setrlimit(RLIMIT_AS, &rl), ==, 0);
    void *plane = g_try_malloc((gsize)side * side);
    g_assert_null(plane);   /* the cap is real: a plane that size cannot be allocated */
#endif
    g_autoptr(GError) error = NULL;
    g_autoptr(ImageioU8) img = limits ? imageio_read_gray_full(path, limits, &error)
                                      : imageio_read_gray(path, &error);
    g_assert_null(img);
    g_assert_error(error, IMAGEIO_ERROR, IMAGEIO_ERROR_TOO_LARGE);
    guint64 max = limits ? limits->max_pixels : IMAGEIO_DEFAULT_MAX_PIXELS;
    g_autofree char *want = g_strdup_printf("%s: image size %dx%d is %" G_GUINT64_FORMAT
                                            " pixels, more than the limit of %"
                                            G_GUINT64_FORMAT, path, side, side,
                                            (guint64)side * side, max);
    g_assert_cmpstr(error->message, ==, want);
    return;
  }
  g_test_trap_subprocess(NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed();
}

/* Decodes a small all-black PNG of side x side with the limit raised to fit it. */
static void
assert_decodes_when_allowed(int side, const char *path)
{
  ImageioLimits raised = { .max_pixels = (uint64_t)side * side };
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) img = imageio_read_gray_full(path, &raised, &error);
  g_assert_no_error(error);
  g_assert_cmpint(img->width, ==, side);
  g_assert_cmpint(img->height, ==, side);
  for (int y = 0; y < side; y += 511)
    g_assert_cmpint(((uint8_t *)IMAGEIO_ROW(img, y))[y], ==, 0);
}

/* The reproducer of issue 12: a 16 KB PNG that declares 4096 x 4096, refused under a
 * limit of 16 Mpixel (the tools' --max-pixels 16000000), decoded with the default. */
static void
test_small_file_huge_image(void)
{
  g_autoptr(GBytes) png = make_small_huge_png(4096);
  size_t size;
  const uint8_t *data = g_bytes_get_data(png, &size);
  g_test_message("a %zu byte PNG declaring 4096x4096", size);
  g_assert_cmpuint(size, <, 17 * 1024);
  g_autofree char *path = io_tmp_write("small-huge.png", data, size);
  ImageioLimits lowered = { .max_pixels = 16000000 };
  assert_refused_before_allocating(4096, &lowered, path);
  if (g_test_subprocess())
    return;
  g_autoptr(GError) error = NULL;
  g_autoptr(ImageioU8) img = imageio_read_gray(path, &error);
  g_assert_no_error(error);
  g_clear_pointer(&img, imageio_u8_free);
  assert_decodes_when_allowed(4096, path);
}

/* Over the default limit: a 66 KB PNG declaring 8192 x 8192 (67 Mpixel) is refused with
 * no option given; raising the limit decodes it. */
static void
test_small_file_over_default(void)
{
  g_autoptr(GBytes) png = make_small_huge_png(8192);
  size_t size;
  const uint8_t *data = g_bytes_get_data(png, &size);
  g_test_message("a %zu byte PNG declaring 8192x8192", size);
  g_assert_cmpuint(size, <, 80 * 1024);
  g_autofree char *path = io_tmp_write("small-over-default.png", data, size);
  assert_refused_before_allocating(8192, NULL, path);
  if (g_test_subprocess())
    return;
  assert_decodes_when_allowed(8192, path);
}

void imageio_error_tests(void);
void imageio_error_tests(void);

void
imageio_error_tests(void)
{
  g_test_add_func("/imageio/errors/bad-files", test_bad_files);
  g_test_add_func("/imageio/errors/not-files", test_not_files);
  g_test_add_func("/imageio/errors/file-size-limit", test_file_size_limit);
  g_test_add_func("/imageio/errors/pixel-limit", test_pixel_limit_each_format);
  g_test_add_func("/imageio/errors/small-file-huge-image", test_small_file_huge_image);
  g_test_add_func("/imageio/errors/small-file-over-default", test_small_file_over_default);
  g_test_add_func("/imageio/errors/truncated", test_truncated);
  g_test_add_func("/imageio/errors/fuzz", test_fuzz);
}
