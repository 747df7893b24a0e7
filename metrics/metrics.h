/* metrics.h: Prometheus metrics of the stereod programs, and the HTTP endpoint that
 * serves them.
 *
 * Parts (one object each, one file each):
 *  - MetricsRegistry, MetricsFamily, MetricsSeries (registry.c): metric families (a name,
 *    a help text, a type, label names) and their series (one set of label values each),
 *    updated lock-free by the programs' hot loops and rendered in the Prometheus text
 *    format 0.0.4 by the HTTP thread;
 *  - the address of an endpoint, "ADDRESS:PORT" (address.c);
 *  - MetricsServer (server.c): a libsoup 3 HTTP server on a thread of its own, with its
 *    own GMainContext, serving /metrics from a registry and any extra paths its owner
 *    hands it.
 *
 * Conventions (https://prometheus.io/docs/practices/naming/): names in base units
 * (seconds, bytes), counters end in _total, histograms render _bucket{le="..."} (cumulative,
 * ending with le="+Inf"), _sum and _count. Every family is rendered with its # HELP and
 * # TYPE lines, in the order the families were created, then its series in the order they
 * were created.
 *
 * Thread safety: updating a series (metrics_counter_add, metrics_gauge_set,
 * metrics_histogram_observe, ...) is a few relaxed atomic operations: any thread, no lock,
 * no allocation, never blocked by a scrape. Creating families and series takes the
 * registry's lock (any thread; meant for start-up). Rendering takes the same lock to walk
 * the structure, never a lock an updater takes, so a scrape never makes a frame loop
 * wait. A scrape that runs while a histogram is observed may see that observation in its
 * buckets and count but not yet in its _sum: the buckets and _count always agree (both are
 * computed from one read of the buckets).
 *
 * Names and label names are checked against the Prometheus grammar by
 * g_return_val_if_fail (caller bugs); label values may be any UTF-8 text (escaped when
 * rendered).
 */
#pragma once

#include <gio/gio.h>
#include <stdbool.h>
#include <stdint.h>

G_BEGIN_DECLS

#define METRICS_MAX_LABELS 4            /* label names per family */
#define METRICS_MAX_BUCKETS 32          /* finite bucket bounds per histogram */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef enum {
  METRICS_COUNTER,
  METRICS_GAUGE,
  METRICS_HISTOGRAM,
  METRICS_TYPE_COUNT
} MetricsType;

typedef struct MetricsRegistry MetricsRegistry;
typedef struct MetricsFamily MetricsFamily;
typedef struct MetricsSeries MetricsSeries;

typedef struct {
  const char *name;                     /* [a-zA-Z_:][a-zA-Z0-9_:]*; counters end in _total */
  const char *help;                     /* one line */
  MetricsType type;
  const char *labels[METRICS_MAX_LABELS + 1];  /* label names, NULL-terminated; not "le"
                                                  for a histogram, none starting "__" */
  const double *buckets;                /* histograms: finite upper bounds, strictly
                                           increasing (le="+Inf" is added) */
  int n_buckets;                        /* 1..METRICS_MAX_BUCKETS */
} MetricsFamilyParams;

MetricsRegistry *metrics_registry_new(void);
/* Frees the registry with its families and series. Accepts NULL. Nothing may update a
 * series of it any more (the server that renders it must be freed first). */
void metrics_registry_free(MetricsRegistry *registry);

/* A new family (the registry owns it; the strings are copied). NULL for a caller bug:
 * a bad name or label name, a name already registered, bad buckets. */
MetricsFamily *metrics_family_new(MetricsRegistry *registry, const MetricsFamilyParams *params);

/* A new series of `family` with these label values (one per label name, in order; NULL
 * when the family has no labels). The family owns it. NULL for a caller bug: a missing
 * value, or a series with the same values already there. */
MetricsSeries *metrics_series_new(MetricsFamily *family, const char *const *values);

/* Counters. add: += n (n >= 0, finite). set_total: mirrors a count kept elsewhere (a
 * capture's frame counter): takes `total` when it is larger than the value, so that the
 * counter never goes down. */
void metrics_counter_add(MetricsSeries *series, double n);
void metrics_counter_set_total(MetricsSeries *series, double total);
/* Gauges. */
void metrics_gauge_set(MetricsSeries *series, double value);
/* Histograms: one observation (NaN is ignored). */
void metrics_histogram_observe(MetricsSeries *series, double value);

/* The value of a counter or gauge, the count of a histogram (tests, status lines). */
double metrics_series_get(MetricsSeries *series);

/* Appends the Prometheus text format of every family to `out`. */
void metrics_registry_render(MetricsRegistry *registry, GString *out);

/* Bucket bounds: `n` bounds start, start * factor, ... into `out` (factor > 1). */
void metrics_buckets_exponential(double start, double factor, int n, double *out);

/* ---------------------------------------------------------------- addresses */

#define METRICS_ADDRESS_ERROR (metrics_address_error_quark())
GQuark metrics_address_error_quark(void);

/* Parses "PORT", "ADDRESS:PORT" or "[IPV6]:PORT". ADDRESS is an IP literal (IPv4 or
 * IPv6) or "localhost"; a port alone means 127.0.0.1 (binding to any other address is
 * explicit). PORT is 0..65535 (0: a free port chosen at bind time). Returns the socket
 * address, or NULL and an error (METRICS_ADDRESS_ERROR, code 0) whose message says what
 * is wrong with the text (not naming it: the caller does, with its file and key). */
GInetSocketAddress *metrics_address_parse(const char *text, GError **error);

/* "HOST:PORT" of an address as a URL authority ("[::1]:8088" for IPv6), newly allocated. */
char *metrics_address_to_authority(GInetSocketAddress *address);

/* ---------------------------------------------------------------- listener */

/* The listening socket of a libsoup server, with a bound on the connections it holds:
 * libsoup accepts any number, each an fd and some memory, so a local program could
 * starve the process of fds. Connections are accepted here, counted while soup keeps
 * them open, and one over `max_connections` is closed at once (counted, logged once per
 * burst). Runs on the thread-default main context of the caller, which must be the
 * server's. */
typedef struct MetricsListener MetricsListener;
typedef struct _SoupServer SoupServer;

MetricsListener *metrics_listener_new(SoupServer *soup, GInetSocketAddress *address,
                                      int max_connections, const char *label, GError **error);
void metrics_listener_free(MetricsListener *listener);
guint16 metrics_listener_get_port(MetricsListener *listener);
/* Connections open now, and refused since the start. */
int metrics_listener_get_open(MetricsListener *listener);
/* The socket of the open connection from `remote` (soup gives its messages none when it
 * did not accept them itself), or NULL. Borrowed: valid while the connection is open. */
GSocket *metrics_listener_find(MetricsListener *listener, GSocketAddress *remote);
uint64_t metrics_listener_get_refused(MetricsListener *listener);

/* ---------------------------------------------------------------- server */

typedef struct MetricsServer MetricsServer;

/* A handler for another path of the server, called on the server's thread for GET and
 * HEAD requests of `path` exactly. Returns the body (a new reference) and sets
 * *content_type (a static string), or returns NULL and sets *status (an HTTP status,
 * e.g. 404) for no body. `query` may be NULL. */
typedef GBytes *(*MetricsServerHandler)(const char *path, GHashTable *query,
                                        const char **content_type, guint *status,
                                        gpointer data);

typedef struct {
  const char *path;
  MetricsServerHandler func;
  gpointer data;
} MetricsServerRoute;

#define METRICS_SERVER_MAX_ROUTES 64

typedef struct {
  const char *label;                    /* for logs ("stereod"); copied */
  GInetSocketAddress *address;          /* where to listen (metrics_address_parse) */
  MetricsRegistry *registry;            /* rendered on /metrics; borrowed, must outlive
                                           the server */
  const MetricsServerRoute *routes;     /* extra paths, copied; may be NULL */
  int n_routes;                         /* 0..METRICS_SERVER_MAX_ROUTES */
  void (*collect)(gpointer data);       /* called on the server's thread before each
                                           /metrics is rendered (values kept by others,
                                           read then); may be NULL */
  gpointer collect_data;
} MetricsServerParams;

/* Binds the address and starts the server's thread. Returns NULL and an error
 * (G_IO_ERROR: the address is in use, not ours, ...) when it cannot listen. */
MetricsServer *metrics_server_new(const MetricsServerParams *params, GError **error);
/* Stops the thread (requests in progress are cut) and frees. Accepts NULL. */
void metrics_server_free(MetricsServer *server);
/* The port it listens on (the chosen one for port 0). */
guint16 metrics_server_get_port(MetricsServer *server);
/* "http://HOST:PORT/metrics", newly allocated. */
char *metrics_server_get_url(MetricsServer *server);
/* Requests answered so far (any path; thread safe). */
uint64_t metrics_server_get_requests(MetricsServer *server);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MetricsRegistry, metrics_registry_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MetricsServer, metrics_server_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MetricsListener, metrics_listener_free)

G_END_DECLS
