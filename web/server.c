/* server.c: stereod-web's HTTP server: the routes, the sources and their pictures (see
 * web.h, WebServer).
 *
 *   GET /                       the page (page/index.html: plain HTML, inline CSS and
 *                               script, nothing from elsewhere: it works offline)
 *   GET /api/config             what the page builds itself from (JSON)
 *   GET /api/stats              the statistics the events carry every second (JSON)
 *   GET /events                 Server-Sent Events: config, stats (1 Hz), players (each
 *                               JSON line of the height map)
 *   GET /stream.mjpg?source=NAME&view=VIEW[&fps=F]   MJPEG, multipart/x-mixed-replace
 *   GET /snapshot.jpg?source=NAME&view=VIEW          the newest picture, one JPEG
 * NAME is a pair's name or "heightmap"; VIEW left, color, confidence (pairs) or height
 * (the height map); F frames per second, default [web] rate, at most max_rate.
 */
#include "web/server-private.h"

#include <math.h>
#include <string.h>

#include "metrics/metrics.h"
#include "tools/imageio.h"
#include "web/stereod-web-resources.h"

#define LEFT_LIMIT_PIXELS (8192u * 8192u)

char *
web_json_string(const char *text)
{
  GString *s = g_string_new("\"");
  for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_printf(s, "\\%c", *p);
    else if (*p < 0x20)
      g_string_append_printf(s, "\\u%04x", *p);
    else
      g_string_append_c(s, (char)*p);
  }
  g_string_append_c(s, '"');
  return g_string_free(s, FALSE);
}

void
web_json_number(GString *out, double v)
{
  if (!isfinite(v)) {
    g_string_append(out, "null");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.6g", v));
}

WebSource *
web_server_find_source(WebServer *s, const char *name)
{
  for (int i = 0; name && i < s->n_sources; i++)
    if (strcmp(s->sources[i].name, name) == 0)
      return &s->sources[i];
  return NULL;
}

/* ---------------------------------------------------------------- pictures */

static void
on_left(GBytes *body, const GError *error, gpointer data)
{
  WebSource *src = data;
  WebPicture *pic = &src->pictures[WEB_VIEW_LEFT];
  src->left_in_flight = false;
  if (!body) {
    g_snprintf(pic->error, sizeof pic->error, "no left image from stereod: %s",
               error->message);
    return;
  }
  gsize n;
  const void *bytes = g_bytes_get_data(body, &n);
  ImageioLimits limits = { .max_pixels = LEFT_LIMIT_PIXELS, .max_file_size = WEB_LEFT_MAX_BYTES };
  g_autoptr(GError) local = NULL;
  g_autoptr(ImageioU8) img = imageio_decode_gray_full(bytes, n, "left.pgm", &limits, &local);
  g_autoptr(GBytes) jpeg = img ? web_encoder_gray(src->server->encoder, img->data, img->width,
                                                  img->height, img->stride, &local)
                               : NULL;
  if (!jpeg) {
    g_snprintf(pic->error, sizeof pic->error, "stereod's left image: %s", local->message);
    return;
  }
  g_clear_pointer(&pic->jpeg, g_bytes_unref);
  g_clear_pointer(&pic->event, g_bytes_unref);
  pic->jpeg = g_steal_pointer(&jpeg);
  pic->generation = ++src->left_generation;
  pic->error[0] = '\0';
}

/* The left camera: stereod serves it (stereod.conf [daemon] metrics=), fetched at most
 * max_rate times a second while somebody asks. */
static void
left_update(WebSource *src)
{
  WebServer *s = src->server;
  WebPicture *pic = &src->pictures[WEB_VIEW_LEFT];
  if (!src->pair) {
    g_strlcpy(pic->error, "the height map has no left image", sizeof pic->error);
    return;
  }
  if (!s->stereod_metrics) {
    g_strlcpy(pic->error, "left images need stereod's metrics address ([web] stereod=)",
              sizeof pic->error);
    return;
  }
  gint64 now = g_get_monotonic_time();
  if (src->left_in_flight ||
      now - src->left_fetched_us < (gint64)(1e6 / s->config->max_rate))
    return;
  /* stereod's name for the pair: its ring's */
  g_autofree char *pair = g_uri_escape_string(src->pair->ring, NULL, FALSE);
  g_autofree char *path = g_strdup_printf("/left.pgm?pair=%s", pair);
  if (web_scrape_fetch(s->stereod_metrics, path, WEB_LEFT_MAX_BYTES, on_left, src)) {
    src->left_in_flight = true;
    src->left_fetched_us = now;
  }
}

const WebPicture *
web_source_picture(WebSource *src, WebView view)
{
  WebPicture *pic = &src->pictures[view];
  if (view == WEB_VIEW_LEFT) {
    left_update(src);
    return pic->jpeg ? pic : NULL;
  }
  web_ring_take(src->ring, &src->view, &src->view_generation);
  if (src->view_generation == 0) {
    WebRingStatus st;
    web_ring_get_status(src->ring, &st);
    g_strlcpy(pic->error, st.error[0] ? st.error : "no frame yet", sizeof pic->error);
    return NULL;
  }
  if (pic->generation == src->view_generation)
    return pic;
  if (!src->scale_fixed && web_scale_auto(&src->scale, &src->view))
    src->scale_fixed = (src->scale.color == WEB_COLOR_DISPARITY && src->scale.max_disparity > 0) ||
                       (src->scale.color == WEB_COLOR_DEPTH && src->scale.max_depth > 0);
  g_autoptr(GError) error = NULL;
  GBytes *jpeg = web_encoder_frame(src->server->encoder, &src->view, view, &src->scale, &error);
  if (!jpeg) {
    g_snprintf(pic->error, sizeof pic->error, "%s", error->message);
    return pic->jpeg ? pic : NULL;
  }
  g_clear_pointer(&pic->jpeg, g_bytes_unref);
  g_clear_pointer(&pic->event, g_bytes_unref);
  pic->jpeg = jpeg;
  pic->generation = src->view_generation;
  pic->frame_number = src->view.frame_number;
  pic->counter = src->view.counter;
  pic->error[0] = '\0';
  return pic;
}

bool
web_source_shows(const WebSource *src, WebView view)
{
  if (!src->pair)
    return view == WEB_VIEW_HEIGHT;
  if (view == WEB_VIEW_LEFT)
    return src->server->config->stereod != NULL;
  return view == WEB_VIEW_COLOR || view == WEB_VIEW_CONFIDENCE;
}

GBytes *
web_picture_event(WebSource *src, WebView view)
{
  WebPicture *pic = &src->pictures[view];
  if (pic->event)
    return pic->event;
  gsize n;
  const guchar *jpeg = g_bytes_get_data(pic->jpeg, &n);
  g_autofree char *b64 = g_base64_encode(jpeg, n);
  char *text = g_strdup_printf("event: picture\ndata: {\"source\":\"%s\",\"view\":\"%s\","
                               "\"frame\":%" G_GUINT64_FORMAT ",\"counter\":%" G_GUINT64_FORMAT
                               ",\"jpeg\":\"%s\"}\n\n", src->name, web_view_name(view),
                               pic->frame_number, pic->counter, b64);
  pic->event = g_bytes_new_take(text, strlen(text));
  return pic->event;
}

/* ---------------------------------------------------------------- routes */

static void
answer_text(SoupServerMessage *msg, guint status, const char *text)
{
  soup_server_message_set_status(msg, status, NULL);
  soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY, text,
                                   strlen(text));
}

static void
answer_bytes(SoupServerMessage *msg, const char *type, GBytes *body)
{
  soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
  soup_message_headers_replace(soup_server_message_get_response_headers(msg),
                               "Cache-Control", "no-store");
  gsize n;
  const void *data = g_bytes_get_data(body, &n);
  soup_server_message_set_response(msg, type, SOUP_MEMORY_COPY, data, n);
}

static void
answer_json(SoupServerMessage *msg, char *json)
{
  g_autoptr(GBytes) b = g_bytes_new_take(json, strlen(json));
  answer_bytes(msg, "application/json", b);
}

static void
snapshot(WebServer *s, SoupServerMessage *msg, GHashTable *query)
{
  WebSource *src = web_server_find_source(s, query ? g_hash_table_lookup(query, "source") : NULL);
  WebView view = web_view_from_name(query ? g_hash_table_lookup(query, "view") : NULL);
  if (!src || view == WEB_VIEW_COUNT) {
    answer_text(msg, SOUP_STATUS_BAD_REQUEST, "400: ?source=NAME&view=VIEW\n");
    return;
  }
  web_ring_touch(src->ring);
  const WebPicture *pic = web_source_picture(src, view);
  if (!pic) {
    soup_message_headers_replace(soup_server_message_get_response_headers(msg),
                                 "Retry-After", "1");
    g_autofree char *text = g_strdup_printf("503: %s\n", src->pictures[view].error);
    answer_text(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, text);
    return;
  }
  answer_bytes(msg, "image/jpeg", pic->jpeg);
}

static void
on_request(SoupServer *soup, SoupServerMessage *msg, const char *path, GHashTable *query,
           gpointer data)
{
  WebServer *s = data;
  const char *method = soup_server_message_get_method(msg);
  if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD) {
    soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                 "GET, HEAD");
    answer_text(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, "405: GET or HEAD\n");
    return;
  }
  if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0)
    answer_bytes(msg, "text/html; charset=utf-8", s->page);
  else if (strcmp(path, "/api/config") == 0)
    answer_json(msg, web_config_json(s));
  else if (strcmp(path, "/api/stats") == 0)
    answer_json(msg, web_stats_json(s));
  else if (strcmp(path, "/events") == 0)
    web_stream_events(s, msg, query);
  else if (strcmp(path, "/stream.mjpg") == 0)
    web_stream_mjpeg(s, msg, query);
  else if (strcmp(path, "/snapshot.jpg") == 0)
    snapshot(s, msg, query);
  else
    answer_text(msg, SOUP_STATUS_NOT_FOUND, "404: not here (the page is /)\n");
}

/* ---------------------------------------------------------------- players, ticks */

static void
on_players(const char *line, gsize length, gpointer data)
{
  WebServer *s = data;
  g_free(s->last_players);
  s->last_players = g_strndup(line, length);
  s->players_lines++;
  web_stream_broadcast(s, "players", line, length);
}

static gboolean
on_tick(gpointer data)
{
  WebServer *s = data;
  web_stream_check_stalls(s);
  g_autofree char *stats = web_stats_json(s);
  web_stream_broadcast(s, "stats", stats, strlen(stats));
  return G_SOURCE_CONTINUE;
}

static void
source_init(WebServer *s, WebSource *src, const WebPairConfig *pair, const char *name,
            const char *ring)
{
  src->server = s;
  src->pair = pair;
  src->name = name;
  WebRingParams rp = { .label = name, .ring = ring, .max_rate = s->config->max_rate };
  src->ring = web_ring_new(&rp);
  if (pair) {
    src->scale = (WebScale){ .color = pair->color, .max_disparity = pair->max_disparity,
                             .min_depth = pair->min_depth, .max_depth = pair->max_depth };
    src->scale_fixed = pair->color == WEB_COLOR_DISPARITY ? pair->max_disparity > 0
                                                          : pair->max_depth > 0;
  } else {
    src->scale_fixed = true;
  }
  src->scale.max_height = s->config->max_height;
  if (pair && !s->config->stereod)
    g_strlcpy(src->pictures[WEB_VIEW_LEFT].error,
              "left images need stereod's metrics address ([web] stereod=)",
              sizeof src->pictures[WEB_VIEW_LEFT].error);
}

WebServer *
web_server_new(const WebConfig *c, GError **error)
{
  g_return_val_if_fail(c, NULL);
  g_autoptr(GInetSocketAddress) address = metrics_address_parse(c->listen, error);
  if (!address)
    return NULL;
  WebServer *s = g_new0(WebServer, 1);
  s->config = c;
  s->address = g_steal_pointer(&address);
  s->page = g_resource_lookup_data(stereod_web_get_resource(), "/org/stereod/web/index.html",
                                   0, NULL);
  g_assert(s->page);   /* compiled in */
  s->soup = soup_server_new("server-header", NULL, NULL);
  soup_server_add_handler(s->soup, NULL, on_request, s, NULL);
  /* streams are bounded by max_clients; the short requests beside them by this */
  if (!(s->listener = metrics_listener_new(s->soup, s->address, c->max_clients + 32,
                                           "stereod-web", error))) {
    g_autofree char *where = metrics_address_to_authority(s->address);
    g_prefix_error(error, "cannot listen on %s: ", where);
    web_server_free(s);
    return NULL;
  }
  s->port = metrics_listener_get_port(s->listener);

  s->encoder = web_encoder_new(c->quality, c->max_width);
  s->n_sources = c->n_pairs + (c->heightmap_ring ? 1 : 0);
  s->sources = g_new0(WebSource, s->n_sources);
  for (int i = 0; i < c->n_pairs; i++)
    source_init(s, &s->sources[i], &c->pairs[i], c->pairs[i].name, c->pairs[i].ring);
  if (c->heightmap_ring) {
    s->heightmap = &s->sources[c->n_pairs];
    source_init(s, s->heightmap, NULL, "heightmap", c->heightmap_ring);
  }
  /* the addresses were checked with the configuration: these cannot fail */
  if (c->stereod)
    s->stereod_metrics = web_scrape_new("stereod", c->stereod, NULL);
  if (c->heightmap)
    s->heightmap_metrics = web_scrape_new("stereod-heightmap", c->heightmap, NULL);
  if (c->heightmap_socket)
    s->players = web_players_new(c->heightmap_socket, on_players, s);
  s->tick = g_timeout_add_seconds(1, on_tick, s);
  return s;
}

void
web_server_free(WebServer *s)
{
  if (!s)
    return;
  if (s->tick)
    g_source_remove(s->tick);
  web_stream_close_all(s);
  metrics_listener_free(s->listener);
  if (s->soup) {
    soup_server_disconnect(s->soup);
    g_object_unref(s->soup);
  }
  web_players_free(s->players);
  /* before the sources: their fetches point at them */
  web_scrape_free(s->stereod_metrics);
  web_scrape_free(s->heightmap_metrics);
  for (int i = 0; i < s->n_sources; i++) {
    WebSource *src = &s->sources[i];
    web_ring_free(src->ring);
    stereod_frame_clear(&src->view);
    for (int v = 0; v < WEB_VIEW_COUNT; v++) {
      g_clear_pointer(&src->pictures[v].jpeg, g_bytes_unref);
      g_clear_pointer(&src->pictures[v].event, g_bytes_unref);
    }
  }
  g_free(s->sources);
  web_encoder_free(s->encoder);
  g_free(s->last_players);
  if (s->page)
    g_bytes_unref(s->page);
  g_object_unref(s->address);
  g_free(s);
}

char *
web_server_get_url(WebServer *s)
{
  g_return_val_if_fail(s, NULL);
  GInetAddress *a = g_inet_socket_address_get_address(s->address);
  g_autoptr(GSocketAddress) bound = g_inet_socket_address_new(a, s->port);
  g_autofree char *authority = metrics_address_to_authority(G_INET_SOCKET_ADDRESS(bound));
  return g_strdup_printf("http://%s/", authority);
}
