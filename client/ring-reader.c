/* ring-reader.c: libstereod-client, the read-only side of the shm ring: the client
 * object, opening and reopening, accessors (see <stereod/client.h>; layout and protocol
 * in <stereod/ring.h>; the inside in ring-reader-impl.h). Plain libc. */
#include "ring-reader-impl.h"

#include <signal.h>
#include <stdlib.h>

int
client_map_open(const StereodClient *c, RingMap *m)
{
  char path[RING_PATH_MAX];
  int r = ring_path_format(path, sizeof path, client_dir(c), c->pair, NULL);
  if (r < 0)
    return r;
  memset(m, 0, sizeof *m);
  return ring_map_open(m, path, c);
}

/* A client with the parameters but no ring yet. */
static int
client_new(const StereodClientOpenParams *p, StereodClient **out)
{
  *out = NULL;
  if (p == NULL || !ring_name_is_valid(p->pair))
    return -EINVAL;
  if (p->owner < 0 || p->owner >= STEREOD_CLIENT_OWNER_COUNT)
    return -EINVAL;
  StereodClient *c = calloc(1, sizeof *c);
  if (c == NULL)
    return -ENOMEM;
  snprintf(c->pair, sizeof c->pair, "%s", p->pair);
  if (p->dir != NULL && (c->dir = strdup(p->dir)) == NULL) {
    free(c);
    return -ENOMEM;
  }
  c->owner = p->owner;
  c->owner_uid = p->owner_uid;
  c->follow = p->follow;
  c->ring.fd = -1;
  *out = c;
  return 0;
}

static void
client_free(StereodClient *c)
{
  free(c->dir);
  free(c);
}

int
stereod_client_open_with(const StereodClientOpenParams *params, StereodClient **out)
{
  if (out == NULL)
    return -EINVAL;
  StereodClient *c;
  int r = client_new(params, &c);
  if (r < 0) {
    *out = NULL;
    return r;
  }
  r = client_map_open(c, &c->ring);
  if (r < 0) {
    client_free(c);
    *out = NULL;
    return r;
  }
  c->generation = 1;
  *out = c;
  return 0;
}

int
stereod_client_open(const char *pair, StereodClient **out)
{
  return stereod_client_open_with(&(StereodClientOpenParams) { .pair = pair }, out);
}

int
stereod_client_open_wait(const StereodClientOpenParams *params, int64_t timeout_ns,
                         StereodClient **out)
{
  if (out == NULL)
    return -EINVAL;
  StereodClient *c;
  int r = client_new(params, &c);
  if (r < 0) {
    *out = NULL;
    return r;
  }
  int64_t deadline = ring_deadline_after(timeout_ns);
  RingDirWatch w;
  ring_dir_watch_start(&w, client_dir(c));
  for (;;) {
    r = client_map_open(c, &c->ring);
    if (r != -ENOENT)
      break;
    r = ring_dir_watch_wait(&w, deadline);
    if (r < 0)
      break;
    ring_dir_watch_update(&w, client_dir(c));
  }
  ring_dir_watch_stop(&w);
  if (r < 0) {
    client_free(c);
    *out = NULL;
    return r;
  }
  c->generation = 1;
  *out = c;
  return 0;
}

void
stereod_client_close(StereodClient *c)
{
  if (c == NULL)
    return;
  ring_map_close(&c->ring);
  client_free(c);
}

int
client_reopen(StereodClient *c)
{
  RingMap next;
  int r = client_map_open(c, &next);
  if (r < 0)
    return r;
  if (next.dev == c->ring.dev && next.ino == c->ring.ino) {
    bool closed = next.hdr.closed != 0;
    ring_map_close(&next);
    return closed || c->ring.broken ? -ENOENT : -EALREADY;
  }
  ring_map_close(&c->ring);
  c->ring = next;
  c->generation++;
  c->reset_pending = true;
  return 0;
}

int
stereod_client_reopen(StereodClient *c)
{
  if (c == NULL)
    return -EINVAL;
  return client_reopen(c);
}

int
stereod_client_parse_owner(const char *spec, StereodClientOpenParams *p)
{
  if (p == NULL)
    return -EINVAL;
  if (spec == NULL || spec[0] == '\0' || strcmp(spec, "default") == 0) {
    p->owner = STEREOD_CLIENT_OWNER_DEFAULT;
    return 0;
  }
  if (strcmp(spec, "any") == 0) {
    p->owner = STEREOD_CLIENT_OWNER_ANY;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(spec, &end, 10);
  if (spec[0] >= '0' && spec[0] <= '9' && *end == '\0') {
    if (errno != 0 || v >= (uid_t) -1)
      return -EINVAL;
    p->owner = STEREOD_CLIENT_OWNER_UID;
    p->owner_uid = (uid_t) v;
    return 0;
  }
  struct passwd pw, *found = NULL;
  char buf[1024];
  if (getpwnam_r(spec, &pw, buf, sizeof buf, &found) != 0 || found == NULL)
    return -EINVAL;
  p->owner = STEREOD_CLIENT_OWNER_UID;
  p->owner_uid = found->pw_uid;
  return 0;
}

int
stereod_client_format_path(const char *dir, const char *pair, char *buf, size_t size)
{
  if (!ring_name_is_valid(pair) || buf == NULL)
    return -EINVAL;
  return ring_path_format(buf, size, dir, pair, NULL);
}

const char *
stereod_client_strerror(int error)
{
  switch (error) {
  case 0:
    return "success";
  case -ENOENT:
    return "no such ring (is its writer running?)";
  case -EPROTO:
    return "not a valid stereod ring, or its header changed after it was opened";
  case -EPERM:
    return "the ring's owner is not a trusted writer (see STEREOD_RING_OWNER)";
  case -EIO:
    return "the ring was truncated under the reader";
  case -EBADMSG:
    return "the writer never completed the newest slot";
  case -ETIMEDOUT:
    return "no new frame within the timeout";
  case -EPIPE:
    return "the writer closed the ring";
  case -ESTALE:
    return "the name now refers to another ring (the writer restarted)";
  case -ENODATA:
    return "nothing published yet";
  case -EAGAIN:
    return "every copy was overwritten by the writer (reader too slow)";
  case -EALREADY:
    return "the name still refers to the ring being read";
  default:
    return strerror(-error);
  }
}

const char *
stereod_client_get_name(const StereodClient *c)
{
  return c->ring.hdr.name;
}

const char *
stereod_client_get_path(const StereodClient *c)
{
  return c->ring.path;
}

uint32_t
stereod_client_get_width(const StereodClient *c)
{
  return c->ring.hdr.width;
}

uint32_t
stereod_client_get_height(const StereodClient *c)
{
  return c->ring.hdr.height;
}

uint32_t
stereod_client_get_formats(const StereodClient *c)
{
  return c->ring.hdr.formats;
}

uint32_t
stereod_client_get_slot_count(const StereodClient *c)
{
  return c->ring.hdr.slot_count;
}

double
stereod_client_get_disparity_scale(const StereodClient *c)
{
  return c->ring.hdr.disparity_scale;
}

void
stereod_client_get_calibration(const StereodClient *c, StereodRingCalibration *out)
{
  *out = c->ring.hdr.calibration;
}

pid_t
stereod_client_get_writer_pid(const StereodClient *c)
{
  return (pid_t) c->ring.hdr.writer_pid;
}

uid_t
stereod_client_get_owner_uid(const StereodClient *c)
{
  return c->ring.uid;
}

const StereodRingHeader *
stereod_client_get_header(const StereodClient *c)
{
  return &c->ring.hdr;
}

uint64_t
stereod_client_get_generation(const StereodClient *c)
{
  return c->generation;
}

uint64_t
stereod_client_get_counter(const StereodClient *c)
{
  RingMap *m = (RingMap *) &c->ring;   /* caches the value; logically const */
  RingLive live;
  return ring_map_load_live(m, &live) == 0 ? live.counter : m->last_counter;
}

bool
stereod_client_is_closed(const StereodClient *c)
{
  RingLive live;
  return ring_map_load_live((RingMap *) &c->ring, &live) < 0 || live.closed;
}

bool
stereod_client_writer_is_alive(const StereodClient *c)
{
  pid_t pid = (pid_t) c->ring.hdr.writer_pid;
  if (pid <= 0)
    return false;
  return kill(pid, 0) == 0 || errno != ESRCH;
}

void
stereod_client_get_stats(const StereodClient *c, StereodClientStats *out)
{
  *out = c->stats;
}

void
stereod_client_set_copy_hook(StereodClient *c, StereodClientCopyHook hook, void *user_data)
{
  c->hook = hook;
  c->hook_data = user_data;
}
