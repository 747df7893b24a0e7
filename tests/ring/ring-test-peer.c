/* ring-test-peer.c: a reader process for the ring tests.
 *
 *   ring-test-peer PAIR [--frames N] [--seconds S] [--sleep-us U] [--stop-in-copy]
 *                       [--torn] [--until-closed]
 *
 * Waits for and reads frames through libstereod-client (its static build, for the
 * copy hook), checks each against the test pattern and prints one summary line:
 * after "peer ready" once the ring is open:
 *   peer frames=N bad=N torn=N failed=N eagain=N timeouts=N closed=0|1 ordered=0|1
 *        first=COUNTER last=COUNTER
 * bad counts mismatched pixels/metadata over all frames; ordered is 1 when the
 * counters read were strictly increasing. Exit status 0 when the line was printed,
 * 2 when the ring could not be opened.
 */
#include "ring-test-util.h"
#include "ring-reader-private.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static gint frames_wanted = 100;
static gdouble seconds = 5.0;
static gint sleep_us = 0;
static gboolean stop_in_copy = FALSE;
static gboolean force_torn = FALSE;
static gboolean until_closed = FALSE;

static const GOptionEntry entries[] = {
  { "frames", 0, 0, G_OPTION_ARG_INT, &frames_wanted, "frames to read", "N" },
  { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "time limit", "S" },
  { "sleep-us", 0, 0, G_OPTION_ARG_INT, &sleep_us, "sleep after every read", "US" },
  { "stop-in-copy", 0, 0, G_OPTION_ARG_NONE, &stop_in_copy, "SIGSTOP in the first copy", NULL },
  { "torn", 0, 0, G_OPTION_ARG_NONE, &force_torn, "hold copies until overwritten", NULL },
  { "until-closed", 0, 0, G_OPTION_ARG_NONE, &until_closed, "read until the writer closes", NULL },
  { NULL }
};

static void
copy_hook(StereodClient *client, unsigned attempt, void *user_data)
{
  if (attempt != 0)
    return;
  if (stop_in_copy) {
    stop_in_copy = FALSE;
    raise(SIGSTOP);   /* the test kills us here, half-way through a copy */
  }
  if (force_torn) {
    /* Hold the copy until the writer has gone round the whole ring once more, so the
     * slot being copied has certainly been rewritten under us. */
    uint64_t start = stereod_client_get_counter(client);
    uint64_t target = start + stereod_client_get_slot_count(client);
    gint64 end = g_get_monotonic_time() + 2 * G_USEC_PER_SEC;
    while (stereod_client_get_counter(client) < target && g_get_monotonic_time() < end
           && !stereod_client_is_closed(client))
      g_usleep(100);
  }
}

int
main(int argc, char **argv)
{
  g_autoptr(GOptionContext) ctx = g_option_context_new("PAIR");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || argc != 2) {
    fprintf(stderr, "ring-test-peer: %s\n", error ? error->message : "PAIR expected");
    return 2;
  }

  StereodClient *client = NULL;
  int r = stereod_client_open(argv[1], &client);
  if (r < 0) {
    fprintf(stderr, "ring-test-peer: open %s: %s\n", argv[1], strerror(-r));
    return 2;
  }
  stereod_client_set_copy_hook(client, copy_hook, NULL);
  printf("peer ready\n");
  fflush(stdout);

  StereodFrame frame = STEREOD_FRAME_INIT;
  guint64 frames = 0, bad = 0, eagain = 0, timeouts = 0;
  gboolean closed = FALSE, ordered = TRUE;
  uint64_t last = 0, first = 0;
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  while ((until_closed || frames < (guint64) frames_wanted) && g_get_monotonic_time() < end) {
    r = stereod_client_wait(client, last, 500 * 1000 * 1000, NULL);
    if (r == -EPIPE) {
      closed = TRUE;
      break;
    }
    if (r == -ETIMEDOUT) {
      timeouts++;
      continue;
    }
    if (r < 0) {
      fprintf(stderr, "ring-test-peer: wait: %s\n", strerror(-r));
      break;
    }
    r = stereod_client_read_latest(client, &frame);
    if (r == -EAGAIN) {
      eagain++;
      continue;
    }
    if (r < 0) {
      fprintf(stderr, "ring-test-peer: read: %s\n", strerror(-r));
      break;
    }
    if (first == 0)
      first = frame.counter;
    ordered = ordered && frame.counter > last;
    last = frame.counter;
    bad += ring_test_frame_check(&frame);
    frames++;
    if (sleep_us > 0)
      g_usleep(sleep_us);
  }

  StereodClientStats stats;
  stereod_client_get_stats(client, &stats);
  printf("peer frames=%" G_GUINT64_FORMAT " bad=%" G_GUINT64_FORMAT " torn=%" G_GUINT64_FORMAT
         " failed=%" G_GUINT64_FORMAT " eagain=%" G_GUINT64_FORMAT " timeouts=%" G_GUINT64_FORMAT
         " closed=%d ordered=%d first=%" G_GUINT64_FORMAT " last=%" G_GUINT64_FORMAT "\n",
         frames, bad, (guint64) stats.torn, (guint64) stats.failed, eagain, timeouts,
         closed, ordered, (guint64) first, (guint64) last);
  fflush(stdout);
  stereod_frame_clear(&frame);
  stereod_client_close(client);
  return 0;
}
