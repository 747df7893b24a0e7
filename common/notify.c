/* notify.c: sd_notify over a plain AF_UNIX datagram socket (protocol in notify.h). */
#include "common/notify.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
stereod_notify(const char *state)
{
  g_return_val_if_fail(state != NULL, -EINVAL);
  const char *address = g_getenv("NOTIFY_SOCKET");
  if (!address || !*address)
    return 0;

  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t length = strlen(address);
  socklen_t sa_length;
  if (address[0] == '/') {
    if (length >= sizeof(sa.sun_path))
      return -EINVAL;
    memcpy(sa.sun_path, address, length + 1);
    sa_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + 1);
  } else if (address[0] == '@') {
    /* Abstract namespace: a leading NUL, the name, no terminator (the length counts). */
    if (length > sizeof(sa.sun_path) || length < 2)
      return -EINVAL;
    sa.sun_path[0] = '\0';
    memcpy(sa.sun_path + 1, address + 1, length - 1);
    sa_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length);
  } else
    return -EAFNOSUPPORT;

  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -errno;
  ssize_t n;
  do
    n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (const struct sockaddr *)&sa,
               sa_length);
  while (n < 0 && errno == EINTR);
  int result = n < 0 ? -errno : 1;
  close(fd);
  return result;
}

int
stereod_notifyf(const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *state = g_strdup_vprintf(format, ap);
  va_end(ap);
  return stereod_notify(state);
}

guint64
stereod_watchdog_timeout_us(void)
{
  const char *usec = g_getenv("WATCHDOG_USEC");
  guint64 timeout = 0;
  if (!usec || !g_ascii_string_to_unsigned(usec, 10, 1, G_MAXUINT64, &timeout, NULL))
    return 0;
  const char *pid = g_getenv("WATCHDOG_PID");
  if (pid) {
    guint64 p = 0;
    if (!g_ascii_string_to_unsigned(pid, 10, 1, G_MAXINT32, &p, NULL) ||
        (pid_t)p != getpid())
      return 0;
  }
  return timeout;
}

guint64
stereod_watchdog_interval_us(void)
{
  return stereod_watchdog_timeout_us() / 2;
}
