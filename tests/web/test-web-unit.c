/* test-web-unit: stereod-web's parts without a server: the configuration (defaults, values,
 * every kind of error with its file, group and key), the samples of a Prometheus text
 * (lookups in any label order, sums, states, histogram quantiles against hand-computed
 * ones, bad lines skipped), the pictures (size after the whole-factor scaling, invalid
 * pixels black, the colour map that of imageio, the automatic scales) and the JSON helpers
 * of the server. */
#include <math.h>
#include <string.h>

#include "tools/imageio.h"
#include "web/server-private.h"
#include "web/web.h"

static WebConfig *
load(const char *text, GError **error)
{
  return web_config_load_data(text, strlen(text), "web.conf", error);
}

static void
test_config_defaults(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(WebConfig) c = load("[pair west]\n[pair east]\nring=east-2\ncolor=depth\n", &error);
  g_assert_no_error(error);
  g_assert_cmpstr(c->listen, ==, "127.0.0.1:8088");
  g_assert_cmpfloat(c->rate, ==, 2);
  g_assert_cmpfloat(c->max_rate, ==, 10);
  g_assert_cmpint(c->quality, ==, 80);
  g_assert_cmpint(c->max_width, ==, 640);
  g_assert_cmpint(c->max_clients, ==, 32);
  g_assert_cmpfloat(c->stall_s, ==, 10);
  g_assert_null(c->stereod);
  g_assert_null(c->heightmap);
  g_assert_null(c->heightmap_socket);
  g_assert_cmpstr(c->heightmap_ring, ==, "heightmap");
  g_assert_cmpint(c->n_pairs, ==, 2);
  g_assert_cmpstr(c->pairs[0].ring, ==, "west");
  g_assert_cmpint(c->pairs[0].color, ==, WEB_COLOR_DISPARITY);
  g_assert_cmpstr(c->pairs[1].ring, ==, "east-2");
  g_assert_cmpint(c->pairs[1].color, ==, WEB_COLOR_DEPTH);
  g_assert_cmpfloat(c->pairs[1].max_depth, ==, 0);
}

static void
test_config_values(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(WebConfig) c = load(
    "[web]\nlisten=0.0.0.0:9000\nrate=1.5\nmax_rate=4\nquality=60\nmax_width=320\n"
    "stall_s=2\nstereod=9101\nheightmap=[::1]:9102\nheightmap_socket=/run/x.sock\n"
    "heightmap_ring=\nmax_height=3\n"
    "[pair a]\ncolor=depth\nmin_depth=10\nmax_depth=90\n[pair b]\nmax_disparity=64\n", &error);
  g_assert_no_error(error);
  g_assert_cmpstr(c->listen, ==, "0.0.0.0:9000");
  g_assert_cmpfloat(c->rate, ==, 1.5);
  g_assert_cmpfloat(c->max_rate, ==, 4);
  g_assert_cmpstr(c->stereod, ==, "9101");
  g_assert_cmpstr(c->heightmap, ==, "[::1]:9102");
  g_assert_cmpstr(c->heightmap_socket, ==, "/run/x.sock");
  g_assert_null(c->heightmap_ring);   /* empty: none */
  g_assert_cmpfloat(c->pairs[0].min_depth, ==, 10);
  g_assert_cmpfloat(c->pairs[0].max_depth, ==, 90);
  g_assert_cmpfloat(c->pairs[1].max_disparity, ==, 64);
}

static void
test_config_errors(void)
{
  const struct {
    const char *text, *message;
    int code;
  } cases[] = {
    { "", "web.conf: no [pair NAME] group", WEB_CONFIG_ERROR_MISSING },
    { "[web]\n[pair a]\n[other]\n", "web.conf: [other]: unknown group", WEB_CONFIG_ERROR_UNKNOWN },
    { "[web]\nport=1\n[pair a]\n", "web.conf: [web] port: unknown key", WEB_CONFIG_ERROR_UNKNOWN },
    { "[web]\nlisten=example.org:80\n[pair a]\n", "web.conf: [web] listen: 'example.org:80': the "
      "address is not", WEB_CONFIG_ERROR_INVALID },
    { "[web]\nlisten=\n[pair a]\n", "web.conf: [web] listen: empty", WEB_CONFIG_ERROR_INVALID },
    { "[web]\nstereod=1:2:3\n[pair a]\n", "web.conf: [web] stereod: '1:2:3': an IPv6",
      WEB_CONFIG_ERROR_INVALID },
    { "[web]\nrate=0\n[pair a]\n", "web.conf: [web] rate: ", WEB_CONFIG_ERROR_INVALID },
    { "[web]\nrate=5\nmax_rate=2\n[pair a]\n", "web.conf: [web] rate: must not be more than "
      "max_rate", WEB_CONFIG_ERROR_INVALID },
    { "[web]\nquality=101\n[pair a]\n", "web.conf: [web] quality: ", WEB_CONFIG_ERROR_INVALID },
    { "[web]\nheightmap_socket=rel.sock\n[pair a]\n", "web.conf: [web] heightmap_socket: "
      "'rel.sock' is not an absolute path", WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\ncolor=height\n", "web.conf: [pair a] color: ", WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\nmin_depth=9\nmax_depth=3\n", "web.conf: [pair a] max_depth: must be greater "
      "than min_depth", WEB_CONFIG_ERROR_INVALID },
    { "[pair .a]\n", "web.conf: [pair .a]: '.a' is not a pair name", WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\nring=x/y\n", "web.conf: [pair a] ring: 'x/y' is not a ring name",
      WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\n[pair b]\nring=a\n", "web.conf: [pair b] ring: ring 'a' is also [pair a]'s",
      WEB_CONFIG_ERROR_INVALID },
    { "[pair heightmap]\n", "web.conf: [pair heightmap] ring: 'heightmap' is the height map's",
      WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\n[pair a]\n", "web.conf: [pair a]: ", WEB_CONFIG_ERROR_INVALID },
    { "[pair a]\nmax_disparity=1,5\n", "web.conf: [pair a] max_disparity: ",
      WEB_CONFIG_ERROR_INVALID },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(WebConfig) c = load(cases[i].text, &error);
    g_assert_null(c);
    g_assert_error(error, WEB_CONFIG_ERROR, cases[i].code);
    if (!g_str_has_prefix(error->message, cases[i].message))
      g_error("case %u: \"%s\" does not start with \"%s\"", i, error->message, cases[i].message);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(WebConfig) c = web_config_load("/nonexistent/web.conf", &error);
  g_assert_null(c);
  g_assert_error(error, WEB_CONFIG_ERROR, WEB_CONFIG_ERROR_IO);
  g_assert_true(g_str_has_prefix(error->message, "/nonexistent/web.conf: "));
}

/* ---------------------------------------------------------------- samples */

static const char *const TEXT =
  "# HELP stereod_frames_dropped_total x\n"
  "# TYPE stereod_frames_dropped_total counter\n"
  "stereod_frames_dropped_total{pair=\"west\",cause=\"unpaired\"} 3\n"
  "stereod_frames_dropped_total{pair=\"west\",cause=\"corrupt\"} 2\n"
  "stereod_frames_dropped_total{pair=\"east\",cause=\"unpaired\"} 7\n"
  "stereod_pair_state{pair=\"west\",state=\"running\"} 1\n"
  "stereod_pair_state{pair=\"west\",state=\"stalled\"} 0\n"
  "weird{label=\"a\\\"b\\\\c\\nd\"} 1.5e3\n"
  "bad line without value\n"
  "bad{unterminated=\"x} 1\n"
  "9bad 1\n"
  "h_bucket{pair=\"west\",le=\"0.1\"} 10\n"
  "h_bucket{pair=\"west\",le=\"0.2\"} 30\n"
  "h_bucket{pair=\"west\",le=\"0.4\"} 40\n"
  "h_bucket{pair=\"west\",le=\"+Inf\"} 40\n"
  "h_count{pair=\"west\"} 40\n"
  "plain 42 1700000000000\n"
  "inf +Inf\n";

static void
test_samples(void)
{
  int bad = 0;
  g_autoptr(WebSamples) s = web_samples_parse(TEXT, strlen(TEXT), &bad);
  g_assert_cmpint(bad, ==, 3);
  /* any label order */
  g_assert_cmpfloat(web_samples_get(s, "stereod_frames_dropped_total", "pair", "west", "cause",
                                    "corrupt", NULL), ==, 2);
  g_assert_cmpfloat(web_samples_get(s, "stereod_frames_dropped_total", "cause", "corrupt",
                                    "pair", "west", NULL), ==, 2);
  g_assert_true(isnan(web_samples_get(s, "stereod_frames_dropped_total", "pair", "west",
                                      NULL)));
  g_assert_cmpfloat(web_samples_sum(s, "stereod_frames_dropped_total", "pair", "west", NULL),
                    ==, 5);
  g_assert_cmpfloat(web_samples_sum(s, "stereod_frames_dropped_total", NULL), ==, 12);
  g_assert_true(isnan(web_samples_sum(s, "nothing", NULL)));
  g_assert_cmpstr(web_samples_find_label(s, "stereod_pair_state", 1, "state", "pair", "west",
                                         NULL), ==, "running");
  g_assert_null(web_samples_find_label(s, "stereod_pair_state", 1, "state", "pair", "east",
                                       NULL));
  g_assert_cmpfloat(web_samples_get(s, "weird", "label", "a\"b\\c\nd", NULL), ==, 1500);
  g_assert_cmpfloat(web_samples_get(s, "plain", NULL), ==, 42);
  g_assert_true(isinf(web_samples_get(s, "inf", NULL)));
  /* quantiles as histogram_quantile: 40 observations, 10 up to 0.1, 20 in (0.1, 0.2],
   * 10 in (0.2, 0.4]: the median (rank 20) is 0.1 + 0.1 * 10 / 20 = 0.15, p90 (rank 36)
   * 0.2 + 0.2 * 6 / 10 = 0.32, p10 (rank 4) 0.1 * 4 / 10 = 0.04 */
  g_assert_cmpfloat_with_epsilon(web_samples_quantile(s, NULL, "h", 0.5, "pair", "west", NULL),
                                 0.15, 1e-12);
  g_assert_cmpfloat_with_epsilon(web_samples_quantile(s, NULL, "h", 0.9, "pair", "west", NULL),
                                 0.32, 1e-12);
  g_assert_cmpfloat_with_epsilon(web_samples_quantile(s, NULL, "h", 0.1, "pair", "west", NULL),
                                 0.04, 1e-12);
  g_assert_true(isnan(web_samples_quantile(s, NULL, "h", 0.5, "pair", "east", NULL)));
  /* over a window: an earlier scrape with 10 observations, all in the first bucket: the
   * 30 since are 20 in (0.1, 0.2] and 10 in (0.2, 0.4]; median rank 15: 0.1 + 0.1 * 15 / 20 */
  const char *before_text = "h_bucket{pair=\"west\",le=\"0.1\"} 10\nh_bucket{pair=\"west\",le=\"0.2\"} 10\n"
                            "h_bucket{pair=\"west\",le=\"0.4\"} 10\nh_bucket{pair=\"west\",le=\"+Inf\"} 10\n";
  g_autoptr(WebSamples) before = web_samples_parse(before_text, strlen(before_text), NULL);
  g_assert_cmpfloat_with_epsilon(web_samples_quantile(s, before, "h", 0.5, "pair", "west",
                                                      NULL), 0.175, 1e-12);
  /* nothing new: no quantile */
  g_assert_true(isnan(web_samples_quantile(s, s, "h", 0.5, "pair", "west", NULL)));
  /* lines beyond the bound are not looked at; an empty text is no sample */
  g_autoptr(WebSamples) empty = web_samples_parse("", 0, &bad);
  g_assert_cmpint(bad, ==, 0);
  g_assert_true(isnan(web_samples_get(empty, "plain", NULL)));
}

/* ---------------------------------------------------------------- pictures */

typedef struct {
  StereodFrame f;
  int16_t *disparity;
  uint16_t *depth;
  uint8_t *confidence;
} TestFrame;

/* w x h, disparity d px where x >= 8 (invalid before), depth 250 / d m, confidence 200. */
static void
test_frame_init(TestFrame *t, uint32_t w, uint32_t h, double d)
{
  memset(t, 0, sizeof *t);
  t->disparity = g_new(int16_t, w * h);
  t->depth = g_new(uint16_t, w * h);
  t->confidence = g_new(uint8_t, w * h);
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      bool valid = x >= 8;
      t->disparity[y * w + x] = valid ? (int16_t)lround(d * 32) : STEREOD_RING_DISPARITY_INVALID;
      t->depth[y * w + x] = valid ? (uint16_t)lround(250000.0 / d) : 0;
      t->confidence[y * w + x] = valid ? 200 : 0;
    }
  t->f.width = w;
  t->f.height = h;
  t->f.formats = STEREOD_RING_FORMAT_DISPARITY | STEREOD_RING_FORMAT_DEPTH |
                 STEREOD_RING_FORMAT_CONFIDENCE;
  t->f.disparity_scale = 1.0 / 32;
  t->f.disparity = t->disparity;
  t->f.depth = t->depth;
  t->f.confidence = t->confidence;
  t->f.strides[STEREOD_RING_PLANE_DISPARITY] = 2 * w;
  t->f.strides[STEREOD_RING_PLANE_DEPTH] = 2 * w;
  t->f.strides[STEREOD_RING_PLANE_CONFIDENCE] = w;
}

static void
test_frame_clear(TestFrame *t)
{
  g_free(t->disparity);
  g_free(t->depth);
  g_free(t->confidence);
}

static void
test_colormap(void)
{
  uint8_t lut[256 * 3];
  web_colormap_table(lut, 256);
  for (int i = 0; i < 256; i++) {
    uint8_t rgb[3];
    imageio_colormap_turbo((float)i / 255.0f, rgb);
    g_assert_cmpmem(lut + 3 * i, 3, rgb, 3);
  }
}

static void
test_pictures(void)
{
  g_autoptr(WebEncoder) e = web_encoder_new(90, 200);
  TestFrame t;
  test_frame_init(&t, 640, 360, 20);
  WebScale s = { .color = WEB_COLOR_DISPARITY };
  g_assert_true(web_scale_auto(&s, &t.f));
  g_assert_cmpfloat(s.max_disparity, ==, 24);   /* 20 px rounded up to a multiple of 8 */
  g_assert_cmpfloat(s.min_depth, ==, 12);       /* 12.5 m, rounded out */
  g_assert_cmpfloat(s.max_depth, ==, 13);
  g_assert_false(web_scale_auto(&s, &t.f));     /* nothing zero any more */
  for (int view = WEB_VIEW_COLOR; view <= WEB_VIEW_CONFIDENCE; view++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) jpeg = web_encoder_frame(e, &t.f, (WebView)view, &s, &error);
    g_assert_no_error(error);
    gsize n;
    const void *data = g_bytes_get_data(jpeg, &n);
    g_autoptr(ImageioU8) img = imageio_decode_gray(data, n, "picture", &error);
    g_assert_no_error(error);
    /* 640 / 200: a factor of 4, 160 x 90 */
    g_assert_cmpint(img->width, ==, 160);
    g_assert_cmpint(img->height, ==, 90);
    /* the invalid band (8 px = 2 columns after scaling) is black; the rest is not */
    for (int y = 10; y < 80; y += 10) {
      g_assert_cmpint(img->data[y * img->stride + 0], <, 24);
      g_assert_cmpint(img->data[y * img->stride + 80], >, 60);
    }
  }
  /* the depth colours and the height map need their planes (FLOAT32 or DEPTH) */
  g_autoptr(GError) error = NULL;
  t.f.formats &= ~STEREOD_RING_FORMAT_DEPTH;
  t.f.depth = NULL;
  s.color = WEB_COLOR_DEPTH;
  g_assert_null(web_encoder_frame(e, &t.f, WEB_VIEW_COLOR, &s, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error(&error);
  g_assert_null(web_encoder_frame(e, &t.f, WEB_VIEW_HEIGHT, &s, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  test_frame_clear(&t);

  /* a gray picture keeps its size under the limit */
  uint8_t gray[100 * 50];
  memset(gray, 128, sizeof gray);
  g_autoptr(GBytes) g = web_encoder_gray(e, gray, 100, 50, 100, &error);
  g_assert_nonnull(g);
  g_autoptr(ImageioU8) img = imageio_decode_gray(g_bytes_get_data(g, NULL), g_bytes_get_size(g),
                                                 "gray", NULL);
  g_assert_cmpint(img->width, ==, 100);
  g_assert_cmpint(abs(img->data[25 * img->stride + 50] - 128), <=, 2);
}

static void
test_views(void)
{
  for (int v = 0; v < WEB_VIEW_COUNT; v++)
    g_assert_cmpint(web_view_from_name(web_view_name((WebView)v)), ==, v);
  g_assert_cmpint(web_view_from_name("nothing"), ==, WEB_VIEW_COUNT);
  g_assert_cmpint(web_view_from_name(NULL), ==, WEB_VIEW_COUNT);
}

static void
test_json(void)
{
  g_autofree char *s = web_json_string("a\"b\\c\nd\x01");
  g_assert_cmpstr(s, ==, "\"a\\\"b\\\\c\\u000ad\\u0001\"");
  GString *o = g_string_new(NULL);
  web_json_number(o, NAN);
  g_string_append_c(o, ' ');
  web_json_number(o, INFINITY);
  g_string_append_c(o, ' ');
  web_json_number(o, 0.125);
  g_assert_cmpstr(o->str, ==, "null null 0.125");
  g_string_free(o, TRUE);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/web/config/defaults", test_config_defaults);
  g_test_add_func("/web/config/values", test_config_values);
  g_test_add_func("/web/config/errors", test_config_errors);
  g_test_add_func("/web/samples", test_samples);
  g_test_add_func("/web/colormap", test_colormap);
  g_test_add_func("/web/pictures", test_pictures);
  g_test_add_func("/web/views", test_views);
  g_test_add_func("/web/json", test_json);
  return g_test_run();
}
