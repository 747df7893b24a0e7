/* hm-test-writer: one pair's ring for the height-map process tests
 * (test-heightmap-robust.sh), good or going wrong on request.
 *
 *   hm-test-writer NAME WIDTH HEIGHT [--hz HZ] [--no-pose] [--rewrite-after N]
 *                  [--odd-after N] [--seconds S]
 *
 * Creates the ring /dev/shm/stereod.NAME (hm-test-ring.h: a camera 10 m above the centre
 * spot looking down, every pixel on the ground), prints "ready", then publishes at HZ
 * (default 10) with capture times on the multiples of the period, so that writers of
 * different pairs agree. --rewrite-after N: after N frames the header claims rows 4
 * times as far apart and twice as many (frames announced, planes not written from then
 * on); --odd-after N: after N frames the newest slot is left odd for ever. Runs until
 * SIGTERM or SIGINT (then closes and unlinks the ring) or S seconds (default 300).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "hm-test-ring.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
  stop = sig;
}

int
main(int argc, char **argv)
{
  gdouble hz = 10, seconds = 300;
  gboolean no_pose = FALSE;
  gint rewrite_after = -1, odd_after = -1;
  GOptionEntry entries[] = {
    { "hz", 0, 0, G_OPTION_ARG_DOUBLE, &hz, "frames per second", "HZ" },
    { "no-pose", 0, 0, G_OPTION_ARG_NONE, &no_pose, "no pose in the header", NULL },
    { "rewrite-after", 0, 0, G_OPTION_ARG_INT, &rewrite_after, "rewrite the header", "N" },
    { "odd-after", 0, 0, G_OPTION_ARG_INT, &odd_after, "leave the newest slot odd", "N" },
    { "seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "run at most this long", "S" },
    { NULL },
  };
  g_autoptr(GOptionContext) oc = g_option_context_new("NAME WIDTH HEIGHT");
  g_option_context_add_main_entries(oc, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(oc, &argc, &argv, &error) || argc != 4 || !(hz > 0)) {
    fprintf(stderr, "hm-test-writer: %s\n", error ? error->message : "NAME WIDTH HEIGHT");
    return 64;
  }
  struct sigaction sa = { .sa_handler = on_signal };
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  HmTestRing *ring = hm_test_ring_new(argv[1], (uint32_t) atoi(argv[2]),
                                      (uint32_t) atoi(argv[3]), !no_pose);
  printf("ready\n");
  fflush(stdout);
  uint64_t period = (uint64_t) (1e9 / hz);
  gint64 end = g_get_monotonic_time() + (gint64) (seconds * G_USEC_PER_SEC);
  bool bare = false, idle = false;
  for (int n = 0; !stop && g_get_monotonic_time() < end; n++) {
    if (n == rewrite_after) {
      hm_test_ring_rewrite(ring);
      bare = true;
    }
    if (n == odd_after) {
      hm_test_ring_announce_odd(ring);
      idle = true;
    }
    if (!idle) {
      uint64_t capture = hm_test_capture_ns(period);
      if (bare)
        hm_test_ring_publish_bare(ring, capture);
      else
        hm_test_ring_publish(ring, capture);
    }
    /* to the next multiple of the period */
    uint64_t now = (uint64_t) g_get_real_time() * 1000u;
    g_usleep((gulong) ((period - now % period) / 1000u + 1));
  }
  hm_test_ring_free(ring);
  return 0;
}
