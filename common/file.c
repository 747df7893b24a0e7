/* file.c: bounded reads of regular files (file.h). */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

const char *
file_kind_name(unsigned int mode)
{
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISREG(mode))
    return "a regular file";
  return "not a file";
}

static bool
fail_errno(GError **error, int err, const char *path, const char *what)
{
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(err), "%s: %s: %s", path, what,
              g_strerror(err));
  return false;
}

static bool
too_large(GError **error, const char *path, gsize max_size)
{
  g_set_error(error, G_FILE_ERROR, FILE_ERROR_TOO_LARGE, "%s: larger than %" G_GSIZE_FORMAT
              " bytes", path, max_size);
  return false;
}

bool
file_read_regular(const char *path, gsize max_size, char **contents, gsize *length,
                  GError **error)
{
  g_return_val_if_fail(path && contents && length && max_size >= 1, false);
  g_return_val_if_fail(max_size < G_MAXSIZE - 1, false);
  *contents = NULL;
  *length = 0;

  int fd;
  do
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return fail_errno(error, errno, path, "cannot read");
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int err = errno;
    close(fd);
    return fail_errno(error, err, path, "cannot read");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    g_set_error(error, G_FILE_ERROR,
                S_ISDIR(st.st_mode) ? G_FILE_ERROR_ISDIR : G_FILE_ERROR_INVAL,
                "%s: not a regular file (%s)", path, file_kind_name(st.st_mode));
    return false;
  }
  if (st.st_size < 0 || (guint64)st.st_size > max_size) {
    close(fd);
    return too_large(error, path, max_size);
  }

  /* st_size is only a hint (the file may change, /proc files read 0): read up to one
   * byte more than allowed, which tells "at the limit" from "over it". */
  gsize capacity = MIN((gsize)st.st_size + 1, max_size + 1);
  char *buf = g_malloc(capacity + 1);
  gsize n = 0;
  for (;;) {
    if (n == capacity) {
      if (capacity == max_size + 1)
        break;
      capacity = MIN(MAX(capacity * 2, (gsize)4096), max_size + 1);
      buf = g_realloc(buf, capacity + 1);
    }
    ssize_t r = read(fd, buf + n, capacity - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int err = errno;
      g_free(buf);
      close(fd);
      return fail_errno(error, err, path, "cannot read");
    }
    if (r == 0)
      break;
    n += (gsize)r;
  }
  close(fd);
  if (n > max_size) {
    g_free(buf);
    return too_large(error, path, max_size);
  }
  buf[n] = '\0';
  *contents = buf;
  *length = n;
  return true;
}
