/* ring-reader-impl.h: the inside of StereodClient, shared by the reader's files (not
 * installed).
 *
 *   ring-map.c     one mapped ring: open, owner check, header validation, guarded loads
 *   ring-reader.c  the client object: open, close, reopen, accessors, error strings
 *   ring-read.c    waiting and copying frames (wait, read_latest, read_next)
 *   ring-follow.c  waiting for a ring name to appear (inotify)
 */
#pragma once

#include <stereod/client.h>

#include "ring-private.h"
#include "ring-reader-private.h"

#include <sys/types.h>

/* One ring as mapped by a client. Everything but the live fields of the mapping is
 * read once at open (ring_map_open) and trusted from then on. */
typedef struct {
  int fd;                            /* kept open: fstat before each access */
  void *map;                         /* the whole object, PROT_READ */
  size_t map_size;                   /* = hdr.total_size */
  dev_t dev;
  ino_t ino;
  uid_t uid;                         /* owner at open */
  StereodRingHeader hdr;             /* the validated private copy */
  uint32_t copy_size;                /* slot bytes a read copies: up to the last plane */
  int broken;                        /* 0, or the error every access returns (-EIO) */
  uint64_t last_counter;             /* last header.counter read */
  char path[RING_PATH_MAX];
} RingMap;

struct StereodClient {
  /* How it was opened, for reopening. */
  char pair[STEREOD_RING_NAME_MAX + 1];
  char *dir;                         /* NULL = the default rule, resolved at each open */
  StereodClientOwner owner;
  uid_t owner_uid;
  bool follow;

  RingMap ring;
  uint64_t generation;               /* rings read: 1 after the open */
  bool reset_pending;                /* moved to a new ring, no frame of it returned yet */
  StereodClientStats stats;
  StereodClientCopyHook hook;
  void *hook_data;
};

/* Checks h (a copy) against ring.h: layout, READER LIMITS, object_size. Returns 0 and the
 * bytes of a slot a read copies, or -EPROTO. */
int ring_header_validate(const StereodRingHeader *h, uint64_t object_size, uint32_t *copy_size);

/* Opens `path` for the client's owner rule, maps and validates it into *m (zeroed by
 * the caller). Returns 0 or a negative errno; on error *m holds nothing to free. */
int ring_map_open(RingMap *m, const char *path, const StereodClient *rules);
void ring_map_close(RingMap *m);

/* Marks the ring unusable with `error` (kept for every later access) and returns it. */
int ring_map_break(RingMap *m, int error);

/* Before an access: the error it is broken with, or -EIO when fstat says the object
 * is now smaller than the ring (which then breaks it). */
int ring_map_check_size(RingMap *m);

/* ring_map_check_size, then whether the fields that never change still match the
 * private copy (-EPROTO otherwise). */
int ring_map_check_header(RingMap *m);

/* Reads futex word, counter and closed from the mapping, checked and guarded. */
typedef struct {
  uint32_t futex;
  uint64_t counter;
  bool closed;
} RingLive;

int ring_map_load_live(RingMap *m, RingLive *live);

/* The pointer into the mapping of the futex word (for FUTEX_WAIT only). */
static inline const uint32_t *
ring_map_futex(const RingMap *m)
{
  return &((const StereodRingHeader *) m->map)->futex;
}

/* Whether the name of m->path now refers to another object (false when it is gone). */
bool ring_map_name_moved(const RingMap *m);

/* Opens the ring of the client's pair (its dir rule) into *m. */
int client_map_open(const StereodClient *c, RingMap *m);

/* A watch on the ring directory for names appearing in it (inotify: IN_CREATE,
 * IN_MOVED_TO), set up before looking for the name so that a ring created in between is
 * not missed. Without inotify (or without the directory), waiting falls back to short
 * sleeps. */
typedef struct {
  int fd;                            /* inotify, -1 when unavailable */
  char dir[RING_PATH_MAX];
} RingDirWatch;

void ring_dir_watch_start(RingDirWatch *w, const char *dir);
void ring_dir_watch_stop(RingDirWatch *w);
/* Watches `dir` (restarting the watch when the directory rule now gives another one). */
void ring_dir_watch_update(RingDirWatch *w, const char *dir);
/* Waits for an entry to appear, at most about a second, or until the absolute monotonic
 * deadline (ns; < 0 = forever). Returns 0 (look again), -ETIMEDOUT (deadline passed) or
 * -EINTR. */
int ring_dir_watch_wait(RingDirWatch *w, int64_t deadline_ns);

/* The absolute monotonic deadline (ns) of a timeout: -1 = forever (timeout < 0 or too far
 * to represent), 0 = none (check once). */
static inline int64_t
ring_deadline_after(int64_t timeout_ns)
{
  if (timeout_ns < 0)
    return -1;
  if (timeout_ns == 0)
    return 0;
  int64_t now = ring_mono_ns();
  if (timeout_ns > INT64_MAX - now)
    return -1;
  return now + timeout_ns;
}

/* Whether an absolute deadline (as above) has passed. */
static inline bool
ring_deadline_passed(int64_t deadline_ns)
{
  return deadline_ns == 0 || (deadline_ns > 0 && ring_mono_ns() >= deadline_ns);
}

/* Resolves the client's ring directory now. */
static inline const char *
client_dir(const StereodClient *c)
{
  return c->dir != NULL ? c->dir : ring_dir_default();
}

/* Moves the client to the ring its name refers to now (stereod_client_reopen). */
int client_reopen(StereodClient *c);

/* Bounded back-off between checks (ns). */
#define CLIENT_SLICE_NS 1000000000ll       /* look at the object again at least this often */
#define CLIENT_BACKOFF_MIN_NS 1000000ll
#define CLIENT_BACKOFF_MAX_NS 100000000ll
