/* config-test-util.c: see config-test-util.h. */
#include "config-test-util.h"

#include <glib/gstdio.h>

#include "kernels/calib.h"

char *
test_dir_new(void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp("stereod-config-XXXXXX", &error);
  g_assert_no_error(error);
  return dir;
}

static void
remove_tree(const char *path)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
    GDir *d = g_dir_open(path, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      remove_tree(child);
    }
    if (d)
      g_dir_close(d);
    g_rmdir(path);
  } else
    g_unlink(path);
}

void
test_dir_remove(char *dir)
{
  if (dir)
    remove_tree(dir);
  g_free(dir);
}

char *
test_write(const char *dir, const char *relative, const char *text)
{
  char *path = g_build_filename(dir, relative, NULL);
  g_autofree char *parent = g_path_get_dirname(path);
  g_assert_cmpint(g_mkdir_with_parents(parent, 0700), ==, 0);
  g_autoptr(GError) error = NULL;
  g_file_set_contents(path, text, -1, &error);
  g_assert_no_error(error);
  return path;
}

char *
test_write_calib(const char *dir, const char *relative, int width, int height)
{
  static const double R[9] = { 1, 0, 0, 0, 0, 1, 0, -1, 0 };
  static const double C[3] = { 0, -60, 20 };
  StereoCalib c;
  calib_init_ideal(&c, width, height, 700.0, (width - 1) / 2.0, (height - 1) / 2.0, 1.6, NULL,
                   R, C);
  char *path = g_build_filename(dir, relative, NULL);
  g_autofree char *parent = g_path_get_dirname(path);
  g_assert_cmpint(g_mkdir_with_parents(parent, 0700), ==, 0);
  g_autoptr(GError) error = NULL;
  g_assert_true(calib_save(path, &c, &error));
  g_assert_no_error(error);
  return path;
}

char *
test_pair_text(const char *name, int width, int height, const char *fps)
{
  return g_strdup_printf("[pair %s]\n"
                         "left=videotestsrc pattern=ball name=%s-l\n"
                         "right=videotestsrc pattern=ball name=%s-r\n"
                         "width=%d\nheight=%d\nfps=%s\n",
                         name, name, name, width, height, fps);
}

char *
test_load_error(const char *path, int expected_code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(StereodConfig) cfg = stereod_config_load(path, &error);
  g_assert_null(cfg);
  g_assert_error(error, STEREOD_CONFIG_ERROR, expected_code);
  return g_strdup(error->message);
}
