/* stats.c: the statistics the page shows, as JSON (see server-private.h).
 *
 * Where the numbers come from: with [web] stereod= and heightmap= set, from the
 * programs' own /metrics, scraped every second: rates are counter differences over the
 * last ~10 s of scrapes, latency quantiles come from the histograms' buckets over the same
 * window (histogram_quantile's interpolation), states from the state gauges. Without
 * them, what the rings tell: the publish rate (the ring's counter), the capture-to-publish
 * latency of the frames stereod-web read, and whether the ring is open; the players'
 * numbers then come from the JSON lines alone (the page counts them).
 *
 * The names read here are the ones stereod (daemon/metrics.c) and stereod-heightmap
 * (heightmap/metrics.c) serve.
 */
#include "web/server-private.h"

#include <math.h>
#include <string.h>

#define WINDOW_S 10.0   /* s: rates and quantiles over the last scrapes of this span */

static const char *const drop_causes[] = { "unpaired", "gpu_behind", "corrupt", "wrong_size",
                                           "untimed", "backwards", "starved", NULL };

typedef struct {
  const WebSamples *now, *before;
  double dt;
} Window;

static Window
window_of(WebScrape *scrape)
{
  Window w = { 0 };
  if (scrape)
    w.now = web_scrape_get(scrape, WINDOW_S, &w.before, &w.dt, NULL);
  return w;
}

/* (now - before) / dt of a counter with up to two labels; NaN without two scrapes. */
static double
rate(const Window *w, const char *name, const char *k1, const char *v1, const char *k2,
     const char *v2)
{
  if (!w->now || !w->before || !(w->dt > 0))
    return NAN;
  double a = web_samples_sum(w->before, name, k1, v1, k2, v2, NULL);
  double b = web_samples_sum(w->now, name, k1, v1, k2, v2, NULL);
  return b >= a ? (b - a) / w->dt : NAN;
}

/* The mean of a histogram's observations over the window ((sum) / (count) differences). */
static double
mean(const Window *w, const char *name, const char *k, const char *v)
{
  if (!w->now)
    return NAN;
  g_autofree char *sum = g_strconcat(name, "_sum", NULL);
  g_autofree char *count = g_strconcat(name, "_count", NULL);
  double s = web_samples_get(w->now, sum, k, v, NULL), c = web_samples_get(w->now, count, k, v, NULL);
  if (w->before) {
    double s0 = web_samples_get(w->before, sum, k, v, NULL);
    double c0 = web_samples_get(w->before, count, k, v, NULL);
    if (c > c0) {
      s -= s0;
      c -= c0;
    }
  }
  return c > 0 ? s / c : NAN;
}

static void
key(GString *o, const char *name)
{
  g_string_append_printf(o, "\"%s\":", name);
}

static void
num(GString *o, const char *name, double v)
{
  key(o, name);
  web_json_number(o, v);
  g_string_append_c(o, ',');
}

static void
str(GString *o, const char *name, const char *v)
{
  key(o, name);
  g_autofree char *s = web_json_string(v);
  g_string_append(o, s);
  g_string_append_c(o, ',');
}

static void
close_object(GString *o, char close)
{
  if (o->str[o->len - 1] == ',')
    g_string_truncate(o, o->len - 1);
  g_string_append_c(o, close);
}

static void
ring_json(GString *o, const WebRingStatus *st)
{
  key(o, "ring");
  g_string_append_c(o, '{');
  g_string_append_printf(o, "\"open\":%s,\"closed\":%s,\"writer_alive\":%s,",
                         st->open ? "true" : "false", st->closed ? "true" : "false",
                         st->writer_alive ? "true" : "false");
  num(o, "counter", (double)st->counter);
  num(o, "publish_rate", st->publish_rate);
  num(o, "frames_read", (double)st->frames_read);
  num(o, "width", st->width);
  num(o, "height", st->height);
  str(o, "error", st->error);
  close_object(o, '}');
  g_string_append_c(o, ',');
}

static const char *
ring_state(const WebRingStatus *st)
{
  if (!st->open)
    return "no ring";
  if (st->closed)
    return "closed";
  if (!st->writer_alive)
    return "writer gone";
  return st->publish_rate > 0 ? "publishing" : "idle";
}

static void
pair_json(GString *o, WebServer *s, WebSource *src, const Window *w)
{
  /* stereod names a pair's series after the pair, whose ring has the pair's name: the
   * ring= of this pair here, whatever the page calls it */
  const char *name = src->pair->ring;
  WebRingStatus st;
  web_ring_get_status(src->ring, &st);
  g_string_append_c(o, '{');
  str(o, "name", src->name);
  ring_json(o, &st);
  const char *state = w->now ? web_samples_find_label(w->now, "stereod_pair_state", 1, "state",
                                                      "pair", name, NULL)
                             : NULL;
  bool metrics = w->now && state;
  str(o, "source", metrics ? "stereod" : "ring");
  str(o, "state", state ? state : ring_state(&st));
  if (metrics) {
    num(o, "camera_fps", rate(w, "stereod_camera_frames_total", "pair", name, "camera", "left"));
    num(o, "fps_in", rate(w, "stereod_frames_submitted_total", "pair", name, NULL, NULL));
    num(o, "fps_out", rate(w, "stereod_frames_published_total", "pair", name, NULL, NULL));
    num(o, "dropped_rate", rate(w, "stereod_frames_dropped_total", "pair", name, NULL, NULL));
    num(o, "dropped", web_samples_sum(w->now, "stereod_frames_dropped_total", "pair", name,
                                      NULL));
    key(o, "drops");
    g_string_append_c(o, '{');
    for (int i = 0; drop_causes[i]; i++)
      num(o, drop_causes[i], web_samples_get(w->now, "stereod_frames_dropped_total", "cause",
                                             drop_causes[i], "pair", name, NULL));
    close_object(o, '}');
    g_string_append_c(o, ',');
    const char *lat = "stereod_capture_to_publish_seconds";
    num(o, "latency_p50_ms", 1e3 * web_samples_quantile(w->now, w->before, lat, 0.5, "pair",
                                                        name, NULL));
    num(o, "latency_p99_ms", 1e3 * web_samples_quantile(w->now, w->before, lat, 0.99, "pair",
                                                        name, NULL));
    num(o, "gpu_ms", 1e3 * mean(w, "stereod_gpu_seconds", "pair", name));
    num(o, "reconnects", web_samples_get(w->now, "stereod_reconnects_total", "pair", name,
                                         NULL));
    num(o, "stalls", web_samples_get(w->now, "stereod_stalls_total", "pair", name, NULL));
    num(o, "published", web_samples_get(w->now, "stereod_frames_published_total", "pair",
                                        name, NULL));
  } else {
    num(o, "fps_out", st.publish_rate);
    num(o, "latency_p50_ms", 1e3 * st.latency_p50);
    num(o, "latency_p99_ms", 1e3 * st.latency_p99);
    num(o, "published", (double)st.counter);
  }
  /* the colour scale of the colour view, as the pictures use it */
  const WebScale *sc = &src->scale;
  key(o, "scale");
  g_string_append_c(o, '{');
  if (src->pair && src->pair->color == WEB_COLOR_DEPTH) {
    str(o, "kind", "depth");
    str(o, "unit", "m");
    num(o, "near", sc->max_depth > 0 ? sc->min_depth : NAN);
    num(o, "far", sc->max_depth > 0 ? sc->max_depth : NAN);
  } else {
    str(o, "kind", "disparity");
    str(o, "unit", "px");
    num(o, "max", sc->max_disparity > 0 ? sc->max_disparity : NAN);
  }
  close_object(o, '}');
  g_string_append_c(o, ',');
  key(o, "errors");
  g_string_append_c(o, '{');
  for (int v = 0; v < WEB_VIEW_COUNT; v++)
    if (src->pictures[v].error[0] && v != WEB_VIEW_HEIGHT)
      str(o, web_view_name((WebView)v), src->pictures[v].error);
  close_object(o, '}');
  close_object(o, '}');
}

static void
heightmap_json(GString *o, WebServer *s, const Window *w)
{
  key(o, "heightmap");
  g_string_append_c(o, '{');
  if (s->heightmap) {
    WebRingStatus st;
    web_ring_get_status(s->heightmap->ring, &st);
    ring_json(o, &st);
    if (st.open && st.producer[0] == 2.0) {
      key(o, "grid");
      g_string_append_c(o, '{');
      num(o, "x0", st.producer[1]);
      num(o, "y0", st.producer[2]);
      num(o, "cell", st.producer[3]);
      num(o, "width", st.producer[4]);
      num(o, "height", st.producer[5]);
      close_object(o, '}');
      g_string_append_c(o, ',');
    }
    if (s->heightmap->pictures[WEB_VIEW_HEIGHT].error[0])
      str(o, "error", s->heightmap->pictures[WEB_VIEW_HEIGHT].error);
  }
  if (s->players) {
    g_string_append_printf(o, "\"connected\":%s,",
                           web_players_is_connected(s->players) ? "true" : "false");
    num(o, "lines", (double)s->players_lines);
  }
  str(o, "source", w->now ? "stereod-heightmap" : "lines");
  if (w->now) {
    num(o, "fused_rate", rate(w, "stereod_heightmap_fused_frames_total", NULL, NULL, NULL, NULL));
    num(o, "fused", web_samples_get(w->now, "stereod_heightmap_fused_frames_total", NULL));
    num(o, "players", web_samples_get(w->now, "stereod_heightmap_players", NULL));
    num(o, "pairs_per_frame", mean(w, "stereod_heightmap_pairs_per_fused_frame", NULL, NULL));
    num(o, "builder_ms", 1e3 * mean(w, "stereod_heightmap_builder_seconds", NULL, NULL));
    num(o, "builder_p99_ms", 1e3 * web_samples_quantile(w->now, w->before,
                                                        "stereod_heightmap_builder_seconds",
                                                        0.99, NULL));
  }
  close_object(o, '}');
  g_string_append_c(o, ',');
}

static void
scrape_json(GString *o, const char *name, WebScrape *scrape)
{
  key(o, name);
  if (!scrape) {
    g_string_append(o, "null,");
    return;
  }
  g_autofree char *e = web_json_string(web_scrape_get_error(scrape));
  g_string_append_printf(o, "{\"error\":%s},", e);
}

char *
web_stats_json(WebServer *s)
{
  GString *o = g_string_sized_new(4096);
  g_string_append_c(o, '{');
  num(o, "time", (double)g_get_real_time() * 1e-6);
  Window sw = window_of(s->stereod_metrics);
  Window hw = window_of(s->heightmap_metrics);
  key(o, "pairs");
  g_string_append_c(o, '[');
  for (int i = 0; i < s->n_sources; i++) {
    if (&s->sources[i] == s->heightmap)
      continue;
    if (o->str[o->len - 1] != '[')
      g_string_append_c(o, ',');
    pair_json(o, s, &s->sources[i], &sw);
  }
  g_string_append(o, "],");
  heightmap_json(o, s, &hw);
  scrape_json(o, "stereod_metrics", s->stereod_metrics);
  scrape_json(o, "heightmap_metrics", s->heightmap_metrics);
  num(o, "clients", s->n_clients);
  num(o, "clients_refused", (double)s->refused);
  num(o, "clients_dropped", (double)s->dropped);
  close_object(o, '}');
  return g_string_free(o, FALSE);
}

char *
web_config_json(WebServer *s)
{
  const WebConfig *c = s->config;
  GString *o = g_string_sized_new(4096);
  g_string_append_c(o, '{');
  num(o, "rate", c->rate);
  num(o, "max_rate", c->max_rate);
  num(o, "max_height", c->max_height);
  g_string_append_printf(o, "\"left\":%s,\"heightmap\":%s,\"players\":%s,",
                         c->stereod ? "true" : "false", s->heightmap ? "true" : "false",
                         c->heightmap_socket ? "true" : "false");
  key(o, "pairs");
  g_string_append_c(o, '[');
  for (int i = 0; i < c->n_pairs; i++) {
    g_autofree char *n = web_json_string(c->pairs[i].name);
    g_autofree char *r = web_json_string(c->pairs[i].ring);
    g_string_append_printf(o, "%s{\"name\":%s,\"ring\":%s,\"color\":\"%s\"}", i ? "," : "", n,
                           r, c->pairs[i].color == WEB_COLOR_DEPTH ? "depth" : "disparity");
  }
  g_string_append(o, "],");
  /* the colour map, for the colour bars: the same table the pictures are coloured with */
  uint8_t lut[256 * 3];
  web_colormap_table(lut, 256);
  key(o, "colormap");
  g_string_append_c(o, '"');
  for (int i = 0; i < 256 * 3; i++)
    g_string_append_printf(o, "%02x", lut[i]);
  g_string_append(o, "\"");
  g_string_append_c(o, '}');
  return g_string_free(o, FALSE);
}
