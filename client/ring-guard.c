/* ring-guard.c: the SIGBUS guard of the ring readers (see ring-guard.h). */
#include "ring-guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_result;
static struct sigaction previous;
/* The thread's active guard. It is written by the thread before any guarded access, so
 * its TLS block exists by the time the handler reads it. */
static __thread RingGuard *active;

/* Hands a fault that is not ours to whoever handled SIGBUS before us. */
static void
chain(int sig, siginfo_t *info, void *ucontext)
{
  if (previous.sa_flags & SA_SIGINFO) {
    if (previous.sa_sigaction != NULL) {
      previous.sa_sigaction(sig, info, ucontext);
      return;
    }
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  bool sent = info == NULL || info->si_code <= 0;   /* kill(2), sigqueue(3): not a fault */
  if (sent && previous.sa_handler == SIG_IGN)
    return;
  /* The default action: SIGBUS kills (with a core). A fault is retried when we return,
   * and faults again with the default disposition, at its own address; a sent signal is
   * raised again, delivered once this handler returns. */
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGBUS, &dfl, NULL);
  if (sent)
    raise(SIGBUS);
}

static void
on_sigbus(int sig, siginfo_t *info, void *ucontext)
{
  int saved_errno = errno;
  RingGuard *g = active;
  if (g != NULL && info != NULL && info->si_code > 0) {
    uintptr_t addr = (uintptr_t) info->si_addr;
    uintptr_t start = (uintptr_t) g->start;
    if (addr >= start && addr - start < g->size) {
      void *p = mmap(g->start, g->size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
                     -1, 0);
      if (p != MAP_FAILED) {
        g->faulted = 1;
        errno = saved_errno;
        return;
      }
    }
  }
  chain(sig, info, ucontext);
  errno = saved_errno;
}

static void
install(void)
{
  struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_RESTART };
  sigemptyset(&sa.sa_mask);
  install_result = sigaction(SIGBUS, &sa, &previous) < 0 ? -errno : 0;
}

int
ring_guard_install(void)
{
  pthread_once(&install_once, install);
  return install_result;
}

void
ring_guard_begin(RingGuard *g, void *start, size_t size)
{
  g->start = start;
  g->size = size;
  g->faulted = 0;
  active = g;
  /* The handler must see the guard before the guarded loads happen. */
  atomic_signal_fence(memory_order_seq_cst);
}

bool
ring_guard_end(RingGuard *g)
{
  atomic_signal_fence(memory_order_seq_cst);
  active = NULL;
  return g->faulted != 0;
}
