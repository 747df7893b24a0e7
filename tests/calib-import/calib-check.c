/* calib-check: loads a calibration file with calib_load() and prints "OK" followed by
 * the file calib_save() would write (every number at full precision), or the loader's
 * error message; exit status 0 or 1. Used by test_calib_import.py. */
#include <stdio.h>

#include "kernels/calib.h"

int
main(int argc, char **argv)
{
  if (argc != 2) {
    fprintf(stderr, "usage: calib-check FILE\n");
    return 2;
  }
  StereoCalib calib;
  g_autoptr(GError) error = NULL;
  if (!calib_load(argv[1], &calib, &error)) {
    printf("%s\n", error->message);
    return 1;
  }
  g_autofree char *text = calib_to_data(&calib);
  printf("OK\n%s", text);
  return 0;
}
