/* file.h: reading a whole input file, safely: only a regular file, only up to a size.
 *
 * Every file the programs read (configurations and their drop-ins, calibrations, sim
 * configurations, images) names a path someone else chose. A FIFO there would block
 * open() or read() forever, /dev/zero would be read until memory runs out, a growing log
 * file would be read while it grows. file_read_regular() therefore:
 *  - opens with O_RDONLY | O_CLOEXEC | O_NONBLOCK (a FIFO without a writer cannot block
 *    the open; O_NONBLOCK does nothing to reads of a regular file);
 *  - fstat()s the open descriptor (no race with a rename between stat and open) and
 *    refuses anything that is not a regular file: directories, FIFOs, sockets, devices;
 *  - refuses a file larger than `max_size` bytes before reading it, and reads at most
 *    max_size + 1 bytes, so a file that grows (or a /proc file whose size reads 0)
 *    cannot make it read more.
 *
 * Errors are in the G_FILE_ERROR domain with messages that start with the path:
 *     "PATH: cannot read: No such file or directory"   (code from errno)
 *     "PATH: not a regular file (a FIFO)"               G_FILE_ERROR_INVAL
 *     "PATH: larger than 1048576 bytes"                 FILE_ERROR_TOO_LARGE
 * Thread safe; no global state.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>

G_BEGIN_DECLS

/* The code of "larger than max_size": GFileError has no EFBIG, and FAILED is used for
 * nothing else here. */
#define FILE_ERROR_TOO_LARGE G_FILE_ERROR_FAILED

/* The limit for configuration and calibration files, bytes. */
#define FILE_MAX_CONFIG_SIZE ((gsize)1 << 20)

/* Reads the whole of `path` (a regular file of at most `max_size` bytes, max_size >= 1).
 * On success *contents is a new g_malloc'd buffer of *length bytes plus a terminating
 * NUL that *length does not count (the file may hold NUL bytes of its own: look at
 * *length). On failure returns false, leaves *contents NULL and sets `error`. */
bool file_read_regular(const char *path, gsize max_size, char **contents, gsize *length,
                       GError **error);

/* What kind of file `mode` (st_mode) is, for messages: "a directory", "a FIFO", ... */
const char *file_kind_name(unsigned int mode);

G_END_DECLS
