/* test-ring-hostile.c: writers that break the ring, against every reader.
 *
 * A writer process (ring-test-hostile) makes a ring and, once the readers have opened it
 * and read a frame, rewrites its header (slot_count 0, header_size, slot_size, width,
 * height, a plane offset), truncates it (to 0, to half), leaves the newest slot's seq
 * odd forever or announces a frame whose slot says counter 0; or it makes a sparse object
 * declaring a 4 GiB plane. For each case:
 *  - libstereod-client (this process) returns the documented error within a deadline,
 *    without spinning (its retry count stays small) and without a signal;
 *  - stereod-dump exits 1 with a line that says what is wrong, within its --timeout
 *    (plus slack for a loaded machine);
 *  - the Python reader raises its documented exception.
 * Then squatters: a ring pre-created under the pair's name by another uid (the test
 * forks and setuid()s to nobody; root is needed for that) and a symlink under the name:
 * the writer refuses them with a message naming the owner, the readers refuse them
 * unless told to accept that owner. */
#include "ring-test-util.h"
#include "ring-private.h"
#include "ring-reader-private.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define READ_TIMEOUT_S 3
#define SLACK_S 30            /* a loaded 2-core machine, sanitizers: many times the need */

typedef struct {
  const char *mode;
  int error;                  /* what read_next (or open) returns */
  const char *dump_text;      /* in stereod-dump's error line */
  const char *python_error;   /* the exception the Python reader raises */
  gboolean at_open;           /* refused at open already */
} HostileCase;

static const HostileCase cases[] = {
  { "slot-count-zero", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "header-size", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "slot-size", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "width", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "height", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "plane-offset", -EPROTO, "header changed after it was opened", "RingProtocolError", FALSE },
  { "truncate-zero", -EIO, "truncated under the reader", "RingTruncatedError", FALSE },
  { "truncate-half", -EIO, "truncated under the reader", "RingTruncatedError", FALSE },
  { "seq-odd", -EBADMSG, "never completed the newest slot", "RingIncompleteError", FALSE },
  { "slot-counter-zero", -EBADMSG, "never completed the newest slot", "RingIncompleteError", FALSE },
  { "sparse-width", -EPROTO, "not a valid stereod ring", "RingProtocolError", TRUE },
  { "sparse-stride", -EPROTO, "not a valid stereod ring", "RingProtocolError", TRUE },
};

static void
spawn_python(RingTestPeer *peer, const char *name, const char *const *extra, const char *const *envp)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_autofree char *timeout = g_strdup_printf("%d", READ_TIMEOUT_S);
  const char *base[] = { RING_TEST_PYTHON, RING_TEST_PYTHON_RING_CHECK, STEREOD_CLIENT_PY_DIR,
                         name, timeout };
  for (guint i = 0; i < G_N_ELEMENTS(base); i++)
    g_ptr_array_add(argv, (char *) base[i]);
  for (const char *const *a = extra; a != NULL && *a != NULL; a++)
    g_ptr_array_add(argv, (char *) *a);
  g_ptr_array_add(argv, NULL);
  ring_test_peer_spawn_full(peer, (const char *const *) argv->pdata, envp);
}

#ifdef STEREOD_DUMP_PATH
static void
spawn_dump(RingTestPeer *peer, const char *name, const char *const *envp)
{
  g_autofree char *timeout = g_strdup_printf("%d", READ_TIMEOUT_S);
  const char *argv[] = { STEREOD_DUMP_PATH, name, "--timeout", timeout, NULL };
  ring_test_peer_spawn_full(peer, argv, envp);
}
#endif

static void
run_case(gconstpointer data)
{
  const HostileCase *hc = data;
  g_autofree char *name = ring_test_pair_name(hc->mode);
  RingTestPeer hostile;
  const char *argv[] = { RING_TEST_HOSTILE, name, hc->mode, NULL };
  ring_test_peer_spawn_stdin(&hostile, argv, NULL);
  g_assert_true(ring_test_peer_wait_output(&hostile, NULL, "hostile ready", SLACK_S));

  /* The readers open the ring (or are refused) and, where they can, read frame 3. */
  StereodClient *c = NULL;
  int r = stereod_client_open(name, &c);
  StereodFrame f = STEREOD_FRAME_INIT;
  RingTestPeer py;
  spawn_python(&py, name, NULL, NULL);
#ifdef STEREOD_DUMP_PATH
  RingTestPeer dump;
  spawn_dump(&dump, name, NULL);
#endif
  if (hc->at_open) {
    g_assert_cmpint(r, ==, hc->error);
    g_assert_null(c);
  } else {
    g_assert_cmpint(r, ==, 0);
    g_assert_cmpint(stereod_client_read_next(c, 0, (int64_t) SLACK_S * 1000000000, &f), ==, 0);
    g_assert_cmpuint(f.counter, ==, 3);
    g_assert_cmpuint(ring_test_frame_check(&f), ==, 0);
    g_assert_true(ring_test_peer_wait_output(&py, NULL, "peer frame 3 ", SLACK_S));
#ifdef STEREOD_DUMP_PATH
    g_assert_true(ring_test_peer_wait_output(&dump, NULL, "counter=3 ", SLACK_S));
#endif
    /* Now the writer breaks it. */
    ring_test_peer_send(&hostile, "go\n");
    g_assert_true(ring_test_peer_wait_output(&hostile, NULL, "hostile done", SLACK_S));

    StereodClientStats before;
    stereod_client_get_stats(c, &before);
    gint64 t0 = g_get_monotonic_time();
    r = stereod_client_read_next(c, f.counter, (int64_t) READ_TIMEOUT_S * 1000000000, &f);
    gint64 took = g_get_monotonic_time() - t0;
    StereodClientStats after;
    stereod_client_get_stats(c, &after);
    g_test_message("%s: read_next returned %d (%s) after %.3f s, %" G_GUINT64_FORMAT
                   " copies retried", hc->mode, r, stereod_client_strerror(r), took / 1e6,
                   after.torn - before.torn);
    g_assert_cmpint(r, ==, hc->error);
    g_assert_cmpint(took, <, (READ_TIMEOUT_S + SLACK_S) * G_USEC_PER_SEC);
    if (hc->error == -EBADMSG)   /* it waited for the slot until the timeout, no longer */
      g_assert_cmpint(took, >=, READ_TIMEOUT_S * G_USEC_PER_SEC);
    /* No spin: with the back-off (1 ms doubling to 100 ms) a 3 s wait makes at most ~40
     * rounds of 16 attempts; a busy loop would make millions. */
    g_assert_cmpuint(after.torn - before.torn, <=, 40 * STEREOD_CLIENT_READ_ATTEMPTS);
    /* The error stays: the client does not go back to reading a broken ring. */
    g_assert_cmpint(stereod_client_read_latest(c, &f), ==, hc->error);
    /* The private header is what was validated at open, whatever the object says now. */
    const StereodRingHeader *h = stereod_client_get_header(c);
    g_assert_cmpuint(h->slot_count, ==, STEREOD_RING_DEFAULT_SLOTS);
    g_assert_cmpuint(h->width, ==, 64);
    g_assert_cmpuint(h->height, ==, 48);
  }

  /* stereod-dump: one line saying what is wrong, exit 1, within its timeout. */
#ifdef STEREOD_DUMP_PATH
  gint64 t1 = g_get_monotonic_time();
  g_assert_true(ring_test_peer_wait_exit(&dump, READ_TIMEOUT_S + SLACK_S));
  g_test_message("stereod-dump (%.3f s): %s", (g_get_monotonic_time() - t1) / 1e6,
                 dump.output->str);
  g_assert_true(ring_test_peer_exited_with(&dump, 1));
  g_assert_nonnull(strstr(dump.output->str, hc->dump_text));
  g_assert_nonnull(strstr(dump.output->str, "stereod-dump: ring "));
  ring_test_peer_clear(&dump);
#endif

  /* The Python reader raises its documented exception. */
  g_assert_true(ring_test_peer_wait_exit(&py, READ_TIMEOUT_S + SLACK_S));
  g_test_message("python: %s", py.output->str);
  g_assert_true(ring_test_peer_exited_with(&py, 0));
  g_autofree char *raised = g_strdup_printf("raised %s ", hc->python_error);
  g_assert_nonnull(strstr(py.output->str, raised));
  ring_test_peer_clear(&py);

  stereod_frame_clear(&f);
  stereod_client_close(c);
  g_assert_true(ring_test_peer_poll(&hostile) == FALSE);   /* it held the ring all along */
  close(hostile.stdin_fd);
  hostile.stdin_fd = -1;
  g_assert_true(ring_test_peer_wait_exit(&hostile, SLACK_S));
  ring_test_peer_clear(&hostile);
}

/* A process of uid `uid` that creates ring `name` in `dir` and publishes one frame,
 * then holds it until killed. Returns its pid once the ring exists. */
static pid_t
fork_squatter(const char *dir, const char *name, uid_t uid)
{
  int fds[2];
  g_assert_cmpint(pipe(fds), ==, 0);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(fds[0]);
    char ok = 'n';
    if (setgroups(0, NULL) == 0 && setgid(uid) == 0 && setuid(uid) == 0) {
      RingWriterParams p;
      ring_test_params(&p, name, 16, 8);
      p.dir = dir;
      RingWriter *w = NULL;
      if (ring_writer_new(&p, &w) == 0) {
        ring_test_publish(w);
        ok = 'y';
      }
    }
    if (write(fds[1], &ok, 1) != 1 || ok != 'y')
      _exit(1);
    for (int i = 0; i < 1200; i++)   /* bounded: 120 s */
      g_usleep(100 * 1000);
    _exit(0);
  }
  close(fds[1]);
  char ok = 0;
  g_assert_cmpint(read(fds[0], &ok, 1), ==, 1);
  g_assert_cmpint(ok, ==, 'y');
  close(fds[0]);
  return pid;
}

static void
test_squatter(void)
{
  if (geteuid() != 0) {
    g_test_skip("needs root to run a squatter as another uid (fork + setuid to 65534)");
    return;
  }
  /* The squatter's place: /dev/shm, which every user can write (the ring directory
   * rule picks it when there is no /run/stereod). */
  const char *dir = STEREOD_RING_SHM_DIR;
  const uid_t nobody = 65534;
  g_autofree char *name = ring_test_pair_name("squat");
  pid_t squatter = fork_squatter(dir, name, nobody);
  g_autofree char *path = g_strdup_printf("%s/" STEREOD_RING_PREFIX "%s", dir, name);
  struct stat st0;
  g_assert_cmpint(lstat(path, &st0), ==, 0);
  g_assert_cmpuint(st0.st_uid, ==, nobody);

  /* Our writer refuses to take the name and says whose it is; the squatter's object is
   * left exactly as it was (same inode, not marked closed). */
  RingWriterParams p;
  ring_test_params(&p, name, 16, 8);
  p.dir = dir;
  RingWriter *w = NULL;
  char msg[512];
  g_assert_cmpint(ring_writer_new_with_error(&p, &w, msg, sizeof msg), ==, -EPERM);
  g_assert_null(w);
  g_test_message("writer: %s", msg);
  g_autofree char *expect = g_strdup_printf("ring %s belongs to uid 65534 (nobody), not to us "
                                            "(uid 0, root): remove it, or choose another pair "
                                            "name", path);
  g_assert_cmpstr(msg, ==, expect);
  struct stat st1;
  g_assert_cmpint(lstat(path, &st1), ==, 0);
  g_assert_cmpuint(st1.st_ino, ==, st0.st_ino);

  /* Readers refuse it by default; they read it when told to trust that owner. */
  StereodClient *c = NULL;
  StereodClientOpenParams op = { .pair = name, .dir = dir };
  g_assert_cmpint(stereod_client_open_with(&op, &c), ==, -EPERM);
  g_assert_null(c);
  op.owner = STEREOD_CLIENT_OWNER_UID;
  op.owner_uid = 1234;
  g_assert_cmpint(stereod_client_open_with(&op, &c), ==, -EPERM);
  g_assert_cmpint(stereod_client_parse_owner("nobody", &op), ==, 0);
  g_assert_cmpint(op.owner, ==, STEREOD_CLIENT_OWNER_UID);
  g_assert_cmpuint(op.owner_uid, ==, nobody);
  g_assert_cmpint(stereod_client_open_with(&op, &c), ==, 0);
  g_assert_false(stereod_client_is_closed(c));
  g_assert_cmpuint(stereod_client_get_owner_uid(c), ==, nobody);
  stereod_client_close(c);
  g_assert_cmpint(stereod_client_parse_owner("any", &op), ==, 0);
  g_assert_cmpint(stereod_client_open_with(&op, &c), ==, 0);
  stereod_client_close(c);
  g_assert_cmpint(stereod_client_parse_owner("65534", &op), ==, 0);
  g_assert_cmpuint(op.owner_uid, ==, nobody);
  g_assert_cmpint(stereod_client_parse_owner("no-such-user-here", &op), ==, -EINVAL);

  char **env = g_environ_setenv(g_get_environ(), "STEREOD_RING_DIR", dir, TRUE);
#ifdef STEREOD_DUMP_PATH
  RingTestPeer dump;
  const char *dargv[] = { STEREOD_DUMP_PATH, name, "--timeout", "3", NULL };
  ring_test_peer_spawn_full(&dump, dargv, (const char *const *) env);
  g_assert_true(ring_test_peer_wait_exit(&dump, SLACK_S));
  g_test_message("stereod-dump: %s", dump.output->str);
  g_assert_true(ring_test_peer_exited_with(&dump, 1));
  g_assert_nonnull(strstr(dump.output->str, "owned by uid 65534, not by a trusted writer"));
  ring_test_peer_clear(&dump);
  char **env_any = g_environ_setenv(g_strdupv(env), "STEREOD_RING_OWNER", "nobody", TRUE);
  const char *dargv2[] = { STEREOD_DUMP_PATH, name, "--timeout", "3", "--count", "1", NULL };
  ring_test_peer_spawn_full(&dump, dargv2, (const char *const *) env_any);
  g_assert_true(ring_test_peer_wait_exit(&dump, SLACK_S));
  g_test_message("stereod-dump, STEREOD_RING_OWNER=nobody: %s", dump.output->str);
  g_assert_true(ring_test_peer_exited_with(&dump, 0));
  g_assert_nonnull(strstr(dump.output->str, "\nframes=1 "));
  ring_test_peer_clear(&dump);
  g_strfreev(env_any);
#endif
  RingTestPeer py;
  spawn_python(&py, name, NULL, (const char *const *) env);
  g_assert_true(ring_test_peer_wait_exit(&py, SLACK_S));
  g_test_message("python: %s", py.output->str);
  g_assert_nonnull(strstr(py.output->str, "raised RingOwnerError errno=1"));
  ring_test_peer_clear(&py);
  const char *extra[] = { "--owner", "any", "--frames", "1", NULL };
  spawn_python(&py, name, extra, (const char *const *) env);
  g_assert_true(ring_test_peer_wait_exit(&py, SLACK_S));
  g_test_message("python --owner any: %s", py.output->str);
  g_assert_nonnull(strstr(py.output->str, "peer frames=1 bad=0 "));
  ring_test_peer_clear(&py);
  g_strfreev(env);

  kill(squatter, SIGKILL);
  g_assert_cmpint(waitpid(squatter, NULL, 0), ==, squatter);
  unlink(path);
}

static void
test_symlink(void)
{
  /* A symbolic link under the pair's name, to a valid ring of ours: followed by
   * nobody. The writer refuses it and leaves both in place; readers refuse it. */
  g_autofree char *target_name = ring_test_pair_name("link-target");
  g_autoptr(RingWriter) target = ring_test_writer_new(target_name, 16, 8);
  g_autofree char *name = ring_test_pair_name("link");
  g_autofree char *path = ring_test_path(name);
  g_assert_cmpint(symlink(ring_writer_get_path(target), path), ==, 0);

  RingWriterParams p;
  ring_test_params(&p, name, 16, 8);
  RingWriter *w = NULL;
  char msg[512];
  g_assert_cmpint(ring_writer_new_with_error(&p, &w, msg, sizeof msg), ==, -EPERM);
  g_test_message("writer: %s", msg);
  g_assert_nonnull(strstr(msg, "is not a regular file"));
  struct stat st;
  g_assert_cmpint(lstat(path, &st), ==, 0);
  g_assert_true(S_ISLNK(st.st_mode));

  StereodClient *c = NULL;
  g_assert_cmpint(stereod_client_open(name, &c), ==, -EPERM);
  StereodClientOpenParams op = { .pair = name, .owner = STEREOD_CLIENT_OWNER_ANY };
  g_assert_cmpint(stereod_client_open_with(&op, &c), ==, -EPERM);
  RingTestPeer py;
  spawn_python(&py, name, NULL, NULL);
  g_assert_true(ring_test_peer_wait_exit(&py, SLACK_S));
  g_assert_nonnull(strstr(py.output->str, "raised RingOwnerError errno=1"));
  ring_test_peer_clear(&py);
  unlink(path);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ring_test_remove_stale();
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = g_strdup_printf("/ring/hostile/%s", cases[i].mode);
    g_test_add_data_func(path, &cases[i], run_case);
  }
  g_test_add_func("/ring/hostile/squatter", test_squatter);
  g_test_add_func("/ring/hostile/symlink", test_symlink);
  return g_test_run();
}
