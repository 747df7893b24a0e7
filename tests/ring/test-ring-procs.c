/* test-ring-procs.c: the ring protocol between real processes: one writer (this
 * process) and reader processes (ring-test-peer, and the pure-Python reader). Every
 * frame a reader gets is checked pixel by pixel against the pattern of its number. */
#include "ring-test-util.h"

#include <string.h>
#include <sys/wait.h>

#define N_READERS 3

/* One writer, three readers of 320 x 240 frames (all four planes). `hz` 0 = the
 * writer publishes as fast as it can, so readers skip frames and race the writer for
 * slots; otherwise it is paced like a camera. */
static void
run_three_readers(const char *tag, double hz, const char *frames)
{
  g_autofree char *name = ring_test_pair_name(tag);
  RingWriter *w = ring_test_writer_new(name, 320, 240);
  RingTestPeer peers[N_READERS];
  const char *argv[] = { name, "--frames", frames, "--seconds", "8", NULL };
  for (int i = 0; i < N_READERS; i++) {
    ring_test_peer_spawn(&peers[i], argv);
    g_assert_true(ring_test_peer_wait_output(&peers[i], NULL, "peer ready", 5.0));
  }

  gint64 t0 = g_get_monotonic_time();
  g_assert_true(ring_test_run_writer_until_peers_exit(w, peers, N_READERS, hz, 10.0));
  double secs = (g_get_monotonic_time() - t0) / (double) G_USEC_PER_SEC;
  uint64_t published = ring_writer_get_counter(w);
  g_test_message("writer: %" G_GUINT64_FORMAT " frames in %.3f s (%.0f frames/s)",
                 published, secs, published / secs);
  for (int i = 0; i < N_READERS; i++) {
    ring_test_peer_assert_clean(&peers[i]);
    g_assert_cmpuint(ring_test_peer_value(&peers[i], "frames"), ==, g_ascii_strtoull(frames, NULL, 10));
    g_assert_cmpuint(ring_test_peer_value(&peers[i], "last"), <=, published);
    ring_test_peer_clear(&peers[i]);
  }
  ring_writer_free(w);
}

static void
test_three_readers(void)
{
  run_three_readers("three", 1000.0, "300");
}

static void
test_three_readers_unpaced(void)
{
  run_three_readers("three-fast", 0.0, "300");
}

static void
test_readers_see_close(void)
{
  g_autofree char *name = ring_test_pair_name("close");
  RingWriter *w = ring_test_writer_new(name, 64, 48);
  RingTestPeer peers[2];
  const char *argv[] = { name, "--until-closed", "--seconds", "8", NULL };
  for (int i = 0; i < 2; i++) {
    ring_test_peer_spawn(&peers[i], argv);
    g_assert_true(ring_test_peer_wait_output(&peers[i], w, "peer ready", 5.0));
  }
  /* Publish a while, then close: both readers must see the end and exit. */
  g_assert_false(ring_test_run_writer_until_peers_exit(w, peers, 2, 500.0, 0.2));
  uint64_t published = ring_writer_get_counter(w);
  ring_writer_free(w);
  gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
  while (!(ring_test_peer_poll(&peers[0]) && ring_test_peer_poll(&peers[1]))
         && g_get_monotonic_time() < end)
    g_usleep(1000);
  for (int i = 0; i < 2; i++) {
    g_assert_true(peers[i].exited);
    ring_test_peer_assert_clean(&peers[i]);
    g_assert_cmpuint(ring_test_peer_value(&peers[i], "closed"), ==, 1);
    g_assert_cmpuint(ring_test_peer_value(&peers[i], "last"), ==, published);
    g_assert_cmpuint(ring_test_peer_value(&peers[i], "frames"), >, 0);
    ring_test_peer_clear(&peers[i]);
  }
}

static gboolean
python_has_numpy(void)
{
  const char *argv[] = { RING_TEST_PYTHON, "-c", "import numpy", NULL };
  int status = -1;
  if (!g_spawn_sync(NULL, (char **) argv, NULL,
                    G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                    NULL, NULL, NULL, NULL, &status, NULL))
    return FALSE;
  return g_spawn_check_wait_status(status, NULL);
}

static void
run_python_reader(gboolean numpy)
{
  g_autofree char *name = ring_test_pair_name(numpy ? "py-numpy" : "py-pure");
  RingWriter *w = ring_test_writer_new(name, 160, 120);
  char **envp = g_get_environ();
  envp = g_environ_setenv(envp, "STEREOD_CLIENT_NO_NUMPY", numpy ? "0" : "1", TRUE);
  const char *argv[] = { RING_TEST_PYTHON, RING_TEST_PYTHON_CHECK, STEREOD_CLIENT_PY_DIR, name,
                         "20", "15", NULL };
  RingTestPeer peer;
  ring_test_peer_spawn_full(&peer, argv, (const char *const *) envp);
  g_strfreev(envp);
  g_assert_true(ring_test_peer_wait_output(&peer, w, "peer ready", 10.0));
  /* Paced so that the pure-Python check (tens of ms a frame) reads a spread of frames
   * while the writer laps it many times. */
  g_assert_true(ring_test_run_writer_until_peers_exit(w, &peer, 1, 200.0, 20.0));
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpuint(ring_test_peer_value(&peer, "frames"), ==, 20);
  g_assert_cmpuint(ring_test_peer_value(&peer, "numpy"), ==, numpy ? 1 : 0);
  ring_test_peer_clear(&peer);

  /* The Python reader sees the close too. */
  const char *argv2[] = { RING_TEST_PYTHON, RING_TEST_PYTHON_CHECK, STEREOD_CLIENT_PY_DIR, name,
                          "1000000", "10", NULL };
  envp = g_environ_setenv(g_get_environ(), "STEREOD_CLIENT_NO_NUMPY", numpy ? "0" : "1", TRUE);
  ring_test_peer_spawn_full(&peer, argv2, (const char *const *) envp);
  g_strfreev(envp);
  g_assert_true(ring_test_peer_wait_output(&peer, w, "peer ready", 10.0));
  ring_writer_free(w);
  gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
  while (!ring_test_peer_poll(&peer) && g_get_monotonic_time() < end)
    g_usleep(1000);
  g_assert_true(peer.exited);
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpuint(ring_test_peer_value(&peer, "closed"), ==, 1);
  ring_test_peer_clear(&peer);
}

static void
test_python_pure(void)
{
  run_python_reader(FALSE);
}

static void
test_python_numpy(void)
{
  if (!python_has_numpy()) {
    g_test_skip("python3 has no numpy (Debian: python3-numpy); the array.array path is "
                "tested by /ring/procs/python-pure");
    return;
  }
  run_python_reader(TRUE);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/ring/procs/three-readers", test_three_readers);
  g_test_add_func("/ring/procs/three-readers-unpaced", test_three_readers_unpaced);
  g_test_add_func("/ring/procs/readers-see-close", test_readers_see_close);
  g_test_add_func("/ring/procs/python-pure", test_python_pure);
  g_test_add_func("/ring/procs/python-numpy", test_python_numpy);
  return g_test_run();
}
