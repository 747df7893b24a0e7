/* server-private.h: what server.c (routes, pictures), stream.c (MJPEG and event clients)
 * and stats.c (the statistics as JSON) share. Everything here lives on the main thread. */
#pragma once

#include <libsoup/soup.h>

#include "metrics/metrics.h"
#include "web/web.h"

#define WEB_LEFT_MAX_BYTES (32u << 20)   /* a left image (PGM) from stereod, at most */
#define WEB_EVENTS_BACKLOG (1u << 20)    /* bytes an event client may have queued before
                                            players and stats lines are skipped for it */

typedef struct WebServer WebServer;

/* One picture of a source: the newest JPEG of a view, encoded once per new frame. */
typedef struct {
  GBytes *jpeg;
  GBytes *event;                  /* the "picture" event of this JPEG (base64), made when
                                     an event client first needs it */
  uint64_t generation;            /* 0 = none yet */
  uint64_t frame_number, counter;
  char error[192];                /* why there is none ("" when there is one) */
} WebPicture;

/* A ring and its pictures: a pair, or the height map. */
typedef struct {
  WebServer *server;
  const WebPairConfig *pair;      /* NULL for the height map */
  const char *name;               /* the pair's name, or "heightmap" */
  WebRing *ring;
  StereodFrame view;              /* the frame the pictures are made from */
  uint64_t view_generation;
  WebScale scale;
  bool scale_fixed;               /* set from the configuration or the first frame */
  WebPicture pictures[WEB_VIEW_COUNT];
  /* the left camera, fetched from stereod's /left.pgm */
  bool left_in_flight;
  gint64 left_fetched_us;
  uint64_t left_generation;
} WebSource;

typedef enum {
  WEB_CLIENT_MJPEG,
  WEB_CLIENT_EVENTS,
} WebClientKind;

typedef struct {
  WebServer *server;
  SoupServerMessage *msg;         /* a reference while the client is in the list */
  WebClientKind kind;
  WebSource *source;              /* MJPEG */
  WebView view;
  uint64_t *sent_pictures;        /* events: generation sent, per source and view */
  gint64 interval_us;
  guint timer;
  uint64_t sent_generation;
  guint64 queued;                 /* bytes appended and not written yet */
  gint64 progress_us;             /* when bytes were last written (or the start) */
  uint64_t sent, skipped;         /* frames (MJPEG) or events */
  char *peer;
  GSocket *socket;                /* the connection's (a reference) */
  bool done;
} WebClient;

struct WebServer {
  const WebConfig *config;
  SoupServer *soup;
  MetricsListener *listener;      /* connections: at most max_clients + 32 */
  GInetSocketAddress *address;
  guint16 port;
  WebEncoder *encoder;
  WebSource *sources;             /* the pairs, then the height map when configured */
  int n_sources;
  WebSource *heightmap;           /* NULL when none */
  WebScrape *stereod_metrics, *heightmap_metrics;
  WebPlayers *players;
  char *last_players;             /* the newest JSON line */
  uint64_t players_lines;
  GList *clients;                 /* WebClient * */
  int n_clients;
  uint64_t refused, dropped;      /* clients refused (over max_clients), stalled dropped */
  guint tick;                     /* 1 s: statistics and stall checks */
  GBytes *page;
};

/* server.c */
WebSource *web_server_find_source(WebServer *s, const char *name);
/* The newest picture of `view` (encoding it when the source has a newer frame); NULL
 * when there is none yet (picture->error says why). */
const WebPicture *web_source_picture(WebSource *src, WebView view);
/* The views a source has on the page: left, color, confidence for a pair (left only
 * with [web] stereod=), height for the height map. */
bool web_source_shows(const WebSource *src, WebView view);
/* The picture's "picture" event (made once per picture). */
GBytes *web_picture_event(WebSource *src, WebView view);
char *web_json_string(const char *text);   /* a JSON string literal, quotes included */
void web_json_number(GString *out, double v);   /* null for NaN and the infinities */

/* stream.c */
void web_stream_mjpeg(WebServer *s, SoupServerMessage *msg, GHashTable *query);
void web_stream_events(WebServer *s, SoupServerMessage *msg, GHashTable *query);
/* An event to every event client that has room for it ("players", "stats"). */
void web_stream_broadcast(WebServer *s, const char *event, const char *data, gsize length);
/* Drops the clients that took nothing for stall_s. */
void web_stream_check_stalls(WebServer *s);
void web_stream_close_all(WebServer *s);

/* stats.c */
/* The statistics of every source, the height map and the server, as one JSON object. */
char *web_stats_json(WebServer *s);
/* The configuration the page builds itself from, as JSON. */
char *web_config_json(WebServer *s);
