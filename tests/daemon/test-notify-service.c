/* test-notify-service: the systemd notification protocol end to end, from the real
 * daemons (STEREOD and STEREOD_HEIGHTMAP) to a datagram socket this test binds and names
 * in NOTIFY_SOCKET, with WATCHDOG_USEC set.
 *
 * stereod (a videotestsrc GRAY8 pair at 96 x 64): READY=1 once it runs; WATCHDOG=1 again
 * and again; STATUS= with the pair's rate; on SIGHUP RELOADING=1 then READY=1; on SIGTERM
 * STOPPING=1 and exit 0. That the pings come from the frame loop (ARCHITECTURE.md: "not
 * from a timer that would lie when the loop hangs") is shown by stopping ONLY the frame
 * loop's thread ("stereod-gpu") with ptrace(PTRACE_INTERRUPT): while it is stopped the
 * main thread still answers SIGHUP with RELOADING=1 and READY=1, yet no WATCHDOG=1 and no
 * STATUS= arrives for many ping periods; once it runs again the pings come back. (SIGSTOP
 * would stop every thread and so prove nothing about which one pings.)
 *
 * stereod-heightmap (a small grid, one pair whose ring does not exist): READY=1,
 * WATCHDOG=1 again and again, STATUS=, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 and
 * exit 0 on SIGTERM. Its loop is its main thread; nothing else there could ping.
 *
 * The deadlines are generous (a loaded 2-core machine, llvmpipe compiling shaders at
 * start): what is asserted is the presence and order of the messages, never their timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "tests/common/gpu-test.h"

#define WATCHDOG_USEC "2000000"   /* stereod pings every 0.5 s, the height map every 1 s */
#define START_TIMEOUT_S 240.0
#define EVENT_TIMEOUT_S 60.0
#define STALL_S 5.0               /* 10 of stereod's ping periods */

static char *tmp_dir;

/* ------------------------------------------------------------------ the listener */

typedef struct {
  int fd;
  char *address;        /* "@name", as NOTIFY_SOCKET takes it */
  GPtrArray *lines;     /* every line received, in order */
} Listener;

static void
listener_open(Listener *l)
{
  g_autofree char *name = g_strdup_printf("stereod-test-notify-%d-%08x", (int)getpid(),
                                          g_random_int());
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  size_t n = strlen(name);
  memcpy(sa.sun_path + 1, name, n);   /* abstract: a leading NUL */
  l->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint(l->fd, >=, 0);
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
  g_assert_cmpint(bind(l->fd, (struct sockaddr *)&sa, len), ==, 0);
  l->address = g_strdup_printf("@%s", name);
  l->lines = g_ptr_array_new_with_free_func(g_free);
}

static void
listener_close(Listener *l)
{
  close(l->fd);
  g_free(l->address);
  g_ptr_array_unref(l->lines);
}

/* Reads one datagram if one arrives within timeout_ms; its lines are appended. */
static bool
listener_read(Listener *l, int timeout_ms)
{
  struct pollfd p = { .fd = l->fd, .events = POLLIN };
  int r = poll(&p, 1, timeout_ms);
  g_assert_cmpint(r, >=, 0);
  if (r == 0)
    return false;
  char buf[4096];
  ssize_t n = recv(l->fd, buf, sizeof buf - 1, MSG_DONTWAIT);
  g_assert_cmpint(n, >=, 0);
  buf[MAX(n, 0)] = '\0';
  g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
  for (int i = 0; lines[i]; i++)
    if (*lines[i])
      g_ptr_array_add(l->lines, g_strdup(lines[i]));
  return true;
}

/* Everything already queued. */
static void
listener_drain(Listener *l)
{
  while (listener_read(l, 0))
    ;
}

/* `line` matches `want`: exactly, or as a prefix when want ends in '*'. */
static bool
matches(const char *line, const char *want)
{
  size_t n = strlen(want);
  if (n && want[n - 1] == '*')
    return strncmp(line, want, n - 1) == 0;
  return strcmp(line, want) == 0;
}

static int
find(const Listener *l, const char *want, guint from)
{
  for (guint i = from; i < l->lines->len; i++)
    if (matches(g_ptr_array_index(l->lines, i), want))
      return (int)i;
  return -1;
}

static int
count(const Listener *l, const char *want, guint from, guint to)
{
  int n = 0;
  for (guint i = from; i < to && i < l->lines->len; i++)
    n += matches(g_ptr_array_index(l->lines, i), want);
  return n;
}

/* The index of the first line at or after `from` that matches `want`, reading until it
 * arrives or timeout_s passes (then -1). */
static int
listener_wait(Listener *l, const char *want, guint from, double timeout_s)
{
  gint64 end = g_get_monotonic_time() + (gint64)(timeout_s * G_USEC_PER_SEC);
  for (;;) {
    int i = find(l, want, from);
    if (i >= 0)
      return i;
    gint64 left = end - g_get_monotonic_time();
    if (left <= 0)
      return -1;
    listener_read(l, (int)MIN(left / 1000 + 1, 1000));
  }
}

/* The `n`-th match at or after `from`, waiting as listener_wait. */
static int
listener_wait_n(Listener *l, const char *want, guint from, int n, double timeout_s)
{
  int at = (int)from - 1;
  for (int k = 0; k < n; k++) {
    at = listener_wait(l, want, (guint)(at + 1), timeout_s);
    if (at < 0)
      return -1;
  }
  return at;
}

/* ------------------------------------------------------------------ the daemon */

typedef struct {
  GPid pid;
  char *log_path;
  int status;           /* wait status once exited */
  bool exited;
} Daemon;

/* The daemon stops if this test process dies first (an assertion, a timeout). */
static void
child_setup(gpointer data)
{
  prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static void
daemon_start(Daemon *d, const Listener *l, const char *const *argv, const char *name)
{
  g_auto(GStrv) env = g_get_environ();
  env = g_environ_setenv(env, "NOTIFY_SOCKET", l->address, TRUE);
  env = g_environ_setenv(env, "WATCHDOG_USEC", WATCHDOG_USEC, TRUE);
  env = g_environ_unsetenv(env, "WATCHDOG_PID");
  g_autofree char *log_name = g_strdup_printf("%s.log", name);
  d->log_path = g_build_filename(tmp_dir, log_name, NULL);
  int log_fd = g_open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  g_assert_cmpint(log_fd, >=, 0);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_async_with_pipes_and_fds(NULL, argv, (const char *const *)env,
                                                 G_SPAWN_DO_NOT_REAP_CHILD, child_setup, NULL,
                                                 -1, log_fd, log_fd, NULL, NULL, 0, &d->pid,
                                                 NULL, NULL, NULL, &error));
  g_assert_no_error(error);
  close(log_fd);
}

/* What the daemon wrote so far, for the test log. */
static void
daemon_show_log(const Daemon *d)
{
  g_autofree char *text = NULL;
  if (g_file_get_contents(d->log_path, &text, NULL, NULL))
    g_test_message("%s:\n%s", d->log_path, text);
}

/* Waits up to timeout_s for the process to exit. */
static bool
daemon_wait(Daemon *d, double timeout_s)
{
  gint64 end = g_get_monotonic_time() + (gint64)(timeout_s * G_USEC_PER_SEC);
  while (!d->exited) {
    pid_t r = waitpid(d->pid, &d->status, WNOHANG);
    g_assert_cmpint(r, >=, 0);
    if (r == d->pid) {
      d->exited = true;
      break;
    }
    if (g_get_monotonic_time() > end)
      return false;
    g_usleep(20000);
  }
  return true;
}

static void
daemon_clear(Daemon *d)
{
  if (!d->exited) {
    kill(d->pid, SIGKILL);
    daemon_wait(d, 30);
  }
  g_spawn_close_pid(d->pid);
  g_unlink(d->log_path);
  g_free(d->log_path);
}

/* Asserts that a line matching `want` arrives at or after `from`; returns its index. */
static int
expect(Listener *l, Daemon *d, const char *want, guint from, double timeout_s)
{
  int i = listener_wait(l, want, from, timeout_s);
  if (i < 0) {
    daemon_show_log(d);
    for (guint k = 0; k < l->lines->len; k++)
      g_test_message("received: %s", (const char *)g_ptr_array_index(l->lines, k));
    g_error("no '%s' within %.0f s", want, timeout_s);
  }
  return i;
}

/* The thread of process `pid` whose name (comm) is `name`, or 0. */
static pid_t
find_thread(pid_t pid, const char *name)
{
  g_autofree char *task = g_strdup_printf("/proc/%d/task", (int)pid);
  g_autoptr(GDir) dir = g_dir_open(task, 0, NULL);
  g_assert_nonnull(dir);
  for (const char *t; (t = g_dir_read_name(dir));) {
    g_autofree char *comm_path = g_build_filename(task, t, "comm", NULL);
    g_autofree char *comm = NULL;
    if (g_file_get_contents(comm_path, &comm, NULL, NULL) &&
        strcmp(g_strchomp(comm), name) == 0)
      return (pid_t)g_ascii_strtoll(t, NULL, 10);
  }
  return 0;
}

/* ------------------------------------------------------------------ stereod */

static void
test_stereod(void)
{
  g_autoptr(GpuContext) gpu = gpu_test_context();
  if (!gpu)
    return;
  g_clear_pointer(&gpu, gpu_context_free);

  /* A pair name of its own: other tests may publish rings at the same time. */
  g_autofree char *pair = g_strdup_printf("notify%d", (int)getpid());
  static const char source[] =
    "videotestsrc is-live=true pattern=%s ! video/x-raw,format=GRAY8,width=96,height=64,"
    "framerate=10/1";
  g_autofree char *left = g_strdup_printf(source, "ball");
  g_autofree char *right = g_strdup_printf(source, "snow");
  g_autofree char *text = g_strdup_printf("[daemon]\nstats_interval=1\n"
                                          "[pair %s]\nleft=%s\nright=%s\nwidth=96\nheight=64\n"
                                          "fps=10\npair_tolerance_ms=49\nmax_disparity=16\n", pair, left, right);
  g_autofree char *conf = g_build_filename(tmp_dir, "stereod.conf", NULL);
  g_assert_true(g_file_set_contents(conf, text, -1, NULL));

  Listener l;
  listener_open(&l);
  Daemon d = { 0 };
  const char *argv[] = { g_getenv("STEREOD"), "--config", conf, NULL };
  g_assert_nonnull(argv[0]);
  daemon_start(&d, &l, argv, "stereod");

  int ready = expect(&l, &d, "READY=1", 0, START_TIMEOUT_S);
  g_assert_cmpint(find(&l, "STOPPING=1", 0), ==, -1);
  int wd = listener_wait_n(&l, "WATCHDOG=1", (guint)ready, 3, EVENT_TIMEOUT_S);
  if (wd < 0)
    expect(&l, &d, "WATCHDOG=1 (three after READY=1)", (guint)ready, 0);
  g_autofree char *status = g_strdup_printf("STATUS=%s *", pair);
  int st = expect(&l, &d, status, (guint)ready, EVENT_TIMEOUT_S);
  g_assert_nonnull(strstr(g_ptr_array_index(l.lines, st), " fps"));

  /* SIGHUP with the same file: RELOADING=1, then READY=1 again. */
  guint mark = l.lines->len;
  g_assert_cmpint(kill(d.pid, SIGHUP), ==, 0);
  int reloading = expect(&l, &d, "RELOADING=1", mark, EVENT_TIMEOUT_S);
  expect(&l, &d, "READY=1", (guint)reloading + 1, EVENT_TIMEOUT_S);

  /* The frame loop's thread alone, stopped: the pings stop with it. */
  pid_t gpu_tid = find_thread(d.pid, "stereod-gpu");
  g_assert_cmpint(gpu_tid, >, 0);
  g_assert_cmpint(gpu_tid, !=, d.pid);
  if (ptrace(PTRACE_SEIZE, gpu_tid, NULL, NULL) != 0) {
    int err = errno;
    g_assert_cmpint(err, ==, EPERM);
    g_test_message("ptrace: %s", g_strerror(err));
    g_test_skip("ptrace is not permitted here: the frame loop cannot be stopped on its own "
                "to show that it is what sends WATCHDOG=1");
  } else {
    g_assert_cmpint(ptrace(PTRACE_INTERRUPT, gpu_tid, NULL, NULL), ==, 0);
    int ws = 0;
    g_assert_cmpint(waitpid(gpu_tid, &ws, __WALL), ==, gpu_tid);
    g_assert_true(WIFSTOPPED(ws));
    /* It is stopped now: whatever it sent before is in the queue. */
    listener_drain(&l);
    guint stall_from = l.lines->len;
    g_assert_cmpint(kill(d.pid, SIGHUP), ==, 0);
    int r = expect(&l, &d, "RELOADING=1", stall_from, EVENT_TIMEOUT_S);
    expect(&l, &d, "READY=1", (guint)r + 1, EVENT_TIMEOUT_S);
    gint64 end = g_get_monotonic_time() + (gint64)(STALL_S * G_USEC_PER_SEC);
    while (g_get_monotonic_time() < end)
      listener_read(&l, 100);
    guint stall_to = l.lines->len;
    /* The main thread answered; the frame loop said nothing: neither pings nor STATUS. */
    g_assert_cmpint(count(&l, "WATCHDOG=1", stall_from, stall_to), ==, 0);
    g_assert_cmpint(count(&l, "STATUS=*", stall_from, stall_to), ==, 0);
    g_assert_cmpint(ptrace(PTRACE_DETACH, gpu_tid, NULL, NULL), ==, 0);
    g_assert_cmpint(listener_wait_n(&l, "WATCHDOG=1", stall_to, 2, EVENT_TIMEOUT_S), >, 0);
    g_test_message("while the frame loop was stopped for %.0f s: %d lines from the main "
                   "thread, no WATCHDOG=1; afterwards the pings resumed", STALL_S,
                   (int)(stall_to - stall_from));
  }

  mark = l.lines->len;
  g_assert_cmpint(kill(d.pid, SIGTERM), ==, 0);
  expect(&l, &d, "STOPPING=1", mark, EVENT_TIMEOUT_S);
  if (!daemon_wait(&d, EVENT_TIMEOUT_S)) {
    daemon_show_log(&d);
    g_error("stereod did not exit within %.0f s of SIGTERM", EVENT_TIMEOUT_S);
  }
  if (!WIFEXITED(d.status) || WEXITSTATUS(d.status) != 0)
    daemon_show_log(&d);
  g_assert_true(WIFEXITED(d.status));
  g_assert_cmpint(WEXITSTATUS(d.status), ==, 0);
  /* One READY=1 per start and per reload, each after its RELOADING=1. */
  g_assert_cmpint(count(&l, "READY=1", 0, l.lines->len), ==,
                  1 + count(&l, "RELOADING=1", 0, l.lines->len));
  daemon_clear(&d);
  listener_close(&l);
}

/* ------------------------------------------------------------------ stereod-heightmap */

static void
test_heightmap(void)
{
  g_autoptr(GpuContext) gpu = gpu_test_context();
  if (!gpu)
    return;
  g_clear_pointer(&gpu, gpu_context_free);

  /* Rings of its own (its output and a pair that never appears). */
  g_autofree char *text = g_strdup_printf("[heightmap]\nx0=-5\nx1=5\ny0=-4\ny1=4\ncell=0.5\n"
                                          "ring=notify-hm-%d\n[pair west]\n"
                                          "ring=notify-absent-%d\n", (int)getpid(),
                                          (int)getpid());
  g_autofree char *conf = g_build_filename(tmp_dir, "heightmap.conf", NULL);
  g_assert_true(g_file_set_contents(conf, text, -1, NULL));

  Listener l;
  listener_open(&l);
  Daemon d = { 0 };
  const char *argv[] = { STEREOD_HEIGHTMAP, "--config", conf, NULL };
  daemon_start(&d, &l, argv, "heightmap");

  int ready = expect(&l, &d, "READY=1", 0, START_TIMEOUT_S);
  if (listener_wait_n(&l, "WATCHDOG=1", (guint)ready, 3, EVENT_TIMEOUT_S) < 0)
    expect(&l, &d, "WATCHDOG=1 (three after READY=1)", (guint)ready, 0);
  int st = expect(&l, &d, "STATUS=*", (guint)ready, EVENT_TIMEOUT_S);
  g_assert_nonnull(strstr(g_ptr_array_index(l.lines, st), "fused frames/s"));

  guint mark = l.lines->len;
  g_assert_cmpint(kill(d.pid, SIGHUP), ==, 0);
  int reloading = expect(&l, &d, "RELOADING=1", mark, EVENT_TIMEOUT_S);
  /* In the same datagram: systemd >= 253 matches the READY=1 to it. */
  g_assert_true(matches(g_ptr_array_index(l.lines, reloading + 1), "MONOTONIC_USEC=*"));
  expect(&l, &d, "READY=1", (guint)reloading + 1, EVENT_TIMEOUT_S);
  if (listener_wait_n(&l, "WATCHDOG=1", (guint)reloading, 2, EVENT_TIMEOUT_S) < 0)
    expect(&l, &d, "WATCHDOG=1 (after the reload)", (guint)reloading, 0);

  mark = l.lines->len;
  g_assert_cmpint(kill(d.pid, SIGTERM), ==, 0);
  expect(&l, &d, "STOPPING=1", mark, EVENT_TIMEOUT_S);
  if (!daemon_wait(&d, EVENT_TIMEOUT_S)) {
    daemon_show_log(&d);
    g_error("stereod-heightmap did not exit within %.0f s of SIGTERM", EVENT_TIMEOUT_S);
  }
  if (!WIFEXITED(d.status) || WEXITSTATUS(d.status) != 0)
    daemon_show_log(&d);
  g_assert_true(WIFEXITED(d.status));
  g_assert_cmpint(WEXITSTATUS(d.status), ==, 0);
  g_assert_cmpint(count(&l, "READY=1", 0, l.lines->len), ==, 2);
  daemon_clear(&d);
  listener_close(&l);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("test-notify-service-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/notify-service/stereod", test_stereod);
  g_test_add_func("/notify-service/heightmap", test_heightmap);
  int rc = g_test_run();
  g_autofree char *conf = g_build_filename(tmp_dir, "stereod.conf", NULL);
  g_unlink(conf);
  g_free(conf);
  conf = g_build_filename(tmp_dir, "heightmap.conf", NULL);
  g_unlink(conf);
  g_rmdir(tmp_dir);
  return rc;
}
