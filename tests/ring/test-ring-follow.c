/* test-ring-follow.c: readers that follow their pair's writer across restarts:
 * libstereod-client with .follow (a writer killed with SIGKILL and restarted, one that
 * closed and came back later, a name replaced without the old ring being closed),
 * stereod_client_reopen() and stereod_client_open_wait(), stereod-dump --follow and the
 * Python reader's follow=True. Counts and orders only: every deadline is many times
 * what the step needs. */
#include "ring-test-util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LONG_NS (30 * 1000000000ll)
#define SLACK_S 30.0

static StereodClient *
open_following(const char *name)
{
  StereodClient *c = NULL;
  StereodClientOpenParams p = { .pair = name, .follow = true };
  g_assert_cmpint(stereod_client_open_with(&p, &c), ==, 0);
  return c;
}

/* The frame is the pattern's, apart from the DISCONT flag a move to a new ring adds
 * (even frame numbers carry no flag of their own). */
static void
assert_first_of_new_ring(StereodFrame *f)
{
  g_assert_cmpuint(f->frame_number % 2, ==, 0);
  g_assert_true(f->flags & STEREOD_FRAME_FLAG_DISCONT);
  f->flags &= ~STEREOD_FRAME_FLAG_DISCONT;
  g_assert_cmpuint(ring_test_frame_check(f), ==, 0);
}

static void
test_killed_restarted(void)
{
  g_autofree char *name = ring_test_pair_name("follow-kill");
  pid_t a = ring_test_fork_writer(name, 32, 24, TRUE);
  g_autoptr(StereodClient) c = open_following(name);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_next(c, 0, LONG_NS, &f), ==, 0);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
  g_assert_cmpint(stereod_client_get_writer_pid(c), ==, a);

  /* Killed: the ring stays, unclosed. What it had published is still read; then
   * nothing comes, and nothing says closed. */
  kill(a, SIGKILL);
  g_assert_cmpint(waitpid(a, NULL, 0), ==, a);
  uint64_t last = f.counter;
  for (int i = 0; i < 100000 && stereod_client_read_next(c, last, 0, &f) == 0; i++)
    last = f.counter;
  g_assert_cmpint(stereod_client_read_next(c, last, 200 * 1000000ll, &f), ==, -ETIMEDOUT);
  g_assert_false(stereod_client_is_closed(c));
  g_assert_false(stereod_client_writer_is_alive(c));
  g_assert_cmpuint(stereod_client_get_generation(c), ==, 1);

  /* The restarted writer (this process, another size) takes the name over: the reader
   * goes on with it, counters restarting from the new ring's. */
  RingWriter *w = ring_test_writer_new(name, 48, 32);
  ring_test_publish(w);
  ring_test_publish(w);
  g_assert_cmpint(stereod_client_read_next(c, last, LONG_NS, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 2);
  g_assert_cmpuint(f.width, ==, 48);
  g_assert_cmpuint(f.height, ==, 32);
  assert_first_of_new_ring(&f);
  g_assert_cmpuint(stereod_client_get_generation(c), ==, 2);
  g_assert_cmpint(stereod_client_get_writer_pid(c), ==, getpid());
  g_assert_cmpuint(stereod_client_get_width(c), ==, 48);
  g_assert_cmpint(stereod_client_read_next(c, 2, 0, &f), ==, -ETIMEDOUT);
  ring_test_publish(w);
  g_assert_cmpint(stereod_client_read_next(c, 2, LONG_NS, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 3);
  g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);   /* no DISCONT from the reader */
  stereod_frame_clear(&f);
  ring_writer_free(w);
}

typedef struct {
  StereodClient *client;
  uint64_t last;
  StereodFrame frame;
  int result;
  gint64 returned_us;
} ReadThread;

static gpointer
read_thread(gpointer data)
{
  ReadThread *t = data;
  t->result = stereod_client_read_next(t->client, t->last, LONG_NS, &t->frame);
  t->returned_us = g_get_monotonic_time();
  return NULL;
}

static void
test_closed_and_back(void)
{
  g_autofree char *name = ring_test_pair_name("follow-close");
  RingWriter *w = ring_test_writer_new(name, 16, 16);
  ring_test_publish(w);
  g_autoptr(StereodClient) c = open_following(name);
  g_autoptr(StereodClient) plain = NULL;
  g_assert_cmpint(stereod_client_open(name, &plain), ==, 0);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_next(c, 0, LONG_NS, &f), ==, 0);

  /* A clean stop removes the name. A reader that does not follow sees the end; a
   * following one waits for the name to come back. */
  ring_writer_free(w);
  g_assert_cmpint(stereod_client_read_next(plain, 1, LONG_NS, &f), ==, -EPIPE);
  g_assert_cmpint(stereod_client_read_next(c, 1, 100 * 1000000ll, &f), ==, -ETIMEDOUT);
  ReadThread t = { .client = c, .last = 1 };
  GThread *th = g_thread_new("read", read_thread, &t);
  g_usleep(50 * 1000);
  gint64 back_us = g_get_monotonic_time();
  w = ring_test_writer_new(name, 16, 16);
  ring_test_publish(w);
  ring_test_publish(w);
  g_thread_join(th);
  g_assert_cmpint(t.result, ==, 0);
  g_assert_cmpint(t.returned_us, >=, back_us);
  g_assert_cmpuint(t.frame.counter, ==, 2);
  assert_first_of_new_ring(&t.frame);
  g_assert_cmpuint(stereod_client_get_generation(c), ==, 2);
  stereod_frame_clear(&t.frame);
  stereod_frame_clear(&f);
  ring_writer_free(w);
}

static void
test_name_replaced(void)
{
  /* The name removed and created again by a writer that had nothing to retire (the
   * old writer was killed and its name deleted by hand, or by a cleanup): the old ring
   * is never closed, so readers see the new object at their next look (about a
   * second). */
  g_autofree char *name = ring_test_pair_name("follow-replaced");
  RingWriter *w1 = ring_test_writer_new(name, 16, 16);
  ring_test_publish(w1);
  g_autoptr(StereodClient) c = open_following(name);
  g_autoptr(StereodClient) plain = NULL;
  g_assert_cmpint(stereod_client_open(name, &plain), ==, 0);
  g_autofree char *path = ring_test_path(name);
  g_assert_cmpint(unlink(path), ==, 0);
  RingWriter *w2 = ring_test_writer_new(name, 16, 16);
  ring_test_publish(w2);
  ring_test_publish(w2);
  StereodFrame f = STEREOD_FRAME_INIT;
  g_assert_cmpint(stereod_client_read_next(plain, 1, LONG_NS, &f), ==, -ESTALE);
  g_assert_cmpint(stereod_client_read_next(c, 1, LONG_NS, &f), ==, 0);
  g_assert_cmpuint(f.counter, ==, 2);
  assert_first_of_new_ring(&f);
  stereod_frame_clear(&f);
  ring_writer_free(w1);    /* its name is w2's now: left alone */
  g_assert_cmpint(access(path, F_OK), ==, 0);
  ring_writer_free(w2);
}

static void
test_reopen(void)
{
  g_autofree char *name = ring_test_pair_name("reopen");
  RingWriter *w = ring_test_writer_new(name, 16, 16);
  g_autoptr(StereodClient) c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, 0);
  g_assert_cmpint(stereod_client_reopen(c), ==, -EALREADY);
  ring_writer_free(w);
  g_assert_cmpint(stereod_client_reopen(c), ==, -ENOENT);   /* the old ring stays in use */
  g_assert_true(stereod_client_is_closed(c));

  RingWriterParams p;
  ring_test_params(&p, name, 24, 8);
  p.producer[3] = 7.5;
  g_assert_cmpint(ring_writer_new(&p, &w), ==, 0);
  ring_test_publish(w);
  g_assert_cmpint(stereod_client_reopen(c), ==, 0);
  g_assert_cmpuint(stereod_client_get_generation(c), ==, 2);
  g_assert_false(stereod_client_is_closed(c));
  g_assert_cmpuint(stereod_client_get_width(c), ==, 24);
  g_assert_cmpfloat(stereod_client_get_header(c)->producer[3], ==, 7.5);
  uint64_t counter = 0;
  g_assert_cmpint(stereod_client_wait(c, 0, 0, &counter), ==, 0);
  g_assert_cmpuint(counter, ==, 1);
  ring_writer_free(w);
}

typedef struct {
  const char *name;
  RingWriter *writer;
  gint64 created_us;
} CreateLater;

static gpointer
create_later(gpointer data)
{
  CreateLater *cl = data;
  g_usleep(100 * 1000);
  cl->created_us = g_get_monotonic_time();
  cl->writer = ring_test_writer_new(cl->name, 16, 16);
  return NULL;
}

static void
test_open_wait(void)
{
  g_autofree char *name = ring_test_pair_name("open-wait");
  StereodClientOpenParams p = { .pair = name };
  StereodClient *c = (StereodClient *) 1;
  gint64 t0 = g_get_monotonic_time();
  g_assert_cmpint(stereod_client_open_wait(&p, 200 * 1000000ll, &c), ==, -ETIMEDOUT);
  g_assert_null(c);
  g_assert_cmpint(g_get_monotonic_time() - t0, >=, 200 * 1000);
  g_assert_cmpint(stereod_client_open_wait(&p, 0, &c), ==, -ETIMEDOUT);

  CreateLater cl = { .name = name };
  GThread *th = g_thread_new("create", create_later, &cl);
  g_assert_cmpint(stereod_client_open_wait(&p, LONG_NS, &c), ==, 0);
  gint64 opened_us = g_get_monotonic_time();
  g_thread_join(th);
  g_assert_cmpint(opened_us, >=, cl.created_us);
  g_assert_cmpint(stereod_client_get_writer_pid(c), ==, getpid());
  stereod_client_close(c);
  ring_writer_free(cl.writer);
}

static guint
count_of(const char *haystack, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* Publishes from w until `text` occurs `n` times in the peer's output. */
static gboolean
publish_until_count(RingTestPeer *peer, RingWriter *w, const char *text, guint n, double seconds)
{
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time() < end) {
    gboolean exited = ring_test_peer_poll(peer);
    if (count_of(peer->output->str, text) >= n)
      return TRUE;
    if (exited)
      return FALSE;
    if (w != NULL)
      ring_test_publish(w);
    g_usleep(2000);
  }
  return FALSE;
}

#ifdef STEREOD_DUMP_PATH
static void
test_dump_follow(void)
{
  g_autofree char *name = ring_test_pair_name("dump-follow");
  pid_t a = ring_test_fork_writer(name, 32, 24, TRUE);
  RingTestPeer dump;
  const char *argv[] = { STEREOD_DUMP_PATH, name, "--follow", NULL };
  ring_test_peer_spawn_full(&dump, argv, NULL);
  g_assert_true(ring_test_peer_wait_output(&dump, NULL, "counter=", SLACK_S));

  /* Killed, restarted: dump goes on with the new writer. */
  kill(a, SIGKILL);
  g_assert_cmpint(waitpid(a, NULL, 0), ==, a);
  RingWriter *w = ring_test_writer_new(name, 32, 24);
  g_autofree char *moved = g_strdup_printf("following a new writer (pid %d, 32x24)", (int) getpid());
  g_assert_true(publish_until_count(&dump, w, moved, 1, SLACK_S));
  const char *after = strstr(dump.output->str, moved);
  g_assert_nonnull(after);
  gsize mark = after - dump.output->str;
  g_assert_true(publish_until_count(&dump, w, "counter=", count_of(dump.output->str, "counter=") + 3,
                                    SLACK_S));
  g_assert_nonnull(strstr(dump.output->str + mark, "counter="));

  /* Stopped cleanly (the name goes away): dump waits for it, then follows again. */
  ring_writer_free(w);
  g_usleep(300 * 1000);
  g_assert_false(ring_test_peer_poll(&dump));
  w = ring_test_writer_new(name, 32, 24);
  g_assert_true(publish_until_count(&dump, w, moved, 2, SLACK_S));
  g_assert_true(publish_until_count(&dump, w, "counter=", count_of(dump.output->str, "counter=") + 3,
                                    SLACK_S));
  kill(dump.pid, SIGTERM);
  g_assert_true(ring_test_peer_wait_exit(&dump, SLACK_S));
  g_test_message("%s", strstr(dump.output->str, "frames=") ? strstr(dump.output->str, "frames=") : "?");
  g_assert_true(ring_test_peer_exited_with(&dump, 0));
  g_assert_nonnull(strstr(dump.output->str, "\nframes="));
  g_assert_null(strstr(dump.output->str, "stereod-dump:"));   /* no error line */
  ring_test_peer_clear(&dump);
  ring_writer_free(w);
}
#endif

static void
test_python_follow(void)
{
  g_autofree char *name = ring_test_pair_name("py-follow");
  pid_t a = ring_test_fork_writer(name, 32, 24, TRUE);
  RingTestPeer py;
  const char *argv[] = { RING_TEST_PYTHON, RING_TEST_PYTHON_RING_CHECK, STEREOD_CLIENT_PY_DIR,
                         name, "10", "--follow", NULL };
  ring_test_peer_spawn_full(&py, argv, NULL);
  g_assert_true(ring_test_peer_wait_output(&py, NULL, " gen 1\n", SLACK_S));

  kill(a, SIGKILL);
  g_assert_cmpint(waitpid(a, NULL, 0), ==, a);
  RingWriter *w = ring_test_writer_new(name, 32, 24);
  g_assert_true(publish_until_count(&py, w, " gen 2\n", 3, SLACK_S));
  ring_writer_free(w);
  w = ring_test_writer_new(name, 32, 24);
  g_assert_true(publish_until_count(&py, w, " gen 3\n", 3, SLACK_S));
  ring_writer_free(w);
  /* No writer any more: the reader times out (10 s) and prints its summary. */
  g_assert_true(ring_test_peer_wait_exit(&py, 10 + SLACK_S));
  g_test_message("%s", strstr(py.output->str, "peer frames=") ? strstr(py.output->str, "peer frames=") : py.output->str);
  g_assert_true(ring_test_peer_exited_with(&py, 0));
  g_assert_nonnull(strstr(py.output->str, " bad=0 generations=3 "));
  g_assert_nonnull(strstr(py.output->str, "raised TimeoutError"));
  ring_test_peer_clear(&py);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  g_test_add_func("/ring/follow/killed-restarted", test_killed_restarted);
  g_test_add_func("/ring/follow/closed-and-back", test_closed_and_back);
  g_test_add_func("/ring/follow/name-replaced", test_name_replaced);
  g_test_add_func("/ring/follow/reopen", test_reopen);
  g_test_add_func("/ring/follow/open-wait", test_open_wait);
#ifdef STEREOD_DUMP_PATH
  g_test_add_func("/ring/follow/dump", test_dump_follow);
#endif
  g_test_add_func("/ring/follow/python", test_python_follow);
  return g_test_run();
}
