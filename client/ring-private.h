/* ring-private.h: helpers shared by the ring writer and reader (not installed).
 *
 * The ring fields that change while the ring is live (slot seq, counter, futex,
 * closed) are declared as plain integers in the public layout header so that it reads
 * as a specification; here they are accessed through C11 atomics on the same
 * addresses. Lock-free 32- and 64-bit atomics are plain loads/stores on the platforms
 * stereod supports, so they work across processes on a shared mapping.
 */
#pragma once

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <stereod/ring.h>

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the ring needs lock-free 64-bit atomics");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the ring needs lock-free 32-bit atomics");

#define RING_A64(p) ((_Atomic uint64_t *) (p))
#define RING_A32(p) ((_Atomic uint32_t *) (p))

static inline uint64_t
ring_load64(const uint64_t *p, memory_order order)
{
  return atomic_load_explicit(RING_A64((uint64_t *) p), order);
}

static inline uint32_t
ring_load32(const uint32_t *p, memory_order order)
{
  return atomic_load_explicit(RING_A32((uint32_t *) p), order);
}

static inline uint64_t
ring_now_ns(clockid_t clock)
{
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* A pair name is 1..STEREOD_RING_NAME_MAX characters of [A-Za-z0-9._-], not starting
 * with '.', so that it can never leave /dev/shm or name a hidden file. */
static inline bool
ring_name_is_valid(const char *name)
{
  if (name == NULL || name[0] == '\0' || name[0] == '.')
    return false;
  size_t n = strlen(name);
  if (n > STEREOD_RING_NAME_MAX)
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

/* "/dev/shm/stereod.<name>" into buf (which holds at least RING_PATH_MAX bytes). */
#define RING_PATH_MAX (sizeof(STEREOD_RING_SHM_DIR "/" STEREOD_RING_PREFIX) + STEREOD_RING_NAME_MAX + 32)

static inline void
ring_path_format(char *buf, size_t size, const char *name, const char *suffix)
{
  size_t n = 0;
  const char *parts[] = { STEREOD_RING_SHM_DIR "/" STEREOD_RING_PREFIX, name, suffix };
  for (size_t i = 0; i < 3; i++) {
    for (const char *s = parts[i]; s != NULL && *s != '\0' && n + 1 < size; s++)
      buf[n++] = *s;
  }
  buf[n] = '\0';
}

/* Shared (not FUTEX_PRIVATE) futex calls: waiters and waker are different processes.
 * FUTEX_WAIT works on a read-only mapping. */
static inline int
ring_futex_wake_all(uint32_t *word)
{
  long r = syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  return r < 0 ? -errno : 0;
}

/* Waits while *word == expected, until the absolute CLOCK_MONOTONIC `deadline` (NULL =
 * forever). Returns 0 (woken or value changed: re-check), -ETIMEDOUT or -EINTR. */
static inline int
ring_futex_wait_until(const uint32_t *word, uint32_t expected, const struct timespec *deadline)
{
  long r = syscall(SYS_futex, word, FUTEX_WAIT_BITSET, expected, deadline, NULL,
                   FUTEX_BITSET_MATCH_ANY);
  if (r == 0)
    return 0;
  if (errno == EAGAIN)
    return 0;
  return -errno;
}
