/* calib-check: loads a calibration file with calib_load() and prints "OK" followed by
 * the file calib_save() would write (every number at full precision), or the loader's
 * error message; exit status 0 or 1. Used by test_calib_import.py.
 *
 * calib-check --map FILE prints, after "OK", the rectification map of every pixel of
 * both sides, one "side x y u v" line each (side 0 left, 1 right, %.17g): what
 * compare_opencv.py compares with OpenCV's initUndistortRectifyMap. */
#include <stdio.h>
#include <string.h>

#include "kernels/calib.h"

int
main(int argc, char **argv)
{
  bool map = argc == 3 && strcmp(argv[1], "--map") == 0;
  if (argc != 2 && !map) {
    fprintf(stderr, "usage: calib-check [--map] FILE\n");
    return 2;
  }
  StereoCalib calib;
  g_autoptr(GError) error = NULL;
  if (!calib_load(argv[argc - 1], &calib, &error)) {
    printf("%s\n", error->message);
    return 1;
  }
  if (!map) {
    g_autofree char *text = calib_to_data(&calib);
    printf("OK\n%s", text);
    return 0;
  }
  printf("OK\n");
  for (int side = 0; side < 2; side++)
    for (int y = 0; y < calib.height; y++)
      for (int x = 0; x < calib.width; x++) {
        double u, v;
        calib_rectified_to_raw(&calib, side ? CALIB_RIGHT : CALIB_LEFT, x, y, &u, &v);
        printf("%d %d %d %.17g %.17g\n", side, x, y, u, v);
      }
  return 0;
}
