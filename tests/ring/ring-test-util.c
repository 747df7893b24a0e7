/* ring-test-util.c: see ring-test-util.h. */
#include "ring-test-util.h"
#include "ring-private.h"

#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *
ring_test_dir(void)
{
  return ring_dir_default();
}

char *
ring_test_path(const char *name)
{
  return g_strdup_printf("%s/" STEREOD_RING_PREFIX "%s", ring_test_dir(), name);
}

void
ring_test_remove_stale(void)
{
  g_autoptr(GDir) dir = g_dir_open(ring_test_dir(), 0, NULL);
  if (dir == NULL)
    return;
  const char *entry;
  const char *prefix = STEREOD_RING_PREFIX "test-";
  while ((entry = g_dir_read_name(dir)) != NULL) {
    if (!g_str_has_prefix(entry, prefix))
      continue;
    char *end = NULL;
    guint64 pid = g_ascii_strtoull(entry + strlen(prefix), &end, 10);
    if (pid == 0 || *end != '-')
      continue;
    if (kill((pid_t) pid, 0) < 0 && errno == ESRCH) {
      g_autofree char *path = g_build_filename(ring_test_dir(), entry, NULL);
      unlink(path);
    }
  }
}

char *
ring_test_pair_name(const char *tag)
{
  return g_strdup_printf("test-%d-%s", (int) getpid(), tag);
}

void
ring_test_params(RingWriterParams *p, const char *name, uint32_t width, uint32_t height)
{
  *p = (RingWriterParams) {
    .name = name,
    .width = width,
    .height = height,
    .formats = STEREOD_RING_FORMAT_ALL,
    .calibration = {
      .fx = 700.5, .fy = 701.25, .cx = width / 2.0, .cy = height / 2.0,
      .baseline = 0.12, .doffs = 3.5,
    },
  };
  for (int i = 0; i < 16; i++)
    p->calibration.q[i] = i * 0.5 - 1.0;
}

void
ring_test_publish(RingWriter *w)
{
  RingWriterSlot s;
  g_assert_cmpint(ring_writer_begin(w, &s), ==, 0);
  uint64_t f = s.counter + RING_TEST_FRAME_OFFSET;
  for (uint32_t y = 0; y < s.height; y++) {
    int16_t *d = (int16_t *) ((uint8_t *) s.planes[STEREOD_RING_PLANE_DISPARITY]
                              + (size_t) y * s.strides[STEREOD_RING_PLANE_DISPARITY]);
    uint16_t *z = (uint16_t *) ((uint8_t *) s.planes[STEREOD_RING_PLANE_DEPTH]
                                + (size_t) y * s.strides[STEREOD_RING_PLANE_DEPTH]);
    uint8_t *c = (uint8_t *) s.planes[STEREOD_RING_PLANE_CONFIDENCE]
                 + (size_t) y * s.strides[STEREOD_RING_PLANE_CONFIDENCE];
    float *v = (float *) ((uint8_t *) s.planes[STEREOD_RING_PLANE_FLOAT32]
                          + (size_t) y * s.strides[STEREOD_RING_PLANE_FLOAT32]);
    int16_t *fu = (int16_t *) ((uint8_t *) s.planes[STEREOD_RING_PLANE_FLOW_U]
                               + (size_t) y * s.strides[STEREOD_RING_PLANE_FLOW_U]);
    int16_t *fv = (int16_t *) ((uint8_t *) s.planes[STEREOD_RING_PLANE_FLOW_V]
                               + (size_t) y * s.strides[STEREOD_RING_PLANE_FLOW_V]);
    for (uint32_t x = 0; x < s.width; x++) {
      d[x] = ring_pattern_disparity(f, x, y);
      z[x] = ring_pattern_depth(f, x, y);
      c[x] = ring_pattern_confidence(f, x, y);
      v[x] = ring_pattern_float(f, x, y);
      fu[x] = ring_pattern_flow_u(f, x, y);
      fv[x] = ring_pattern_flow_v(f, x, y);
    }
  }
  RingWriterMeta meta = {
    .frame_number = f,
    .capture_ns = ring_pattern_capture_ns(f),
    .flags = (uint32_t) (f & 1u),
  };
  g_assert_cmpint(ring_writer_commit(w, &meta), ==, 0);
}

guint64
ring_test_frame_check(const StereodFrame *fr)
{
  uint64_t f = fr->frame_number;
  guint64 bad = 0;
  bad += fr->frame_number != fr->counter + RING_TEST_FRAME_OFFSET;
  bad += fr->capture_ns != ring_pattern_capture_ns(f);
  bad += fr->flags != (uint32_t) (f & 1u);
  bad += fr->publish_ns == 0;
  if (fr->disparity == NULL || fr->depth == NULL || fr->confidence == NULL ||
      fr->float32 == NULL || fr->flow_u == NULL || fr->flow_v == NULL)
    return bad + 1;
  for (uint32_t y = 0; y < fr->height; y++) {
    const int16_t *d = (const int16_t *) ((const uint8_t *) fr->disparity
                                          + (size_t) y * fr->strides[STEREOD_RING_PLANE_DISPARITY]);
    const uint16_t *z = (const uint16_t *) ((const uint8_t *) fr->depth
                                            + (size_t) y * fr->strides[STEREOD_RING_PLANE_DEPTH]);
    const uint8_t *c = fr->confidence + (size_t) y * fr->strides[STEREOD_RING_PLANE_CONFIDENCE];
    const float *v = (const float *) ((const uint8_t *) fr->float32
                                      + (size_t) y * fr->strides[STEREOD_RING_PLANE_FLOAT32]);
    const int16_t *fu = (const int16_t *) ((const uint8_t *) fr->flow_u
                                           + (size_t) y * fr->strides[STEREOD_RING_PLANE_FLOW_U]);
    const int16_t *fv = (const int16_t *) ((const uint8_t *) fr->flow_v
                                           + (size_t) y * fr->strides[STEREOD_RING_PLANE_FLOW_V]);
    for (uint32_t x = 0; x < fr->width; x++) {
      bad += fu[x] != ring_pattern_flow_u(f, x, y);
      bad += fv[x] != ring_pattern_flow_v(f, x, y);
      bad += d[x] != ring_pattern_disparity(f, x, y);
      bad += z[x] != ring_pattern_depth(f, x, y);
      bad += c[x] != ring_pattern_confidence(f, x, y);
      bad += v[x] != ring_pattern_float(f, x, y);
    }
  }
  return bad;
}

static double
thread_cpu_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long
thread_voluntary_switches(void)
{
  struct rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw;
}

RingTestRate
ring_test_writer_rate(RingWriter *w, int windows, double seconds)
{
  RingTestRate rate = { 0 };
  long waits0 = thread_voluntary_switches();
  for (int i = 0; i < windows; i++) {
    gint64 start = g_get_monotonic_time();
    gint64 end = start + (gint64) (seconds * G_USEC_PER_SEC);
    double cpu0 = thread_cpu_seconds();
    guint64 frames = 0;
    gint64 now;
    do {
      ring_test_publish(w);
      frames++;
      now = g_get_monotonic_time();
    } while (now < end);
    double cpu = thread_cpu_seconds() - cpu0;
    rate.wall_fps = MAX(rate.wall_fps, frames / ((now - start) / (double) G_USEC_PER_SEC));
    if (cpu > 0)
      rate.cpu_fps = MAX(rate.cpu_fps, frames / cpu);
    rate.frames += frames;
  }
  rate.waits = thread_voluntary_switches() - waits0;
  return rate;
}

static void
peer_spawn(RingTestPeer *peer, const char *const *argv, const char *const *envp,
           gboolean with_stdin)
{
  g_autoptr(GError) error = NULL;
  memset(peer, 0, sizeof *peer);
  peer->stdin_fd = -1;
  gboolean ok = g_spawn_async_with_pipes(NULL, (char **) argv, (char **) envp,
                                         G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH,
                                         NULL, NULL, &peer->pid,
                                         with_stdin ? &peer->stdin_fd : NULL,
                                         &peer->stdout_fd, &peer->stderr_fd, &error);
  g_assert_no_error(error);
  g_assert_true(ok);
  g_unix_set_fd_nonblocking(peer->stdout_fd, TRUE, NULL);
  g_unix_set_fd_nonblocking(peer->stderr_fd, TRUE, NULL);
  peer->output = g_string_new(NULL);
}

RingTestRate
ring_test_writer_run(RingWriter *w, guint64 frames)
{
  RingTestRate rate = { 0 };
  long waits0 = thread_voluntary_switches();
  double cpu0 = thread_cpu_seconds();
  gint64 start = g_get_monotonic_time();
  for (guint64 i = 0; i < frames; i++)
    ring_test_publish(w);
  gint64 elapsed = MAX(g_get_monotonic_time() - start, 1);
  double cpu = thread_cpu_seconds() - cpu0;
  rate.waits = thread_voluntary_switches() - waits0;
  rate.frames = frames;
  rate.wall_fps = frames / (elapsed / (double) G_USEC_PER_SEC);
  rate.cpu_fps = cpu > 0 ? frames / cpu : 0;
  return rate;
}

void
ring_test_peer_spawn_full(RingTestPeer *peer, const char *const *argv, const char *const *envp)
{
  peer_spawn(peer, argv, envp, FALSE);
}

void
ring_test_peer_spawn_stdin(RingTestPeer *peer, const char *const *argv, const char *const *envp)
{
  peer_spawn(peer, argv, envp, TRUE);
}

void
ring_test_peer_send(RingTestPeer *peer, const char *text)
{
  g_assert_cmpint(peer->stdin_fd, >=, 0);
  gsize n = strlen(text);
  g_assert_cmpint(write(peer->stdin_fd, text, n), ==, (gssize) n);
}

void
ring_test_peer_spawn(RingTestPeer *peer, const char *const *argv)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new();
  g_ptr_array_add(args, (char *) RING_TEST_PEER);
  for (const char *const *a = argv; *a != NULL; a++)
    g_ptr_array_add(args, (char *) *a);
  g_ptr_array_add(args, NULL);
  ring_test_peer_spawn_full(peer, (const char *const *) args->pdata, NULL);
}

static void
peer_drain(RingTestPeer *peer)
{
  char buf[4096];
  ssize_t n;
  while ((n = read(peer->stdout_fd, buf, sizeof buf)) > 0)
    g_string_append_len(peer->output, buf, n);
  while ((n = read(peer->stderr_fd, buf, sizeof buf)) > 0)
    g_string_append_len(peer->output, buf, n);
}

gboolean
ring_test_peer_wait_exit(RingTestPeer *peer, double seconds)
{
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while (!ring_test_peer_poll(peer) && g_get_monotonic_time() < end)
    g_usleep(1000);
  return peer->exited;
}

gboolean
ring_test_peer_exited_with(const RingTestPeer *peer, int status)
{
  return peer->exited && WIFEXITED(peer->wait_status) && WEXITSTATUS(peer->wait_status) == status;
}

gboolean
ring_test_peer_poll(RingTestPeer *peer)
{
  if (peer->exited)
    return TRUE;
  peer_drain(peer);
  int status;
  pid_t r = waitpid(peer->pid, &status, WNOHANG);
  if (r == peer->pid && (WIFEXITED(status) || WIFSIGNALED(status))) {
    peer->exited = TRUE;
    peer->wait_status = status;
    peer_drain(peer);
  }
  return peer->exited;
}

gboolean
ring_test_peer_wait_output(RingTestPeer *peer, RingWriter *w, const char *text, double seconds)
{
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    gboolean exited = ring_test_peer_poll(peer);
    if (strstr(peer->output->str, text) != NULL)
      return TRUE;
    if (exited)
      return FALSE;
    if (w != NULL)
      ring_test_publish(w);
    g_usleep(1000);
  }
  return FALSE;
}

gboolean
ring_test_peer_wait_stopped(RingTestPeer *peer, RingWriter *w, double seconds)
{
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    int status;
    pid_t r = waitpid(peer->pid, &status, WNOHANG | WUNTRACED);
    if (r == peer->pid && WIFSTOPPED(status))
      return TRUE;
    if (r == peer->pid) {
      peer->exited = TRUE;
      peer->wait_status = status;
      return FALSE;
    }
    ring_test_publish(w);
    g_usleep(200);
  }
  return FALSE;
}

gboolean
ring_test_run_writer_until_peers_exit(RingWriter *w, RingTestPeer *peers, guint n, double hz,
                                      double seconds)
{
  gint64 start = g_get_monotonic_time();
  gint64 end = start + (gint64) (seconds * G_USEC_PER_SEC);
  guint64 published = 0;
  for (;;) {
    gboolean all = TRUE;
    for (guint i = 0; i < n; i++)
      all = ring_test_peer_poll(&peers[i]) && all;
    if (all)
      return TRUE;
    gint64 now = g_get_monotonic_time();
    if (now >= end)
      return FALSE;
    if (hz > 0) {
      gint64 due = start + (gint64) (published * G_USEC_PER_SEC / hz);
      if (due > now)
        g_usleep(MIN(due - now, 1000));
      if (g_get_monotonic_time() < due)
        continue;
    }
    ring_test_publish(w);
    published++;
  }
}

guint64
ring_test_peer_value(const RingTestPeer *peer, const char *key)
{
  g_autofree char *needle = g_strdup_printf(" %s=", key);
  const char *p = strstr(peer->output->str, needle);
  if (p == NULL)
    g_error("peer %d output has no %s: \"%s\"", (int) peer->pid, key, peer->output->str);
  return g_ascii_strtoull(p + strlen(needle), NULL, 10);
}

void
ring_test_peer_clear(RingTestPeer *peer)
{
  if (peer->pid > 0 && !peer->exited) {
    kill(peer->pid, SIGKILL);
    waitpid(peer->pid, NULL, 0);
  }
  if (peer->stdout_fd > 0)
    close(peer->stdout_fd);
  if (peer->stderr_fd > 0)
    close(peer->stderr_fd);
  if (peer->stdin_fd > 0)
    close(peer->stdin_fd);
  if (peer->output != NULL)
    g_string_free(peer->output, TRUE);
  memset(peer, 0, sizeof *peer);
}

RingWriter *
ring_test_writer_new(const char *name, uint32_t width, uint32_t height)
{
  RingWriterParams p;
  ring_test_params(&p, name, width, height);
  RingWriter *writer = NULL;
  g_assert_cmpint(ring_writer_new(&p, &writer), ==, 0);
  g_assert_nonnull(writer);
  return writer;
}

pid_t
ring_test_fork_writer(const char *name, uint32_t width, uint32_t height, gboolean publish)
{
  int fds[2];
  g_assert_cmpint(pipe(fds), ==, 0);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(fds[0]);
    RingWriterParams p;
    ring_test_params(&p, name, width, height);
    RingWriter *w = NULL;
    char ok = ring_writer_new(&p, &w) == 0 ? 'y' : 'n';
    if (write(fds[1], &ok, 1) != 1 || ok != 'y')
      _exit(1);
    for (int i = 0; i < 60000; i++) {   /* bounded: 60 s at most */
      if (publish)
        ring_test_publish(w);
      g_usleep(1000);
    }
    _exit(0);
  }
  close(fds[1]);
  char ok = 0;
  g_assert_cmpint(read(fds[0], &ok, 1), ==, 1);
  g_assert_cmpint(ok, ==, 'y');
  close(fds[0]);
  return pid;
}

void
ring_test_peer_assert_clean(const RingTestPeer *peer)
{
  g_test_message("reader %d: %s", (int) peer->pid, peer->output->str);
  g_assert_true(WIFEXITED(peer->wait_status));
  g_assert_cmpint(WEXITSTATUS(peer->wait_status), ==, 0);
  g_assert_cmpuint(ring_test_peer_value(peer, "bad"), ==, 0);
  g_assert_cmpuint(ring_test_peer_value(peer, "ordered"), ==, 1);
}
