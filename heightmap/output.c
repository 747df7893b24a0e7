/* output.c: the players as JSON lines, and the Unix socket that serves them.
 *
 * The server never blocks the builder: the listening socket and every client socket are
 * non-blocking, a line goes out with one send(MSG_NOSIGNAL | MSG_DONTWAIT) per client,
 * and a client whose socket buffer cannot take the whole line (a slow or stopped
 * reader) is dropped rather than handed half a line or waited for. Clients only read;
 * what they write is ignored. A socket file already at the path is connected to before
 * anything else: one that answers is a running server's and stays; one that refuses
 * is stale and is replaced. Clients over the limit are refused with one line per burst,
 * so that a connect loop cannot fill the journal.
 */
#include "heightmap/heightmap.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Names are [A-Za-z0-9._-] (config.c checks): nothing to escape. */
void
heightmap_json_append(GString *out, uint64_t time_ns, uint64_t frame,
                      const char *const *pairs, int n_pairs, const HeightmapTrack *tracks,
                      int n_tracks)
{
  g_string_append_printf(out, "{\"time_ns\":%" G_GUINT64_FORMAT ",\"frame\":%" G_GUINT64_FORMAT
                         ",\"pairs\":[", time_ns, frame);
  for (int i = 0; i < n_pairs; i++)
    g_string_append_printf(out, "%s\"%s\"", i ? "," : "", pairs[i]);
  g_string_append(out, "],\"players\":[");
  for (int i = 0; i < n_tracks; i++) {
    const HeightmapTrack *t = &tracks[i];
    char x[G_ASCII_DTOSTR_BUF_SIZE], y[G_ASCII_DTOSTR_BUF_SIZE];
    char h[G_ASCII_DTOSTR_BUF_SIZE], a[G_ASCII_DTOSTR_BUF_SIZE];
    /* g_ascii_formatd: '.' whatever the locale */
    g_string_append_printf(out, "%s{\"id\":%u,\"x\":%s,\"y\":%s,\"height\":%s,\"area\":%s",
                           i ? "," : "", t->id,
                           g_ascii_formatd(x, sizeof x, "%.3f", t->x),
                           g_ascii_formatd(y, sizeof y, "%.3f", t->y),
                           g_ascii_formatd(h, sizeof h, "%.2f", t->height),
                           g_ascii_formatd(a, sizeof a, "%.2f", t->area));
    if (t->has_measured)
      g_string_append_printf(out, ",\"vx\":%s,\"vy\":%s",
                             g_ascii_formatd(x, sizeof x, "%.2f", t->measured_vx),
                             g_ascii_formatd(y, sizeof y, "%.2f", t->measured_vy));
    if (t->missed > 0)
      g_string_append_printf(out, ",\"missed\":%d", t->missed);
    g_string_append_printf(out, ",\"track_vx\":%s,\"track_vy\":%s}",
                           g_ascii_formatd(x, sizeof x, "%.2f", t->vx),
                           g_ascii_formatd(y, sizeof y, "%.2f", t->vy));
  }
  g_string_append(out, "]}\n");
}

struct HeightmapServer {
  char *path;
  int listen_fd;
  dev_t dev;                       /* of the socket file bound, to unlink only ours */
  ino_t ino;
  int clients[HEIGHTMAP_SERVER_MAX_CLIENTS];
  int n_clients;
  /* refusals (over the client limit), logged once per burst */
  bool refusing;                   /* the first refusal of a burst was logged */
  uint64_t refused;                /* refused since the last line */
  gint64 refused_logged_us;        /* monotonic time of the last line */
};

/* Whether `path` is free to bind: TRUE when nothing is there, or a stale socket was
 * (removed now); FALSE with `error` when something answers there, or when it cannot be
 * told. Only a refused connection (nobody listens) makes a socket file stale. */
static bool
probe_path(const char *path, const struct sockaddr_un *sa, GError **error)
{
  struct stat st;
  if (lstat(path, &st) < 0)
    return true;   /* nothing there (bind reports any other problem) */
  if (!S_ISSOCK(st.st_mode))
    return true;   /* not a socket: bind fails with EADDRINUSE and says so */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "socket: %s", g_strerror(e));
    return false;
  }
  /* Non-blocking: a server whose backlog is full answers EAGAIN, which is an answer. */
  int r = connect(fd, (const struct sockaddr *) sa, sizeof *sa);
  int e = r < 0 ? errno : 0;
  close(fd);
  if (r == 0 || e == EAGAIN || e == EINPROGRESS) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE,
                "another stereod-heightmap serves %s (it accepts connections): not replacing "
                "it", path);
    return false;
  }
  if (e == ECONNREFUSED) {
    /* Nobody listens: a socket file left by a builder that died. */
    if (unlink(path) < 0 && errno != ENOENT) {
      int u = errno;
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(u),
                  "cannot remove the stale socket %s: %s", path, g_strerror(u));
      return false;
    }
    g_message("heightmap: removed the stale socket %s (nobody listened on it)", path);
    return true;
  }
  g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
              "cannot tell whether another stereod-heightmap serves %s: %s", path,
              g_strerror(e));
  return false;
}

HeightmapServer *
heightmap_server_new(const char *path, GError **error)
{
  g_return_val_if_fail(path, NULL);
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (!*path || strlen(path) >= sizeof sa.sun_path) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                "socket path \"%s\" is empty or longer than %zu bytes", path,
                sizeof sa.sun_path - 1);
    return NULL;
  }
  strcpy(sa.sun_path, path);
  if (!probe_path(path, &sa, error))
    return NULL;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "socket: %s", g_strerror(e));
    return NULL;
  }
  mode_t old = umask(0117);   /* 0660 */
  int r = bind(fd, (struct sockaddr *) &sa, sizeof sa);
  umask(old);
  struct stat st;
  if (r < 0 || listen(fd, 16) < 0 || lstat(path, &st) < 0) {
    int e = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot listen on %s: %s", path,
                g_strerror(e));
    if (r == 0)
      unlink(path);   /* bound here a moment ago: ours */
    close(fd);
    return NULL;
  }
  HeightmapServer *s = g_new0(HeightmapServer, 1);
  s->path = g_strdup(path);
  s->listen_fd = fd;
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  return s;
}

/* Logs the refusals counted since the last line, when there are some and the interval
 * has passed (or `now` is 0: at the end); ends the burst after a quiet interval. */
static void
flush_refusals(HeightmapServer *s, gint64 now)
{
  gint64 since = now - s->refused_logged_us;
  if (s->refused && (!now || since >= (gint64) HEIGHTMAP_SERVER_REFUSAL_LOG_S * G_USEC_PER_SEC)) {
    g_warning("heightmap: refused %" G_GUINT64_FORMAT " more clients on %s in the last %.1f s "
              "(%d clients already)", s->refused, s->path,
              (double) ((now ? now : g_get_monotonic_time()) - s->refused_logged_us) * 1e-6,
              s->n_clients);
    s->refused = 0;
    s->refused_logged_us = now;
  } else if (!s->refused && s->refusing &&
             since >= (gint64) HEIGHTMAP_SERVER_REFUSAL_LOG_S * G_USEC_PER_SEC) {
    s->refusing = false;   /* a quiet interval: the next refusal starts a new burst */
  }
}

static void
refuse(HeightmapServer *s, int fd)
{
  close(fd);
  gint64 now = g_get_monotonic_time();
  if (!s->refusing) {
    g_warning("heightmap: %d clients on %s already, refusing new ones (counted, logged at "
              "most every %d s)", s->n_clients, s->path, HEIGHTMAP_SERVER_REFUSAL_LOG_S);
    s->refusing = true;
    s->refused_logged_us = now;
    return;
  }
  s->refused++;
  flush_refusals(s, now);
}

void
heightmap_server_free(HeightmapServer *s)
{
  if (!s)
    return;
  if (s->refused)
    flush_refusals(s, 0);
  for (int i = 0; i < s->n_clients; i++)
    close(s->clients[i]);
  if (s->listen_fd >= 0) {
    close(s->listen_fd);
    struct stat st;
    if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
      unlink(s->path);
  }
  g_free(s->path);
  g_free(s);
}

static void
accept_clients(HeightmapServer *s)
{
  for (;;) {
    int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        g_warning("heightmap: accept on %s: %s, ignoring", s->path, g_strerror(errno));
      return;
    }
    if (s->n_clients == HEIGHTMAP_SERVER_MAX_CLIENTS) {
      refuse(s, fd);
      continue;
    }
    shutdown(fd, SHUT_RD);
    s->clients[s->n_clients++] = fd;
    g_info("heightmap: client %d connected to %s", fd, s->path);
  }
}

void
heightmap_server_send(HeightmapServer *s, const char *line, size_t len)
{
  g_return_if_fail(s && line);
  accept_clients(s);
  flush_refusals(s, g_get_monotonic_time());
  for (int i = 0; i < s->n_clients;) {
    ssize_t r = send(s->clients[i], line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r == (ssize_t) len) {
      i++;
      continue;
    }
    if (r >= 0 || errno == EAGAIN || errno == EWOULDBLOCK)
      g_message("heightmap: client %d of %s does not keep up, dropped", s->clients[i],
                s->path);
    else
      g_info("heightmap: client %d of %s left (%s)", s->clients[i], s->path,
             g_strerror(errno));
    close(s->clients[i]);
    s->clients[i] = s->clients[--s->n_clients];
  }
}

int
heightmap_server_get_clients(HeightmapServer *s)
{
  g_return_val_if_fail(s, 0);
  return s->n_clients;
}
