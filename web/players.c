/* players.c: the height map's JSON lines from its Unix socket (see web.h, WebPlayers).
 *
 * A non-blocking socket watched by a GSource on the main context; what arrives goes into a
 * fixed buffer of WEB_PLAYERS_MAX_LINE bytes, and every complete line in it is handed on.
 * The builder drops a client that does not keep up, so this one reads whenever data is
 * there and never waits for anything else. A line that does not fit the buffer, or
 * carries a control byte (the builder writes plain JSON), ends the connection: one
 * message, and the next attempt a second later.
 */
#include "web/web.h"

#include <errno.h>
#include <glib-unix.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RETRY_MS 1000

struct WebPlayers {
  char *path;
  WebPlayersLine line;
  gpointer data;
  int fd;
  guint watch, retry;
  char buffer[WEB_PLAYERS_MAX_LINE];
  size_t used;
  uint64_t lines;
  int last_errno;                /* of the last failed connect (logged once per change) */
};

static void players_connect(WebPlayers *p);

static gboolean
on_retry(gpointer data)
{
  WebPlayers *p = data;
  p->retry = 0;
  players_connect(p);
  return G_SOURCE_REMOVE;
}

static void
disconnect(WebPlayers *p, const char *why)
{
  if (p->watch)
    g_source_remove(p->watch);
  p->watch = 0;
  if (p->fd >= 0)
    close(p->fd);
  p->fd = -1;
  p->used = 0;
  g_message("heightmap: %s: %s; connecting again every second", p->path, why);
  p->last_errno = 0;
  if (!p->retry)
    p->retry = g_timeout_add(RETRY_MS, on_retry, p);
}

/* Hands on the complete lines of the buffer; FALSE when one is bad (then disconnected). */
static bool
split(WebPlayers *p)
{
  size_t start = 0;
  for (size_t i = 0; i < p->used; i++) {
    unsigned char c = (unsigned char)p->buffer[i];
    if (c == '\n') {
      p->buffer[i] = '\0';
      p->lines++;
      p->line(p->buffer + start, i - start, p->data);
      start = i + 1;
    } else if (c < 0x20) {
      disconnect(p, "a line with a control byte, not the builder's JSON");
      return false;
    }
  }
  memmove(p->buffer, p->buffer + start, p->used - start);
  p->used -= start;
  if (p->used == sizeof p->buffer) {
    disconnect(p, "a line longer than 64 KiB, not the builder's JSON");
    return false;
  }
  return true;
}

static gboolean
on_readable(gint fd, GIOCondition cond, gpointer data)
{
  WebPlayers *p = data;
  for (;;) {
    ssize_t n = recv(p->fd, p->buffer + p->used, sizeof p->buffer - p->used, MSG_DONTWAIT);
    if (n > 0) {
      p->used += (size_t)n;
      if (!split(p))
        return G_SOURCE_REMOVE;   /* disconnect removed the watch's id already */
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return G_SOURCE_CONTINUE;
    if (n < 0 && errno == EINTR)
      continue;
    p->watch = 0;   /* returning REMOVE below */
    disconnect(p, n == 0 ? "the builder closed the connection" : g_strerror(errno));
    return G_SOURCE_REMOVE;
  }
}

static void
players_connect(WebPlayers *p)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  g_strlcpy(sa.sun_path, p->path, sizeof sa.sun_path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int e = fd < 0 ? errno : 0;
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    e = errno;
  if (e) {
    if (fd >= 0)
      close(fd);
    if (e != p->last_errno)
      g_message("heightmap: no players from %s yet (%s); trying every second", p->path,
                g_strerror(e));
    p->last_errno = e;
    p->retry = g_timeout_add(RETRY_MS, on_retry, p);
    return;
  }
  /* the builder reads nothing from its clients */
  shutdown(fd, SHUT_WR);
  g_unix_set_fd_nonblocking(fd, TRUE, NULL);
  p->fd = fd;
  p->watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_readable, p);
  g_message("heightmap: reading the players from %s", p->path);
}

WebPlayers *
web_players_new(const char *socket_path, WebPlayersLine line, gpointer data)
{
  g_return_val_if_fail(socket_path && line, NULL);
  g_return_val_if_fail(strlen(socket_path) < sizeof(((struct sockaddr_un *)0)->sun_path), NULL);
  WebPlayers *p = g_new0(WebPlayers, 1);
  p->path = g_strdup(socket_path);
  p->line = line;
  p->data = data;
  p->fd = -1;
  players_connect(p);
  return p;
}

void
web_players_free(WebPlayers *p)
{
  if (!p)
    return;
  if (p->watch)
    g_source_remove(p->watch);
  if (p->retry)
    g_source_remove(p->retry);
  if (p->fd >= 0)
    close(p->fd);
  g_free(p->path);
  g_free(p);
}

bool
web_players_is_connected(WebPlayers *p)
{
  g_return_val_if_fail(p, false);
  return p->fd >= 0;
}

uint64_t
web_players_get_lines(WebPlayers *p)
{
  g_return_val_if_fail(p, 0);
  return p->lines;
}
