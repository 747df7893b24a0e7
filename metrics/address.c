/* address.c: "ADDRESS:PORT" of an HTTP endpoint (see metrics.h). */
#include "metrics/metrics.h"

#include <string.h>

G_DEFINE_QUARK(metrics-address-error-quark, metrics_address_error)

static GInetSocketAddress *
fail(GError **error, const char *what)
{
  g_set_error_literal(error, METRICS_ADDRESS_ERROR, 0, what);
  return NULL;
}

GInetSocketAddress *
metrics_address_parse(const char *text, GError **error)
{
  g_return_val_if_fail(text, NULL);
  g_autofree char *host = NULL;
  const char *port_text;
  const char *colon = strrchr(text, ':');
  if (text[0] == '[') {
    const char *close = strchr(text, ']');
    if (!close || close[1] != ':')
      return fail(error, "an IPv6 address must be written [ADDRESS]:PORT");
    host = g_strndup(text + 1, (gsize)(close - text - 1));
    port_text = close + 2;
  } else if (colon) {
    if (strchr(text, ':') != colon)
      return fail(error, "an IPv6 address must be written [ADDRESS]:PORT");
    host = g_strndup(text, (gsize)(colon - text));
    port_text = colon + 1;
  } else {
    host = g_strdup("127.0.0.1");
    port_text = text;
  }
  guint64 port;
  if (!*port_text || !g_ascii_string_to_unsigned(port_text, 10, 0, 65535, &port, NULL))
    return fail(error, "the port is not a number in 0..65535");
  if (g_ascii_strcasecmp(host, "localhost") == 0) {
    g_free(host);
    host = g_strdup("127.0.0.1");
  }
  g_autoptr(GInetAddress) address = g_inet_address_new_from_string(host);
  if (!address)
    return fail(error, "the address is not an IPv4 or IPv6 address (nor localhost)");
  return G_INET_SOCKET_ADDRESS(g_inet_socket_address_new(address, (guint16)port));
}

char *
metrics_address_to_authority(GInetSocketAddress *address)
{
  g_return_val_if_fail(address, NULL);
  GInetAddress *a = g_inet_socket_address_get_address(address);
  g_autofree char *host = g_inet_address_to_string(a);
  guint16 port = g_inet_socket_address_get_port(address);
  if (g_inet_address_get_family(a) == G_SOCKET_FAMILY_IPV6)
    return g_strdup_printf("[%s]:%u", host, port);
  return g_strdup_printf("%s:%u", host, port);
}
