/* test-heightmap-unit: the CPU parts of stereod-heightmap around the players: the
 * choice of frames to fuse, the JSON line and the socket server (a client that does not
 * read is dropped, the sender never blocks; clients over the limit are refused with a line per
 * burst whose counts add up; a live socket is never replaced, a stale one is), and the
 * instance locks. Blobs: test-heightmap-blobs.c; tracks: test-heightmap-players.c; the
 * configuration: test-heightmap-config.c. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <gio/gio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "heightmap/sources.h"

/* ---------------------------------------------------------------- frame choice */

/* A pair holding the frames (capture, arrival) given, oldest first, none fused. */
static HeightmapPairState
held(int n, const uint64_t (*frames)[2])
{
  HeightmapPairState st = { .n_frames = n };
  for (int j = 0; j < n; j++)
    st.frames[j] = (HeightmapHeldFrame) { .capture_ns = frames[j][0],
                                          .arrived_ns = frames[j][1] };
  return st;
}

static HeightmapPairState
one(uint64_t capture_ns, uint64_t arrived_ns, bool fused)
{
  HeightmapPairState st = held(1, (const uint64_t[][2]) { { capture_ns, arrived_ns } });
  st.frames[0].fused = fused;
  return st;
}

static void
test_select(void)
{
  const HeightmapSelectParams sp = { .tolerance_ns = 20000000, .wait_ns = 100000000,
                                     .stale_ns = 1000000000 };
  const uint64_t now = 10000000000ull;
  int chosen[3];
  uint32_t skipped[3], late[3];
  uint64_t deadline;
  /* all three fresh and within tolerance: fused at once */
  HeightmapPairState p[3] = {
    one(5000000000ull, now - 1000, false),
    one(5010000000ull, now - 2000, false),
    one(5005000000ull, now - 3000, false),
  };
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 3);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0 && chosen[2] == 0);
  /* pair 2 has not delivered this time yet (its frame is fused): wait, then go without */
  p[2].frames[0].fused = true;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, now - 2000 + sp.wait_ns);
  g_assert_true(chosen[0] < 0 && chosen[1] < 0 && chosen[2] < 0);
  g_assert_cmpint(heightmap_select_frames(p, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, NULL, NULL),
                  ==, 2);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0 && chosen[2] < 0);
  /* pair 2 stopped publishing (stale: silent for 2 s while the others went on 2 s of
   * capture time): not waited for */
  p[2].frames[0].arrived_ns = now - 2 * sp.stale_ns;
  p[2].frames[0].capture_ns = 5005000000ull - 2 * sp.stale_ns;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 2);
  /* silent as long but its newest frame as new as theirs (the others' frames late, a
   * slow replay): live, waited for */
  p[2].frames[0].capture_ns = 5005000000ull;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 0);
  /* pair 1 is behind by more than the tolerance: its frame is skipped, never fused late */
  p[2].frames[0].arrived_ns = now - 3000;
  p[1].frames[0].capture_ns = 4900000000ull;
  g_assert_cmpint(heightmap_select_frames(p, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, NULL, NULL),
                  ==, 1);
  g_assert_true(chosen[0] == 0 && chosen[1] < 0 && skipped[1] == 1 && skipped[2] == 0);
  /* nothing new */
  for (int i = 0; i < 3; i++)
    p[i].frames[0].fused = true;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, 0);

  /* A pair one frame behind (its frame of 5.00 s comes after the others' of 5.04 s) joins
   * the set of 5.00 s from the others' history; the set of 5.04 s then waits for it. */
  HeightmapPairState h[3] = {
    held(2, (const uint64_t[][2]) { { 5000000000ull, now - 45000000 },
                                    { 5040000000ull, now - 5000000 } }),
    held(2, (const uint64_t[][2]) { { 5001000000ull, now - 44000000 },
                                    { 5041000000ull, now - 4000000 } }),
    one(5000000000ull, now - 1000, false),
  };
  g_assert_cmpint(heightmap_select_frames(h, 3, now, 0, &sp, chosen, skipped, late, &deadline),
                  ==, 3);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0 && chosen[2] == 0);
  g_assert_true(!skipped[0] && !skipped[1] && !skipped[2] && !late[0] && !late[1] && !late[2]);
  h[0].frames[0].fused = h[1].frames[0].fused = h[2].frames[0].fused = true;
  g_assert_cmpint(heightmap_select_frames(h, 3, now, 5001000000ull, &sp, chosen, skipped, late,
                                          &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, now - 5000000 + sp.wait_ns);
  /* with pair 2's frame of 5.04 s in as well both sets are complete: the newer goes, the
   * older's frames are skipped */
  h[0].frames[0].fused = h[1].frames[0].fused = h[2].frames[0].fused = false;
  h[2] = held(2, (const uint64_t[][2]) { { 5000000000ull, now - 1000 },
                                         { 5040000000ull, now - 500 } });
  g_assert_cmpint(heightmap_select_frames(h, 3, now, 0, &sp, chosen, skipped, late, NULL), ==, 3);
  g_assert_true(chosen[0] == 1 && chosen[1] == 1 && chosen[2] == 1);
  g_assert_true(skipped[0] == 1 && skipped[1] == 1 && skipped[2] == 1);
  /* an older partial set that waited out goes before a newer one that has not */
  h[2] = one(4960000000ull, now - 1000, true);
  h[0].frames[0].arrived_ns = now - sp.wait_ns;
  g_assert_cmpint(heightmap_select_frames(h, 3, now, 0, &sp, chosen, skipped, late, &deadline),
                  ==, 2);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0 && chosen[2] < 0 && !skipped[0]);

  /* Late frames: sets fused up to 5.010 s; pair 1 now brings a frame of 5.005 s (it came
   * after the wait) and pair 0 one of 5.050 s. Pair 1's is late: never chosen, marked
   * late, and does not hold the set back; it does not set the time either. */
  HeightmapPairState q[3] = {
    one(5050000000ull, now - 1000, false),
    one(5005000000ull, now - 500, false),
    one(5000000000ull, now - 2 * sp.stale_ns, true),   /* stale */
  };
  const uint64_t last = 5010000000ull;
  g_assert_cmpint(heightmap_select_frames(q, 3, now, last, &sp, chosen, skipped, late, NULL),
                  ==, 0);   /* pair 1 is live and has nothing newer: wait for it */
  g_assert_true(late[1] == 1 && !late[0] && !late[2]);
  g_assert_cmpint(chosen[1], <, 0);
  g_assert_cmpint(heightmap_select_frames(q, 3, now + sp.wait_ns, last, &sp, chosen, skipped,
                                          late, NULL), ==, 1);
  g_assert_true(chosen[0] == 0 && chosen[1] < 0 && late[1] == 1 && !skipped[1]);
  /* a frame exactly at the last fused time is late as well; with last_fused_ns 0 none is */
  q[1].frames[0].capture_ns = last;
  heightmap_select_frames(q, 3, now, last, &sp, chosen, skipped, late, NULL);
  g_assert_true(late[1] == 1);
  heightmap_select_frames(q, 3, now, 0, &sp, chosen, skipped, late, NULL);
  g_assert_false(late[1]);

  /* The first set: pair 0 has its first frame; pair 1's ring is open but its first frame
   * has not come (a writer that processes the pairs in turn); pair 2's ring is not open.
   * The set waits for pair 1 (not for pair 2), and goes without it after wait_ns; a ring
   * opened longer than stale_ns ago without a frame is not waited for. */
  HeightmapPairState r[3] = {
    one(5000000000ull, now - 1000, false),
    { .opened = true, .opened_ns = now - 5000 },
    { 0 },
  };
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, &deadline),
                  ==, 0);
  g_assert_cmpuint(deadline, ==, now - 1000 + sp.wait_ns);
  g_assert_true(!late[1] && !skipped[1] && chosen[1] < 0);
  g_assert_cmpint(heightmap_select_frames(r, 3, now + sp.wait_ns, 0, &sp, chosen, skipped, late,
                                          NULL), ==, 1);
  g_assert_true(chosen[0] == 0 && chosen[1] < 0 && !skipped[1] && chosen[2] < 0);
  r[1] = one(5001000000ull, now - 500, false);
  r[1].opened = true;
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, NULL), ==, 2);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0);
  r[1] = (HeightmapPairState) { .opened = true, .opened_ns = now - 2 * sp.stale_ns };
  g_assert_cmpint(heightmap_select_frames(r, 3, now, 0, &sp, chosen, skipped, late, NULL), ==, 1);
  /* an opened ring without a frame never sets the time nor makes a set on its own */
  HeightmapPairState e[1] = { { .opened = true, .opened_ns = now - 1000 } };
  g_assert_cmpint(heightmap_select_frames(e, 1, now + sp.wait_ns, 0, &sp, chosen, skipped, late,
                                          &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, 0);
}

/* ---------------------------------------------------------------- output */


/* The frame choice as heightmap_sources_next drives it (each pair's last
 * HEIGHTMAP_HISTORY frames, the chosen, skipped and late ones marked fused), in 1 ms
 * steps: 8 pairs publish frame k (captured k * 40 ms) 10 ms later, one of them `lag` ms
 * later still; fusing takes `fuse` ms. Returns the sets fused of `frames` and the fewest
 * and most pairs in one. */
static int
select_run(double lag, double fuse, int frames, int *fewest_pairs, int *most_pairs)
{
  const HeightmapSelectParams sp = { .tolerance_ns = 20000000, .wait_ns = 100000000,
                                     .stale_ns = 1000000000 };
  const double period = 40;
  enum { N = 8 };
  HeightmapPairState st[N] = { { 0 } };
  long next[N] = { 0 };   /* the next frame each pair publishes */
  uint64_t last = 0;
  int sets = 0;
  *most_pairs = 0;
  *fewest_pairs = N;
  for (double t = 0; t < frames * period + 300;) {
    for (int i = 0; i < N; i++) {
      double delay = 10 + (i == N - 1 ? lag : 0);
      if (t < delay) {
        st[i] = (HeightmapPairState) { .opened = true };
        continue;
      }
      for (; next[i] < frames && next[i] * period + delay <= t; next[i]++) {
        if (st[i].n_frames == HEIGHTMAP_HISTORY) {
          memmove(&st[i].frames[0], &st[i].frames[1],
                  (HEIGHTMAP_HISTORY - 1) * sizeof st[i].frames[0]);
          st[i].n_frames--;
        }
        st[i].frames[st[i].n_frames++] = (HeightmapHeldFrame) {
          .capture_ns = 1000000000ull + (uint64_t) (next[i] * period * 1e6),
          .arrived_ns = (uint64_t) ((next[i] * period + delay) * 1e6),
        };
      }
    }
    int chosen[N];
    uint32_t skipped[N], late[N];
    int count = heightmap_select_frames(st, N, (uint64_t) (t * 1e6), last, &sp, chosen,
                                        skipped, late, NULL);
    uint64_t before = last;   /* a set's time never goes back */
    for (int i = 0; i < N; i++) {
      for (int j = 0; j < st[i].n_frames; j++)
        if ((skipped[i] | late[i]) >> j & 1 || chosen[i] == j)
          st[i].frames[j].fused = true;
      if (chosen[i] >= 0) {
        g_assert_cmpuint(st[i].frames[chosen[i]].capture_ns, >, before);
        last = MAX(last, st[i].frames[chosen[i]].capture_ns);
      }
    }
    if (count > 0) {
      sets++;
      *most_pairs = MAX(*most_pairs, count);
      *fewest_pairs = MIN(*fewest_pairs, count);
      t += fuse;
    } else {
      t += 1;
    }
  }
  return sets;
}

/* A pair whose frames come up to wait_ms after the others' joins every set: the others'
 * frames of its time wait in their history (before it: with one newest frame per pair,
 * one 45-85 ms behind got 1 set of 100 fused, later ~34 without it). Beyond wait_ms the
 * others' sets go without it, one per frame. A builder slower than the frames fuses the
 * newest complete set each time. */
static void
test_select_lagging_pair(void)
{
  int fewest, most;
  for (double lag = 0; lag <= 90; lag += 15) {
    int sets = select_run(lag, 30, 100, &fewest, &most);
    g_test_message("one pair %.0f ms behind: %d sets of 100 frames, %d-%d pairs", lag, sets,
                   fewest, most);
    g_assert_cmpint(sets, ==, 100);
    g_assert_cmpint(fewest, ==, 8);
  }
  g_assert_cmpint(select_run(130, 30, 100, &fewest, &most), ==, 100);
  g_assert_cmpint(most, ==, 7);
  int sets = select_run(0, 100, 100, &fewest, &most);
  g_test_message("fusion 100 ms a set: %d sets of 100 frames, %d-%d pairs", sets, fewest, most);
  g_assert_cmpint(sets, >=, 38);
  g_assert_cmpint(sets, <=, 42);
  g_assert_cmpint(fewest, ==, 8);
}

static void
test_json(void)
{
  g_autoptr(GString) s = g_string_new("x");
  const char *pairs[] = { "west", "east" };
  HeightmapTrack t[2] = {
    { .id = 3, .x = 1.23449, .y = -5.6, .height = 1.834, .area = 0.4249, .vx = 1.484,
      .vy = -0.3, .has_measured = true, .measured_vx = 1.516, .measured_vy = -0.314 },
    { .id = 12, .x = -52.5, .y = 0.0004, .height = 2.0, .area = 1.0, .measured_vx = 7,
      .missed = 2 },
  };
  heightmap_json_append(s, 1234567890123ull, 42, pairs, 2, t, 2);
  g_assert_cmpstr(s->str, ==, "x{\"time_ns\":1234567890123,\"frame\":42,\"pairs\":[\"west\",\"east\"],"
                  "\"players\":[{\"id\":3,\"x\":1.234,\"y\":-5.600,\"height\":1.83,\"area\":0.42,"
                  "\"vx\":1.52,\"vy\":-0.31,\"track_vx\":1.48,\"track_vy\":-0.30},"
                  "{\"id\":12,\"x\":-52.500,\"y\":0.000,\"height\":2.00,\"area\":1.00,"
                  "\"missed\":2,\"track_vx\":0.00,\"track_vy\":0.00}]}\n");
  g_string_truncate(s, 0);
  heightmap_json_append(s, 0, 0, NULL, 0, NULL, 0);
  g_assert_cmpstr(s->str, ==, "{\"time_ns\":0,\"frame\":0,\"pairs\":[],\"players\":[]}\n");
}

static int
connect_to(const char *path)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint(fd, >=, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  g_assert_cmpint(connect(fd, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  return fd;
}

static void
test_server(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapServer) s = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  int reader = connect_to(path), sleeper = connect_to(path);
  const char line[] = "{\"time_ns\":1,\"frame\":0,\"pairs\":[],\"players\":[]}\n";
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 2);
  char buf[256];
  ssize_t r = read(reader, buf, sizeof buf);
  g_assert_cmpint(r, ==, (ssize_t) strlen(line));
  g_assert_cmpmem(buf, r, line, strlen(line));
  /* the sleeper never reads: once its buffer is full it is dropped, and sending never
   * blocks meanwhile (a send that blocked would hang here for good, never pass); the
   * reader, drained as it goes, stays */
  char big[4096];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\n';
  int sent = 0;
  while (heightmap_server_get_clients(s) == 2 && sent < 100000) {
    heightmap_server_send(s, big, sizeof big);
    sent++;
    while (recv(reader, buf, sizeof buf, MSG_DONTWAIT) > 0)
      ;
  }
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 1);
  g_assert_cmpint(sent, <, 100000);
  g_test_message("slow client dropped after %d lines of 4 KiB", sent);
  /* the dropped client sees the end of the stream */
  ssize_t total = 0;
  while ((r = read(sleeper, big, sizeof big)) > 0)
    total += r;
  g_assert_cmpint(r, ==, 0);
  g_assert_cmpint(total, >, 0);
  /* a client that leaves is noticed */
  close(reader);
  heightmap_server_send(s, line, strlen(line));
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, 0);
  close(sleeper);
  g_clear_pointer(&s, heightmap_server_free);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_rmdir(dir);
}

/* Warnings of the server, counted rather than fatal (GTest makes warnings fatal). */
static GMutex warn_lock;
static GPtrArray *warnings;

static void
on_warning(const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
  g_mutex_lock(&warn_lock);
  g_ptr_array_add(warnings, g_strdup(message));
  g_mutex_unlock(&warn_lock);
  g_test_message("warning: %s", message);
}

static gboolean
warnings_not_fatal(const char *domain, GLogLevelFlags level, const char *message,
                   gpointer data)
{
  return !(level & G_LOG_LEVEL_WARNING) || g_strcmp0(domain, "stereod-heightmap") != 0;
}

/* Connects to the server at `path`, letting it accept (one line sent) whenever its
 * backlog is full; returns the connected socket. */
static int
connect_queued(const char *path, HeightmapServer *s, const char *line)
{
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  g_assert_cmpint(fd, >=, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  for (int tries = 0; connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0; tries++) {
    g_assert_cmpint(errno, ==, EAGAIN);
    g_assert_cmpint(tries, <, 1000);
    heightmap_server_send(s, line, strlen(line));
  }
  return fd;
}

/* 64 clients held, 200 more: each of those is closed at once, and the log has the
 * first refusal, then counts that add up to the other 199 (the last one when the
 * server is freed); at most one count per HEIGHTMAP_SERVER_REFUSAL_LOG_S of the run. */
static void
test_server_refusals(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  HeightmapServer *s = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  const char line[] = "{}\n";
  int held[HEIGHTMAP_SERVER_MAX_CLIENTS];
  for (int i = 0; i < HEIGHTMAP_SERVER_MAX_CLIENTS; i++)
    held[i] = connect_queued(path, s, line);
  heightmap_server_send(s, line, strlen(line));
  g_assert_cmpint(heightmap_server_get_clients(s), ==, HEIGHTMAP_SERVER_MAX_CLIENTS);

  warnings = g_ptr_array_new_with_free_func(g_free);
  guint handler = g_log_set_handler("stereod-heightmap",
                                    G_LOG_LEVEL_WARNING | G_LOG_FLAG_FATAL, on_warning, NULL);
  g_test_log_set_fatal_handler(warnings_not_fatal, NULL);
  gint64 t0 = g_get_monotonic_time();
  enum { MORE = 200 };
  for (int i = 0; i < MORE; i++) {
    int fd = connect_queued(path, s, line);
    heightmap_server_send(s, line, strlen(line));
    char c;
    struct timeval tv = { .tv_sec = 60 };
    g_assert_cmpint(fcntl(fd, F_SETFL, 0), ==, 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    g_assert_cmpint(read(fd, &c, 1), ==, 0);   /* refused: closed before any line */
    close(fd);
  }
  g_assert_cmpint(heightmap_server_get_clients(s), ==, HEIGHTMAP_SERVER_MAX_CLIENTS);
  heightmap_server_free(s);
  double secs = (double) (g_get_monotonic_time() - t0) * 1e-6;
  g_log_remove_handler("stereod-heightmap", handler);
  g_test_log_set_fatal_handler(NULL, NULL);

  g_assert_cmpuint(warnings->len, >=, 2);
  g_assert_true(strstr(warnings->pdata[0], "64 clients on ") &&
                strstr(warnings->pdata[0], "already, refusing new ones"));
  guint64 counted = 1;
  for (guint i = 1; i < warnings->len; i++) {
    const char *w = strstr(warnings->pdata[i], "refused ");
    g_assert_nonnull(w);
    counted += g_ascii_strtoull(w + strlen("refused "), NULL, 10);
  }
  g_assert_cmpuint(counted, ==, MORE);
  g_assert_cmpuint(warnings->len, <=, 2 + secs / HEIGHTMAP_SERVER_REFUSAL_LOG_S);
  g_test_message("%d refusals in %.1f s: %u log lines", MORE, secs, warnings->len);
  g_clear_pointer(&warnings, g_ptr_array_unref);
  for (int i = 0; i < HEIGHTMAP_SERVER_MAX_CLIENTS; i++)
    close(held[i]);
  g_rmdir(dir);
}

/* A socket file whose server answers is left alone; one nobody listens on is replaced;
 * a file that is no socket is not removed. */
static void
test_server_existing(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-sock-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "players.sock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(HeightmapServer) a = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  struct stat before, after;
  g_assert_cmpint(lstat(path, &before), ==, 0);
  HeightmapServer *b = heightmap_server_new(path, &error);
  g_assert_null(b);
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
  g_assert_nonnull(strstr(error->message, "another stereod-heightmap serves"));
  g_clear_error(&error);
  g_assert_cmpint(lstat(path, &after), ==, 0);
  g_assert_cmpuint(after.st_ino, ==, before.st_ino);
  /* a still serves */
  int c = connect_to(path);
  const char line[] = "{\"frame\":1}\n";
  heightmap_server_send(a, line, strlen(line));
  char buf[64];
  g_assert_cmpint(read(c, buf, sizeof buf), ==, (ssize_t) strlen(line));
  close(c);
  g_clear_pointer(&a, heightmap_server_free);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));

  /* a socket file left by a server that died (bound, never unlinked) */
  int dead = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, path, sizeof sa.sun_path);
  g_assert_cmpint(bind(dead, (struct sockaddr *) &sa, sizeof sa), ==, 0);
  close(dead);
  g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
  a = heightmap_server_new(path, &error);
  g_assert_no_error(error);
  c = connect_to(path);
  heightmap_server_send(a, line, strlen(line));
  g_assert_cmpint(read(c, buf, sizeof buf), ==, (ssize_t) strlen(line));
  close(c);
  g_clear_pointer(&a, heightmap_server_free);

  /* not a socket */
  g_assert_true(g_file_set_contents(path, "data", -1, NULL));
  g_assert_null(heightmap_server_new(path, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  g_autofree char *data = NULL;
  g_assert_true(g_file_get_contents(path, &data, NULL, NULL));
  g_assert_cmpstr(data, ==, "data");
  g_unlink(path);
  g_rmdir(dir);
}

/* One holder per socket and per ring; the lock files go with a clean release. */
static void
test_instance(void)
{
  g_autofree char *dir = g_dir_make_tmp("hm-lock-XXXXXX", NULL);
  g_autofree char *sock = g_build_filename(dir, "players.sock", NULL);
  g_autofree char *sock2 = g_build_filename(dir, "other.sock", NULL);
  g_autofree char *ring = g_strdup_printf("hm-unit-%d", (int) getpid());
  g_autofree char *ring2 = g_strdup_printf("hm-unit-%d-2", (int) getpid());
  g_autofree char *sock_lock = g_strconcat(sock, ".lock", NULL);
  g_autofree char *ring_lock = g_strdup_printf("/dev/shm/stereod.%s~lock", ring);
  g_autoptr(GError) error = NULL;
  HeightmapInstance *a = heightmap_instance_new(sock, ring, &error);
  g_assert_no_error(error);
  g_assert_true(g_file_test(sock_lock, G_FILE_TEST_EXISTS));
  g_assert_true(g_file_test(ring_lock, G_FILE_TEST_EXISTS));
  /* the same socket, another ring */
  g_assert_null(heightmap_instance_new(sock, ring2, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_nonnull(strstr(error->message, "another stereod-heightmap serves"));
  g_assert_nonnull(strstr(error->message, sock));
  g_clear_error(&error);
  /* the same ring, another socket (whose lock is let go again) */
  g_autofree char *sock2_lock = g_strconcat(sock2, ".lock", NULL);
  g_assert_null(heightmap_instance_new(sock2, ring, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_assert_nonnull(strstr(error->message, "publishes the ring /dev/shm/stereod."));
  g_clear_error(&error);
  g_assert_false(g_file_test(sock2_lock, G_FILE_TEST_EXISTS));
  /* no socket at all, the same ring */
  g_assert_null(heightmap_instance_new(NULL, ring, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_BUSY);
  g_clear_error(&error);
  heightmap_instance_free(a);
  g_assert_false(g_file_test(sock_lock, G_FILE_TEST_EXISTS));
  g_assert_false(g_file_test(ring_lock, G_FILE_TEST_EXISTS));
  a = heightmap_instance_new(sock, ring, &error);
  g_assert_no_error(error);
  heightmap_instance_free(a);
  g_rmdir(dir);
}

/* Pairs that publish slowly (a replay on a software renderer: 20 s between a pair's
 * frames, the 4K pair's frame of a time 10 s after the others'): silent for longer than
 * stale_ms (1 s), but their newest frames captured within it of the newest of all, so
 * the early pairs are still live and the set of the newest time holds all three (one
 * frame held or three); a pair silent that long whose newest frame lies 2 s of capture
 * time behind the others' (it stopped while they went on) is left out. */
static void
test_select_slow_pairs(void)
{
  const HeightmapSelectParams sp = { .tolerance_ns = 20000000, .wait_ns = 100000000,
                                     .stale_ns = 1000000000 };
  const uint64_t s = 1000000000ull, now = 1000 * s;
  int chosen[3];
  uint32_t skipped[3];
  HeightmapPairState p[3];
  for (int i = 0; i < 3; i++) {
    uint64_t lag = i == 2 ? 0 : 10 * s;   /* pair 2's frames come 10 s after the others' */
    p[i] = held(3, (const uint64_t[][2]) { { 5000000000ull, now - lag - 40 * s },
                                           { 5040000000ull, now - lag - 20 * s },
                                           { 5080000000ull, now - lag } });
    p[i].frames[0].fused = p[i].frames[1].fused = true;
  }
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 3);
  g_assert_true(chosen[0] == 2 && chosen[1] == 2 && chosen[2] == 2);
  /* pair 2 has not delivered the newest time yet: the others wait for it (wait_ms) */
  p[2].frames[2].fused = true;
  p[0].frames[2].fused = p[1].frames[2].fused = false;
  for (int i = 0; i < 2; i++)
    p[i] = held(1, (const uint64_t[][2]) { { 5120000000ull, now - 10 * s } });
  uint64_t deadline;
  g_assert_cmpint(heightmap_select_frames(p, 3, now - 10 * s, 0, &sp, chosen, skipped, NULL,
                                          &deadline), ==, 0);
  g_assert_cmpuint(deadline, ==, now - 10 * s + sp.wait_ns);
  /* and with one frame held each, pair 2's of that time arriving 10 s later: all three */
  p[2] = held(1, (const uint64_t[][2]) { { 5120000000ull, now } });
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 3);
  g_assert_true(chosen[0] == 0 && chosen[1] == 0 && chosen[2] == 0);
  /* pair 0 stopped: silent 10 s and 2 s of capture time behind the others: left out */
  p[0].frames[0].capture_ns = 3120000000ull;
  g_assert_cmpint(heightmap_select_frames(p, 3, now, 0, &sp, chosen, skipped, NULL, NULL), ==, 2);
  g_assert_true(chosen[0] < 0 && chosen[1] == 0 && chosen[2] == 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/heightmap/select", test_select);
  g_test_add_func("/heightmap/select/lagging-pair", test_select_lagging_pair);
  g_test_add_func("/heightmap/select/slow-pairs", test_select_slow_pairs);
  g_test_add_func("/heightmap/json", test_json);
  g_test_add_func("/heightmap/server", test_server);
  g_test_add_func("/heightmap/server/refusals", test_server_refusals);
  g_test_add_func("/heightmap/server/existing", test_server_existing);
  g_test_add_func("/heightmap/instance", test_instance);
  return g_test_run();
}
