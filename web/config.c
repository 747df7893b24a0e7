/* config.c: the stereod-web configuration (config/web.conf documents every key): [web]
 * and one [pair NAME] group per camera pair shown, read with common/keyfile.h (bounded
 * regular file, no group or key twice, decimal numbers without locale effects); unknown
 * groups and keys are errors; every message reads "FILE: [group] key: problem". */
#include "web/web.h"

#include <string.h>

#include "common/file.h"
#include "common/keyfile.h"
#include "metrics/metrics.h"

#define PAIR_PREFIX "pair "

G_DEFINE_QUARK(web-config-error-quark, web_config_error)

static const char *const web_keys[] = {
  "listen", "rate", "max_rate", "quality", "max_width", "max_clients", "stall_s", "stereod",
  "heightmap", "heightmap_socket", "heightmap_ring", "max_height", NULL
};
static const char *const pair_keys[] = {
  "ring", "color", "max_disparity", "min_depth", "max_depth", NULL
};
static const char *const color_names[WEB_COLOR_COUNT + 1] = { "disparity", "depth", NULL };

static KeyFileParams
reader_params(void)
{
  return (KeyFileParams){
    .domain = WEB_CONFIG_ERROR,
    .codes = {
      [KEYFILE_ERROR_IO] = WEB_CONFIG_ERROR_IO,
      [KEYFILE_ERROR_SYNTAX] = WEB_CONFIG_ERROR_SYNTAX,
      [KEYFILE_ERROR_DUPLICATE] = WEB_CONFIG_ERROR_INVALID,
      [KEYFILE_ERROR_UNKNOWN] = WEB_CONFIG_ERROR_UNKNOWN,
      [KEYFILE_ERROR_MISSING] = WEB_CONFIG_ERROR_MISSING,
      [KEYFILE_ERROR_MALFORMED] = WEB_CONFIG_ERROR_INVALID,
      [KEYFILE_ERROR_RANGE] = WEB_CONFIG_ERROR_INVALID,
    },
    .max_size = FILE_MAX_CONFIG_SIZE,
  };
}

#define fail(kf, group, key, error, ...) \
  keyfile_fail(kf, error, WEB_CONFIG_ERROR_INVALID, group, key, __VA_ARGS__)

static bool
valid_name(const char *s)
{
  size_t n = strlen(s);
  if (n < 1 || n > STEREOD_RING_NAME_MAX || s[0] == '.')
    return false;
  for (const char *p = s; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '.' && *p != '_' && *p != '-')
      return false;
  return true;
}

static bool
get_name(const KeyFile *kf, const char *group, const char *key, char **out, GError **error)
{
  g_autofree char *v = keyfile_get_value(kf, group, key);
  if (!v)
    return true;
  if (!valid_name(v))
    return fail(kf, group, key, error,
                "'%s' is not a ring name (1-63 of A-Z a-z 0-9 . _ -, not starting with '.')", v);
  g_free(*out);
  *out = g_steal_pointer(&v);
  return true;
}

/* An endpoint "ADDRESS:PORT" (metrics_address_parse); empty = none. */
static bool
get_address(const KeyFile *kf, const char *group, const char *key, char **out, GError **error)
{
  g_autofree char *v = keyfile_get_value(kf, group, key);
  if (!v)
    return true;
  g_clear_pointer(out, g_free);
  if (!*v)
    return true;
  g_autoptr(GError) local = NULL;
  g_autoptr(GInetSocketAddress) a = metrics_address_parse(v, &local);
  if (!a)
    return fail(kf, group, key, error, "'%s': %s", v, local->message);
  *out = g_steal_pointer(&v);
  return true;
}

static bool
load_web(const KeyFile *kf, WebConfig *c, GError **error)
{
  const char *g = "web";
  if (!keyfile_check_keys(kf, g, web_keys, error) ||
      !get_address(kf, g, "listen", &c->listen, error) ||
      !keyfile_get_double(kf, g, "rate", KEYFILE_OPTIONAL, 0.1, 60, &c->rate, error) ||
      !keyfile_get_double(kf, g, "max_rate", KEYFILE_OPTIONAL, 0.1, 60, &c->max_rate, error) ||
      !keyfile_get_int(kf, g, "quality", KEYFILE_OPTIONAL, 1, 100, &c->quality, error) ||
      !keyfile_get_int(kf, g, "max_width", KEYFILE_OPTIONAL, 16, 8192, &c->max_width, error) ||
      !keyfile_get_int(kf, g, "max_clients", KEYFILE_OPTIONAL, 1, 1024, &c->max_clients,
                       error) ||
      !keyfile_get_double(kf, g, "stall_s", KEYFILE_OPTIONAL, 0.5, 3600, &c->stall_s, error) ||
      !get_address(kf, g, "stereod", &c->stereod, error) ||
      !get_address(kf, g, "heightmap", &c->heightmap, error) ||
      !keyfile_get_double(kf, g, "max_height", KEYFILE_OPTIONAL, 0.1, 50, &c->max_height,
                          error))
    return false;
  if (!c->listen)
    return fail(kf, g, "listen", error, "empty: stereod-web needs an address to listen on");
  if (c->rate > c->max_rate)
    return fail(kf, g, "rate", error, "must not be more than max_rate");
  g_autofree char *sock = keyfile_get_value(kf, g, "heightmap_socket");
  if (sock && *sock) {
    if (!g_path_is_absolute(sock) || strlen(sock) >= 108)
      return fail(kf, g, "heightmap_socket", error,
                  "'%s' is not an absolute path shorter than 108 bytes", sock);
    c->heightmap_socket = g_steal_pointer(&sock);
  }
  g_autofree char *ring = keyfile_get_value(kf, g, "heightmap_ring");
  if (ring && !*ring)
    g_clear_pointer(&c->heightmap_ring, g_free);   /* empty: no height-map ring */
  else if (!get_name(kf, g, "heightmap_ring", &c->heightmap_ring, error))
    return false;
  return true;
}

static bool
load_pair(const KeyFile *kf, const char *group, WebPairConfig *p, GError **error)
{
  const char *name = group + strlen(PAIR_PREFIX);
  if (!valid_name(name))
    return fail(kf, group, NULL, error,
                "'%s' is not a pair name (1-63 of A-Z a-z 0-9 . _ -, not starting with '.')",
                name);
  if (!keyfile_check_keys(kf, group, pair_keys, error))
    return false;
  p->name = g_strdup(name);
  p->ring = g_strdup(name);
  int color = WEB_COLOR_DISPARITY;
  if (!get_name(kf, group, "ring", &p->ring, error) ||
      !keyfile_get_choice(kf, group, "color", KEYFILE_OPTIONAL, color_names, &color, error) ||
      !keyfile_get_double(kf, group, "max_disparity", KEYFILE_OPTIONAL, 0, 4096,
                          &p->max_disparity, error) ||
      !keyfile_get_double(kf, group, "min_depth", KEYFILE_OPTIONAL, 0, 100000, &p->min_depth,
                          error) ||
      !keyfile_get_double(kf, group, "max_depth", KEYFILE_OPTIONAL, 0, 100000, &p->max_depth,
                          error))
    return false;
  p->color = (WebColor)color;
  if ((p->min_depth > 0 || p->max_depth > 0) && !(p->max_depth > p->min_depth))
    return fail(kf, group, "max_depth", error, "must be greater than min_depth");
  return true;
}

static WebConfig *
load(const KeyFile *kf, const char *name, GError **error)
{
  g_autoptr(WebConfig) c = g_new0(WebConfig, 1);
  c->path = g_strdup(name);
  c->listen = g_strdup("127.0.0.1:8088");
  c->rate = 2;
  c->max_rate = 10;
  c->quality = 80;
  c->max_width = 640;
  c->max_clients = 32;
  c->stall_s = 10;
  c->heightmap_ring = g_strdup("heightmap");
  c->max_height = 2.5;
  if (!load_web(kf, c, error))
    return NULL;
  g_auto(GStrv) groups = keyfile_get_groups(kf, NULL);
  int n = 0;
  for (char **g = groups; *g; g++) {
    if (g_str_has_prefix(*g, PAIR_PREFIX))
      n++;
    else if (strcmp(*g, "web") != 0) {
      keyfile_fail(kf, error, WEB_CONFIG_ERROR_UNKNOWN, *g, NULL,
                   "unknown group (expected [web] or [pair NAME])");
      return NULL;
    }
  }
  if (n == 0) {
    keyfile_fail(kf, error, WEB_CONFIG_ERROR_MISSING, NULL, NULL, "no [pair NAME] group");
    return NULL;
  }
  if (n > WEB_MAX_PAIRS) {
    keyfile_fail(kf, error, WEB_CONFIG_ERROR_INVALID, NULL, NULL, "more than %d pairs",
                 WEB_MAX_PAIRS);
    return NULL;
  }
  c->pairs = g_new0(WebPairConfig, n);
  for (char **g = groups; *g; g++) {
    if (!g_str_has_prefix(*g, PAIR_PREFIX))
      continue;
    WebPairConfig *p = &c->pairs[c->n_pairs++];
    if (!load_pair(kf, *g, p, error))
      return NULL;
    for (int i = 0; i + 1 < c->n_pairs; i++)
      if (strcmp(c->pairs[i].ring, p->ring) == 0) {
        fail(kf, *g, "ring", error, "ring '%s' is also [pair %s]'s", p->ring, c->pairs[i].name);
        return NULL;
      }
    if (c->heightmap_ring && strcmp(p->ring, c->heightmap_ring) == 0) {
      fail(kf, *g, "ring", error, "'%s' is the height map's ring ([web] heightmap_ring)",
           p->ring);
      return NULL;
    }
  }
  return g_steal_pointer(&c);
}

WebConfig *
web_config_load(const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  KeyFileParams p = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_file(&p, path, error);
  return kf ? load(kf, path, error) : NULL;
}

WebConfig *
web_config_load_data(const char *data, gsize length, const char *name, GError **error)
{
  g_return_val_if_fail(data && name, NULL);
  KeyFileParams p = reader_params();
  g_autoptr(KeyFile) kf = keyfile_load_data(&p, data, length, name, error);
  return kf ? load(kf, name, error) : NULL;
}

void
web_config_free(WebConfig *c)
{
  if (!c)
    return;
  for (int i = 0; i < c->n_pairs; i++) {
    g_free(c->pairs[i].name);
    g_free(c->pairs[i].ring);
  }
  g_free(c->pairs);
  g_free(c->path);
  g_free(c->listen);
  g_free(c->stereod);
  g_free(c->heightmap);
  g_free(c->heightmap_socket);
  g_free(c->heightmap_ring);
  g_free(c);
}
