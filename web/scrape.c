/* scrape.c: Prometheus samples and the scrapes of stereod's and stereod-heightmap's
 * /metrics (see web.h, WebSamples and WebScrape).
 *
 * The parser takes what our servers render (metrics/registry.c) and anything else of the
 * text format without failing: a line it cannot read is counted and skipped. Responses
 * are read in pieces up to a bound (a body above it is an error, never a large
 * allocation), with a 2 s timeout, and never through a proxy: the endpoints are local.
 */
#include "web/web.h"

#include <libsoup/soup.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "metrics/metrics.h"

#define SCRAPE_INTERVAL_MS 1000
#define HISTORY 16                    /* scrapes kept, for rates and quantiles */
#define MAX_FETCHES 4                 /* fetches in flight per scrape object */
#define MAX_LABELS 8

/* ---------------------------------------------------------------- samples */

typedef struct {
  char *name;
  char *labels[2 * MAX_LABELS];      /* name, value pairs, sorted by name */
  int n_labels;
  double value;
} Sample;

struct WebSamples {
  GPtrArray *list;                   /* Sample *, in text order */
  GHashTable *index;                 /* canonical key -> Sample * */
  gint64 time_us;                    /* monotonic, when scraped */
};

static void
sample_free(gpointer data)
{
  Sample *s = data;
  g_free(s->name);
  for (int i = 0; i < 2 * s->n_labels; i++)
    g_free(s->labels[i]);
  g_free(s);
}

void
web_samples_free(WebSamples *s)
{
  if (!s)
    return;
  g_hash_table_unref(s->index);
  g_ptr_array_unref(s->list);
  g_free(s);
}

static void
append_escaped(GString *out, const char *v)
{
  for (; *v; v++) {
    if (*v == '\\' || *v == '"')
      g_string_append_c(out, '\\');
    if (*v == '\n')
      g_string_append(out, "\\n");
    else
      g_string_append_c(out, *v);
  }
}

/* name{a="x",b="y"} with the pairs sorted by label name (insertion sort: few labels). */
static char *
canonical_key(const char *name, const char *const *labels, int n)
{
  int order[MAX_LABELS];
  for (int i = 0; i < n; i++) {
    int j = i;
    while (j > 0 && strcmp(labels[2 * order[j - 1]], labels[2 * i]) > 0) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = i;
  }
  GString *k = g_string_new(name);
  if (n) {
    g_string_append_c(k, '{');
    for (int i = 0; i < n; i++) {
      g_string_append_printf(k, "%s%s=\"", i ? "," : "", labels[2 * order[i]]);
      append_escaped(k, labels[2 * order[i] + 1]);
      g_string_append_c(k, '"');
    }
    g_string_append_c(k, '}');
  }
  return g_string_free(k, FALSE);
}

static bool
parse_value(const char *text, double *out)
{
  if (strcmp(text, "+Inf") == 0 || strcmp(text, "Inf") == 0)
    *out = INFINITY;
  else if (strcmp(text, "-Inf") == 0)
    *out = -INFINITY;
  else if (strcmp(text, "NaN") == 0)
    *out = NAN;
  else {
    char *end;
    *out = g_ascii_strtod(text, &end);
    return end != text && *end == '\0';
  }
  return true;
}

/* One sample line into *s; FALSE when it is not one. */
static bool
parse_line(const char *line, Sample *s)
{
  const char *p = line;
  while (g_ascii_isalnum(*p) || *p == '_' || *p == ':')
    p++;
  if (p == line || g_ascii_isdigit(*line))
    return false;
  s->name = g_strndup(line, (gsize)(p - line));
  if (*p == '{') {
    p++;
    while (*p && *p != '}') {
      const char *n0 = p;
      while (g_ascii_isalnum(*p) || *p == '_')
        p++;
      if (p == n0 || p[0] != '=' || p[1] != '"' || s->n_labels == MAX_LABELS)
        return false;
      char *label = g_strndup(n0, (gsize)(p - n0));
      p += 2;
      GString *v = g_string_new(NULL);
      while (*p && *p != '"') {
        if (*p == '\\' && p[1]) {
          p++;
          g_string_append_c(v, *p == 'n' ? '\n' : *p);
        } else {
          g_string_append_c(v, *p);
        }
        p++;
      }
      s->labels[2 * s->n_labels] = label;
      s->labels[2 * s->n_labels + 1] = g_string_free(v, FALSE);
      s->n_labels++;
      if (*p != '"')
        return false;
      p++;
      if (*p == ',')
        p++;
    }
    if (*p != '}')
      return false;
    p++;
  }
  if (*p != ' ')
    return false;
  p++;
  const char *v0 = p;
  while (*p && *p != ' ')
    p++;
  g_autofree char *value = g_strndup(v0, (gsize)(p - v0));
  return parse_value(value, &s->value);
}

WebSamples *
web_samples_parse(const char *text, gsize length, int *bad)
{
  WebSamples *s = g_new0(WebSamples, 1);
  s->list = g_ptr_array_new_with_free_func(sample_free);
  s->index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  s->time_us = g_get_monotonic_time();
  int n_bad = 0;
  length = MIN(length, (gsize)WEB_SCRAPE_MAX_BYTES);
  const char *p = text, *end = text + length;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *stop = nl ? nl : end;
    if (stop > p && *p != '#') {
      g_autofree char *line = g_strndup(p, (gsize)(stop - p));
      Sample *sm = g_new0(Sample, 1);
      if (parse_line(line, sm)) {
        char *key = canonical_key(sm->name, (const char *const *)sm->labels, sm->n_labels);
        if (g_hash_table_contains(s->index, key)) {
          g_free(key);
          sample_free(sm);
          n_bad++;
        } else {
          g_hash_table_insert(s->index, key, sm);
          g_ptr_array_add(s->list, sm);
        }
      } else {
        sample_free(sm);
        n_bad++;
      }
    }
    p = stop + 1;
  }
  if (bad)
    *bad = n_bad;
  return s;
}

/* The NULL-terminated name, value pairs of a va_list, at most MAX_LABELS. */
static int
collect_labels(va_list ap, const char **labels)
{
  int n = 0;
  const char *k;
  while ((k = va_arg(ap, const char *)) && n < MAX_LABELS) {
    labels[2 * n] = k;
    labels[2 * n + 1] = va_arg(ap, const char *);
    n++;
  }
  return n;
}

double
web_samples_get(const WebSamples *s, const char *name, ...)
{
  if (!s)
    return NAN;
  const char *labels[2 * MAX_LABELS];
  va_list ap;
  va_start(ap, name);
  int n = collect_labels(ap, labels);
  va_end(ap);
  g_autofree char *key = canonical_key(name, labels, n);
  const Sample *sm = g_hash_table_lookup(s->index, key);
  return sm ? sm->value : NAN;
}

static const char *
label_of(const Sample *sm, const char *label)
{
  for (int i = 0; i < sm->n_labels; i++)
    if (strcmp(sm->labels[2 * i], label) == 0)
      return sm->labels[2 * i + 1];
  return NULL;
}

static bool
has_labels(const Sample *sm, const char *const *labels, int n)
{
  for (int i = 0; i < n; i++) {
    const char *v = label_of(sm, labels[2 * i]);
    if (!v || strcmp(v, labels[2 * i + 1]) != 0)
      return false;
  }
  return true;
}

const char *
web_samples_find_label(const WebSamples *s, const char *name, double value, const char *label,
                       ...)
{
  if (!s)
    return NULL;
  const char *labels[2 * MAX_LABELS];
  va_list ap;
  va_start(ap, label);
  int n = collect_labels(ap, labels);
  va_end(ap);
  for (guint i = 0; i < s->list->len; i++) {
    const Sample *sm = s->list->pdata[i];
    if (strcmp(sm->name, name) == 0 && sm->value == value && has_labels(sm, labels, n)) {
      const char *v = label_of(sm, label);
      if (v)
        return v;
    }
  }
  return NULL;
}

double
web_samples_sum(const WebSamples *s, const char *name, ...)
{
  if (!s)
    return NAN;
  const char *labels[2 * MAX_LABELS];
  va_list ap;
  va_start(ap, name);
  int n = collect_labels(ap, labels);
  va_end(ap);
  double sum = 0;
  int found = 0;
  for (guint i = 0; i < s->list->len; i++) {
    const Sample *sm = s->list->pdata[i];
    if (strcmp(sm->name, name) == 0 && has_labels(sm, labels, n)) {
      sum += sm->value;
      found++;
    }
  }
  return found ? sum : NAN;
}

typedef struct {
  double le, count;
} Bucket;

static int
cmp_bucket(const void *a, const void *b)
{
  double x = ((const Bucket *)a)->le, y = ((const Bucket *)b)->le;
  return x < y ? -1 : x > y;
}

double
web_samples_quantile(const WebSamples *now, const WebSamples *before, const char *name,
                     double q, ...)
{
  if (!now)
    return NAN;
  const char *labels[2 * MAX_LABELS];
  va_list ap;
  va_start(ap, q);
  int n = collect_labels(ap, labels);
  va_end(ap);
  g_autofree char *bucket_name = g_strconcat(name, "_bucket", NULL);
  Bucket b[64];
  int nb = 0;
  for (guint i = 0; i < now->list->len && nb < 64; i++) {
    const Sample *sm = now->list->pdata[i];
    const char *le = label_of(sm, "le");
    double bound;
    if (strcmp(sm->name, bucket_name) != 0 || !le || !has_labels(sm, labels, n) ||
        !parse_value(le, &bound))
      continue;
    double count = sm->value;
    if (before) {
      g_autofree char *key = canonical_key(sm->name, (const char *const *)sm->labels,
                                           sm->n_labels);
      const Sample *o = g_hash_table_lookup(before->index, key);
      if (o && o->value <= count)
        count -= o->value;
    }
    b[nb++] = (Bucket){ bound, count };
  }
  if (nb == 0)
    return NAN;
  qsort(b, (size_t)nb, sizeof(Bucket), cmp_bucket);
  double total = b[nb - 1].count;
  if (!(total > 0) || !isinf(b[nb - 1].le))
    return NAN;
  double rank = q * total;
  for (int i = 0; i < nb; i++) {
    if (b[i].count < rank)
      continue;
    if (isinf(b[i].le))
      return i > 0 ? b[i - 1].le : NAN;   /* above the highest bound: that bound */
    double lo = i > 0 ? b[i - 1].le : 0, below = i > 0 ? b[i - 1].count : 0;
    double in = b[i].count - below;
    return in > 0 ? lo + (b[i].le - lo) * (rank - below) / in : b[i].le;
  }
  return NAN;
}

/* ---------------------------------------------------------------- bounded GET */

typedef struct WebScrape WebScrape;

typedef struct {
  WebScrape *owner;
  SoupMessage *msg;
  GInputStream *stream;
  GByteArray *body;
  gsize max;
  GCancellable *cancel;
  WebFetchDone done;
  gpointer data;
} Get;

struct WebScrape {
  char *label, *base;
  SoupSession *session;
  guint timer;
  Get *scrape;                      /* the scrape in flight */
  GPtrArray *fetches;               /* Get *, in flight */
  WebSamples *history[HISTORY];     /* newest first */
  int n_history;
  char error[256];
  bool failing;                     /* the last scrape failed (logged once) */
};

static void get_read(Get *g);

static void
get_finish(Get *g, GError *error)
{
  bool cancelled = g_cancellable_is_cancelled(g->cancel);
  if (!cancelled) {
    WebScrape *s = g->owner;
    if (g == s->scrape)
      s->scrape = NULL;
    else
      g_ptr_array_remove_fast(s->fetches, g);
    g_autoptr(GBytes) body = error ? NULL : g_byte_array_free_to_bytes(g_steal_pointer(&g->body));
    g->done(body, error, g->data);
  }
  g_clear_error(&error);
  if (g->body)
    g_byte_array_unref(g->body);
  g_clear_object(&g->stream);
  g_object_unref(g->msg);
  g_object_unref(g->cancel);
  g_free(g);
}

static void
on_read(GObject *source, GAsyncResult *res, gpointer data)
{
  Get *g = data;
  GError *error = NULL;
  g_autoptr(GBytes) piece = g_input_stream_read_bytes_finish(G_INPUT_STREAM(source), res, &error);
  if (!piece) {
    get_finish(g, error);
    return;
  }
  gsize n = g_bytes_get_size(piece);
  if (n == 0) {
    get_finish(g, NULL);
    return;
  }
  if (g->body->len + n > g->max) {
    get_finish(g, g_error_new(G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                              "the response is larger than %zu bytes", g->max));
    return;
  }
  g_byte_array_append(g->body, g_bytes_get_data(piece, NULL), (guint)n);
  get_read(g);
}

static void
get_read(Get *g)
{
  g_input_stream_read_bytes_async(g->stream, 65536, G_PRIORITY_DEFAULT, g->cancel, on_read, g);
}

static void
on_sent(GObject *source, GAsyncResult *res, gpointer data)
{
  Get *g = data;
  GError *error = NULL;
  g->stream = soup_session_send_finish(SOUP_SESSION(source), res, &error);
  if (!g->stream) {
    get_finish(g, error);
    return;
  }
  guint status = soup_message_get_status(g->msg);
  if (status != SOUP_STATUS_OK) {
    get_finish(g, g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, "HTTP %u %s", status,
                              soup_message_get_reason_phrase(g->msg)));
    return;
  }
  goffset length = soup_message_headers_get_content_length(
    soup_message_get_response_headers(g->msg));
  if (length > 0 && (guint64)length > g->max) {
    get_finish(g, g_error_new(G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                              "the response is larger than %zu bytes", g->max));
    return;
  }
  get_read(g);
}

static Get *
get_start(WebScrape *s, const char *path, gsize max, WebFetchDone done, gpointer data)
{
  g_autofree char *url = g_strconcat(s->base, path, NULL);
  SoupMessage *msg = soup_message_new(SOUP_METHOD_GET, url);
  if (!msg)
    return NULL;
  Get *g = g_new0(Get, 1);
  g->owner = s;
  g->msg = msg;
  g->body = g_byte_array_new();
  g->max = max;
  g->cancel = g_cancellable_new();
  g->done = done;
  g->data = data;
  soup_session_send_async(s->session, msg, G_PRIORITY_DEFAULT, g->cancel, on_sent, g);
  return g;
}

/* ---------------------------------------------------------------- scrapes */

static void
on_scraped(GBytes *body, const GError *error, gpointer data)
{
  WebScrape *s = data;
  if (!body) {
    g_snprintf(s->error, sizeof s->error, "%s/metrics: %s", s->base, error->message);
    if (!s->failing)
      g_message("%s: cannot scrape %s/metrics: %s (trying every second)", s->label, s->base,
                error->message);
    s->failing = true;
    return;
  }
  if (s->failing)
    g_message("%s: scraping %s/metrics", s->label, s->base);
  s->failing = false;
  s->error[0] = '\0';
  gsize n;
  const char *text = g_bytes_get_data(body, &n);
  WebSamples *samples = web_samples_parse(text ? text : "", n, NULL);
  if (s->n_history == HISTORY)
    web_samples_free(s->history[--s->n_history]);
  memmove(s->history + 1, s->history, sizeof(WebSamples *) * (size_t)s->n_history);
  s->history[0] = samples;
  s->n_history++;
}

static gboolean
on_timer(gpointer data)
{
  WebScrape *s = data;
  if (!s->scrape)
    s->scrape = get_start(s, "/metrics", WEB_SCRAPE_MAX_BYTES, on_scraped, s);
  return G_SOURCE_CONTINUE;
}

WebScrape *
web_scrape_new(const char *label, const char *address, GError **error)
{
  g_return_val_if_fail(label && address, NULL);
  g_autoptr(GInetSocketAddress) a = metrics_address_parse(address, error);
  if (!a)
    return NULL;
  WebScrape *s = g_new0(WebScrape, 1);
  s->label = g_strdup(label);
  g_autofree char *authority = metrics_address_to_authority(a);
  s->base = g_strdup_printf("http://%s", authority);
  /* no proxy: the endpoints are on this machine whatever http_proxy says */
  s->session = soup_session_new_with_options("proxy-resolver", NULL, "timeout", 2,
                                             "max-conns-per-host", MAX_FETCHES + 1, NULL);
  s->fetches = g_ptr_array_new();
  g_strlcpy(s->error, "not scraped yet", sizeof s->error);
  s->timer = g_timeout_add(SCRAPE_INTERVAL_MS, on_timer, s);
  on_timer(s);
  return s;
}

static void
cancel(Get *g)
{
  if (g)
    g_cancellable_cancel(g->cancel);   /* get_finish frees it, without calling back */
}

void
web_scrape_free(WebScrape *s)
{
  if (!s)
    return;
  g_source_remove(s->timer);
  cancel(s->scrape);
  for (guint i = 0; i < s->fetches->len; i++)
    cancel(s->fetches->pdata[i]);
  g_ptr_array_unref(s->fetches);
  for (int i = 0; i < s->n_history; i++)
    web_samples_free(s->history[i]);
  g_object_unref(s->session);
  g_free(s->label);
  g_free(s->base);
  g_free(s);
}

const WebSamples *
web_scrape_get(WebScrape *s, double window_s, const WebSamples **before, double *interval_s,
               double *age_s)
{
  g_return_val_if_fail(s, NULL);
  if (before)
    *before = NULL;
  if (s->n_history == 0)
    return NULL;
  const WebSamples *now = s->history[0];
  gint64 t = g_get_monotonic_time();
  if (age_s)
    *age_s = (double)(t - now->time_us) * 1e-6;
  int i = 1;
  while (i + 1 < s->n_history &&
         (double)(now->time_us - s->history[i]->time_us) * 1e-6 < window_s)
    i++;
  if (i < s->n_history) {
    if (before)
      *before = s->history[i];
    if (interval_s)
      *interval_s = (double)(now->time_us - s->history[i]->time_us) * 1e-6;
  }
  return now;
}

const char *
web_scrape_get_error(WebScrape *s)
{
  g_return_val_if_fail(s, NULL);
  return s->error;
}

bool
web_scrape_fetch(WebScrape *s, const char *path_and_query, gsize max_bytes, WebFetchDone done,
                 gpointer data)
{
  g_return_val_if_fail(s && path_and_query && path_and_query[0] == '/' && done, false);
  if (s->fetches->len >= MAX_FETCHES)
    return false;
  Get *g = get_start(s, path_and_query, max_bytes, done, data);
  if (!g)
    return false;
  g_ptr_array_add(s->fetches, g);
  return true;
}
