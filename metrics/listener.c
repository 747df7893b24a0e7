/* listener.c: a bounded listening socket for a libsoup server (see metrics.h).
 *
 * soup_server_accept_iostream hands it each accepted connection; soup closes the
 * connection's socket when it is done with it, which is how the count goes down (the
 * closed sockets are swept before each accept: no callback from soup is needed).
 */
#include "metrics/metrics.h"

#include <libsoup/soup.h>

#define REFUSAL_LOG_US (10 * G_USEC_PER_SEC)

struct MetricsListener {
  char *label;
  SoupServer *soup;
  GSocket *socket;
  GSource *source;
  GPtrArray *open;               /* GSocket *, the connections soup may still hold */
  int max;
  guint16 port;
  uint64_t refused;
  gint64 refused_logged_us;
};

static void
sweep(MetricsListener *l)
{
  for (guint i = 0; i < l->open->len;) {
    GSocket *s = l->open->pdata[i];
    if (g_socket_is_closed(s))
      g_ptr_array_remove_index_fast(l->open, i);
    else
      i++;
  }
}

static gboolean
on_incoming(GSocket *socket, GIOCondition cond, gpointer data)
{
  MetricsListener *l = data;
  for (;;) {
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) c = g_socket_accept(l->socket, NULL, &error);
    if (!c) {
      if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        g_warning("%s: accept: %s, ignoring", l->label, error->message);
      return G_SOURCE_CONTINUE;
    }
    sweep(l);
    if ((int)l->open->len >= l->max) {
      gint64 now = g_get_monotonic_time();
      if (l->refused++ == 0 || now - l->refused_logged_us >= REFUSAL_LOG_US) {
        g_warning("%s: %d connections open, refusing more (%" G_GUINT64_FORMAT " so far)",
                  l->label, l->max, l->refused);
        l->refused_logged_us = now;
      }
      g_socket_close(c, NULL);
      continue;
    }
    g_autoptr(GSocketConnection) conn = g_socket_connection_factory_create_connection(c);
    g_autoptr(GSocketAddress) local = g_socket_get_local_address(c, NULL);
    g_autoptr(GSocketAddress) remote = g_socket_get_remote_address(c, NULL);
    /* in the list first: soup may read the request and call a handler (which looks the
     * socket up) before it returns */
    g_ptr_array_add(l->open, g_object_ref(c));
    if (!local || !remote ||
        !soup_server_accept_iostream(l->soup, G_IO_STREAM(conn), local, remote, &error)) {
      g_warning("%s: a connection soup did not take: %s, ignoring", l->label,
                error ? error->message : "no address");
      g_socket_close(c, NULL);
      continue;
    }
  }
}

MetricsListener *
metrics_listener_new(SoupServer *soup, GInetSocketAddress *address, int max, const char *label,
                     GError **error)
{
  g_return_val_if_fail(SOUP_IS_SERVER(soup) && address && max >= 1, NULL);
  GSocketFamily family = g_inet_address_get_family(g_inet_socket_address_get_address(address));
  g_autoptr(GSocket) s = g_socket_new(family, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                      error);
  if (!s)
    return NULL;
  g_socket_set_blocking(s, FALSE);
  if (!g_socket_bind(s, G_SOCKET_ADDRESS(address), TRUE, error) ||
      !g_socket_listen(s, error))
    return NULL;
  MetricsListener *l = g_new0(MetricsListener, 1);
  l->label = g_strdup(label ? label : "http");
  l->soup = g_object_ref(soup);
  l->socket = g_steal_pointer(&s);
  l->open = g_ptr_array_new_with_free_func(g_object_unref);
  l->max = max;
  g_autoptr(GSocketAddress) local = g_socket_get_local_address(l->socket, NULL);
  if (local && G_IS_INET_SOCKET_ADDRESS(local))
    l->port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(local));
  l->source = g_socket_create_source(l->socket, G_IO_IN, NULL);
  g_source_set_callback(l->source, (GSourceFunc)(void (*)(void))on_incoming, l, NULL);
  g_source_attach(l->source, g_main_context_get_thread_default());
  return l;
}

void
metrics_listener_free(MetricsListener *l)
{
  if (!l)
    return;
  g_source_destroy(l->source);
  g_source_unref(l->source);
  g_socket_close(l->socket, NULL);
  g_object_unref(l->socket);
  g_ptr_array_unref(l->open);
  g_object_unref(l->soup);
  g_free(l->label);
  g_free(l);
}

guint16
metrics_listener_get_port(MetricsListener *l)
{
  g_return_val_if_fail(l, 0);
  return l->port;
}

static bool
same_address(GSocketAddress *a, GSocketAddress *b)
{
  if (!G_IS_INET_SOCKET_ADDRESS(a) || !G_IS_INET_SOCKET_ADDRESS(b))
    return false;
  GInetSocketAddress *x = G_INET_SOCKET_ADDRESS(a), *y = G_INET_SOCKET_ADDRESS(b);
  return g_inet_socket_address_get_port(x) == g_inet_socket_address_get_port(y) &&
         g_inet_address_equal(g_inet_socket_address_get_address(x),
                              g_inet_socket_address_get_address(y));
}

GSocket *
metrics_listener_find(MetricsListener *l, GSocketAddress *remote)
{
  g_return_val_if_fail(l, NULL);
  if (!remote)
    return NULL;
  sweep(l);
  for (guint i = 0; i < l->open->len; i++) {
    GSocket *s = l->open->pdata[i];
    g_autoptr(GSocketAddress) r = g_socket_get_remote_address(s, NULL);
    if (r && same_address(r, remote))
      return s;
  }
  return NULL;
}

int
metrics_listener_get_open(MetricsListener *l)
{
  g_return_val_if_fail(l, 0);
  sweep(l);
  return (int)l->open->len;
}

uint64_t
metrics_listener_get_refused(MetricsListener *l)
{
  g_return_val_if_fail(l, 0);
  return l->refused;
}
