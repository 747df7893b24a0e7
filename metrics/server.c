/* server.c: the HTTP endpoint of the metrics (see metrics.h).
 *
 * A thread of its own runs a GMainContext with a libsoup server on it: the server is
 * created, bound, run and freed on that thread (libsoup objects belong to the context
 * they were made on). What it serves is rendered on that thread from the registry's
 * atomics, or by the owner's route handlers, which take the owner's data under locks
 * the owner holds only for copies: nothing the server does waits for a frame loop, and
 * nothing a frame loop does waits for a client.
 */
#include "metrics/metrics.h"

#include <libsoup/soup.h>
#include <string.h>

/* Connections held at once (a scraper needs one or two); more are closed at once. */
#define MAX_CONNECTIONS 16

struct MetricsServer {
  char *label;
  GInetSocketAddress *address;
  MetricsRegistry *registry;
  MetricsServerRoute routes[METRICS_SERVER_MAX_ROUTES];
  int n_routes;
  void (*collect)(gpointer data);
  gpointer collect_data;

  GThread *thread;
  GMainContext *context;
  GMainLoop *loop;
  GMutex lock;
  GCond cond;
  bool started;                 /* under lock: the thread bound (or failed to) */
  GError *start_error;          /* under lock */
  guint16 port;
  guint64 requests;             /* atomic */
};

static void
answer(SoupServerMessage *msg, guint status, const char *type, GBytes *body)
{
  soup_server_message_set_status(msg, status, NULL);
  SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
  soup_message_headers_replace(h, "Cache-Control", "no-store");
  if (body) {
    soup_server_message_set_response(msg, type, SOUP_MEMORY_COPY,
                                     g_bytes_get_data(body, NULL), g_bytes_get_size(body));
  } else {
    const char *text = soup_status_get_phrase(status);
    g_autofree char *line = g_strdup_printf("%u %s\n", status, text ? text : "");
    soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY,
                                     line, strlen(line));
  }
}

static void
on_request(SoupServer *soup, SoupServerMessage *msg, const char *path, GHashTable *query,
           gpointer data)
{
  MetricsServer *s = data;
  __atomic_add_fetch(&s->requests, 1, __ATOMIC_RELAXED);
  const char *method = soup_server_message_get_method(msg);
  if (method != SOUP_METHOD_GET && method != SOUP_METHOD_HEAD) {
    soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                 "GET, HEAD");
    answer(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL, NULL);
    return;
  }
  if (strcmp(path, "/metrics") == 0) {
    if (s->collect)
      s->collect(s->collect_data);
    GString *text = g_string_sized_new(16384);
    metrics_registry_render(s->registry, text);
    g_autoptr(GBytes) body = g_string_free_to_bytes(text);
    answer(msg, SOUP_STATUS_OK, METRICS_CONTENT_TYPE, body);
  } else {
    int i = 0;
    while (i < s->n_routes && strcmp(path, s->routes[i].path) != 0)
      i++;
    if (i == s->n_routes) {
      answer(msg, SOUP_STATUS_NOT_FOUND, NULL, NULL);
    } else {
      const char *type = "application/octet-stream";
      guint status = SOUP_STATUS_NOT_FOUND;
      g_autoptr(GBytes) body = s->routes[i].func(path, query, &type, &status,
                                                 s->routes[i].data);
      if (body)
        answer(msg, SOUP_STATUS_OK, type, body);
      else
        answer(msg, status, NULL, NULL);
    }
  }
}

static void
started(MetricsServer *s, GError *error)
{
  g_mutex_lock(&s->lock);
  s->started = true;
  s->start_error = error;
  g_cond_signal(&s->cond);
  g_mutex_unlock(&s->lock);
}

static gpointer
server_thread(gpointer data)
{
  MetricsServer *s = data;
  g_main_context_push_thread_default(s->context);
  SoupServer *soup = soup_server_new("server-header", NULL, NULL);
  soup_server_add_handler(soup, NULL, on_request, s, NULL);
  GError *error = NULL;
  MetricsListener *listener = metrics_listener_new(soup, s->address, MAX_CONNECTIONS,
                                                   s->label, &error);
  if (!listener) {
    g_autofree char *where = metrics_address_to_authority(s->address);
    g_prefix_error(&error, "%s: cannot listen on %s: ", s->label, where);
    g_object_unref(soup);
    g_main_context_pop_thread_default(s->context);
    started(s, error);
    return NULL;
  }
  s->port = metrics_listener_get_port(listener);
  started(s, NULL);
  g_main_loop_run(s->loop);
  metrics_listener_free(listener);
  soup_server_disconnect(soup);
  g_object_unref(soup);
  /* what the disconnect scheduled, before the context goes */
  while (g_main_context_iteration(s->context, FALSE))
    ;
  g_main_context_pop_thread_default(s->context);
  return NULL;
}

MetricsServer *
metrics_server_new(const MetricsServerParams *p, GError **error)
{
  g_return_val_if_fail(p && p->address && p->registry, NULL);
  g_return_val_if_fail(p->n_routes >= 0 && p->n_routes <= METRICS_SERVER_MAX_ROUTES, NULL);
  MetricsServer *s = g_new0(MetricsServer, 1);
  s->label = g_strdup(p->label ? p->label : "metrics");
  s->address = g_object_ref(p->address);
  s->registry = p->registry;
  for (int i = 0; i < p->n_routes; i++) {
    g_return_val_if_fail(p->routes[i].path && p->routes[i].func, NULL);
    s->routes[i] = p->routes[i];
    s->routes[i].path = g_strdup(p->routes[i].path);
  }
  s->n_routes = p->n_routes;
  s->collect = p->collect;
  s->collect_data = p->collect_data;
  g_mutex_init(&s->lock);
  g_cond_init(&s->cond);
  s->context = g_main_context_new();
  s->loop = g_main_loop_new(s->context, FALSE);
  s->thread = g_thread_new("metrics-http", server_thread, s);
  g_mutex_lock(&s->lock);
  while (!s->started)
    g_cond_wait(&s->cond, &s->lock);
  g_mutex_unlock(&s->lock);
  if (s->start_error) {
    g_propagate_error(error, g_steal_pointer(&s->start_error));
    metrics_server_free(s);
    return NULL;
  }
  return s;
}

static gboolean
quit_loop(gpointer data)
{
  g_main_loop_quit(data);
  return G_SOURCE_REMOVE;
}

void
metrics_server_free(MetricsServer *s)
{
  if (!s)
    return;
  if (s->thread) {
    g_main_context_invoke(s->context, quit_loop, s->loop);
    g_thread_join(s->thread);
  }
  g_main_loop_unref(s->loop);
  g_main_context_unref(s->context);
  for (int i = 0; i < s->n_routes; i++)
    g_free((char *)s->routes[i].path);
  g_clear_error(&s->start_error);
  g_object_unref(s->address);
  g_mutex_clear(&s->lock);
  g_cond_clear(&s->cond);
  g_free(s->label);
  g_free(s);
}

guint16
metrics_server_get_port(MetricsServer *s)
{
  g_return_val_if_fail(s, 0);
  return s->port;
}

char *
metrics_server_get_url(MetricsServer *s)
{
  g_return_val_if_fail(s, NULL);
  GInetAddress *a = g_inet_socket_address_get_address(s->address);
  g_autoptr(GSocketAddress) bound = g_inet_socket_address_new(a, s->port);
  g_autofree char *authority = metrics_address_to_authority(G_INET_SOCKET_ADDRESS(bound));
  return g_strdup_printf("http://%s/metrics", authority);
}

uint64_t
metrics_server_get_requests(MetricsServer *s)
{
  g_return_val_if_fail(s, 0);
  return __atomic_load_n(&s->requests, __ATOMIC_RELAXED);
}
