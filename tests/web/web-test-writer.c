/* web-test-writer: what stereod and stereod-heightmap publish, made up, for the tests of
 * stereod-web (no GPU, no cameras).
 *
 *   web-test-writer --pairs A,B[,...] [--size WxH] [--hz HZ] [--players N]
 *                   [--socket PATH] [--heightmap-ring NAME] [--seconds S] [--noise]
 *
 * Per pair a ring with disparity (1/32 px), depth (mm) and confidence planes: a ramp
 * from 8 px at the top to 40 px at the bottom, a 56 px square moving left to right, an
 * invalid band on the left (the L-R check's), confidence 200 where valid; --noise adds
 * up to 4 px of pseudo-random disparity to every pixel (large JPEG pictures). With
 * --heightmap-ring a height-map ring (FLOAT32 m over x -55.5..55.5, y -37..37 in 0.2 m
 * cells, producer[] as stereod-heightmap writes it): 0 m over the pitch, no data around,
 * a 1.8 m disc under each player. With --socket the players as JSON lines on that socket,
 * written by the height map's own server (heightmap_server_*, heightmap_json_append): N
 * players (ids 1..N) 12 m apart each going round its own 3 m circle, always in the same
 * pairs. Prints "ready" once everything exists, then publishes at HZ (default 5) until
 * SIGTERM/SIGINT or S seconds (default 600); prints the number of frames published per
 * pair on stdout at the end.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heightmap/heightmap.h"
#include "ring-writer.h"

#define GRID_W 555
#define GRID_H 370
#define GRID_CELL 0.2
#define GRID_X0 -55.5
#define GRID_Y0 -37.0

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
  stop = sig;
}

static void
player_position(int i, double t, double *x, double *y)
{
  double cx = -42 + 12.0 * i, cy = i % 2 ? 14 : -14;
  double a = 0.6 * t + i;
  *x = cx + 3 * cos(a);
  *y = cy + 3 * sin(a);
}

static void
fill_pair(RingWriterSlot *s, uint64_t n, bool noise)
{
  uint32_t seed = (uint32_t)n * 2654435761u + 1;
  uint32_t w = s->width, h = s->height;
  int sq = (int)(n * 7 % (w > 64 ? w - 56 : 1));
  for (uint32_t y = 0; y < h; y++) {
    int16_t *d = (int16_t *)((uint8_t *)s->planes[STEREOD_RING_PLANE_DISPARITY] +
                             (size_t)y * s->strides[STEREOD_RING_PLANE_DISPARITY]);
    uint16_t *z = (uint16_t *)((uint8_t *)s->planes[STEREOD_RING_PLANE_DEPTH] +
                               (size_t)y * s->strides[STEREOD_RING_PLANE_DEPTH]);
    uint8_t *c = (uint8_t *)s->planes[STEREOD_RING_PLANE_CONFIDENCE] +
                 (size_t)y * s->strides[STEREOD_RING_PLANE_CONFIDENCE];
    for (uint32_t x = 0; x < w; x++) {
      double px = 8.0 + 32.0 * y / h;
      if ((int)x >= sq && (int)x < sq + 56 && y >= h / 3 && y < h / 3 + 56)
        px = 56;
      if (noise) {
        seed = seed * 1664525u + 1013904223u;
        px += (double)(seed >> 24) / 64.0;
      }
      bool valid = x >= 8;
      d[x] = valid ? (int16_t)lround(px * 32) : STEREOD_RING_DISPARITY_INVALID;
      z[x] = valid ? (uint16_t)lround(1000.0 * 250.0 / px) : 0;   /* fx B = 250 px m */
      c[x] = valid ? 200 : 0;
    }
  }
}

static void
fill_heights(float *hm, const double *px, const double *py, int n)
{
  for (int j = 0; j < GRID_H; j++)
    for (int i = 0; i < GRID_W; i++) {
      double x = GRID_X0 + (i + 0.5) * GRID_CELL, y = GRID_Y0 + (j + 0.5) * GRID_CELL;
      float v = fabs(x) <= 52.5 && fabs(y) <= 34 ? 0.0f : NAN;
      for (int k = 0; k < n; k++)
        if (hypot(x - px[k], y - py[k]) < 0.5)
          v = 1.8f;
      hm[(size_t)j * GRID_W + i] = v;
    }
}

int
main(int argc, char **argv)
{
  g_autofree char *pairs_text = NULL, *size = NULL, *socket_path = NULL, *hm_ring = NULL;
  gdouble hz = 5, seconds = 600;
  gint players = 7;
  gboolean noise = FALSE;
  GOptionEntry entries[] = {
    { "pairs", 0, 0, G_OPTION_ARG_STRING, &pairs_text, "pair names", "A,B" },
    { "size", 0, 0, G_OPTION_ARG_STRING, &size, "frame size", "WxH" },
    { "hz", 0, 0, G_OPTION_ARG_DOUBLE, &hz, "frames per second", "HZ" },
    { "players", 0, 0, G_OPTION_ARG_INT, &players, "players", "N" },
    { "socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_path, "JSON socket", "PATH" },
    { "heightmap-ring", 0, 0, G_OPTION_ARG_STRING, &hm_ring, "height-map ring", "NAME" },
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "run at most this long", "S" },
    { "noise", 0, 0, G_OPTION_ARG_NONE, &noise, "noisy disparities", NULL },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new(NULL);
  g_option_context_add_main_entries(oc, entries, NULL);
  g_autoptr(GError) error = NULL;
  unsigned w = 320, h = 180;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || !pairs_text || !(hz > 0) ||
      players < 0 || players > 64 ||
      (size && (sscanf(size, "%ux%u", &w, &h) != 2 || w < 64 || h < 64))) {
    fprintf(stderr, "web-test-writer: %s\n", error ? error->message : "bad arguments");
    return 64;
  }
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  g_auto(GStrv) names = g_strsplit(pairs_text, ",", -1);
  int n_pairs = (int)g_strv_length(names);
  RingWriter *rings[16] = { 0 };
  g_return_val_if_fail(n_pairs >= 1 && n_pairs <= 16, 1);
  for (int i = 0; i < n_pairs; i++) {
    RingWriterParams rp = {
      .name = names[i], .width = w, .height = h,
      .formats = STEREOD_RING_FORMAT_DISPARITY | STEREOD_RING_FORMAT_DEPTH |
                 STEREOD_RING_FORMAT_CONFIDENCE,
      .calibration = { .fx = 500, .fy = 500, .cx = w / 2.0, .cy = h / 2.0, .baseline = 0.5 },
    };
    char why[256];
    if (ring_writer_new_with_error(&rp, &rings[i], why, sizeof why) < 0) {
      fprintf(stderr, "web-test-writer: %s\n", why);
      return 1;
    }
  }
  RingWriter *hm = NULL;
  if (hm_ring) {
    RingWriterParams rp = {
      .name = hm_ring, .width = GRID_W, .height = GRID_H, .formats = STEREOD_RING_FORMAT_FLOAT32,
      .producer = { 2.0, GRID_X0, GRID_Y0, GRID_CELL, GRID_W, GRID_H },
    };
    char why[256];
    if (ring_writer_new_with_error(&rp, &hm, why, sizeof why) < 0) {
      fprintf(stderr, "web-test-writer: %s\n", why);
      return 1;
    }
  }
  HeightmapServer *server = NULL;
  if (socket_path && !(server = heightmap_server_new(socket_path, &error))) {
    fprintf(stderr, "web-test-writer: %s\n", error->message);
    return 1;
  }
  printf("ready\n");
  fflush(stdout);

  g_autofree float *heights = g_new(float, GRID_W * GRID_H);
  HeightmapTrack tracks[64];
  double px[64], py[64];
  GString *line = g_string_new(NULL);
  uint64_t period = (uint64_t)(1e9 / hz);
  gint64 end = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);
  uint64_t n = 0;
  for (; !stop && g_get_monotonic_time() < end; n++) {
    uint64_t capture = (uint64_t)g_get_real_time() * 1000u;
    for (int i = 0; i < n_pairs; i++) {
      RingWriterSlot slot;
      if (ring_writer_begin(rings[i], &slot) < 0)
        return 1;
      fill_pair(&slot, n, noise);
      RingWriterMeta meta = { .frame_number = n, .capture_ns = capture };
      ring_writer_commit(rings[i], &meta);
    }
    double t = (double)n / hz;
    memset(tracks, 0, sizeof tracks);
    for (int k = 0; k < players; k++) {
      player_position(k, t, &px[k], &py[k]);
      tracks[k] = (HeightmapTrack){ .id = (uint32_t)k + 1, .x = px[k], .y = py[k],
                                    .height = 1.8, .area = 0.6 };
    }
    if (hm) {
      fill_heights(heights, px, py, players);
      const void *planes[STEREOD_RING_PLANE_COUNT] = { [STEREOD_RING_PLANE_FLOAT32] = heights };
      RingWriterMeta meta = { .frame_number = n, .capture_ns = capture };
      ring_writer_publish(hm, &meta, planes);
    }
    if (server) {
      g_string_truncate(line, 0);
      heightmap_json_append(line, capture, n, (const char *const *)names, n_pairs, tracks,
                            players);
      heightmap_server_send(server, line->str, line->len);
    }
    uint64_t now = (uint64_t)g_get_real_time() * 1000u;
    g_usleep((gulong)((period - now % period) / 1000u + 1));
  }
  heightmap_server_free(server);
  ring_writer_free(hm);
  for (int i = 0; i < n_pairs; i++)
    ring_writer_free(rings[i]);
  g_string_free(line, TRUE);
  printf("published %" G_GUINT64_FORMAT "\n", n);
  return 0;
}
