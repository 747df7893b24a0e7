/* ring-guard.h: reading a shared mapping that another process may truncate, without
 * dying of SIGBUS (not installed).
 *
 * A file mapping whose file shrinks raises SIGBUS at the first access past the new end.
 * The ring's writer (or anyone who can write the object) can do that at any time, so
 * fstat before an access is not enough: the file can shrink between the fstat and the
 * load. As libwayland does for wl_shm pools, a process-wide SIGBUS handler, installed
 * once, recognises a fault inside the region the faulting thread declared with
 * ring_guard_begin(), maps anonymous zero pages over that whole region (MAP_FIXED, so the
 * faulting load, when it is retried, reads 0 and the copy runs to its end) and marks the
 * guard faulted; the caller checks ring_guard_end() and treats the copy as lost. The
 * region stays mapped (now zeros) until the caller munmaps it as usual.
 *
 * A fault anywhere else, or one in a thread without an active guard, goes to the handler
 * that was installed before ours (or kills the process as SIGBUS does by default), so the
 * application's own SIGBUS handling is unchanged. An application that installs its own
 * SIGBUS handler after opening a ring must chain to the previous one for the guard to
 * keep working.
 *
 * Thread safety: the handler is installed once per process (pthread_once); each thread
 * has its own active guard (thread-local), one at a time. Async-signal safety: the
 * handler only reads that thread-local pointer, calls mmap(2) (a plain system call, as in
 * libwayland) and stores one flag. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
  void *start;                   /* page aligned, as returned by mmap */
  size_t size;
  volatile sig_atomic_t faulted;
} RingGuard;

/* Installs the process-wide handler the first time. Returns 0 or -errno. */
int ring_guard_install(void);

/* From here to ring_guard_end(), a SIGBUS at an address in [start, start + size) in this
 * thread is recovered from as described above. Not nested. */
void ring_guard_begin(RingGuard *guard, void *start, size_t size);

/* Ends the guarded section; true when an access in it faulted (the region now reads 0). */
bool ring_guard_end(RingGuard *guard);
