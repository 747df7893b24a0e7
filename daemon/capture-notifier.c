/* capture-notifier.c: the wake-up shared by the pairs and their consumer (capture.h). */
#include "daemon/capture.h"

struct CaptureNotifier {
  gatomicrefcount ref;
  GMutex lock;
  GCond cond;
  uint64_t counter;
};

CaptureNotifier *
capture_notifier_new(void)
{
  CaptureNotifier *n = g_new0(CaptureNotifier, 1);
  g_atomic_ref_count_init(&n->ref);
  g_mutex_init(&n->lock);
  g_cond_init(&n->cond);
  return n;
}

CaptureNotifier *
capture_notifier_ref(CaptureNotifier *n)
{
  g_return_val_if_fail(n, NULL);
  g_atomic_ref_count_inc(&n->ref);
  return n;
}

void
capture_notifier_unref(CaptureNotifier *n)
{
  if (!n || !g_atomic_ref_count_dec(&n->ref))
    return;
  g_cond_clear(&n->cond);
  g_mutex_clear(&n->lock);
  g_free(n);
}

uint64_t
capture_notifier_get(CaptureNotifier *n)
{
  g_return_val_if_fail(n, 0);
  g_mutex_lock(&n->lock);
  uint64_t v = n->counter;
  g_mutex_unlock(&n->lock);
  return v;
}

void
capture_notifier_signal(CaptureNotifier *n)
{
  g_return_if_fail(n);
  g_mutex_lock(&n->lock);
  n->counter++;
  g_cond_broadcast(&n->cond);
  g_mutex_unlock(&n->lock);
}

bool
capture_notifier_wait(CaptureNotifier *n, uint64_t seen, int64_t deadline_us)
{
  g_return_val_if_fail(n, false);
  g_mutex_lock(&n->lock);
  while (n->counter == seen && g_cond_wait_until(&n->cond, &n->lock, deadline_us))
    ;
  bool changed = n->counter != seen;
  g_mutex_unlock(&n->lock);
  return changed;
}
