/* config-test-util.h: scratch folders with config and calibration files for the
 * config tests. */
#pragma once

#include <glib.h>

#include "daemon/config.h"

/* A new empty folder under the temporary directory; remove it with test_dir_remove(). */
char *test_dir_new(void);
/* Removes the folder and everything in it, then frees `dir`. */
void test_dir_remove(char *dir);

/* Writes `text` to dir/relative (parent folders are created); returns the full path. */
char *test_write(const char *dir, const char *relative, const char *text);

/* Writes an ideal calibration of width x height to dir/relative; returns the path. */
char *test_write_calib(const char *dir, const char *relative, int width, int height);

/* A valid [pair NAME] group, no calibration: width x height at fps, sources named after
 * the pair. Free with g_free(). */
char *test_pair_text(const char *name, int width, int height, const char *fps);

/* Loads dir/relative and returns the error message (the test fails when it loads). */
char *test_load_error(const char *path, int expected_code);

/* Asserts that `message` starts with `prefix`, printing both when not. */
#define assert_prefix(message, prefix)                                                   \
  G_STMT_START {                                                                          \
    if (!g_str_has_prefix((message), (prefix)))                                           \
      g_error("message\n  '%s'\ndoes not start with\n  '%s'", (message), (prefix));       \
  } G_STMT_END
