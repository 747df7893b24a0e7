/* instance.c: the locks that keep a second builder off the running one's socket and ring.
 *
 * Why a lock and not only a look at the socket and the ring: a look is not atomic (two
 * builders started together both see nothing there and both create), and the ring
 * writer's liveness test reads /proc, which a hardened unit may hide. flock(2) is
 * atomic, needs no /proc, and the kernel drops it when the holder dies, so a crash
 * never blocks the next start.
 *
 * The files are removed at a clean exit. Removing a lock file while others may open it
 * is safe with one rule, kept by lock_file(): after taking the lock, check that the
 * path still names the file locked; if the holder removed it in between, the lock is
 * on a dead file and is taken again on the new one.
 */
#include "heightmap/heightmap.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stereod/client.h>

#define LOCK_TRIES 8

typedef struct {
  char *path;
  int fd;
} Lock;

struct HeightmapInstance {
  Lock locks[2];   /* the socket's, the ring's */
};

/* Takes the lock on `path` (made when missing). `what` names the resource for the
 * error: "serves /run/x.sock", "publishes the ring heightmap". */
static bool
lock_file(Lock *lock, const char *path, const char *what, GError **error)
{
  for (int attempt = 0; attempt < LOCK_TRIES; attempt++) {
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EACCES)
      fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);   /* another user's: test only */
    if (fd < 0) {
      int e = errno;
      g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                  "cannot open the lock file %s (which tells whether another "
                  "stereod-heightmap %s): %s", path, what, g_strerror(e));
      return false;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
      int e = errno;
      close(fd);
      if (e == EWOULDBLOCK)
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY,
                    "another stereod-heightmap %s (it holds %s): not starting a second one",
                    what, path);
      else
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "cannot lock %s: %s", path,
                    g_strerror(e));
      return false;
    }
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      lock->path = g_strdup(path);
      lock->fd = fd;
      return true;
    }
    close(fd);   /* removed by the holder that just let go: take the new one */
  }
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_BUSY,
              "the lock file %s keeps changing (another stereod-heightmap starting and "
              "stopping?)", path);
  return false;
}

static void
unlock_file(Lock *lock)
{
  if (lock->fd < 0)
    return;
  unlink(lock->path);   /* still holding it: see the rule above */
  close(lock->fd);
  lock->fd = -1;
  g_clear_pointer(&lock->path, g_free);
}

HeightmapInstance *
heightmap_instance_new(const char *socket_path, const char *ring_name, GError **error)
{
  g_return_val_if_fail(ring_name, NULL);
  g_autoptr(HeightmapInstance) inst = g_new0(HeightmapInstance, 1);
  inst->locks[0].fd = inst->locks[1].fd = -1;
  if (socket_path) {
    g_autofree char *path = g_strconcat(socket_path, ".lock", NULL);
    g_autofree char *what = g_strdup_printf("serves %s", socket_path);
    if (!lock_file(&inst->locks[0], path, what, error))
      return NULL;
  }
  /* The lock lives beside the ring, in the directory of ring.h's rule. */
  char ring_path[4096];
  int r = stereod_client_format_path(NULL, ring_name, ring_path, sizeof ring_path);
  if (r < 0) {
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(-r), "ring %s: %s", ring_name,
                g_strerror(-r));
    return NULL;
  }
  g_autofree char *path = g_strconcat(ring_path, "~lock", NULL);
  g_autofree char *what = g_strdup_printf("publishes the ring %s", ring_path);
  if (!lock_file(&inst->locks[1], path, what, error))
    return NULL;
  return g_steal_pointer(&inst);
}

void
heightmap_instance_free(HeightmapInstance *inst)
{
  if (!inst)
    return;
  for (int i = 0; i < 2; i++)
    unlock_file(&inst->locks[i]);
  g_free(inst);
}
