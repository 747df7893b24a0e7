/* test-ring-fault.c: readers that misbehave must cost the writer nothing.
 *
 * The writer (this process) publishes 320 x 240 frames with all four planes as fast
 * as it can, a fixed number at a time. With a reader stopped in the middle of a copy,
 * after that reader is SIGKILLed, and with a reader far slower than the writer:
 *  - the writer never blocks: zero voluntary context switches of its thread over every
 *    batch (a writer that waited for a reader, on a lock, a futex or a pipe, would
 *    show one for every wait);
 *  - every publish of the batch completed: the counter advanced by exactly the batch;
 *  - a fresh reader afterwards reads consistent frames.
 * Its rates (per elapsed and per CPU second, against a batch without readers) are
 * printed for the record but not compared: on a shared, loaded machine they move by
 * more than any tolerance that would still mean something, and the two counts above
 * are what "the readers cost the writer nothing" requires.
 * Torn copies are forced in a reader process and must be detected, and a writer that
 * crashes and is replaced must not leave its readers waiting. */
#include "ring-test-util.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WIDTH 320
#define HEIGHT 240
#define BATCH 400

static RingTestRate
measure(RingWriter *w)
{
  uint64_t before = ring_writer_get_counter(w);
  RingTestRate rate = ring_test_writer_run(w, BATCH);
  g_assert_cmpuint(ring_writer_get_counter(w) - before, ==, BATCH);
  return rate;
}

static void
assert_never_waited(const char *what, RingTestRate rate, RingTestRate base)
{
  g_test_message("writer %s: %" G_GUINT64_FORMAT " frames, %ld waits; %.0f frames/s "
                 "(%.0f without readers), %.0f frames per CPU second (%.0f)",
                 what, rate.frames, rate.waits, rate.wall_fps, base.wall_fps, rate.cpu_fps,
                 base.cpu_fps);
  g_assert_cmpint(rate.waits, ==, 0);
}

/* A fresh reader still reads consistent frames from the ring. */
static void
assert_ring_still_readable(RingWriter *w, const char *name)
{
  RingTestPeer peer;
  const char *argv[] = { name, "--frames", "30", "--seconds", "30", NULL };
  ring_test_peer_spawn(&peer, argv);
  g_assert_true(ring_test_run_writer_until_peers_exit(w, &peer, 1, 0.0, 40.0));
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpuint(ring_test_peer_value(&peer, "frames"), ==, 30);
  ring_test_peer_clear(&peer);
}

static void
test_reader_killed_mid_read(void)
{
  g_autofree char *name = ring_test_pair_name("killed");
  RingWriter *w = ring_test_writer_new(name, WIDTH, HEIGHT);
  RingTestRate baseline = measure(w);
  g_assert_cmpint(baseline.waits, ==, 0);

  /* The reader stops itself half-way through copying a slot... */
  RingTestPeer peer;
  const char *argv[] = { name, "--stop-in-copy", "--seconds", "60", NULL };
  ring_test_peer_spawn(&peer, argv);
  g_assert_true(ring_test_peer_wait_stopped(&peer, w, 30.0));
  RingTestRate stopped = measure(w);

  /* ...and is killed there. */
  g_assert_cmpint(kill(peer.pid, SIGKILL), ==, 0);
  int status;
  g_assert_cmpint(waitpid(peer.pid, &status, 0), ==, peer.pid);
  g_assert_true(WIFSIGNALED(status));
  g_assert_cmpint(WTERMSIG(status), ==, SIGKILL);
  peer.exited = TRUE;
  RingTestRate killed = measure(w);

  assert_never_waited("with a reader stopped mid-read", stopped, baseline);
  assert_never_waited("after that reader was killed", killed, baseline);
  ring_test_peer_clear(&peer);
  assert_ring_still_readable(w, name);
  ring_writer_free(w);
}

static void
test_slow_reader(void)
{
  g_autofree char *name = ring_test_pair_name("slow");
  RingWriter *w = ring_test_writer_new(name, WIDTH, HEIGHT);
  RingTestRate baseline = measure(w);
  g_assert_cmpint(baseline.waits, ==, 0);

  /* A reader that sleeps 50 ms after every frame it reads, for 12 frames. */
  const int frames = 12;
  RingTestPeer peer;
  const char *argv[] = { name, "--sleep-us", "50000", "--frames", "12", "--seconds", "60",
                         NULL };
  ring_test_peer_spawn(&peer, argv);
  g_assert_true(ring_test_peer_wait_output(&peer, w, "peer ready", 20.0));

  RingTestRate slow = { 0 };
  int batches = 0;
  gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
  while (!ring_test_peer_poll(&peer) && g_get_monotonic_time() < end) {
    RingTestRate r = measure(w);
    slow.wall_fps = MAX(slow.wall_fps, r.wall_fps);
    slow.cpu_fps = MAX(slow.cpu_fps, r.cpu_fps);
    slow.waits += r.waits;
    slow.frames += r.frames;
    batches++;
  }
  g_assert_true(peer.exited);
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpint(batches, >=, 1);
  g_assert_cmpuint(ring_test_peer_value(&peer, "frames"), ==, (guint64) frames);
  /* It really was slower: between two of its reads the writer went round the whole
   * ring at least once on average (50 ms of sleep against a writer that never
   * waits), and it never waited for the reader meanwhile. */
  double gap = (double) (ring_test_peer_value(&peer, "last") - ring_test_peer_value(&peer, "first"))
               / (frames - 1);
  g_test_message("slow reader: %d frames, sleeping 50 ms each, one frame in %.0f", frames, gap);
  g_assert_cmpfloat(gap, >, STEREOD_RING_DEFAULT_SLOTS);
  assert_never_waited("with a slow reader", slow, baseline);
  ring_test_peer_clear(&peer);
  ring_writer_free(w);
}

static void
test_torn_reads_forced(void)
{
  g_autofree char *name = ring_test_pair_name("torn");
  RingWriter *w = ring_test_writer_new(name, WIDTH, HEIGHT);
  /* Every first copy attempt is held until the writer has rewritten the slot. */
  RingTestPeer peer;
  const char *argv[] = { name, "--torn", "--frames", "20", "--seconds", "40", NULL };
  ring_test_peer_spawn(&peer, argv);
  g_assert_true(ring_test_run_writer_until_peers_exit(w, &peer, 1, 0.0, 50.0));
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpuint(ring_test_peer_value(&peer, "frames"), ==, 20);
  g_assert_cmpuint(ring_test_peer_value(&peer, "torn"), >=, 20);
  g_assert_cmpuint(ring_test_peer_value(&peer, "eagain"), ==, 0);
  ring_test_peer_clear(&peer);
  ring_writer_free(w);
}

static void
test_writer_crash(void)
{
  g_autofree char *name = ring_test_pair_name("crash");
  pid_t writer = ring_test_fork_writer(name, 64, 48, TRUE);
  RingTestPeer peer;
  const char *argv[] = { name, "--until-closed", "--seconds", "60", NULL };
  ring_test_peer_spawn(&peer, argv);
  g_assert_true(ring_test_peer_wait_output(&peer, NULL, "peer ready", 20.0));
  g_usleep(100 * 1000);

  /* The writer dies without closing: its reader just sees no new frames... */
  kill(writer, SIGKILL);
  g_assert_cmpint(waitpid(writer, NULL, 0), ==, writer);
  g_usleep(100 * 1000);
  g_assert_false(ring_test_peer_poll(&peer));

  /* ...until the restarted writer takes the name over and closes the old ring. */
  RingWriterParams p;
  ring_test_params(&p, name, 64, 48);
  RingWriter *w = NULL;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  gint64 t0 = g_get_monotonic_time();
  gint64 end = t0 + 30 * G_USEC_PER_SEC;
  while (!ring_test_peer_poll(&peer) && g_get_monotonic_time() < end)
    g_usleep(1000);
  g_assert_true(peer.exited);
  g_test_message("old reader saw the close %.1f ms after the new writer started",
                 (g_get_monotonic_time() - t0) / 1000.0);
  ring_test_peer_assert_clean(&peer);
  g_assert_cmpuint(ring_test_peer_value(&peer, "closed"), ==, 1);
  g_assert_cmpuint(ring_test_peer_value(&peer, "frames"), >, 0);
  ring_test_peer_clear(&peer);
  ring_writer_free(w);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/ring/fault/reader-killed-mid-read", test_reader_killed_mid_read);
  g_test_add_func("/ring/fault/slow-reader", test_slow_reader);
  g_test_add_func("/ring/fault/torn-reads-forced", test_torn_reads_forced);
  g_test_add_func("/ring/fault/writer-crash", test_writer_crash);
  return g_test_run();
}
