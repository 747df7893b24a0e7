/* test-metrics: the Prometheus registry, its text format, the endpoint's address and the
 * HTTP server (metrics/metrics.h). */
#include <libsoup/soup.h>
#include <math.h>
#include <string.h>

#include "metrics/metrics.h"

static char *
render(MetricsRegistry *r)
{
  GString *s = g_string_new(NULL);
  metrics_registry_render(r, s);
  return g_string_free(s, FALSE);
}

static void
test_format(void)
{
  g_autoptr(MetricsRegistry) r = metrics_registry_new();
  MetricsFamily *c = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "demo_frames_total", .help = "Frames \\ done", .type = METRICS_COUNTER,
    .labels = { "pair", "cause" } });
  MetricsFamily *g = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "demo_fps", .help = "Rate", .type = METRICS_GAUGE });
  const double b[] = { 0.01, 0.1, 1 };
  MetricsFamily *h = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "demo_latency_seconds", .help = "Latency", .type = METRICS_HISTOGRAM,
    .labels = { "pair" }, .buckets = b, .n_buckets = 3 });
  g_assert_nonnull(c);
  g_assert_nonnull(g);
  g_assert_nonnull(h);
  MetricsSeries *w = metrics_series_new(c, (const char *[]) { "west", "a\"b\\c\nd" });
  MetricsSeries *e = metrics_series_new(c, (const char *[]) { "east", "x" });
  MetricsSeries *fps = metrics_series_new(g, NULL);
  MetricsSeries *lat = metrics_series_new(h, (const char *[]) { "west" });
  metrics_counter_add(w, 3);
  metrics_counter_add(w, 2);
  metrics_counter_add(w, -7);          /* ignored: counters never go down */
  metrics_counter_set_total(e, 10);
  metrics_counter_set_total(e, 4);     /* ignored */
  metrics_gauge_set(fps, 0.1);
  metrics_histogram_observe(lat, 0.005);
  metrics_histogram_observe(lat, 0.01);    /* on a bound: that bucket (le is <=) */
  metrics_histogram_observe(lat, 0.5);
  metrics_histogram_observe(lat, 7);
  metrics_histogram_observe(lat, NAN);     /* ignored */
  g_autofree char *text = render(r);
  g_assert_cmpstr(text, ==,
    "# HELP demo_frames_total Frames \\\\ done\n"
    "# TYPE demo_frames_total counter\n"
    "demo_frames_total{pair=\"west\",cause=\"a\\\"b\\\\c\\nd\"} 5\n"
    "demo_frames_total{pair=\"east\",cause=\"x\"} 10\n"
    "# HELP demo_fps Rate\n"
    "# TYPE demo_fps gauge\n"
    "demo_fps 0.1\n"
    "# HELP demo_latency_seconds Latency\n"
    "# TYPE demo_latency_seconds histogram\n"
    "demo_latency_seconds_bucket{pair=\"west\",le=\"0.01\"} 2\n"
    "demo_latency_seconds_bucket{pair=\"west\",le=\"0.1\"} 2\n"
    "demo_latency_seconds_bucket{pair=\"west\",le=\"1\"} 3\n"
    "demo_latency_seconds_bucket{pair=\"west\",le=\"+Inf\"} 4\n"
    "demo_latency_seconds_sum{pair=\"west\"} 7.515\n"
    "demo_latency_seconds_count{pair=\"west\"} 4\n");
  g_assert_cmpfloat(metrics_series_get(w), ==, 5);
  g_assert_cmpfloat(metrics_series_get(lat), ==, 4);
  metrics_gauge_set(fps, NAN);
  metrics_gauge_set(fps, INFINITY);
  g_autofree char *inf = render(r);
  g_assert_nonnull(strstr(inf, "\ndemo_fps +Inf\n"));
}

/* Caller bugs are refused (g_return_val_if_fail, one critical each): names, suffixes,
 * labels, buckets, duplicates. */
#define REFUSED(call)                                                                     \
  do {                                                                                    \
    g_test_expect_message("stereod-metrics", G_LOG_LEVEL_CRITICAL, "*");                  \
    g_assert_null(call);                                                                  \
    g_test_assert_expected_messages();                                                    \
  } while (0)

static void
test_refused(void)
{
  g_autoptr(MetricsRegistry) r = metrics_registry_new();
  const double bad[] = { 1, 1 };
  const MetricsFamilyParams p[] = {
    { .name = "frames", .help = "x", .type = METRICS_COUNTER },       /* no _total */
    { .name = "9x", .help = "x", .type = METRICS_GAUGE },
    { .name = "a-b", .help = "x", .type = METRICS_GAUGE },
    { .name = "x", .help = "two\nlines", .type = METRICS_GAUGE },
    { .name = "x", .help = "x", .type = METRICS_GAUGE, .labels = { "__x" } },
    { .name = "x", .help = "x", .type = METRICS_GAUGE, .labels = { "a", "a" } },
    { .name = "x", .help = "x", .type = METRICS_GAUGE, .labels = { "a:b" } },
    { .name = "x", .help = "x", .type = METRICS_HISTOGRAM, .labels = { "le" },
      .buckets = (const double[]) { 1 }, .n_buckets = 1 },
    { .name = "x", .help = "x", .type = METRICS_HISTOGRAM, .buckets = bad, .n_buckets = 2 },
    { .name = "x", .help = "x", .type = METRICS_HISTOGRAM },
  };
  for (guint i = 0; i < G_N_ELEMENTS(p); i++)
    REFUSED(metrics_family_new(r, &p[i]));
  MetricsFamily *f = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "x", .help = "x", .type = METRICS_GAUGE, .labels = { "pair" } });
  g_assert_nonnull(f);
  REFUSED(metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "x", .help = "y", .type = METRICS_GAUGE }));
  g_assert_nonnull(metrics_series_new(f, (const char *[]) { "west" }));
  REFUSED(metrics_series_new(f, (const char *[]) { "west" }));
  REFUSED(metrics_series_new(f, NULL));
  REFUSED(metrics_series_new(f, (const char *[]) { "\xff" }));
  g_autofree char *text = render(r);
  g_assert_cmpstr(text, ==, "# HELP x x\n# TYPE x gauge\nx{pair=\"west\"} 0\n");
}

typedef struct {
  MetricsSeries *counter, *histogram;
  int n;
} Adder;

static gpointer
adder(gpointer data)
{
  Adder *a = data;
  for (int i = 0; i < a->n; i++) {
    metrics_counter_add(a->counter, 1);
    metrics_histogram_observe(a->histogram, (double)(i % 3));
  }
  return NULL;
}

/* Four threads add while a fifth renders: no update is lost, every render is cumulative
 * and its _count equals its +Inf bucket. */
static void
test_concurrent(void)
{
  g_autoptr(MetricsRegistry) r = metrics_registry_new();
  MetricsFamily *c = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "n_total", .help = "n", .type = METRICS_COUNTER });
  const double b[] = { 0.5, 1.5 };
  MetricsFamily *h = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "h", .help = "h", .type = METRICS_HISTOGRAM, .buckets = b, .n_buckets = 2 });
  Adder a = { metrics_series_new(c, NULL), metrics_series_new(h, NULL), 200000 };
  GThread *t[4];
  for (int i = 0; i < 4; i++)
    t[i] = g_thread_new("adder", adder, &a);
  double last = -1;
  for (int k = 0; k < 200; k++) {
    g_autofree char *text = render(r);
    double v = g_ascii_strtod(strstr(text, "\nn_total ") + 9, NULL);
    g_assert_cmpfloat(v, >=, last);
    last = v;
    double inf = g_ascii_strtod(strstr(text, "le=\"+Inf\"} ") + 11, NULL);
    double count = g_ascii_strtod(strstr(text, "h_count ") + 8, NULL);
    double b0 = g_ascii_strtod(strstr(text, "le=\"0.5\"} ") + 10, NULL);
    double b1 = g_ascii_strtod(strstr(text, "le=\"1.5\"} ") + 10, NULL);
    g_assert_cmpfloat(inf, ==, count);
    g_assert_cmpfloat(b0, <=, b1);
    g_assert_cmpfloat(b1, <=, inf);
  }
  for (int i = 0; i < 4; i++)
    g_thread_join(t[i]);
  g_assert_cmpfloat(metrics_series_get(a.counter), ==, 4 * 200000);
  g_assert_cmpfloat(metrics_series_get(a.histogram), ==, 4 * 200000);
}

static void
test_address(void)
{
  const struct {
    const char *text, *authority;
  } good[] = {
    { "8089", "127.0.0.1:8089" },
    { "0", "127.0.0.1:0" },
    { "0.0.0.0:9100", "0.0.0.0:9100" },
    { "localhost:80", "127.0.0.1:80" },
    { "[::1]:8088", "[::1]:8088" },
    { "[::]:1", "[::]:1" },
  };
  for (guint i = 0; i < G_N_ELEMENTS(good); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GInetSocketAddress) a = metrics_address_parse(good[i].text, &error);
    g_assert_no_error(error);
    g_autofree char *s = metrics_address_to_authority(a);
    g_assert_cmpstr(s, ==, good[i].authority);
  }
  const char *bad[] = { "", "65536", "-1", "x", "host.example:80", "1.2.3.4:", "::1:80",
                        "[::1]80", "[::1", "1.2.3.4:8x", "300.1.1.1:80", " 80" };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GInetSocketAddress) a = metrics_address_parse(bad[i], &error);
    g_assert_null(a);
    g_assert_error(error, METRICS_ADDRESS_ERROR, 0);
  }
}

static GBytes *
hello(const char *path, GHashTable *query, const char **type, guint *status, gpointer data)
{
  const char *who = query ? g_hash_table_lookup(query, "who") : NULL;
  if (!who) {
    *status = SOUP_STATUS_BAD_REQUEST;
    return NULL;
  }
  *type = "text/plain";
  return g_bytes_new_take(g_strdup_printf("hello %s", who), strlen(who) + 6);
}

static guint
get(SoupSession *session, const char *method, const char *url, char **body, char **type)
{
  g_autoptr(SoupMessage) msg = soup_message_new(method, url);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = soup_session_send_and_read(session, msg, NULL, &error);
  g_assert_no_error(error);
  if (body)
    *body = g_strndup(g_bytes_get_data(bytes, NULL), g_bytes_get_size(bytes));
  if (type)
    *type = g_strdup(soup_message_headers_get_content_type(
      soup_message_get_response_headers(msg), NULL));
  return soup_message_get_status(msg);
}

static void
test_server(void)
{
  g_autoptr(MetricsRegistry) r = metrics_registry_new();
  MetricsFamily *c = metrics_family_new(r, &(MetricsFamilyParams) {
    .name = "x_total", .help = "x", .type = METRICS_COUNTER });
  MetricsSeries *x = metrics_series_new(c, NULL);
  g_autoptr(GInetSocketAddress) address = metrics_address_parse("0", NULL);
  const MetricsServerRoute routes[] = { { "/hello", hello, NULL } };
  g_autoptr(GError) error = NULL;
  g_autoptr(MetricsServer) s = metrics_server_new(&(MetricsServerParams) {
    .label = "test", .address = address, .registry = r, .routes = routes, .n_routes = 1 },
    &error);
  g_assert_no_error(error);
  guint16 port = metrics_server_get_port(s);
  g_assert_cmpuint(port, >, 0);
  g_autofree char *url = metrics_server_get_url(s);
  g_autofree char *expected = g_strdup_printf("http://127.0.0.1:%u/metrics", port);
  g_assert_cmpstr(url, ==, expected);

  /* no proxy: the server is on this machine whatever http_proxy says */
  g_autoptr(SoupSession) session = soup_session_new_with_options("proxy-resolver", NULL, NULL);
  metrics_counter_add(x, 41);
  metrics_counter_add(x, 1);
  g_autofree char *body = NULL, *type = NULL;
  g_assert_cmpuint(get(session, "GET", url, &body, &type), ==, 200);
  g_assert_cmpstr(body, ==, "# HELP x_total x\n# TYPE x_total counter\nx_total 42\n");
  g_assert_cmpstr(type, ==, "text/plain");
  g_autofree char *base = g_strdup_printf("http://127.0.0.1:%u", port);
  g_autofree char *u404 = g_strconcat(base, "/nothing", NULL);
  g_autofree char *uhello = g_strconcat(base, "/hello?who=you", NULL);
  g_autofree char *ubad = g_strconcat(base, "/hello", NULL);
  g_assert_cmpuint(get(session, "GET", u404, NULL, NULL), ==, 404);
  g_assert_cmpuint(get(session, "POST", url, NULL, NULL), ==, 405);
  g_autofree char *h = NULL;
  g_assert_cmpuint(get(session, "GET", uhello, &h, NULL), ==, 200);
  g_assert_cmpstr(h, ==, "hello you");
  g_assert_cmpuint(get(session, "GET", ubad, NULL, NULL), ==, 400);
  g_assert_cmpuint(metrics_server_get_requests(s), ==, 5);

  /* 16 idle connections held: the next one is closed at once, and scrapes work again once
   * some are gone */
  GSocketClient *sc = g_socket_client_new();
  GSocketConnection *held[16];
  g_autofree char *here_text = g_strdup_printf("127.0.0.1:%u", port);
  g_autoptr(GInetSocketAddress) here = metrics_address_parse(here_text, NULL);
  for (int i = 0; i < 16; i++) {
    held[i] = g_socket_client_connect(sc, G_SOCKET_CONNECTABLE(here), NULL, &error);
    g_assert_no_error(error);
  }
  /* the server accepts in order: the 16 before the next one */
  g_test_expect_message("stereod-metrics", G_LOG_LEVEL_WARNING,
                        "test: 16 connections open, refusing more (1 so far)");
  g_autoptr(GSocketConnection) extra = g_socket_client_connect(sc, G_SOCKET_CONNECTABLE(here),
                                                               NULL, &error);
  g_assert_no_error(error);   /* the kernel accepts it; the server closes it */
  char b;
  GInputStream *in = g_io_stream_get_input_stream(G_IO_STREAM(extra));
  gssize got = g_input_stream_read(in, &b, 1, NULL, NULL);
  g_assert_cmpint(got, <=, 0);  /* end of file or reset: closed without an answer */
  g_test_assert_expected_messages();
  for (int i = 0; i < 16; i++) {
    g_io_stream_close(G_IO_STREAM(held[i]), NULL, NULL);
    g_object_unref(held[i]);
  }
  g_object_unref(sc);
  g_autoptr(SoupSession) fresh = soup_session_new_with_options("proxy-resolver", NULL, NULL);
  /* (refused until the server saw the held ones close: it looks at each accept) */
  guint status = 0;
  for (int tries = 0; tries < 250 && status != 200; tries++) {
    g_autoptr(SoupMessage) msg = soup_message_new("GET", url);
    g_autoptr(GBytes) body = soup_session_send_and_read(fresh, msg, NULL, NULL);
    status = body ? soup_message_get_status(msg) : 0;
    if (status != 200)
      g_usleep(20000);
  }
  g_assert_cmpuint(status, ==, 200);

  /* the same address again: a clear error, and the first server keeps serving */
  g_autofree char *same = g_strdup_printf("127.0.0.1:%u", port);
  g_autoptr(GInetSocketAddress) taken = metrics_address_parse(same, NULL);
  g_autoptr(GError) busy = NULL;
  g_autoptr(MetricsServer) s2 = metrics_server_new(&(MetricsServerParams) {
    .label = "second", .address = taken, .registry = r }, &busy);
  g_assert_null(s2);
  g_assert_nonnull(busy);
  g_assert_true(g_str_has_prefix(busy->message, "second: cannot listen on 127.0.0.1:"));
  g_assert_cmpuint(get(session, "GET", url, NULL, NULL), ==, 200);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/metrics/format", test_format);
  g_test_add_func("/metrics/refused", test_refused);
  g_test_add_func("/metrics/concurrent", test_concurrent);
  g_test_add_func("/metrics/address", test_address);
  g_test_add_func("/metrics/server", test_server);
  return g_test_run();
}
