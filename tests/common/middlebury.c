/* middlebury.c: loading and scoring Middlebury scenes (see middlebury.h). */
#include "middlebury.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>

static const struct {
  const char *name;
  double scale;
} known_scenes[] = {
  { "tsukuba", 16.0 },
  { "venus", 8.0 },
  { "teddy", 4.0 },
  { "cones", 4.0 },
};

double
middlebury_scene_scale(const char *name)
{
  for (size_t i = 0; i < G_N_ELEMENTS(known_scenes); i++)
    if (g_ascii_strcasecmp(name, known_scenes[i].name) == 0)
      return known_scenes[i].scale;
  return 0.0;
}

uint8_t *
middlebury_png_load_gray(const char *path, int *width, int *height, GError **error)
{
  png_image img = { .version = PNG_IMAGE_VERSION };
  if (!png_image_begin_read_from_file(&img, path)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", path, img.message);
    return NULL;
  }
  /* Read as 8-bit RGB (libpng expands gray, palette and 16-bit) and form the luma
   * ourselves, so the conversion is exactly the documented one. Gray stays exact:
   * R = G = B = Y gives round(Y). */
  img.format = PNG_FORMAT_RGB;
  size_t n = (size_t)img.width * img.height;
  g_autofree uint8_t *rgb = g_malloc(PNG_IMAGE_SIZE(img));
  if (!png_image_finish_read(&img, NULL, rgb, 0, NULL)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: %s", path, img.message);
    png_image_free(&img);
    return NULL;
  }
  uint8_t *y = g_malloc(n);
  for (size_t i = 0; i < n; i++) {
    double v = 0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2];
    y[i] = (uint8_t)CLAMP(lround(v), 0, 255);
  }
  *width = (int)img.width;
  *height = (int)img.height;
  return y;
}

void
middlebury_scene_free(MiddleburyScene *scene)
{
  if (!scene)
    return;
  g_free(scene->name);
  g_free(scene->left);
  g_free(scene->right);
  g_free(scene->gt);
  g_free(scene->gt_right);
  g_free(scene);
}

static bool
load_plane(const char *dir, const char *file, bool optional, MiddleburyScene *s,
           uint8_t **out, GError **error)
{
  g_autofree char *path = g_build_filename(dir, file, NULL);
  if (optional && !g_file_test(path, G_FILE_TEST_EXISTS))
    return true;
  int w, h;
  *out = middlebury_png_load_gray(path, &w, &h, error);
  if (!*out)
    return false;
  if (s->width == 0) {
    s->width = w;
    s->height = h;
  } else if (w != s->width || h != s->height) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: size %dx%d differs from %dx%d",
                path, w, h, s->width, s->height);
    return false;
  }
  return true;
}

MiddleburyScene *
middlebury_scene_load(const char *dir, double scale_override, GError **error)
{
  g_autoptr(MiddleburyScene) s = g_new0(MiddleburyScene, 1);
  g_autofree char *base = g_path_get_basename(dir);
  s->name = g_strdup(base);
  if (!load_plane(dir, "left.png", false, s, &s->left, error) ||
      !load_plane(dir, "right.png", false, s, &s->right, error) ||
      !load_plane(dir, "gt.png", false, s, &s->gt, error) ||
      !load_plane(dir, "gt_right.png", true, s, &s->gt_right, error))
    return NULL;
  s->scale = scale_override > 0.0 ? scale_override : middlebury_scene_scale(s->name);
  if (s->scale <= 0.0) {
    g_autofree char *path = g_build_filename(dir, "scale", NULL);
    g_autofree char *text = NULL;
    if (g_file_get_contents(path, &text, NULL, NULL))
      s->scale = g_ascii_strtod(g_strstrip(text), NULL);
  }
  if (!(s->scale > 0.0)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "%s: unknown scene: give the gt scale (a \"scale\" file or an option)", dir);
    return NULL;
  }
  return g_steal_pointer(&s);
}

static uint8_t *
noc_mask_raw(int w, int h, double scale, const uint8_t *gt, const uint8_t *gt_right)
{
  uint8_t *m = g_malloc0((size_t)w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      size_t i = (size_t)y * w + x;
      if (gt[i] == 0)
        continue;
      if (!gt_right) {
        m[i] = 1;
        continue;
      }
      double d = gt[i] / scale;
      long xr = x - lround(d);
      if (xr < 0 || xr >= w)
        continue;
      m[i] = fabs(gt_right[(size_t)y * w + xr] / scale - d) <= 1.0;
    }
  return m;
}

uint8_t *
middlebury_noc_mask(const MiddleburyScene *scene)
{
  return noc_mask_raw(scene->width, scene->height, scene->scale, scene->gt, scene->gt_right);
}

MiddleburyScore
middlebury_score_raw(int width, int height, double scale, const uint8_t *gt,
                     const uint8_t *gt_right, const float *disparity)
{
  g_autofree uint8_t *m = noc_mask_raw(width, height, scale, gt, gt_right);
  MiddleburyScore sc = { 0 };
  long bad1 = 0, bad2 = 0, est = 0;
  double abs_sum = 0.0;
  for (size_t i = 0; i < (size_t)width * height; i++) {
    if (!m[i])
      continue;
    sc.n_noc++;
    if (isnan(disparity[i])) {
      bad1++;
      bad2++;
      continue;
    }
    double e = fabs((double)disparity[i] - gt[i] / scale);
    est++;
    abs_sum += e;
    bad1 += e > 1.0;
    bad2 += e > 2.0;
  }
  if (sc.n_noc > 0) {
    sc.bad1 = 100.0 * bad1 / sc.n_noc;
    sc.bad2 = 100.0 * bad2 / sc.n_noc;
    sc.density = 100.0 * est / sc.n_noc;
  }
  sc.mae = est > 0 ? abs_sum / est : 0.0;
  return sc;
}

MiddleburyScore
middlebury_score(const MiddleburyScene *scene, const float *disparity)
{
  return middlebury_score_raw(scene->width, scene->height, scene->scale, scene->gt,
                              scene->gt_right, disparity);
}
