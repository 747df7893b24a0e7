/* metrics.c: stereod's Prometheus metrics and left pictures (see metrics.h).
 *
 * The left pictures: three buffers per pair, made at start. The frame loop writes into
 * one that is neither the published one nor the one an HTTP request is copying, then
 * publishes it (index swap under the lock); a request takes the published one for
 * reading (index under the lock), copies it out without the lock, and lets it go. No
 * side ever copies under the lock, so neither waits for the other's copy.
 */
#include "daemon/metrics.h"

#include <errno.h>
#include <string.h>

#include "metrics/metrics.h"
#include "stereod-config.h"

#define LEFT_WANTED_US (3 * G_USEC_PER_SEC)
#define LEFT_INTERVAL_US (100 * 1000)
#define MAX_STATES 16

static const char *const drop_names[DAEMON_DROP_COUNT] = {
  "unpaired", "gpu_behind", "corrupt", "wrong_size", "untimed", "backwards", "starved",
};
static const char *const camera_names[2] = { "left", "right" };

struct DaemonPairMetrics {
  char *name;
  MetricsSeries *camera[2], *corrupt[2], *paired, *submitted, *published;
  MetricsSeries *dropped[DAEMON_DROP_COUNT], *reconnects, *stalls;
  MetricsSeries *state[MAX_STATES];
  MetricsSeries *fps[3];
  MetricsSeries *latency, *gpu;
  const char *const *state_names;
  /* left pictures */
  int width, height;
  uint8_t *buffers[3];
  GMutex lock;
  int published_index;              /* under lock: -1 none */
  int reading[3];                   /* under lock: requests copying each buffer */
  gint64 wanted_us;                 /* atomic: the last request */
  gint64 copied_us;                 /* atomic: the last copy */
};

struct DaemonMetrics {
  char **states;                    /* the state names (a copy) */
  GMutex collect_lock;              /* the collector and its calls */
  void (*collect)(gpointer data);
  gpointer collect_data;
  MetricsRegistry *registry;
  MetricsServer *server;
  DaemonPairMetrics *pairs;
  int n_pairs;
};

static MetricsFamily *
family(MetricsRegistry *r, const char *name, MetricsType type, const char *help,
       const char *l1, const char *l2)
{
  return metrics_family_new(r, &(MetricsFamilyParams) {
    .name = name, .help = help, .type = type, .labels = { l1, l2 } });
}

static MetricsFamily *
histogram(MetricsRegistry *r, const char *name, const char *help, const double *b, int n)
{
  return metrics_family_new(r, &(MetricsFamilyParams) {
    .name = name, .help = help, .type = METRICS_HISTOGRAM, .labels = { "pair" },
    .buckets = b, .n_buckets = n });
}

/* Before each scrape, on the server's thread. */
static void
collect(gpointer data)
{
  DaemonMetrics *m = data;
  g_mutex_lock(&m->collect_lock);
  if (m->collect)
    m->collect(m->collect_data);
  g_mutex_unlock(&m->collect_lock);
}

void
daemon_metrics_set_collector(DaemonMetrics *m, void (*fn)(gpointer), gpointer data)
{
  g_return_if_fail(m);
  g_mutex_lock(&m->collect_lock);
  m->collect = fn;
  m->collect_data = data;
  g_mutex_unlock(&m->collect_lock);
}

/* GET /left.pgm?pair=NAME, on the server's thread. */
static GBytes *
left_route(const char *path, GHashTable *query, const char **type, guint *status, gpointer data)
{
  DaemonMetrics *m = data;
  const char *name = query ? g_hash_table_lookup(query, "pair") : NULL;
  DaemonPairMetrics *p = NULL;
  for (int i = 0; name && i < m->n_pairs; i++)
    if (strcmp(m->pairs[i].name, name) == 0)
      p = &m->pairs[i];
  if (!p) {
    *status = 404;
    return NULL;
  }
  __atomic_store_n(&p->wanted_us, g_get_monotonic_time(), __ATOMIC_RELAXED);
  g_mutex_lock(&p->lock);
  int i = p->published_index;
  if (i >= 0)
    p->reading[i]++;
  g_mutex_unlock(&p->lock);
  if (i < 0) {
    *status = 503;   /* the frame loop copies one at its next frame */
    return NULL;
  }
  char head[64];
  int n = g_snprintf(head, sizeof head, "P5\n%d %d\n255\n", p->width, p->height);
  size_t plane = (size_t)p->width * p->height;
  uint8_t *pgm = g_malloc((size_t)n + plane);
  memcpy(pgm, head, (size_t)n);
  memcpy(pgm + n, p->buffers[i], plane);
  g_mutex_lock(&p->lock);
  p->reading[i]--;
  g_mutex_unlock(&p->lock);
  *type = "image/x-portable-graymap";
  return g_bytes_new_take(pgm, (size_t)n + plane);
}

static void
pair_init(MetricsRegistry *r, DaemonPairMetrics *p, const char *name, int w, int h,
          const char *const *states, MetricsFamily *const *f)
{
  p->name = g_strdup(name);
  p->width = w;
  p->height = h;
  p->state_names = states;
  p->published_index = -1;
  g_mutex_init(&p->lock);
  for (int i = 0; i < 3; i++)
    p->buffers[i] = g_malloc0((size_t)w * h);
  for (int c = 0; c < 2; c++) {
    p->camera[c] = metrics_series_new(f[0], (const char *[]) { name, camera_names[c] });
    p->corrupt[c] = metrics_series_new(f[1], (const char *[]) { name, camera_names[c] });
  }
  const char *v[] = { name };
  p->paired = metrics_series_new(f[2], v);
  p->submitted = metrics_series_new(f[3], v);
  p->published = metrics_series_new(f[4], v);
  for (int d = 0; d < DAEMON_DROP_COUNT; d++)
    p->dropped[d] = metrics_series_new(f[5], (const char *[]) { name, drop_names[d] });
  p->reconnects = metrics_series_new(f[6], v);
  p->stalls = metrics_series_new(f[7], v);
  for (int s = 0; states[s] && s < MAX_STATES; s++)
    p->state[s] = metrics_series_new(f[8], (const char *[]) { name, states[s] });
  static const char *const stages[3] = { "camera", "in", "out" };
  for (int s = 0; s < 3; s++)
    p->fps[s] = metrics_series_new(f[9], (const char *[]) { name, stages[s] });
  p->latency = metrics_series_new(f[10], v);
  p->gpu = metrics_series_new(f[11], v);
}

DaemonMetrics *
daemon_metrics_new(const DaemonMetricsParams *params, GError **error)
{
  g_return_val_if_fail(params && params->address && params->n_pairs >= 0, NULL);
  g_return_val_if_fail(params->states && params->states[0], NULL);
  g_autoptr(GInetSocketAddress) address = metrics_address_parse(params->address, error);
  if (!address)
    return NULL;
  DaemonMetrics *m = g_new0(DaemonMetrics, 1);
  g_mutex_init(&m->collect_lock);
  MetricsRegistry *r = m->registry = metrics_registry_new();
  MetricsFamily *info = family(r, "stereod_build_info", METRICS_GAUGE,
                               "The version of stereod (always 1)", "version", NULL);
  metrics_gauge_set(metrics_series_new(info, (const char *[]) { STEREOD_VERSION }), 1);
  double latency[16], gpu[16];
  metrics_buckets_exponential(0.005, 1.6, G_N_ELEMENTS(latency), latency);  /* 5 ms..5.8 s */
  metrics_buckets_exponential(0.0005, 1.8, G_N_ELEMENTS(gpu), gpu);         /* 0.5 ms..3.4 s */
  MetricsFamily *f[] = {
    family(r, "stereod_camera_frames_total", METRICS_COUNTER,
           "Frames received from the camera", "pair", "camera"),
    family(r, "stereod_camera_frames_corrupt_total", METRICS_COUNTER,
           "Frames of the camera that did not decode", "pair", "camera"),
    family(r, "stereod_frames_paired_total", METRICS_COUNTER,
           "Left and right frames paired by capture time", "pair", NULL),
    family(r, "stereod_frames_submitted_total", METRICS_COUNTER,
           "Pairs handed to the GPU", "pair", NULL),
    family(r, "stereod_frames_published_total", METRICS_COUNTER,
           "Frames published to the pair's ring", "pair", NULL),
    family(r, "stereod_frames_dropped_total", METRICS_COUNTER,
           "Frames or pairs dropped, by cause", "pair", "cause"),
    family(r, "stereod_reconnects_total", METRICS_COUNTER,
           "Times the pair's capture restarted after a failure", "pair", NULL),
    family(r, "stereod_stalls_total", METRICS_COUNTER,
           "Times a camera of the pair sent nothing for stall_ms", "pair", NULL),
    family(r, "stereod_pair_state", METRICS_GAUGE,
           "1 for the pair's capture state, 0 for the others", "pair", "state"),
    family(r, "stereod_frames_per_second", METRICS_GAUGE,
           "Frame rates over the last stats interval: camera (left), in (to the GPU), out "
           "(published)", "pair", "stage"),
    histogram(r, "stereod_capture_to_publish_seconds",
              "Time from a pair's capture to its publication", latency, G_N_ELEMENTS(latency)),
    histogram(r, "stereod_gpu_seconds", "GPU time of one pair", gpu, G_N_ELEMENTS(gpu)),
  };
  m->n_pairs = params->n_pairs;
  m->states = g_strdupv((char **)params->states);
  m->pairs = g_new0(DaemonPairMetrics, MAX(params->n_pairs, 1));
  for (int i = 0; i < params->n_pairs; i++)
    pair_init(r, &m->pairs[i], params->pairs[i], params->widths[i], params->heights[i],
              (const char *const *)m->states, f);
  MetricsServerRoute route = { "/left.pgm", left_route, m };
  MetricsServerParams sp = { .label = "stereod", .address = address, .registry = r,
                             .routes = &route, .n_routes = 1, .collect = collect,
                             .collect_data = m };
  if (!(m->server = metrics_server_new(&sp, error))) {
    daemon_metrics_free(m);
    return NULL;
  }
  return m;
}

void
daemon_metrics_free(DaemonMetrics *m)
{
  if (!m)
    return;
  metrics_server_free(m->server);   /* first: it renders the registry and reads the buffers */
  for (int i = 0; i < m->n_pairs; i++) {
    DaemonPairMetrics *p = &m->pairs[i];
    for (int b = 0; b < 3; b++)
      g_free(p->buffers[b]);
    g_mutex_clear(&p->lock);
    g_free(p->name);
  }
  g_free(m->pairs);
  g_strfreev(m->states);
  g_mutex_clear(&m->collect_lock);
  metrics_registry_free(m->registry);
  g_free(m);
}

char *
daemon_metrics_get_url(DaemonMetrics *m)
{
  g_return_val_if_fail(m, NULL);
  return metrics_server_get_url(m->server);
}

DaemonPairMetrics *
daemon_metrics_pair(DaemonMetrics *m, int index)
{
  g_return_val_if_fail(m && index >= 0 && index < m->n_pairs, NULL);
  return &m->pairs[index];
}

void
daemon_metrics_submitted(DaemonPairMetrics *p)
{
  metrics_counter_add(p->submitted, 1);
}

void
daemon_metrics_published(DaemonPairMetrics *p, double latency_s, double gpu_s)
{
  metrics_counter_add(p->published, 1);
  metrics_histogram_observe(p->latency, latency_s);
  metrics_histogram_observe(p->gpu, gpu_s);
}

void
daemon_metrics_capture(DaemonPairMetrics *p, const DaemonCaptureCounts *c)
{
  for (int s = 0; s < 2; s++) {
    metrics_counter_set_total(p->camera[s], (double)c->camera[s]);
    metrics_counter_set_total(p->corrupt[s], (double)c->corrupt[s]);
  }
  metrics_counter_set_total(p->paired, (double)c->paired);
  for (int d = 0; d < DAEMON_DROP_COUNT; d++)
    metrics_counter_set_total(p->dropped[d], (double)c->dropped[d]);
  metrics_counter_set_total(p->reconnects, (double)c->reconnects);
  metrics_counter_set_total(p->stalls, (double)c->stalls);
}

void
daemon_metrics_state(DaemonPairMetrics *p, const char *state)
{
  for (int s = 0; s < MAX_STATES && p->state_names[s]; s++)
    metrics_gauge_set(p->state[s], strcmp(p->state_names[s], state) == 0 ? 1 : 0);
}

void
daemon_metrics_rates(DaemonPairMetrics *p, double camera_fps, double in_fps, double out_fps)
{
  metrics_gauge_set(p->fps[0], camera_fps);
  metrics_gauge_set(p->fps[1], in_fps);
  metrics_gauge_set(p->fps[2], out_fps);
}

bool
daemon_metrics_left_wanted(DaemonPairMetrics *p, int64_t now_us)
{
  gint64 wanted = __atomic_load_n(&p->wanted_us, __ATOMIC_RELAXED);
  gint64 copied = __atomic_load_n(&p->copied_us, __ATOMIC_RELAXED);
  return wanted && now_us - wanted < LEFT_WANTED_US && now_us - copied >= LEFT_INTERVAL_US;
}

void
daemon_metrics_left_offer(DaemonPairMetrics *p, const uint8_t *data, int width, int height,
                          size_t stride, int64_t now_us)
{
  if (width != p->width || height != p->height)
    return;
  g_mutex_lock(&p->lock);
  int b = 0;
  while (b < 3 && (b == p->published_index || p->reading[b]))
    b++;
  g_mutex_unlock(&p->lock);
  if (b == 3)
    return;   /* two requests are copying and the third buffer is published: next frame */
  for (int y = 0; y < height; y++)
    memcpy(p->buffers[b] + (size_t)y * width, data + (size_t)y * stride, (size_t)width);
  g_mutex_lock(&p->lock);
  p->published_index = b;
  g_mutex_unlock(&p->lock);
  __atomic_store_n(&p->copied_us, now_us, __ATOMIC_RELAXED);
}
