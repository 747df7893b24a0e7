/* io-test-util.c: a scratch directory for the io tests. */
#include "io-test-util.h"

#include <glib/gstdio.h>

static char *io_tmp_dir;

void
io_tmp_init(void)
{
  g_autoptr(GError) error = NULL;
  io_tmp_dir = g_dir_make_tmp("stereod-io-XXXXXX", &error);
  g_assert_no_error(error);
}

char *
io_tmp_path(const char *name)
{
  g_assert_nonnull(io_tmp_dir);
  return g_build_filename(io_tmp_dir, name, NULL);
}

void
io_tmp_cleanup(void)
{
  GDir *dir = g_dir_open(io_tmp_dir, 0, NULL);
  if (dir) {
    const char *name;
    while ((name = g_dir_read_name(dir))) {
      g_autofree char *path = io_tmp_path(name);
      if (g_file_test(path, G_FILE_TEST_IS_DIR))
        g_rmdir(path);
      else
        g_unlink(path);
    }
    g_dir_close(dir);
  }
  g_rmdir(io_tmp_dir);
  g_clear_pointer(&io_tmp_dir, g_free);
}

char *
io_tmp_write(const char *name, const void *data, size_t size)
{
  char *path = io_tmp_path(name);
  g_autoptr(GError) error = NULL;
  g_file_set_contents(path, data, (gssize)size, &error);
  g_assert_no_error(error);
  return path;
}
