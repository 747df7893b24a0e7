/* web.h: stereod-web, the operator's live view of stereod and stereod-heightmap in a
 * browser.
 *
 * Parts (one object each, one file each):
 *  - WebConfig (config.c): the key file (config/web.conf documents every key);
 *  - WebRing (ring.c): one reader thread per ring (a pair's, and the height map's),
 *    which copies the newest frame into a "latest" slot under a lock held for a swap of
 *    two structs. The thread copies frames only while somebody watches the ring, and then
 *    at most max_rate times a second: the rings' writers never see the web view at all
 *    (readers cost writers nothing), and what it costs the machine is bounded;
 *  - WebEncoder (render.c): a frame's plane -> colour or gray picture -> JPEG (TurboJPEG),
 *    scaled down by a whole factor to at most max_width, with imageio's colour map (the
 *    one stereod-dump --color uses; the page draws its colour bars from the same table);
 *  - WebScrape (scrape.c): stereod's and stereod-heightmap's /metrics scraped once a
 *    second (bounded responses, 2 s timeouts), parsed into samples; the left images from
 *    stereod's /left.pgm;
 *  - WebPlayers (players.c): the height map's JSON lines from its Unix socket, each line
 *    bounded, reconnecting when the builder restarts;
 *  - WebServer (server.c, stream.c, stats.c, page/): the libsoup server: the page, its
 *    configuration as JSON, MJPEG streams of every picture (multipart/x-mixed-replace),
 *    Server-Sent Events with the players and the statistics, single JPEG snapshots.
 *
 * Everything but the reader threads runs on the main thread's GMainContext. Clients are
 * served at the rate they ask for (at most max_rate): a picture is encoded once per new
 * frame and view, whoever asks, and a client gets a new frame only when it took the
 * previous one (one frame in flight per stream, soup's own flow control: the message is
 * paused when there is nothing to write), so a slow browser gets fewer frames and a
 * stalled one (nothing taken for stall_s) is disconnected. Memory per client is bounded
 * by one frame; clients are bounded by max_clients.
 *
 * Errors: GError (WEB_CONFIG_ERROR for the configuration, G_IO_ERROR otherwise).
 * Destructors accept NULL. None of the objects is thread safe unless said so.
 */
#pragma once

#include <gio/gio.h>
#include <stdbool.h>
#include <stdint.h>

#include <stereod/client.h>

G_BEGIN_DECLS

#define WEB_EXIT_CONFIG 78          /* EX_CONFIG */
#define WEB_EXIT_USAGE 64           /* EX_USAGE */
#define WEB_MAX_PAIRS 32

/* ---------------------------------------------------------------- configuration */

#define WEB_CONFIG_ERROR (web_config_error_quark())
GQuark web_config_error_quark(void);

typedef enum {
  WEB_CONFIG_ERROR_IO,
  WEB_CONFIG_ERROR_SYNTAX,
  WEB_CONFIG_ERROR_UNKNOWN,
  WEB_CONFIG_ERROR_MISSING,
  WEB_CONFIG_ERROR_INVALID,
  WEB_CONFIG_ERROR_COUNT
} WebConfigError;

typedef enum {
  WEB_COLOR_DISPARITY,      /* the colour view shows disparity, px */
  WEB_COLOR_DEPTH,          /* ... depth, m (the ring needs a DEPTH plane) */
  WEB_COLOR_COUNT
} WebColor;

typedef struct {
  char *name;               /* [A-Za-z0-9._-]{1,63}, not starting with '.' */
  char *ring;               /* ring name, default name */
  WebColor color;
  double max_disparity;     /* px, top of the disparity colours; 0 = from the first frame */
  double min_depth;         /* m, nearest (warmest) depth colour; 0 with max_depth 0 = auto */
  double max_depth;         /* m, farthest depth colour */
} WebPairConfig;

typedef struct {
  char *path;               /* the file loaded */
  char *listen;             /* "ADDRESS:PORT" (metrics_address_parse) */
  double rate;              /* frames/s of a stream when the client asks for none */
  double max_rate;          /* the most a client gets (and the readers copy), frames/s */
  int quality;              /* JPEG, 1..100 */
  int max_width;            /* px: wider pictures are scaled down by a whole factor */
  int max_clients;          /* streams (MJPEG and events) at once */
  double stall_s;           /* a stream that takes nothing for this long is closed */
  char *stereod;            /* stereod's metrics= address, NULL = none */
  char *heightmap;          /* stereod-heightmap's metrics= address, NULL = none */
  char *heightmap_socket;   /* its socket= path, NULL = none */
  char *heightmap_ring;     /* its ring= name, NULL = none */
  double max_height;        /* m, top of the height map's colours */
  int n_pairs;              /* 1..WEB_MAX_PAIRS */
  WebPairConfig *pairs;
} WebConfig;

/* Loads and validates FILE ("FILE: [group] key: problem" errors). */
WebConfig *web_config_load(const char *path, GError **error);
/* The same from text; `name` stands for the file in messages. */
WebConfig *web_config_load_data(const char *data, gsize length, const char *name,
                                GError **error);
void web_config_free(WebConfig *config);

/* ---------------------------------------------------------------- rings */

typedef struct WebRing WebRing;

typedef struct {
  const char *label;        /* for logs and the page: the pair's name ("heightmap") */
  const char *ring;         /* ring name (DIR/stereod.<ring>, <stereod/ring.h>) */
  double max_rate;          /* frames/s copied at most while watched */
} WebRingParams;

#define WEB_RING_LATENCIES 64      /* capture -> publish samples kept */

typedef struct {
  bool open;                /* a ring is open */
  bool closed;              /* ... and its writer closed it */
  bool writer_alive;
  uint64_t counter;         /* its publish counter */
  uint64_t generation;      /* rings read (stereod_client_get_generation) */
  uint64_t frames_read;     /* frames copied since start */
  double publish_rate;      /* frames/s published, over the last ~2 s; 0 when none */
  double latency_p50;       /* s, capture -> publish of the frames read lately; NaN: none */
  double latency_p99;
  uint32_t width, height, formats;
  double disparity_scale;
  double producer[8];       /* the header's producer[] */
  char error[192];          /* why no ring is open ("" when one is) */
} WebRingStatus;

/* Starts the reader thread (it opens the ring when it appears, follows restarts). */
WebRing *web_ring_new(const WebRingParams *params);
/* Stops and joins the thread (within about 0.5 s), frees. */
void web_ring_free(WebRing *ring);
/* One more (delta 1) or one less (-1) watcher; frames are copied while there is one, or
 * for 3 s after web_ring_touch. Thread safe. */
void web_ring_watch(WebRing *ring, int delta);
void web_ring_touch(WebRing *ring);
/* When a frame newer than *generation (0: none yet) is there, swaps it into *view (the
 * previous contents of *view go back to the reader), sets *generation and returns TRUE.
 * *view must stay the caller's between calls (its buffer is recycled). Thread safe. */
bool web_ring_take(WebRing *ring, StereodFrame *view, uint64_t *generation);
void web_ring_get_status(WebRing *ring, WebRingStatus *out);
const char *web_ring_get_label(WebRing *ring);

/* ---------------------------------------------------------------- pictures */

typedef enum {
  WEB_VIEW_LEFT,            /* the left camera (from stereod's /left.pgm), gray */
  WEB_VIEW_COLOR,           /* disparity or depth in colour, invalid black */
  WEB_VIEW_CONFIDENCE,      /* confidence, gray, invalid black */
  WEB_VIEW_HEIGHT,          /* the height map, +y up, no data black */
  WEB_VIEW_COUNT
} WebView;

/* The scales of the colour views; zeros are filled from a frame by web_scale_auto. */
typedef struct {
  WebColor color;
  double max_disparity;     /* px */
  double min_depth, max_depth;   /* m */
  double max_height;        /* m */
} WebScale;

/* "left", "color", "confidence", "height"; NULL for others. */
const char *web_view_name(WebView view);
/* The view of that name, or WEB_VIEW_COUNT. */
WebView web_view_from_name(const char *name);

/* Fills the zero scales from frame `f`: max_disparity the 99th percentile of the valid
 * disparities rounded up to a multiple of 8 px (at least 8); min/max_depth the 1st and
 * 99th percentiles of the valid depths rounded out to whole metres. Returns TRUE when it
 * filled one (FALSE: nothing zero, or no valid pixel to take it from). */
bool web_scale_auto(WebScale *scale, const StereodFrame *f);

/* The colour of t in [0, 1] (imageio_colormap_turbo), as `n` (2..1024) RGB triplets of
 * t = i / (n - 1): what the page draws its colour bars with. */
void web_colormap_table(uint8_t *rgb, int n);

typedef struct WebEncoder WebEncoder;

WebEncoder *web_encoder_new(int quality, int max_width);
void web_encoder_free(WebEncoder *encoder);
/* The JPEG of a view of `f` (COLOR, CONFIDENCE, HEIGHT). NULL and G_IO_ERROR_NOT_FOUND
 * when the frame has no plane for it. */
GBytes *web_encoder_frame(WebEncoder *encoder, const StereodFrame *f, WebView view,
                          const WebScale *scale, GError **error);
/* The JPEG of a gray picture (the left camera). */
GBytes *web_encoder_gray(WebEncoder *encoder, const uint8_t *data, int width, int height,
                         size_t stride, GError **error);

/* ---------------------------------------------------------------- metrics */

/* Samples of a Prometheus text, keyed "name" or "name{a=\"x\",b=\"y\"}" with the labels in
 * name order and values unescaped-then-escaped canonically. */
typedef struct WebSamples WebSamples;

#define WEB_SCRAPE_MAX_BYTES (4 << 20)   /* a /metrics response, at most */

/* Parses `text`; lines it cannot read are counted in *bad (may be NULL) and skipped.
 * Never fails: at most WEB_SCRAPE_MAX_BYTES are looked at. */
WebSamples *web_samples_parse(const char *text, gsize length, int *bad);
void web_samples_free(WebSamples *samples);
/* The value of `name` with the labels given as NULL-terminated name, value pairs
 * ("pair", "west", NULL), or NaN when there is no such sample. */
double web_samples_get(const WebSamples *samples, const char *name, ...) G_GNUC_NULL_TERMINATED;
/* The sum of the samples of `name` whose labels include the given ones; NaN when none. */
double web_samples_sum(const WebSamples *samples, const char *name, ...) G_GNUC_NULL_TERMINATED;
/* The value of label `label` of the first sample of `name` whose labels include the
 * given ones and whose value is `value` (a state gauge at 1), or NULL. */
const char *web_samples_find_label(const WebSamples *samples, const char *name,
                                   double value, const char *label, ...)
  G_GNUC_NULL_TERMINATED;
/* The quantile q of histogram `name` (its _bucket samples with the labels given), by
 * linear interpolation within the bucket as Prometheus' histogram_quantile does, over the
 * observations between `before` (may be NULL: all) and `now`. NaN without observations. */
double web_samples_quantile(const WebSamples *now, const WebSamples *before,
                            const char *name, double q, ...) G_GNUC_NULL_TERMINATED;

typedef struct WebScrape WebScrape;

/* Scrapes http://ADDRESS/metrics every second on the thread-default main context. */
WebScrape *web_scrape_new(const char *label, const char *address, GError **error);
void web_scrape_free(WebScrape *scrape);
/* The newest samples and those of about `window_s` earlier (for rates and quantiles);
 * NULL until scraped. *age_s: seconds since the newest scrape. Valid until the next
 * main-context iteration. */
const WebSamples *web_scrape_get(WebScrape *scrape, double window_s, const WebSamples **before,
                                 double *interval_s, double *age_s);
/* Why the last scrape failed ("" when it worked). */
const char *web_scrape_get_error(WebScrape *scrape);
/* Starts a bounded GET of http://ADDRESS/PATH_AND_QUERY; `done` gets the body or NULL
 * and an error, on the main context. At most one request per scrape object is in flight
 * besides the scrape itself: FALSE (and no call) when one is. */
typedef void (*WebFetchDone)(GBytes *body, const GError *error, gpointer data);
bool web_scrape_fetch(WebScrape *scrape, const char *path_and_query, gsize max_bytes,
                      WebFetchDone done, gpointer data);

/* ---------------------------------------------------------------- players */

#define WEB_PLAYERS_MAX_LINE 65536     /* bytes per JSON line, at most */

typedef struct WebPlayers WebPlayers;
typedef void (*WebPlayersLine)(const char *line, gsize length, gpointer data);

/* Reads the JSON lines of the height map's socket on the thread-default main context,
 * calling `line` for each one (without its newline). Connects when the socket appears
 * and again after the builder went away (every second, one log line per change). A line
 * longer than WEB_PLAYERS_MAX_LINE, or with bytes below 0x20, drops the connection. */
WebPlayers *web_players_new(const char *socket_path, WebPlayersLine line, gpointer data);
void web_players_free(WebPlayers *players);
bool web_players_is_connected(WebPlayers *players);
uint64_t web_players_get_lines(WebPlayers *players);

/* ---------------------------------------------------------------- server */

typedef struct WebServer WebServer;

/* Starts everything the configuration asks for (rings, scrapes, players) and listens on
 * config->listen (on the thread-default main context). NULL and an error when it cannot
 * listen. The configuration is borrowed until web_server_free. */
WebServer *web_server_new(const WebConfig *config, GError **error);
void web_server_free(WebServer *server);
/* "http://HOST:PORT/" (the chosen port for port 0), newly allocated. */
char *web_server_get_url(WebServer *server);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebConfig, web_config_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebRing, web_ring_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebEncoder, web_encoder_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebSamples, web_samples_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebScrape, web_scrape_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebPlayers, web_players_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WebServer, web_server_free)

G_END_DECLS
