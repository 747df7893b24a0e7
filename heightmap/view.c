/* view.c: a height map as a colour PNG for people to look at (stereod-heightmap --png).
 *
 * One pixel per cell, +y up (the far touchline at the top, as the main stand sees the
 * pitch), height on the Turbo-like colour ramp from 0 (dark blue) to VIEW_MAX_HEIGHT
 * (dark red), cells without data black, pitch lines of the 105 x 68 m field grey, and a
 * white cross on every tracked player.
 */
#include "heightmap/heightmap.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <gio/gio.h>

#define VIEW_MAX_HEIGHT 2.5

static void
ramp(float t, uint8_t rgb[3])
{
  /* Turbo polynomial approximation (Mikhailov 2019), t in [0, 1] */
  t = CLAMP(t, 0.0f, 1.0f);
  double r = 0.13572138 + t * (4.61539260 + t * (-42.66032258 + t * (132.13108234 +
             t * (-152.94239396 + t * 59.28637943))));
  double g = 0.09140261 + t * (2.19418839 + t * (4.84296658 + t * (-14.18503333 +
             t * (4.27729857 + t * 2.82956604))));
  double b = 0.10667330 + t * (12.64194608 + t * (-60.58204836 + t * (110.36276771 +
             t * (-89.90310912 + t * 27.34824973))));
  rgb[0] = (uint8_t) lround(CLAMP(r, 0.0, 1.0) * 255);
  rgb[1] = (uint8_t) lround(CLAMP(g, 0.0, 1.0) * 255);
  rgb[2] = (uint8_t) lround(CLAMP(b, 0.0, 1.0) * 255);
}

static bool
on_line(const HeightmapGrid *g, int i, int j)
{
  double x = g->x0 + (i + 0.5) * g->cell, y = g->y0 + (j + 0.5) * g->cell;
  double e = 0.5 * g->cell;
  bool in_x = fabs(x) <= 52.5 + e, in_y = fabs(y) <= 34 + e;
  return (in_y && (fabs(fabs(x) - 52.5) <= e || fabs(x) <= e)) ||
         (in_x && fabs(fabs(y) - 34) <= e) || fabs(hypot(x, y) - 9.15) <= e;
}

bool
heightmap_view_write_png(const char *path, const HeightmapGrid *g, const float *heights,
                         const HeightmapTrack *tracks, int n_tracks, GError **error)
{
  const int w = g->width, h = g->height;
  g_autofree uint8_t *rgb = g_malloc((size_t) w * h * 3);
  for (int j = 0; j < h; j++) {
    uint8_t *row = rgb + (size_t) (h - 1 - j) * w * 3;
    for (int i = 0; i < w; i++) {
      float v = heights[(size_t) j * w + i];
      uint8_t *px = row + 3 * i;
      if (isnan(v))
        px[0] = px[1] = px[2] = on_line(g, i, j) ? 96 : 0;
      else
        ramp(v / (float) VIEW_MAX_HEIGHT, px);
    }
  }
  for (int k = 0; k < n_tracks; k++) {
    int ci = (int) floor((tracks[k].x - g->x0) / g->cell);
    int cj = (int) floor((tracks[k].y - g->y0) / g->cell);
    for (int d = -4; d <= 4; d++) {
      int pts[2][2] = { { ci + d, cj }, { ci, cj + d } };
      for (int m = 0; m < 2; m++) {
        int i = pts[m][0], j = pts[m][1];
        if (i >= 0 && i < w && j >= 0 && j < h) {
          uint8_t *px = rgb + ((size_t) (h - 1 - j) * w + i) * 3;
          px[0] = px[1] = px[2] = 255;
        }
      }
    }
  }

  FILE *fp = fopen(path, "wbe");
  if (!fp) {
    int e = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", path, g_strerror(e));
    return false;
  }
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fclose(fp);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: cannot write the PNG", path);
    return false;
  }
  png_init_io(png, fp);
  png_set_IHDR(png, info, (png_uint_32) w, (png_uint_32) h, 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 3);
  png_write_info(png, info);
  for (int j = 0; j < h; j++)
    png_write_row(png, rgb + (size_t) j * w * 3);
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  if (fclose(fp) != 0) {
    int e = errno;
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e), "%s: %s", path, g_strerror(e));
    return false;
  }
  return true;
}
