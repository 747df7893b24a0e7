/* stream.c: the clients that stay: MJPEG streams and Server-Sent Events (see web.h).
 *
 * Flow control is libsoup's own: a streamed response is chunked (EOF-delimited for
 * HTTP/1.0), its body does not accumulate, and the message pauses itself when it has
 * written every chunk it was given. A client's timer fires at the rate it asked for; a
 * new picture is appended (and the message unpaused) only when everything given before
 * was written to the socket ("wrote-body-data" counts it down), so a client that cannot
 * keep up gets fewer frames, and holds at most one picture in memory. Event clients (the
 * page) get the pictures the same way, one round of every picture at a time as
 * "picture" events (one connection for the whole page: browsers open at most six to a
 * server, fewer than the page's pictures), and every players line and the statistics
 * while their backlog is under WEB_EVENTS_BACKLOG, skipping lines beyond it. A client that took nothing for stall_s
 * is disconnected (its socket shut down: the write that waits fails, soup finishes the
 * message), so a stalled browser costs a bounded amount of memory and nothing else.
 */
#include "web/server-private.h"

#include "common/keyfile.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/socket.h>

#define BOUNDARY "stereod-frame"

static void watch_all(WebClient *c, int delta);

/* The rings a client watches: its picture's, or every ring for an event client. */
static void
client_count(WebClient *c, int delta)
{
  if (c->kind == WEB_CLIENT_MJPEG && c->view != WEB_VIEW_LEFT)
    web_ring_watch(c->source->ring, delta);
  else if (c->kind == WEB_CLIENT_EVENTS)
    watch_all(c, delta);
}

/* Takes the client out of the list (once); the message may still finish later. */
static void
client_done(WebClient *c)
{
  if (c->done)
    return;
  c->done = true;
  WebServer *s = c->server;
  if (c->timer)
    g_source_remove(c->timer);
  c->timer = 0;
  client_count(c, -1);
  s->clients = g_list_remove(s->clients, c);
  s->n_clients--;
  g_info("client %s left (%" G_GUINT64_FORMAT " sent, %" G_GUINT64_FORMAT " skipped)",
         c->peer, c->sent, c->skipped);
}

static void
client_free(gpointer data)
{
  WebClient *c = data;
  client_done(c);
  g_free(c->sent_pictures);
  g_clear_object(&c->socket);
  g_free(c->peer);
  g_free(c);
}

static void
on_finished(SoupServerMessage *msg, gpointer data)
{
  WebClient *c = data;
  client_done(c);
  /* the signal handlers go with the message; the client with its qdata */
}

static void
on_wrote(SoupServerMessage *msg, guint size, gpointer data)
{
  WebClient *c = data;
  c->queued = size <= c->queued ? c->queued - size : 0;
  c->progress_us = g_get_monotonic_time();
}

static void
append(WebClient *c, const void *data, gsize n, GBytes *bytes)
{
  SoupMessageBody *body = soup_server_message_get_response_body(c->msg);
  if (c->queued == 0)
    c->progress_us = g_get_monotonic_time();   /* a stall is counted from here */
  if (bytes)
    soup_message_body_append_bytes(body, bytes);
  else
    soup_message_body_append(body, SOUP_MEMORY_COPY, data, n);
  c->queued += bytes ? g_bytes_get_size(bytes) : n;
}

static bool
room_for_one(WebClient *c)
{
  return c->queued == 0;
}

static void
stream_start(WebServer *s, SoupServerMessage *msg, WebClient *c, const char *type)
{
  SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
  soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
  soup_message_headers_set_content_type(h, type, NULL);
  soup_message_headers_replace(h, "Cache-Control", "no-store");
  soup_message_headers_set_encoding(h, soup_server_message_get_http_version(msg) == SOUP_HTTP_1_0
                                         ? SOUP_ENCODING_EOF : SOUP_ENCODING_CHUNKED);
  soup_message_body_set_accumulate(soup_server_message_get_response_body(msg), FALSE);
  c->server = s;
  c->msg = msg;
  c->progress_us = g_get_monotonic_time();
  c->peer = g_strdup(soup_server_message_get_remote_host(msg));
  /* soup knows no socket for connections it did not accept itself: the listener does */
  GSocket *sock = metrics_listener_find(s->listener, soup_server_message_get_remote_address(msg));
  c->socket = sock ? g_object_ref(sock) : NULL;
  /* the message owns the client: freed with it, whenever soup lets it go */
  g_object_set_data_full(G_OBJECT(msg), "stereod-web-client", c, client_free);
  g_signal_connect(msg, "wrote-body-data", G_CALLBACK(on_wrote), c);
  g_signal_connect(msg, "finished", G_CALLBACK(on_finished), c);
  s->clients = g_list_prepend(s->clients, c);
  s->n_clients++;
  client_count(c, 1);
}

static bool
refuse_over_limit(WebServer *s, SoupServerMessage *msg)
{
  if (s->n_clients < s->config->max_clients)
    return false;
  if (s->refused++ == 0 || s->refused % 100 == 0)
    g_warning("%d clients already: refusing more (%" G_GUINT64_FORMAT " so far)",
              s->n_clients, s->refused);
  soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Retry-After",
                               "5");
  const char *text = "503: too many clients\n";
  soup_server_message_set_status(msg, SOUP_STATUS_SERVICE_UNAVAILABLE, NULL);
  soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_STATIC, text, strlen(text));
  return true;
}

/* ---------------------------------------------------------------- MJPEG */

static gboolean
on_frame_tick(gpointer data)
{
  WebClient *c = data;
  if (!room_for_one(c)) {
    c->skipped++;   /* the previous picture is still on its way */
    return G_SOURCE_CONTINUE;
  }
  const WebPicture *pic = web_source_picture(c->source, c->view);
  if (!pic || pic->generation == c->sent_generation)
    return G_SOURCE_CONTINUE;
  char head[256];
  int n = g_snprintf(head, sizeof head,
                     "--" BOUNDARY "\r\nContent-Type: image/jpeg\r\nContent-Length: %zu\r\n"
                     "X-Frame-Number: %" G_GUINT64_FORMAT "\r\nX-Counter: %" G_GUINT64_FORMAT
                     "\r\n\r\n", g_bytes_get_size(pic->jpeg), pic->frame_number, pic->counter);
  append(c, head, (gsize)n, NULL);
  append(c, NULL, 0, pic->jpeg);
  append(c, "\r\n", 2, NULL);
  c->sent_generation = pic->generation;
  c->sent++;
  soup_server_message_unpause(c->msg);
  return G_SOURCE_CONTINUE;
}

void
web_stream_mjpeg(WebServer *s, SoupServerMessage *msg, GHashTable *query)
{
  const WebConfig *cfg = s->config;
  WebSource *src = web_server_find_source(s, query ? g_hash_table_lookup(query, "source") : NULL);
  WebView view = web_view_from_name(query ? g_hash_table_lookup(query, "view") : NULL);
  const char *fps_text = query ? g_hash_table_lookup(query, "fps") : NULL;
  double fps = cfg->rate;
  if (fps_text && !keyfile_parse_double(fps_text, &fps))
    fps = -1;
  if (!src || view == WEB_VIEW_COUNT || (view == WEB_VIEW_HEIGHT) != (src == s->heightmap) ||
      !(fps > 0) || !isfinite(fps)) {
    const char *text = "400: ?source=NAME&view=left|color|confidence (a pair) or "
                       "view=height (source=heightmap), fps > 0\n";
    soup_server_message_set_status(msg, SOUP_STATUS_BAD_REQUEST, NULL);
    soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_STATIC, text,
                                     strlen(text));
    return;
  }
  if (refuse_over_limit(s, msg))
    return;
  WebClient *c = g_new0(WebClient, 1);
  c->kind = WEB_CLIENT_MJPEG;
  c->source = src;
  c->view = view;
  c->interval_us = (gint64)(1e6 / MIN(fps, cfg->max_rate));
  stream_start(s, msg, c, "multipart/x-mixed-replace; boundary=" BOUNDARY);
  c->timer = g_timeout_add((guint)MAX(c->interval_us / 1000, 1), on_frame_tick, c);
  on_frame_tick(c);   /* the newest picture at once, when there is one */
}

/* ---------------------------------------------------------------- events */

static void
send_event(WebClient *c, const char *event, const char *data, gsize length)
{
  if (c->queued > WEB_EVENTS_BACKLOG) {
    c->skipped++;
    return;
  }
  g_autofree char *head = g_strdup_printf("event: %s\ndata: ", event);
  append(c, head, strlen(head), NULL);
  append(c, data, length, NULL);
  append(c, "\n\n", 2, NULL);
  c->sent++;
  soup_server_message_unpause(c->msg);
}

/* At the client's rate: every picture of the page newer than the one it has, as one
 * round of "picture" events, and only when the previous round was written (a client
 * that cannot keep up gets fewer rounds; players and stats lines still go through). */
static gboolean
on_pictures_tick(gpointer data)
{
  WebClient *c = data;
  WebServer *s = c->server;
  if (c->queued > 0) {
    c->skipped++;
    return G_SOURCE_CONTINUE;
  }
  bool any = false;
  for (int i = 0; i < s->n_sources; i++)
    for (int v = 0; v < WEB_VIEW_COUNT; v++) {
      WebSource *src = &s->sources[i];
      if (!web_source_shows(src, (WebView)v))
        continue;
      const WebPicture *pic = web_source_picture(src, (WebView)v);
      uint64_t *sent = &c->sent_pictures[i * WEB_VIEW_COUNT + v];
      if (!pic || pic->generation == *sent)
        continue;
      append(c, NULL, 0, web_picture_event(src, (WebView)v));
      *sent = pic->generation;
      any = true;
    }
  if (any) {
    c->sent++;
    soup_server_message_unpause(c->msg);
  }
  return G_SOURCE_CONTINUE;
}

static void
watch_all(WebClient *c, int delta)
{
  WebServer *s = c->server;
  for (int i = 0; i < s->n_sources; i++)
    web_ring_watch(s->sources[i].ring, delta);
}

/* /events[?fps=F]: the configuration, the statistics every second, every players line,
 * and the page's pictures at F rounds a second (default rate, at most max_rate). */
void
web_stream_events(WebServer *s, SoupServerMessage *msg, GHashTable *query)
{
  const char *fps_text = query ? g_hash_table_lookup(query, "fps") : NULL;
  double fps = s->config->rate;
  if (fps_text && (!keyfile_parse_double(fps_text, &fps) || !(fps > 0))) {
    const char *text = "400: fps must be a number > 0\n";
    soup_server_message_set_status(msg, SOUP_STATUS_BAD_REQUEST, NULL);
    soup_server_message_set_response(msg, "text/plain", SOUP_MEMORY_STATIC, text,
                                     strlen(text));
    return;
  }
  if (refuse_over_limit(s, msg))
    return;
  WebClient *c = g_new0(WebClient, 1);
  c->kind = WEB_CLIENT_EVENTS;
  c->interval_us = (gint64)(1e6 / MIN(fps, s->config->max_rate));
  c->sent_pictures = g_new0(uint64_t, (gsize)s->n_sources * WEB_VIEW_COUNT);
  stream_start(s, msg, c, "text/event-stream");
  /* what the page needs at once: the configuration, the statistics, the newest players */
  g_autofree char *config = web_config_json(s);
  send_event(c, "config", config, strlen(config));
  g_autofree char *stats = web_stats_json(s);
  send_event(c, "stats", stats, strlen(stats));
  if (s->last_players)
    send_event(c, "players", s->last_players, strlen(s->last_players));
  c->timer = g_timeout_add((guint)MAX(c->interval_us / 1000, 1), on_pictures_tick, c);
  on_pictures_tick(c);   /* the pictures there are, at once */
}

void
web_stream_broadcast(WebServer *s, const char *event, const char *data, gsize length)
{
  for (GList *l = s->clients; l; l = l->next) {
    WebClient *c = l->data;
    if (c->kind == WEB_CLIENT_EVENTS)
      send_event(c, event, data, length);
  }
}

/* Shuts the client's socket: the write soup waits on fails and the message finishes. */
static void
disconnect(WebClient *c)
{
  if (c->socket && !g_socket_is_closed(c->socket))
    g_socket_shutdown(c->socket, TRUE, TRUE, NULL);
  client_done(c);
}

/* Whether the peer closed its end: a streaming client sends nothing after its request, so
 * a readable socket that reads as end of file is one that left (noticed here even when
 * nothing was written to it lately). */
static bool
peer_left(WebClient *c)
{
  GSocket *sock = c->socket;
  if (!sock || g_socket_is_closed(sock))
    return true;
  char b;
  ssize_t n = recv(g_socket_get_fd(sock), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

void
web_stream_check_stalls(WebServer *s)
{
  gint64 now = g_get_monotonic_time();
  gint64 limit = (gint64)(s->config->stall_s * 1e6);
  for (GList *l = s->clients; l;) {
    WebClient *c = l->data;
    l = l->next;   /* disconnect() takes c out of the list */
    if (peer_left(c)) {
      disconnect(c);
      continue;
    }
    if (c->queued > 0 && now - c->progress_us > limit) {
      s->dropped++;
      g_message("client %s took nothing for %.0f s (%" G_GUINT64_FORMAT " bytes waiting): "
                "disconnected", c->peer, (double)(now - c->progress_us) * 1e-6, c->queued);
      disconnect(c);
    }
  }
}

void
web_stream_close_all(WebServer *s)
{
  while (s->clients)
    disconnect(s->clients->data);
}
