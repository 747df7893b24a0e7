/* fuzz-calib: calib_load_data on any bytes. A calibration that loads must survive
 * calib_to_data() and load again to the same numbers, bit for bit (the format's promise:
 * every number at full precision). Corpus: fuzz/corpus/calib/ (example.conf and the
 * demo's calibrations). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/calib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  StereoCalib c;
  GError *error = NULL;
  if (!calib_load_data((const char *)data, size, "fuzz.conf", &c, &error)) {
    if (!error || !g_str_has_prefix(error->message, "fuzz.conf: "))
      __builtin_trap();
    g_error_free(error);
    return 0;
  }
  char *text = calib_to_data(&c);
  StereoCalib back;
  if (!calib_load_data(text, strlen(text), "round-trip", &back, &error))
    __builtin_trap();
  /* -0 comes back as 0: compare as numbers. */
  const double *a = c.K_left, *b = back.K_left;
  size_t n = (sizeof c - offsetof(StereoCalib, K_left)) / sizeof(double);
  if (c.width != back.width || c.height != back.height)
    __builtin_trap();
  for (size_t i = 0; i < n; i++)
    if (!(a[i] == b[i]))
      __builtin_trap();
  g_free(text);

  /* The geometry helpers on what loaded: finite inputs, no crash. */
  double u, v, p[3];
  calib_rectified_to_raw(&c, CALIB_LEFT, c.width / 2.0, c.height / 2.0, &u, &v);
  calib_pixel_to_pitch(&c, 1.0, 1.0, 10.0, p);
  (void)calib_depth_mm(&c, 5.0);
  return 0;
}
