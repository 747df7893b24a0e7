/* test-notify: the sd_notify datagrams arrive on a path socket and on an abstract
 * socket exactly as sent; errors come back as negative errno; the watchdog settings
 * follow WATCHDOG_USEC / WATCHDOG_PID. */
#include <errno.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/notify.h"

/* A bound datagram socket; `name` is a path or "@abstract", as NOTIFY_SOCKET takes it. */
static int
listen_on(const char *name)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t n = strlen(name);
  g_assert_cmpuint(n, <, sizeof(sa.sun_path));
  memcpy(sa.sun_path, name, n);
  if (name[0] == '@')
    sa.sun_path[0] = '\0';
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint(fd, >=, 0);
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, len), ==, 0);
  return fd;
}

/* The next datagram, waiting at most 5 s. */
static char *
receive(int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  g_assert_cmpint(poll(&p, 1, 5000), ==, 1);
  char buf[4096];
  ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
  g_assert_cmpint(n, >=, 0);
  return g_strndup(buf, (gsize)n);
}

static int
count_fds(void)
{
  GDir *d = g_dir_open("/proc/self/fd", 0, NULL);
  g_assert_nonnull(d);
  int n = 0;
  while (g_dir_read_name(d))
    n++;
  g_dir_close(d);
  return n;
}

static void
test_unset(void)
{
  g_unsetenv("NOTIFY_SOCKET");
  g_assert_cmpint(stereod_notify("READY=1"), ==, 0);
  g_setenv("NOTIFY_SOCKET", "", TRUE);
  g_assert_cmpint(stereod_notify("READY=1"), ==, 0);
  g_unsetenv("NOTIFY_SOCKET");
}

static void
test_path_socket(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("stereod-notify-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *path = g_build_filename(dir, "notify", NULL);
  int fd = listen_on(path);
  g_setenv("NOTIFY_SOCKET", path, TRUE);

  int fds = count_fds();
  g_assert_cmpint(stereod_notify("READY=1"), ==, 1);
  g_autofree char *got = receive(fd);
  g_assert_cmpstr(got, ==, "READY=1");
  g_assert_cmpint(count_fds(), ==, fds);   /* the sending socket is closed again */

  g_assert_cmpint(stereod_notifyf("STATUS=west %.1f fps, east %d fps", 24.9, 25), ==, 1);
  g_free(got);
  got = receive(fd);
  g_assert_cmpstr(got, ==, "STATUS=west 24.9 fps, east 25 fps");

  g_assert_cmpint(stereod_notify("WATCHDOG=1\nSTATUS=ok"), ==, 1);
  g_free(got);
  got = receive(fd);
  g_assert_cmpstr(got, ==, "WATCHDOG=1\nSTATUS=ok");

  close(fd);
  g_unlink(path);
  /* Nobody listens any more. */
  g_assert_cmpint(stereod_notify("STOPPING=1"), ==, -ENOENT);
  g_rmdir(dir);
  g_unsetenv("NOTIFY_SOCKET");
}

static void
test_abstract_socket(void)
{
  g_autofree char *name = g_strdup_printf("@stereod-test-notify-%d-%08x", (int)getpid(),
                                          g_random_int());
  int fd = listen_on(name);
  g_setenv("NOTIFY_SOCKET", name, TRUE);
  g_assert_cmpint(stereod_notify("READY=1"), ==, 1);
  g_autofree char *got = receive(fd);
  g_assert_cmpstr(got, ==, "READY=1");
  close(fd);
  /* The abstract name is gone with its socket. */
  g_assert_cmpint(stereod_notify("READY=1"), ==, -ECONNREFUSED);
  g_unsetenv("NOTIFY_SOCKET");
}

static void
test_bad_address(void)
{
  g_setenv("NOTIFY_SOCKET", "vsock:2:1234", TRUE);
  g_assert_cmpint(stereod_notify("READY=1"), ==, -EAFNOSUPPORT);
  g_autofree char *long_path = g_strnfill(200, 'x');
  long_path[0] = '/';
  g_setenv("NOTIFY_SOCKET", long_path, TRUE);
  g_assert_cmpint(stereod_notify("READY=1"), ==, -EINVAL);
  g_setenv("NOTIFY_SOCKET", "/nonexistent-dir/notify", TRUE);
  g_assert_cmpint(stereod_notify("READY=1"), ==, -ENOENT);
  g_unsetenv("NOTIFY_SOCKET");
}

static void
test_watchdog(void)
{
  g_unsetenv("WATCHDOG_USEC");
  g_unsetenv("WATCHDOG_PID");
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 0);
  g_assert_cmpuint(stereod_watchdog_interval_us(), ==, 0);

  g_setenv("WATCHDOG_USEC", "10000000", TRUE);
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 10000000);
  g_assert_cmpuint(stereod_watchdog_interval_us(), ==, 5000000);

  g_autofree char *me = g_strdup_printf("%d", (int)getpid());
  g_setenv("WATCHDOG_PID", me, TRUE);
  g_assert_cmpuint(stereod_watchdog_interval_us(), ==, 5000000);
  g_autofree char *other = g_strdup_printf("%d", (int)getpid() + 1);
  g_setenv("WATCHDOG_PID", other, TRUE);
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 0);   /* meant for another process */
  g_setenv("WATCHDOG_PID", "12x", TRUE);
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 0);
  g_unsetenv("WATCHDOG_PID");

  g_setenv("WATCHDOG_USEC", "0", TRUE);
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 0);
  g_setenv("WATCHDOG_USEC", "10s", TRUE);
  g_assert_cmpuint(stereod_watchdog_timeout_us(), ==, 0);
  g_unsetenv("WATCHDOG_USEC");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/notify/unset", test_unset);
  g_test_add_func("/notify/path-socket", test_path_socket);
  g_test_add_func("/notify/abstract-socket", test_abstract_socket);
  g_test_add_func("/notify/bad-address", test_bad_address);
  g_test_add_func("/notify/watchdog", test_watchdog);
  return g_test_run();
}
