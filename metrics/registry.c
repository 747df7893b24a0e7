/* registry.c: metric families and series, and their text format (see metrics.h).
 *
 * Values are doubles kept as their bit patterns in 64-bit atomics: a gauge is a store, a
 * counter a compare-and-swap loop (contention is one writer per series in practice), a
 * histogram bucket a plain atomic increment of an integer. Buckets are kept per bucket
 * (not cumulative) and cumulated while rendering, which is where _count comes from too.
 */
#include "metrics/metrics.h"

#include <math.h>
#include <string.h>

struct MetricsSeries {
  MetricsFamily *family;
  char **values;                /* one per label name */
  guint64 value;                /* atomic: double bits (counter, gauge) */
  guint64 sum;                  /* atomic: double bits (histogram) */
  guint64 *buckets;             /* atomic: n_buckets + 1 counts (the last is +Inf only) */
};

struct MetricsFamily {
  MetricsRegistry *registry;
  char *name, *help;
  MetricsType type;
  char *labels[METRICS_MAX_LABELS];
  int n_labels;
  double *bounds;
  int n_buckets;
  GPtrArray *series;            /* MetricsSeries *, under the registry's lock */
};

struct MetricsRegistry {
  GMutex lock;                  /* the structure: families and their series */
  GPtrArray *families;
};

static inline double
bits_to_double(guint64 bits)
{
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static inline guint64
double_to_bits(double d)
{
  guint64 bits;
  memcpy(&bits, &d, sizeof bits);
  return bits;
}

static bool
valid_name(const char *s, bool colons)
{
  if (!s || !*s || g_ascii_isdigit(*s))
    return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_' && !(colons && *p == ':'))
      return false;
  return true;
}

static void
series_free(gpointer data)
{
  MetricsSeries *s = data;
  g_strfreev(s->values);
  g_free(s->buckets);
  g_free(s);
}

static void
family_free(gpointer data)
{
  MetricsFamily *f = data;
  g_ptr_array_unref(f->series);
  for (int i = 0; i < f->n_labels; i++)
    g_free(f->labels[i]);
  g_free(f->bounds);
  g_free(f->name);
  g_free(f->help);
  g_free(f);
}

MetricsRegistry *
metrics_registry_new(void)
{
  MetricsRegistry *r = g_new0(MetricsRegistry, 1);
  g_mutex_init(&r->lock);
  r->families = g_ptr_array_new_with_free_func(family_free);
  return r;
}

void
metrics_registry_free(MetricsRegistry *r)
{
  if (!r)
    return;
  g_ptr_array_unref(r->families);
  g_mutex_clear(&r->lock);
  g_free(r);
}

static bool
valid_params(const MetricsFamilyParams *p)
{
  if (!valid_name(p->name, true) || !p->help || strchr(p->help, '\n') ||
      p->type < 0 || p->type >= METRICS_TYPE_COUNT)
    return false;
  if (p->type == METRICS_COUNTER && !g_str_has_suffix(p->name, "_total"))
    return false;
  int n = 0;
  for (; n <= METRICS_MAX_LABELS && p->labels[n]; n++) {
    const char *l = p->labels[n];
    if (!valid_name(l, false) || g_str_has_prefix(l, "__") ||
        (p->type == METRICS_HISTOGRAM && strcmp(l, "le") == 0))
      return false;
    for (int k = 0; k < n; k++)
      if (strcmp(p->labels[k], l) == 0)
        return false;
  }
  if (n > METRICS_MAX_LABELS)
    return false;
  if (p->type == METRICS_HISTOGRAM) {
    if (!p->buckets || p->n_buckets < 1 || p->n_buckets > METRICS_MAX_BUCKETS)
      return false;
    for (int i = 0; i < p->n_buckets; i++)
      if (!isfinite(p->buckets[i]) || (i > 0 && !(p->buckets[i] > p->buckets[i - 1])))
        return false;
  }
  return true;
}

MetricsFamily *
metrics_family_new(MetricsRegistry *r, const MetricsFamilyParams *p)
{
  g_return_val_if_fail(r && p, NULL);
  g_return_val_if_fail(valid_params(p), NULL);
  MetricsFamily *f = g_new0(MetricsFamily, 1);
  f->registry = r;
  f->name = g_strdup(p->name);
  f->help = g_strdup(p->help);
  f->type = p->type;
  while (f->n_labels < METRICS_MAX_LABELS && p->labels[f->n_labels]) {
    f->labels[f->n_labels] = g_strdup(p->labels[f->n_labels]);
    f->n_labels++;
  }
  if (p->type == METRICS_HISTOGRAM) {
    f->n_buckets = p->n_buckets;
    f->bounds = g_memdup2(p->buckets, sizeof(double) * (gsize)p->n_buckets);
  }
  f->series = g_ptr_array_new_with_free_func(series_free);
  g_mutex_lock(&r->lock);
  for (guint i = 0; i < r->families->len; i++) {
    const MetricsFamily *o = r->families->pdata[i];
    if (strcmp(o->name, f->name) == 0) {
      g_mutex_unlock(&r->lock);
      family_free(f);
      g_return_val_if_reached(NULL);
    }
  }
  g_ptr_array_add(r->families, f);
  g_mutex_unlock(&r->lock);
  return f;
}

MetricsSeries *
metrics_series_new(MetricsFamily *f, const char *const *values)
{
  g_return_val_if_fail(f, NULL);
  for (int i = 0; i < f->n_labels; i++)
    g_return_val_if_fail(values && values[i] && g_utf8_validate(values[i], -1, NULL), NULL);
  MetricsSeries *s = g_new0(MetricsSeries, 1);
  s->family = f;
  s->values = g_new0(char *, (gsize)f->n_labels + 1);
  for (int i = 0; i < f->n_labels; i++)
    s->values[i] = g_strdup(values[i]);
  if (f->type == METRICS_HISTOGRAM)
    s->buckets = g_new0(guint64, (gsize)f->n_buckets + 1);
  MetricsRegistry *r = f->registry;
  g_mutex_lock(&r->lock);
  for (guint i = 0; i < f->series->len; i++) {
    const MetricsSeries *o = f->series->pdata[i];
    bool same = true;
    for (int k = 0; k < f->n_labels && same; k++)
      same = strcmp(o->values[k], s->values[k]) == 0;
    if (same) {
      g_mutex_unlock(&r->lock);
      series_free(s);
      g_return_val_if_reached(NULL);
    }
  }
  g_ptr_array_add(f->series, s);
  g_mutex_unlock(&r->lock);
  return s;
}

/* ---------------------------------------------------------------- updates */

static void
atomic_add_double(guint64 *where, double n)
{
  guint64 old = __atomic_load_n(where, __ATOMIC_RELAXED);
  /* a failed exchange stores the value it saw in `old`: try again from that */
  while (!__atomic_compare_exchange_n(where, &old, double_to_bits(bits_to_double(old) + n),
                                      true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

void
metrics_counter_add(MetricsSeries *s, double n)
{
  g_return_if_fail(s && s->family->type == METRICS_COUNTER);
  if (!(n > 0) || !isfinite(n))
    return;
  atomic_add_double(&s->value, n);
}

void
metrics_counter_set_total(MetricsSeries *s, double total)
{
  g_return_if_fail(s && s->family->type == METRICS_COUNTER);
  if (!isfinite(total))
    return;
  guint64 old = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  while (bits_to_double(old) < total)
    if (__atomic_compare_exchange_n(&s->value, &old, double_to_bits(total), true,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return;
}

void
metrics_gauge_set(MetricsSeries *s, double value)
{
  g_return_if_fail(s && s->family->type == METRICS_GAUGE);
  __atomic_store_n(&s->value, double_to_bits(value), __ATOMIC_RELAXED);
}

void
metrics_histogram_observe(MetricsSeries *s, double value)
{
  g_return_if_fail(s && s->family->type == METRICS_HISTOGRAM);
  if (isnan(value))
    return;
  const MetricsFamily *f = s->family;
  int i = 0;
  while (i < f->n_buckets && value > f->bounds[i])
    i++;
  __atomic_add_fetch(&s->buckets[i], 1, __ATOMIC_RELAXED);
  atomic_add_double(&s->sum, value);
}

double
metrics_series_get(MetricsSeries *s)
{
  g_return_val_if_fail(s, NAN);
  if (s->family->type != METRICS_HISTOGRAM)
    return bits_to_double(__atomic_load_n(&s->value, __ATOMIC_RELAXED));
  guint64 n = 0;
  for (int i = 0; i <= s->family->n_buckets; i++)
    n += __atomic_load_n(&s->buckets[i], __ATOMIC_RELAXED);
  return (double)n;
}

void
metrics_buckets_exponential(double start, double factor, int n, double *out)
{
  g_return_if_fail(start > 0 && factor > 1 && n >= 1 && out);
  double b = start;
  for (int i = 0; i < n; i++, b *= factor)
    out[i] = b;
}

/* ---------------------------------------------------------------- text format */

/* The shortest of %.15g and %.17g that reads back as the same double; NaN and the
 * infinities as the format spells them. */
static void
append_value(GString *out, double v)
{
  if (isnan(v)) {
    g_string_append(out, "NaN");
    return;
  }
  if (isinf(v)) {
    g_string_append(out, v > 0 ? "+Inf" : "-Inf");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, "%.15g", v);
  if (g_ascii_strtod(buf, NULL) != v)
    g_ascii_formatd(buf, sizeof buf, "%.17g", v);
  g_string_append(out, buf);
}

static void
append_escaped(GString *out, const char *s, bool quotes)
{
  for (const char *p = s; *p; p++) {
    if (*p == '\\')
      g_string_append(out, "\\\\");
    else if (*p == '\n')
      g_string_append(out, "\\n");
    else if (quotes && *p == '"')
      g_string_append(out, "\\\"");
    else
      g_string_append_c(out, *p);
  }
}

/* NAME{labels[,le="bound"]} VALUE */
static void
append_sample(GString *out, const MetricsFamily *f, const char *suffix, const MetricsSeries *s,
              const char *le, double value)
{
  g_string_append(out, f->name);
  g_string_append(out, suffix);
  if (f->n_labels || le) {
    g_string_append_c(out, '{');
    for (int i = 0; i < f->n_labels; i++) {
      g_string_append_printf(out, "%s%s=\"", i ? "," : "", f->labels[i]);
      append_escaped(out, s->values[i], true);
      g_string_append_c(out, '"');
    }
    if (le)
      g_string_append_printf(out, "%sle=\"%s\"", f->n_labels ? "," : "", le);
    g_string_append_c(out, '}');
  }
  g_string_append_c(out, ' ');
  append_value(out, value);
  g_string_append_c(out, '\n');
}

static void
render_histogram(GString *out, const MetricsFamily *f, const MetricsSeries *s)
{
  guint64 counts[METRICS_MAX_BUCKETS + 1];
  for (int i = 0; i <= f->n_buckets; i++)
    counts[i] = __atomic_load_n(&s->buckets[i], __ATOMIC_RELAXED);
  guint64 cumulative = 0;
  for (int i = 0; i < f->n_buckets; i++) {
    cumulative += counts[i];
    GString *le = g_string_new(NULL);
    append_value(le, f->bounds[i]);
    append_sample(out, f, "_bucket", s, le->str, (double)cumulative);
    g_string_free(le, TRUE);
  }
  cumulative += counts[f->n_buckets];
  append_sample(out, f, "_bucket", s, "+Inf", (double)cumulative);
  append_sample(out, f, "_sum", s, NULL, bits_to_double(__atomic_load_n(&s->sum,
                                                                          __ATOMIC_RELAXED)));
  append_sample(out, f, "_count", s, NULL, (double)cumulative);
}

void
metrics_registry_render(MetricsRegistry *r, GString *out)
{
  static const char *const type_names[METRICS_TYPE_COUNT] = { "counter", "gauge",
                                                              "histogram" };
  g_return_if_fail(r && out);
  g_mutex_lock(&r->lock);
  for (guint i = 0; i < r->families->len; i++) {
    const MetricsFamily *f = r->families->pdata[i];
    g_string_append_printf(out, "# HELP %s ", f->name);
    append_escaped(out, f->help, false);
    g_string_append_printf(out, "\n# TYPE %s %s\n", f->name, type_names[f->type]);
    for (guint k = 0; k < f->series->len; k++) {
      const MetricsSeries *s = f->series->pdata[k];
      if (f->type == METRICS_HISTOGRAM)
        render_histogram(out, f, s);
      else
        append_sample(out, f, "", s, NULL,
                      bits_to_double(__atomic_load_n(&s->value, __ATOMIC_RELAXED)));
    }
  }
  g_mutex_unlock(&r->lock);
}
