/* metrics.c: the height-map builder's Prometheus metrics (see heightmap.h). */
#include "heightmap/heightmap.h"

#include "stereod-config.h"

struct HeightmapMetrics {
  MetricsRegistry *registry;
  MetricsServer *server;
  MetricsSeries *fused, *pairs, *players, *seconds, *clients;
  MetricsSeries *pair_fused[HEIGHTMAP_MAX_PAIRS];
  MetricsSeries *pair_refused[HEIGHTMAP_MAX_PAIRS];
  MetricsSeries *pair_open[HEIGHTMAP_MAX_PAIRS];
  int n_pairs;
};

static MetricsFamily *
family(MetricsRegistry *r, const char *name, MetricsType type, const char *help,
       const char *label)
{
  return metrics_family_new(r, &(MetricsFamilyParams) {
    .name = name, .help = help, .type = type, .labels = { label } });
}

static MetricsFamily *
histogram(MetricsRegistry *r, const char *name, const char *help, const double *buckets,
          int n)
{
  return metrics_family_new(r, &(MetricsFamilyParams) {
    .name = name, .help = help, .type = METRICS_HISTOGRAM, .buckets = buckets,
    .n_buckets = n });
}

HeightmapMetrics *
heightmap_metrics_new(const HeightmapConfig *c, GError **error)
{
  g_return_val_if_fail(c && c->metrics_address, NULL);
  g_autoptr(GInetSocketAddress) address = metrics_address_parse(c->metrics_address, error);
  if (!address)
    return NULL;   /* the configuration checked it: not reached */
  HeightmapMetrics *m = g_new0(HeightmapMetrics, 1);
  MetricsRegistry *r = m->registry = metrics_registry_new();
  m->n_pairs = c->n_pairs;

  MetricsFamily *info = family(r, "stereod_heightmap_build_info", METRICS_GAUGE,
                               "The version of stereod-heightmap (always 1)", "version");
  metrics_gauge_set(metrics_series_new(info, (const char *[]) { STEREOD_VERSION }), 1);
  m->fused = metrics_series_new(family(r, "stereod_heightmap_fused_frames_total",
    METRICS_COUNTER, "Fused frames published", NULL), NULL);
  static const double pair_buckets[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32 };
  m->pairs = metrics_series_new(histogram(r, "stereod_heightmap_pairs_per_fused_frame",
    "Camera pairs whose frames went into a fused frame", pair_buckets,
    G_N_ELEMENTS(pair_buckets)), NULL);
  m->players = metrics_series_new(family(r, "stereod_heightmap_players", METRICS_GAUGE,
    "Players (reported tracks) in the last fused frame", NULL), NULL);
  double time_buckets[14];
  metrics_buckets_exponential(0.001, 2, G_N_ELEMENTS(time_buckets), time_buckets);
  m->seconds = metrics_series_new(histogram(r, "stereod_heightmap_builder_seconds",
    "Time to build one fused frame: fusion on the GPU, blobs, tracks and outputs",
    time_buckets, G_N_ELEMENTS(time_buckets)), NULL);
  MetricsFamily *pf = family(r, "stereod_heightmap_pair_frames_fused_total",
                             METRICS_COUNTER, "Frames of the pair that went into a fused "
                             "frame", "pair");
  MetricsFamily *pr = family(r, "stereod_heightmap_pair_frames_refused_total",
                             METRICS_COUNTER, "Frames of the pair the fusion refused (the "
                             "pair is left out and retried)", "pair");
  MetricsFamily *po = family(r, "stereod_heightmap_pair_ring_open", METRICS_GAUGE,
                             "1 while the pair's ring is open and read, else 0", "pair");
  for (int i = 0; i < c->n_pairs; i++) {
    const char *v[] = { c->pairs[i].name };
    m->pair_fused[i] = metrics_series_new(pf, v);
    m->pair_refused[i] = metrics_series_new(pr, v);
    m->pair_open[i] = metrics_series_new(po, v);
  }
  m->clients = metrics_series_new(family(r, "stereod_heightmap_socket_clients",
    METRICS_GAUGE, "Clients of the JSON socket", NULL), NULL);

  MetricsServerParams sp = { .label = "stereod-heightmap", .address = address,
                             .registry = r };
  if (!(m->server = metrics_server_new(&sp, error))) {
    heightmap_metrics_free(m);
    return NULL;
  }
  return m;
}

void
heightmap_metrics_free(HeightmapMetrics *m)
{
  if (!m)
    return;
  metrics_server_free(m->server);   /* first: it renders the registry */
  metrics_registry_free(m->registry);
  g_free(m);
}

char *
heightmap_metrics_get_url(HeightmapMetrics *m)
{
  g_return_val_if_fail(m, NULL);
  return metrics_server_get_url(m->server);
}

void
heightmap_metrics_fused(HeightmapMetrics *m, const int *pairs, int n_pairs, int players,
                        double seconds)
{
  g_return_if_fail(m && (pairs || n_pairs == 0));
  metrics_counter_add(m->fused, 1);
  metrics_histogram_observe(m->pairs, n_pairs);
  metrics_gauge_set(m->players, players);
  metrics_histogram_observe(m->seconds, seconds);
  for (int i = 0; i < n_pairs; i++)
    if (pairs[i] >= 0 && pairs[i] < m->n_pairs)
      metrics_counter_add(m->pair_fused[pairs[i]], 1);
}

void
heightmap_metrics_refused(HeightmapMetrics *m, int pair)
{
  g_return_if_fail(m && pair >= 0 && pair < m->n_pairs);
  metrics_counter_add(m->pair_refused[pair], 1);
}

void
heightmap_metrics_set_open(HeightmapMetrics *m, int pair, bool open)
{
  g_return_if_fail(m && pair >= 0 && pair < m->n_pairs);
  metrics_gauge_set(m->pair_open[pair], open ? 1 : 0);
}

void
heightmap_metrics_set_clients(HeightmapMetrics *m, int clients)
{
  g_return_if_fail(m);
  metrics_gauge_set(m->clients, clients);
}
