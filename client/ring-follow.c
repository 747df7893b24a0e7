/* ring-follow.c: waiting for a ring's name to appear in the ring directory, for
 * stereod_client_open_wait() and following readers (ring-reader-impl.h). */
#include "ring-reader-impl.h"

#include <poll.h>
#include <sys/inotify.h>

#define WATCH_FALLBACK_NS 100000000ll      /* sleep between looks without inotify */

void
ring_dir_watch_start(RingDirWatch *w, const char *dir)
{
  snprintf(w->dir, sizeof w->dir, "%s", dir);
  w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (w->fd < 0)
    return;
  /* IN_MOVED_TO: writers rename a complete object into place; IN_CREATE for others. */
  if (inotify_add_watch(w->fd, dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
    close(w->fd);
    w->fd = -1;
  }
}

void
ring_dir_watch_stop(RingDirWatch *w)
{
  if (w->fd >= 0)
    close(w->fd);
  w->fd = -1;
}

void
ring_dir_watch_update(RingDirWatch *w, const char *dir)
{
  if (w->fd >= 0 && strcmp(w->dir, dir) == 0)
    return;
  ring_dir_watch_stop(w);
  ring_dir_watch_start(w, dir);
}

int
ring_dir_watch_wait(RingDirWatch *w, int64_t deadline)
{
  int64_t now = ring_mono_ns();
  if (deadline == 0 || (deadline > 0 && now >= deadline))
    return -ETIMEDOUT;
  int64_t until = now + (w->fd >= 0 ? CLIENT_SLICE_NS : WATCH_FALLBACK_NS);
  if (deadline > 0 && until > deadline)
    until = deadline;
  if (w->fd < 0) {
    struct timespec ts = ring_timespec_from_ns(until);
    int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    return r == EINTR ? -EINTR : 0;
  }
  int ms = (int) ((until - now + 999999) / 1000000);
  struct pollfd p = { .fd = w->fd, .events = POLLIN };
  int n = poll(&p, 1, ms);
  if (n < 0)
    return errno == EINTR ? -EINTR : 0;
  if (n > 0) {
    /* Drained: the caller looks for its name whatever the events were. */
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(w->fd, buf, sizeof buf) > 0)
      ;
  }
  return 0;
}
