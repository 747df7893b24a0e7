/* test-capture-unit.c: the capture's parts without a running pipeline: pairing logic,
 * luma conversion of every accepted format with the producer's strides, JPEG decode and
 * its failures, and the decode time of a 640x360 and a 1920x1080 JPEG. */
#include "capture-test-util.h"
#include "daemon/capture-private.h"

#include <gst/video/video.h>
#include <math.h>
#include <string.h>

#define MS 1000000ull

/* ---------------------------------------------------------------- pairing */

typedef struct {
  CaptureMatcher m;
  CaptureBuf bufs[256];
  int n;
  CaptureMatchResult res;
} Matcher;

static CaptureBuf *
push(Matcher *t, CaptureSide side, uint64_t pts)
{
  g_assert_cmpint(t->n, <, (int)G_N_ELEMENTS(t->bufs));
  CaptureBuf *b = &t->bufs[t->n++];
  memset(b, 0, sizeof(*b));
  b->side = side;
  b->frame.capture_ns = pts;
  capture_matcher_push(&t->m, b, &t->res);
  return b;
}

static bool
dropped(Matcher *t, CaptureBuf *b)
{
  for (int i = 0; i < t->res.n_dropped; i++)
    if (t->res.dropped[i] == b)
      return true;
  return false;
}

static void
test_pairing_cases(void)
{
  Matcher t = { 0 };
  capture_matcher_init(&t.m, 2, 5 * MS);

  /* Same time within tolerance: a pair. */
  CaptureBuf *l0 = push(&t, CAPTURE_SIDE_LEFT, 0);
  g_assert_null(t.res.left);
  CaptureBuf *r0 = push(&t, CAPTURE_SIDE_RIGHT, 1 * MS);
  g_assert_true(t.res.left == l0 && t.res.right == r0);
  g_assert_cmpint(t.res.n_dropped, ==, 0);

  /* Right lags one frame: both frames still pair, in order. */
  CaptureBuf *l1 = push(&t, CAPTURE_SIDE_LEFT, 33 * MS);
  CaptureBuf *l2 = push(&t, CAPTURE_SIDE_LEFT, 66 * MS);
  g_assert_null(t.res.left);
  CaptureBuf *r1 = push(&t, CAPTURE_SIDE_RIGHT, 34 * MS);
  g_assert_true(t.res.left == l1 && t.res.right == r1);
  CaptureBuf *r2 = push(&t, CAPTURE_SIDE_RIGHT, 62 * MS);
  g_assert_true(t.res.left == l2 && t.res.right == r2);

  /* Outside the tolerance: the older frame is given up when the newer arrives. */
  CaptureBuf *l3 = push(&t, CAPTURE_SIDE_LEFT, 100 * MS);
  CaptureBuf *r3 = push(&t, CAPTURE_SIDE_RIGHT, 106 * MS);
  g_assert_null(t.res.left);
  g_assert_true(t.res.n_dropped == 1 && dropped(&t, l3));

  /* A frame older than every waiting partner beyond the tolerance is given up itself. */
  CaptureBuf *l4 = push(&t, CAPTURE_SIDE_LEFT, 95 * MS);
  g_assert_true(t.res.n_dropped == 1 && dropped(&t, l4));
  g_assert_null(t.res.left);
  CaptureBuf *l5 = push(&t, CAPTURE_SIDE_LEFT, 105 * MS);
  g_assert_true(t.res.left == l5 && t.res.right == r3);

  /* The waiting list is bounded: the oldest is pushed out. */
  CaptureBuf *l6 = push(&t, CAPTURE_SIDE_LEFT, 200 * MS);
  push(&t, CAPTURE_SIDE_LEFT, 233 * MS);
  g_assert_cmpint(t.res.n_dropped, ==, 0);
  push(&t, CAPTURE_SIDE_LEFT, 266 * MS);
  g_assert_true(t.res.n_dropped == 1 && dropped(&t, l6));

  CaptureBuf *out[2 * CAPTURE_MAX_PENDING];
  g_assert_cmpint(capture_matcher_flush(&t.m, out), ==, 2);
  g_assert_cmpint(capture_matcher_flush(&t.m, out), ==, 0);

  /* Nearest wins; waiting frames before it are given up. */
  capture_matcher_init(&t.m, 3, 20 * MS);
  CaptureBuf *a = push(&t, CAPTURE_SIDE_RIGHT, 1000 * MS);
  CaptureBuf *b = push(&t, CAPTURE_SIDE_RIGHT, 1010 * MS);
  CaptureBuf *c = push(&t, CAPTURE_SIDE_RIGHT, 1030 * MS);
  CaptureBuf *l = push(&t, CAPTURE_SIDE_LEFT, 1012 * MS);
  g_assert_true(t.res.left == l && t.res.right == b);
  g_assert_true(t.res.n_dropped == 1 && dropped(&t, a));
  g_assert_cmpint(capture_matcher_flush(&t.m, out), ==, 1);
  g_assert_true(out[0] == c);
}

/* Random streams: both cameras at the same rate with small PTS jitter, one side's
 * streaming thread lagging by up to `lag` frames. Every frame must end exactly once as
 * paired, given up or flushed; pairs are within the tolerance and in order; and when the
 * lag fits in the waiting list, nothing is lost. */
static void
test_pairing_random(void)
{
  GRand *rng = g_rand_new_with_seed(g_test_rand_int());
  for (int round = 0; round < 200; round++) {
    int max_pending = g_rand_int_range(rng, 1, CAPTURE_MAX_PENDING + 1);
    int lag = g_rand_int_range(rng, 0, max_pending + 2);
    int n = 100;
    Matcher *t = g_new0(Matcher, 1);
    capture_matcher_init(&t->m, max_pending, 4 * MS);
    int state[2][100] = { { 0 } };  /* 0 unseen, 1 pushed, 2 paired, 3 dropped */
    int next[2] = { 0, 0 };
    int64_t last_pair[2] = { -1, -1 };
    int paired = 0;
    while (next[0] < n || next[1] < n) {
      /* Left may run ahead of right by up to `lag` frames, and right ahead by 1. */
      int side;
      if (next[0] >= n)
        side = 1;
      else if (next[1] >= n)
        side = 0;
      else if (next[0] - next[1] >= lag)
        side = 1;
      else if (next[1] - next[0] >= 1)
        side = 0;
      else
        side = g_rand_boolean(rng);
      int i = next[side]++;
      uint64_t pts = 1000 * MS + (uint64_t)i * 33 * MS +
                     (uint64_t)g_rand_int_range(rng, 0, 1500) * 1000;
      CaptureBuf *b = push(t, side, pts);
      b->frame.number = (uint64_t)i;
      state[side][i] = 1;
      for (int k = 0; k < t->res.n_dropped; k++) {
        CaptureBuf *d = t->res.dropped[k];
        g_assert_cmpint(state[d->side][d->frame.number], ==, 1);
        state[d->side][d->frame.number] = 3;
      }
      if (t->res.left) {
        CaptureBuf *pl = t->res.left, *pr = t->res.right;
        g_assert_true(pl->side == CAPTURE_SIDE_LEFT && pr->side == CAPTURE_SIDE_RIGHT);
        g_assert_cmpuint(pl->frame.capture_ns > pr->frame.capture_ns ? pl->frame.capture_ns - pr->frame.capture_ns
                                                             : pr->frame.capture_ns - pl->frame.capture_ns,
                         <=, 4 * MS);
        g_assert_cmpint((int64_t)pl->frame.number, >, last_pair[0]);
        g_assert_cmpint((int64_t)pr->frame.number, >, last_pair[1]);
        last_pair[0] = (int64_t)pl->frame.number;
        last_pair[1] = (int64_t)pr->frame.number;
        g_assert_cmpint(state[0][pl->frame.number], ==, 1);
        g_assert_cmpint(state[1][pr->frame.number], ==, 1);
        state[0][pl->frame.number] = state[1][pr->frame.number] = 2;
        paired++;
      }
      if (t->n == (int)G_N_ELEMENTS(t->bufs)) {
        /* Recycle the records of finished frames is not needed: 200 pushes fit. */
        g_assert_not_reached();
      }
    }
    CaptureBuf *out[2 * CAPTURE_MAX_PENDING];
    int left = capture_matcher_flush(&t->m, out);
    for (int k = 0; k < left; k++) {
      g_assert_cmpint(state[out[k]->side][out[k]->frame.number], ==, 1);
      state[out[k]->side][out[k]->frame.number] = 3;
    }
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < n; i++)
        g_assert_cmpint(state[s][i], >=, 2);
    if (lag <= max_pending)
      g_assert_cmpint(paired, ==, n);
    g_free(t);
  }
  g_rand_free(rng);
}

/* ---------------------------------------------------------------- luma */

static void
test_luma_formula(void)
{
  /* Exact rational rounding, half up, over every RGB triple. */
  for (unsigned r = 0; r < 256; r++)
    for (unsigned g = 0; g < 256; g++)
      for (unsigned b = 0; b < 256; b++) {
        unsigned num = 299 * r + 587 * g + 114 * b;
        unsigned want = num / 1000 + (num % 1000 >= 500);
        if (capture_luma_rgb(r, g, b) != want)
          g_error("luma(%u,%u,%u) = %u, want %u", r, g, b, capture_luma_rgb(r, g, b), want);
      }
}

/* A buffer in `format` whose rows are `pad` bytes longer than the default layout, with a
 * GstVideoMeta saying so; random content. Returns the R,G,B or Y planes' expected luma in
 * `want` (width x height, tightly packed). */
static GstBuffer *
make_frame(GstVideoFormat format, int width, int height, int pad, GRand *rng, uint8_t *want,
           GstCaps **caps)
{
  GstVideoInfo info;
  gst_video_info_set_format(&info, format, (guint)width, (guint)height);
  *caps = gst_video_info_to_caps(&info);
  const GstVideoFormatInfo *fi = info.finfo;
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  gint stride[GST_VIDEO_MAX_PLANES] = { 0 };
  gsize total = 64;  /* the planes start after some junk */
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES(&info); p++) {
    stride[p] = GST_VIDEO_INFO_PLANE_STRIDE(&info, p) + pad;
    offset[p] = total;
    int rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, p ? 1 : 0, height);
    total += (gsize)stride[p] * (gsize)rows + 32;
  }
  GstBuffer *buf = gst_buffer_new_allocate(NULL, total, NULL);
  GstMapInfo map;
  g_assert_true(gst_buffer_map(buf, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < total; i++)
    map.data[i] = (uint8_t)g_rand_int(rng);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      const uint8_t *row = map.data + offset[0] + (size_t)y * stride[0];
      uint8_t v;
      if (GST_VIDEO_FORMAT_INFO_IS_RGB(fi)) {
        int ps = GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, 0);
        const uint8_t *px = row + (size_t)x * ps;
        unsigned r = px[GST_VIDEO_FORMAT_INFO_POFFSET(fi, GST_VIDEO_COMP_R)];
        unsigned g = px[GST_VIDEO_FORMAT_INFO_POFFSET(fi, GST_VIDEO_COMP_G)];
        unsigned b = px[GST_VIDEO_FORMAT_INFO_POFFSET(fi, GST_VIDEO_COMP_B)];
        v = (uint8_t)((2 * (299 * r + 587 * g + 114 * b) + 1000) / 2000);
      } else {
        v = row[x];
      }
      want[(size_t)y * width + x] = v;
    }
  gst_buffer_unmap(buf, &map);
  gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, format, (guint)width,
                                 (guint)height, GST_VIDEO_INFO_N_PLANES(&info), offset, stride);
  return buf;
}

static void
test_luma_formats(void)
{
  static const GstVideoFormat formats[] = {
    GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_RGBx,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR,
  };
  g_autoptr(GError) error = NULL;
  CaptureDecoder *dec = capture_decoder_new(&error);
  g_assert_no_error(error);
  GRand *rng = g_rand_new_with_seed(g_test_rand_int());
  for (guint f = 0; f < G_N_ELEMENTS(formats); f++)
    for (int pad = 0; pad <= 12; pad += 12) {
      int w = 63, h = 17;
      size_t dst_stride = 68;
      uint8_t want[63 * 17], dst[68 * 17];
      memset(dst, 0xAA, sizeof(dst));
      GstCaps *caps;
      GstBuffer *buf = make_frame(formats[f], w, h, pad, rng, want, &caps);
      char *why = NULL;
      CaptureDecodeResult r = capture_decoder_run(dec, caps, buf, dst, dst_stride, w, h, &why);
      g_assert_cmpstr(why, ==, NULL);
      g_assert_cmpint(r, ==, CAPTURE_DECODE_OK);
      for (int y = 0; y < h; y++) {
        g_assert_cmpmem(dst + (size_t)y * dst_stride, w, want + (size_t)y * w, w);
        g_assert_cmpuint(dst[(size_t)y * dst_stride + w], ==, 0xAA);  /* row end untouched */
      }
      /* The same caps in another size: counted as wrong size, destination untouched. */
      uint8_t before = dst[0];
      r = capture_decoder_run(dec, caps, buf, dst, dst_stride, w + 1, h, &why);
      g_assert_cmpint(r, ==, CAPTURE_DECODE_WRONG_SIZE);
      g_assert_nonnull(why);
      g_assert_nonnull(strstr(why, "expected 64x17"));
      g_clear_pointer(&why, g_free);
      g_assert_cmpuint(dst[0], ==, before);
      gst_buffer_unref(buf);
      gst_caps_unref(caps);
    }
  /* A buffer too small for its caps is corrupt; caps we do not take are refused. */
  GstCaps *caps = gst_caps_from_string("video/x-raw,format=GRAY8,width=64,height=48,"
                                       "framerate=30/1");
  GstBuffer *small = gst_buffer_new_allocate(NULL, 100, NULL);
  uint8_t dst[64 * 48];
  g_assert_cmpint(capture_decoder_run(dec, caps, small, dst, 64, 64, 48, NULL), ==,
                  CAPTURE_DECODE_CORRUPT);
  gst_caps_unref(caps);
  caps = gst_caps_from_string("video/x-raw,format=YUY2,width=64,height=48");
  char *why = NULL;
  g_assert_cmpint(capture_decoder_run(dec, caps, small, dst, 64, 64, 48, &why), ==,
                  CAPTURE_DECODE_WRONG_SIZE);
  g_assert_nonnull(strstr(why, "unsupported caps"));
  g_free(why);
  gst_caps_unref(caps);
  gst_buffer_unref(small);
  g_rand_free(rng);
  capture_decoder_free(dec);
}

/* ---------------------------------------------------------------- JPEG */

/* A smooth picture with some detail, RGB, and its exact luma. */
static uint8_t *
make_rgb(int w, int h, uint8_t *luma)
{
  uint8_t *rgb = g_malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      uint8_t *p = rgb + ((size_t)y * w + x) * 3;
      p[0] = (uint8_t)(128 + 100 * sin(x * 0.05) * cos(y * 0.03));
      p[1] = (uint8_t)((x * 255) / w);
      p[2] = (uint8_t)((y * 255) / h);
      if (luma)
        luma[(size_t)y * w + x] = capture_luma_rgb(p[0], p[1], p[2]);
    }
  return rgb;
}

static GstBuffer *
wrap(const uint8_t *data, size_t size)
{
  return gst_buffer_new_memdup(data, size);
}

static void
test_jpeg_decode(void)
{
  g_autoptr(GError) error = NULL;
  CaptureDecoder *dec = capture_decoder_new(&error);
  g_assert_no_error(error);
  GstCaps *caps = gst_caps_from_string("image/jpeg,width=100,height=50");
  int w = 99, h = 51;
  size_t stride = 100;
  g_autofree uint8_t *luma = g_malloc((size_t)w * h);
  g_autofree uint8_t *rgb = make_rgb(w, h, luma);
  size_t size;
  g_autofree uint8_t *jpg = ct_jpeg_rgb(rgb, w, h, 95, &size);
  g_autofree uint8_t *dst = g_malloc(stride * h);

  GstBuffer *buf = wrap(jpg, size);
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL), ==,
                  CAPTURE_DECODE_OK);
  double mean;
  int max;
  ct_compare(dst, stride, luma, (size_t)w, w, h, &mean, &max);
  g_test_message("JPEG q95 4:2:0 99x51 luma vs exact: mean %.2f max %d", mean, max);
  g_assert_cmpfloat(mean, <, 1.5);
  g_assert_cmpint(max, <=, 12);
  gst_buffer_unref(buf);

  /* Another size: wrong size, not corrupt. */
  buf = wrap(jpg, size);
  char *why = NULL;
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w - 1, h, &why), ==,
                  CAPTURE_DECODE_WRONG_SIZE);
  g_assert_nonnull(strstr(why, "99x51"));
  g_clear_pointer(&why, g_free);
  gst_buffer_unref(buf);

  /* Truncated at several points, garbage, a corrupted header, empty. */
  for (size_t cut = 20; cut < size; cut += size / 7) {
    buf = wrap(jpg, cut);
    g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, &why), ==,
                    CAPTURE_DECODE_CORRUPT);
    g_assert_nonnull(strstr(why, "corrupt JPEG"));
    g_clear_pointer(&why, g_free);
    gst_buffer_unref(buf);
    /* The next good frame decodes (TurboJPEG 2.1 needs a reset after a header error). */
    buf = wrap(jpg, size);
    g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, &why), ==,
                    CAPTURE_DECODE_OK);
    gst_buffer_unref(buf);
  }
  GRand *rng = g_rand_new_with_seed(g_test_rand_int());
  g_autofree uint8_t *junk = g_malloc(size);
  for (size_t i = 0; i < size; i++)
    junk[i] = (uint8_t)g_rand_int(rng);
  buf = wrap(junk, size);
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL), ==,
                  CAPTURE_DECODE_CORRUPT);
  gst_buffer_unref(buf);
  /* Valid header, a marker in the middle of the scan data (a frame spliced from two):
   * always a warning, so always corrupt. */
  size_t sos = 0;
  for (size_t i = 2; i + 4 < size && !sos; i++)
    if (jpg[i] == 0xff && jpg[i + 1] == 0xda)
      sos = i + 2 + (((size_t)jpg[i + 2] << 8) | jpg[i + 3]);
  g_assert_cmpuint(sos, >, 0);
  g_assert_cmpuint(sos + 16, <, size - 2);
  memcpy(junk, jpg, size);
  size_t at = sos + (size - 2 - sos) / 2;
  junk[at] = 0xff;
  junk[at + 1] = 0xd3;
  buf = wrap(junk, size);
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL), ==,
                  CAPTURE_DECODE_CORRUPT);
  gst_buffer_unref(buf);
  /* Valid header, the second half of the scan data overwritten with noise (no markers).
   * Random bits can form valid Huffman codes to the end, so a frame may decode (about 1
   * in 300 does): never anything but OK or corrupt, and nearly all corrupt. */
  int corrupt = 0, rounds = 50;
  for (int r = 0; r < rounds; r++) {
    memcpy(junk, jpg, size);
    for (size_t i = size / 2; i < size - 2; i++)
      junk[i] = (uint8_t)(g_rand_int(rng) & 0x7f);
    buf = wrap(junk, size);
    CaptureDecodeResult res = capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL);
    g_assert_true(res == CAPTURE_DECODE_OK || res == CAPTURE_DECODE_CORRUPT);
    corrupt += res == CAPTURE_DECODE_CORRUPT;
    gst_buffer_unref(buf);
  }
  g_test_message("noisy scan data: %d of %d frames corrupt", corrupt, rounds);
  g_assert_cmpint(corrupt, >=, rounds - 5);
  buf = gst_buffer_new();
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL), ==,
                  CAPTURE_DECODE_CORRUPT);
  gst_buffer_unref(buf);

  /* And a good frame still decodes after all that. */
  buf = wrap(jpg, size);
  g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, stride, w, h, NULL), ==,
                  CAPTURE_DECODE_OK);
  gst_buffer_unref(buf);
  g_rand_free(rng);
  gst_caps_unref(caps);
  capture_decoder_free(dec);
}

static void
time_decode(CaptureDecoder *dec, int w, int h)
{
  g_autofree uint8_t *rgb = make_rgb(w, h, NULL);
  size_t size;
  g_autofree uint8_t *jpg = ct_jpeg_rgb(rgb, w, h, 90, &size);
  g_autofree uint8_t *dst = g_malloc((size_t)w * h);
  GstCaps *caps = gst_caps_from_string("image/jpeg");
  GstBuffer *buf = wrap(jpg, size);
  int n = w * h > 1000000 ? 20 : 100;
  double best = 1e9, total = 0;
  for (int i = 0; i < n; i++) {
    int64_t t0 = g_get_monotonic_time();
    g_assert_cmpint(capture_decoder_run(dec, caps, buf, dst, (size_t)w, w, h, NULL), ==,
                    CAPTURE_DECODE_OK);
    double ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
    best = MIN(best, ms);
    total += ms;
  }
  g_test_message("JPEG %dx%d 4:2:0 q90 (%zu bytes) to gray: mean %.3f ms, best %.3f ms", w,
                 h, size, total / n, best);
  g_assert_cmpfloat(best, <, 100.0);
  gst_buffer_unref(buf);
  gst_caps_unref(caps);
}

static void
test_jpeg_timing(void)
{
  CaptureDecoder *dec = capture_decoder_new(NULL);
  time_decode(dec, 640, 360);
  time_decode(dec, 1920, 1080);
  capture_decoder_free(dec);
}

int
main(int argc, char **argv)
{
  ct_init(&argc, &argv);
  ct_add_func("/capture/pairing/cases", test_pairing_cases);
  ct_add_func("/capture/pairing/random", test_pairing_random);
  ct_add_func("/capture/luma/formula", test_luma_formula);
  ct_add_func("/capture/luma/formats", test_luma_formats);
  ct_add_func("/capture/jpeg/decode", test_jpeg_decode);
  ct_add_func("/capture/jpeg/timing", test_jpeg_timing);
  return g_test_run();
}
