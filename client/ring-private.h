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
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * with '.', so that it can never leave the ring directory or name a hidden file. */
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

/* The ring directory (ring.h, OBJECT), the one rule for writers and readers:
 * $STEREOD_RING_DIR when set and not empty, else /run/stereod when it is a directory,
 * else /dev/shm. The result is the environment's string or a literal: do not free. */
static inline const char *
ring_dir_default(void)
{
  const char *env = getenv(STEREOD_RING_DIR_ENV);
  if (env != NULL && env[0] != '\0')
    return env;
  struct stat st;
  if (stat(STEREOD_RING_RUN_DIR, &st) == 0 && S_ISDIR(st.st_mode))
    return STEREOD_RING_RUN_DIR;
  return STEREOD_RING_SHM_DIR;
}

/* Room for "DIR/stereod.<name><suffix>". */
#define RING_PATH_MAX 4096

/* "DIR/stereod.<name><suffix>" into buf (size bytes); `dir` NULL = ring_dir_default().
 * Returns 0, or -ENAMETOOLONG when it does not fit (buf then holds ""). */
static inline int
ring_path_format(char *buf, size_t size, const char *dir, const char *name, const char *suffix)
{
  if (dir == NULL)
    dir = ring_dir_default();
  int n = snprintf(buf, size, "%s/" STEREOD_RING_PREFIX "%s%s", dir, name,
                   suffix != NULL ? suffix : "");
  if (n < 0 || (size_t) n >= size) {
    if (size > 0)
      buf[0] = '\0';
    return -ENAMETOOLONG;
  }
  return 0;
}

/* The login name of `uid` into buf ("?" when it has none). */
static inline void
ring_user_name(uid_t uid, char *buf, size_t size)
{
  struct passwd pw, *found = NULL;
  char tmp[1024];
  if (getpwuid_r(uid, &pw, tmp, sizeof tmp, &found) == 0 && found != NULL)
    snprintf(buf, size, "%s", found->pw_name);
  else
    snprintf(buf, size, "?");
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

/* CLOCK_MONOTONIC in ns, and as the absolute timespec FUTEX_WAIT_BITSET takes. */
static inline int64_t
ring_mono_ns(void)
{
  return (int64_t) ring_now_ns(CLOCK_MONOTONIC);
}

static inline struct timespec
ring_timespec_from_ns(int64_t ns)
{
  return (struct timespec) { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}
